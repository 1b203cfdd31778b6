"""Rebuild the data files of this folder from a clone of github.com/shamilmamedov/dynamic_calibration.

    python tests/data/measured/ur10e/make_ur10e.py /path/to/dynamic_calibration

Run by hand, never by the tests (they read the files it wrote; nothing is downloaded).  The UR10e logs of Mamedov
et al. (Innopolis University; "Practical aspects of model-based collision detection", Frontiers in Robotics and AI,
2020) in ``dataset_ur10e/``: one row a controller cycle (about 100 Hz, jittered), 31 numbers a row: t (s), q1..q6
(rad), q̇1..q̇6 (rad/s), the motor currents i1..i6 (A), the target currents (A) and the controller's target torques
(N m), as that repository's ``utils/data_processing/parseURData.m`` reads them.  Each CSV taken is copied byte for
byte, gzip-compressed with mtime 0 (so the bytes are reproducible), and so is the kinematic model
``URe/urdf/ur10e.urdf``.
"""

from __future__ import annotations

import gzip
import hashlib
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
COMMIT = "11af40e7deb758ec080a175fed8fcdd6c99aca29"
RUNS = ("identification_data/ur-20_02_10-30sec_12harm.csv", "identification_data/ur-20_02_12-50sec_12harm.csv",
        "identification_data/ur-20_02_19_14harm50sec.csv", "identification_data/ur-20_02_19_14harm50secLoad.csv",
        "identification_data/ur-20_02_19_15harm50sec.csv", "validation_data/ur-20_01_17-ptp_10_points.csv")


def blob(src: Path, path: str) -> bytes:
    return subprocess.run(["git", "-C", str(src), "show", f"{COMMIT}:{path}"], check=True,
                          capture_output=True).stdout


def main(src: Path) -> None:
    written = []
    for run in RUNS:
        out = HERE / (Path(run).name + ".gz")
        out.write_bytes(gzip.compress(blob(src, f"dataset_ur10e/{run}"), compresslevel=9, mtime=0))
        written.append(out)
    model = HERE / "ur10e.urdf"
    model.write_bytes(blob(src, "URe/urdf/ur10e.urdf"))
    for path in written + [model]:
        print(hashlib.sha256(path.read_bytes()).hexdigest(), path.name)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    main(Path(sys.argv[1]))
