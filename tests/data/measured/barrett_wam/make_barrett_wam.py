"""Rebuild the data files of this folder from a clone of github.com/amir-noohian/dynamics-estimation.

    python tests/data/measured/barrett_wam/make_barrett_wam.py /path/to/dynamics-estimation

Run by hand, never by the tests (they read the files it wrote; nothing is downloaded).  A. Noohian's log of a
seven-joint Barrett WAM (``pest_2dof_nogravity/wam_data/``): ``state_4.json``, one record a control cycle (250 Hz)
with ``time`` (s, Unix), ``position`` (rad), ``velocity`` (rad/s) and ``effort`` (N m, the joint torques the WAM's
controller commanded) of the seven joints, and ``gravity_4.json``, libbarrett's gravity torques (N m) at the same
cycles.  Each file is copied byte for byte, gzip-compressed with mtime 0 (so the bytes are reproducible).
"""

from __future__ import annotations

import gzip
import hashlib
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
COMMIT = "855e9e5c0811f3a3716612741bc33c02574aabea"
FILES = ("state_4.json", "gravity_4.json")


def main(src: Path) -> None:
    for name in FILES:
        data = subprocess.run(["git", "-C", str(src), "show", f"{COMMIT}:pest_2dof_nogravity/wam_data/{name}"],
                              check=True, capture_output=True).stdout
        out = HERE / f"{name}.gz"
        out.write_bytes(gzip.compress(data, compresslevel=9, mtime=0))
        print(hashlib.sha256(out.read_bytes()).hexdigest(), out.name)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    main(Path(sys.argv[1]))
