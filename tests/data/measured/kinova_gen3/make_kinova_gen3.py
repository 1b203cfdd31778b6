"""Rebuild the data files of this folder from a clone of github.com/wissem01chiha/dynamic-identification.

    python tests/data/measured/kinova_gen3/make_kinova_gen3.py /path/to/dynamic-identification

Run by hand, never by the tests (they read the files it wrote; nothing is downloaded).  From commit ``COMMIT`` (the
last one holding ``pyDynaMapp/data/kinova/``), four logs of a Kinova Gen3 at 1 kHz (their ``Time`` column is the
sample index) are written as CSV files ``t, q1..q7, tau1..tau7``: t = index × 1 ms, q = ``Position1..7`` (rad),
τ = ``TorqueCur1..7`` (the motor currents times the dataset's torque constants, N m), each number copied as the
log's text, gzip-compressed with mtime 0 (so the bytes are reproducible).  It also copies the model
``pyDynaMapp/robot/kinova/gen3.urdf`` (from Kinova's ros_kortex, BSD-3-Clause) unchanged.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
COMMIT = "90ba37d676d8da6c064d9edf5c1a09389309752e"
RUNS = {"A": "identification_data/RecordTrajectory_quadratic", "B": "identification_data/RunTrajectory1",
        "C": "identification_data/Trajectory1", "D": "validation_data/opti_traj_testing1"}


def show(repo: str, path: str) -> bytes:
    return subprocess.run(["git", "-C", repo, "show", f"{COMMIT}:{path}"], check=True, capture_output=True).stdout


def main(repo: str) -> None:
    written = []
    for name, log in RUNS.items():
        rows = list(csv.reader(io.StringIO(show(repo, f"pyDynaMapp/data/kinova/{log}.csv").decode())))
        at = {h: i for i, h in enumerate(rows[0])}
        cols = [f"Position{i}" for i in range(1, 8)] + [f"TorqueCur{i}" for i in range(1, 8)]
        out = io.StringIO()
        out.write("t," + ",".join(f"q{i}" for i in range(1, 8)) + "," + ",".join(f"tau{i}" for i in range(1, 8)) + "\n")
        for r in rows[1:]:
            out.write(repr(int(float(r[at["Time"]])) / 1000.0) + "," + ",".join(r[at[c]] for c in cols) + "\n")
        target = HERE / f"kinova_gen3_{name}.csv.gz"
        with open(target, "wb") as fh, gzip.GzipFile(fileobj=fh, mode="wb", mtime=0, filename="") as gz:
            gz.write(out.getvalue().encode())
        written.append(target)
    (HERE / "gen3.urdf").write_bytes(show(repo, "pyDynaMapp/robot/kinova/gen3.urdf"))
    written.append(HERE / "gen3.urdf")
    for path in written:
        print(hashlib.sha256(path.read_bytes()).hexdigest(), path.name)


if __name__ == "__main__":
    main(sys.argv[1])
