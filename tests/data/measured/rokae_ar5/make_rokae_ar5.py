"""Rebuild the data files of this folder from a clone of github.com/FrankJIE09/Dynamics_identification_Frank.

    python tests/data/measured/rokae_ar5/make_rokae_ar5.py /path/to/Dynamics_identification_Frank

Run by hand, never by the tests (they read the files it wrote; nothing is downloaded).  A seven-joint arm
(model AR5-5_07R-W4C4A2) driven through Rokae's xCore SDK: ``src/config/dynamics_identification_data_real.csv``,
60 s at 50 Hz, the columns time (s), q0..q6 (rad), dq0..dq6 (rad/s), ddq0..ddq6 (rad/s²) and tau0..tau6 (N m, the
joint torques the SDK measured), and the repository's hand-corrected model ``urdf/AR5-5_07R-W4C4A2_Manual_fix.urdf``.
The log is copied byte for byte and gzip-compressed with mtime 0 (so the bytes are reproducible); the URDF as it is.
"""

from __future__ import annotations

import gzip
import hashlib
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
COMMIT = "758dc8d6f78e63ecba0aac16d28255ae045f1d3c"


def blob(src: Path, path: str) -> bytes:
    return subprocess.run(["git", "-C", str(src), "show", f"{COMMIT}:{path}"], check=True,
                          capture_output=True).stdout


def main(src: Path) -> None:
    log = HERE / "ar5_run.csv.gz"
    log.write_bytes(gzip.compress(blob(src, "src/config/dynamics_identification_data_real.csv"), compresslevel=9,
                                  mtime=0))
    model = HERE / "ar5.urdf"
    model.write_bytes(blob(src, "urdf/AR5-5_07R-W4C4A2_Manual_fix.urdf"))
    for path in (log, model):
        print(hashlib.sha256(path.read_bytes()).hexdigest(), path.name)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    main(Path(sys.argv[1]))
