"""Rebuild the data files of this folder from a clone of FloBaRoID (github.com/kjyv/FloBaRoID).

    python tests/data/measured/kuka_lwr4/make_kuka_lwr4.py /path/to/FloBaRoID

Run by hand, never by the tests (they read the files it wrote; nothing is downloaded).  The three hardware runs
``data/KUKA/HW/measurements_{1,2,3}.npz`` are read from commit ``4e2e5a2`` (2016-04-11, where they are ordinary
git blobs; later commits keep the same bytes in Git LFS), the model and the licence from ``9c06804``.  Of each run
the arrays ``times``, ``positions``, ``velocities``, ``accelerations`` and ``torques`` are copied unchanged (float64,
every sample); the commanded ``target_*`` arrays are left out.  They are written as one ``.npz`` with keys
``t1, q1, qd1, qdd1, tau1, t2, ...`` (zip entries dated 1980-01-01, so the bytes are reproducible).  The model and
the licence text are copied byte for byte.
"""

from __future__ import annotations

import hashlib
import io
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
DATA_COMMIT = "4e2e5a2992f2175aa4e494c0d827590435a969a8"
MODEL_COMMIT = "9c0680445e874947bac4056cd86ff9e26bdd7fcb"
KEYS = {"t": "times", "q": "positions", "qd": "velocities", "qdd": "accelerations", "tau": "torques"}
COPIES = {"model/kuka_lwr4.urdf": "kuka_lwr4.urdf", "LICENSE.md": "FloBaRoID-LICENSE.md"}


def blob(src: Path, commit: str, path: str) -> bytes:
    return subprocess.run(["git", "-C", str(src), "show", f"{commit}:{path}"], check=True,
                          capture_output=True).stdout


def main(src: Path) -> None:
    out = HERE / "kuka_lwr4_runs.npz"
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for run in (1, 2, 3):
            log = np.load(io.BytesIO(blob(src, DATA_COMMIT, f"data/KUKA/HW/measurements_{run}.npz")))
            for key, upstream in KEYS.items():
                buf = io.BytesIO()
                np.lib.format.write_array(buf, np.ascontiguousarray(log[upstream]), allow_pickle=False)
                info = zipfile.ZipInfo(f"{key}{run}.npy", date_time=(1980, 1, 1, 0, 0, 0))
                info.compress_type = zipfile.ZIP_DEFLATED
                z.writestr(info, buf.getvalue(), compresslevel=9)
    for path, name in COPIES.items():
        (HERE / name).write_bytes(blob(src, MODEL_COMMIT, path))
    for name in [out.name, *COPIES.values()]:
        print(hashlib.sha256((HERE / name).read_bytes()).hexdigest(), name)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__.split("\n\n")[1])
    main(Path(sys.argv[1]))
