"""Rebuild the data files of this folder from a clone of github.com/marcocognetti/FrankaEmikaPandaDynModel.

    python tests/data/measured/panda_gaz/make_panda_gaz.py /path/to/FrankaEmikaPandaDynModel

Run by hand, never by the tests (they read the files it wrote; nothing is downloaded).  The logged excitation run
``matlab/data/Exciting_Traj/Trajectory_1/rbt_log/`` (one number a line: time stamps, then positions, velocities
and torques sample after sample, 7 numbers a sample) is written as one CSV, ``t, q1..q7, qd1..qd7, tau1..tau7``,
every number copied as text unchanged, and gzip-compressed (mtime 0, so the bytes are reproducible).  The licence
file is copied byte for byte.
"""

from __future__ import annotations

import gzip
import hashlib
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
LOG = Path("matlab/data/Exciting_Traj/Trajectory_1/rbt_log")


def main(src: Path) -> None:
    def lines(name: str) -> list[str]:
        return (src / LOG / f"exciting_traj_{name}.txt").read_text().split()

    t = lines("time")
    per_sample = {name: lines(name) for name in ("positions", "velocity", "torques")}
    if any(len(v) != 7 * len(t) for v in per_sample.values()):
        raise SystemExit("unexpected layout of the Panda log")
    header = ["t"] + [f"{c}{j}" for c in ("q", "qd", "tau") for j in range(1, 8)]
    rows = [",".join(header)]
    for i, ti in enumerate(t):
        rows.append(",".join([ti] + [x for v in per_sample.values() for x in v[7 * i:7 * i + 7]]))
    out = HERE / "panda_trajectory1.csv.gz"
    out.write_bytes(gzip.compress(("\n".join(rows) + "\n").encode(), compresslevel=9, mtime=0))
    shutil.copyfile(src / "LICENSE", HERE / "LICENSE-GPL-3.0.txt")
    for name in (out.name, "LICENSE-GPL-3.0.txt"):
        print(hashlib.sha256((HERE / name).read_bytes()).hexdigest(), name)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__.split("\n\n")[1])
    main(Path(sys.argv[1]))
