"""Rebuild the files of this folder from a checkout of FIGAROH (github.com/thanhndv212/figaroh-plus).

    python tests/data/measured/make_staubli_tx40.py /path/to/figaroh-plus

Run by hand, never by the tests (they read the files it wrote; nothing is downloaded).  Every number is copied as
text, unchanged: the two logs of the Stäubli TX40 example (``pos_read_data.csv``: motor encoder positions, rad;
``curr_data.csv``: motor currents, A; 45 000 rows each, one every 0.2 ms) are joined row by row into one CSV in
the motor-side format of ``robodyn identify --transmission`` (``t, qm1..qm6, taum1..taum6``), with the time
column ``t`` = row × 0.0002 s (the example's ``ts``), and gzip-compressed (mtime 0, so the bytes are reproducible).
The model, the published estimates and the licence file are copied byte for byte.
"""

from __future__ import annotations

import gzip
import hashlib
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
EXAMPLE = Path("examples/staubli_TX40")
COPIES = {  # upstream path -> name here
    Path("LICENSE"): "FIGAROH-LICENSE",
    Path("models/staubli_tx40_description/urdf/tx40_mdh_modified.urdf"): "tx40_mdh_modified.urdf",
    EXAMPLE / "results/TX40_bp_5.csv": "figaroh_TX40_bp_5.csv",
}


def main(src: Path) -> None:
    pos = (src / EXAMPLE / "data/pos_read_data.csv").read_text().splitlines()
    cur = (src / EXAMPLE / "data/curr_data.csv").read_text().splitlines()
    header = [f"Joint_{k}" for k in range(1, 7)]
    if pos[0].split(",") != header or cur[0].split(",") != header or len(pos) != len(cur):
        raise SystemExit("unexpected layout of the FIGAROH TX40 logs")
    lines = ["t," + ",".join([f"qm{k}" for k in range(1, 7)] + [f"taum{k}" for k in range(1, 7)])]
    lines += [f"{i / 5000:.4f},{p},{c}" for i, (p, c) in enumerate(zip(pos[1:], cur[1:]))]
    out = HERE / "staubli_tx40_motor.csv.gz"
    out.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode(), compresslevel=9, mtime=0))
    for path, name in COPIES.items():
        shutil.copyfile(src / path, HERE / name)
    for name in [out.name, *COPIES.values()]:
        print(hashlib.sha256((HERE / name).read_bytes()).hexdigest(), name)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__.split("\n\n")[1])
    main(Path(sys.argv[1]))
