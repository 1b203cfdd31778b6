"""Rebuild the data files of this folder from clones of two public repositories.

    python tests/data/measured/polydoros/make_polydoros.py /path/to/Inverse_dynamics_learning /path/to/baxter_common

Run by hand, never by the tests (they read the files it wrote; nothing is downloaded).  The runs are Polydoros,
Nalpantidis and Krüger's (IROS 2016) pick-and-place datasets as github.com/woutervandijk0/Inverse_dynamics_learning
holds them at commit ``3e6d5f7`` (``Data/ForwardDynamics/{Baxter,Kuka}DirectDynamics.mat``; later commits removed
them): ten runs each of a Rethink Baxter arm and a KUKA LWR, every row q (1:7, rad), q̇ (8:14, rad/s), τ (15:21,
N m), then q and q̇ of the next row.  Each robot's runs are written as one CSV (gzip, mtime 0, so the bytes are
reproducible) with the columns ``run, t, q1..q7, qd1..qd7, tau1..tau7``: ``t`` = row × 0.01 s (the files have no
time stamps; the KUKA's q̇ is exactly the backward difference of q over 0.01 s), every number written with 17
significant digits (float64 round trip), the next-row columns left out.  The Baxter's columns come in the
alphabetical order of its ``/robot/joint_states`` (e0, e1, s0, s1, w0, w1, w2) and are written in the order of the
chain (s0, s1, e0, e1, w0, w1, w2).  The Baxter model is ``baxter_description/urdf/baxter.urdf`` of
github.com/RethinkRobotics/baxter_common at ``6c4b0f3``, copied with its licence byte for byte.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import subprocess
import sys
from pathlib import Path

import numpy as np
import scipy.io

HERE = Path(__file__).resolve().parent
DATA_COMMIT = "3e6d5f77a015ebdf0bafc4998b7d24f4413afabd"
MODEL_COMMIT = "6c4b0f375fe4e356a3b12df26ef7c0d5e58df86e"
RUNS = {"baxter": ("BaxterDirectDynamics.mat", "baxtertraj", [2, 3, 0, 1, 4, 5, 6]),
        "kuka_lwr4": ("KukaDirectDynamics.mat", "kukatraj", list(range(7)))}
COPIES = {"baxter_description/urdf/baxter.urdf": "baxter.urdf", "LICENSE": "baxter_common-LICENSE"}


def blob(src: Path, commit: str, path: str) -> bytes:
    return subprocess.run(["git", "-C", str(src), "show", f"{commit}:{path}"], check=True,
                          capture_output=True).stdout


def table(mat: bytes, prefix: str, order: list) -> bytes:
    arrays = scipy.io.loadmat(io.BytesIO(mat))
    header = ",".join(["run", "t"] + [f"{x}{j}" for x in ("q", "qd", "tau") for j in range(1, 8)])
    rows = []
    for k in range(1, 11):
        a = arrays[f"{prefix}{k}"]
        cols = [a[:, 0:7][:, order], a[:, 7:14][:, order], a[:, 14:21][:, order]]
        rows.append(np.column_stack([np.full(len(a), k), 0.01 * np.arange(len(a))] + cols))
    out = io.StringIO()
    np.savetxt(out, np.vstack(rows), fmt="%.17g", delimiter=",", header=header, comments="")
    return out.getvalue().encode()


def main(data: Path, models: Path) -> None:
    written = []
    for name, (mat, prefix, order) in RUNS.items():
        path = HERE / f"{name}_runs.csv.gz"
        path.write_bytes(gzip.compress(table(blob(data, DATA_COMMIT, f"Data/ForwardDynamics/{mat}"), prefix, order),
                                       compresslevel=9, mtime=0))
        written.append(path)
    for source, target in COPIES.items():
        (HERE / target).write_bytes(blob(models, MODEL_COMMIT, source))
        written.append(HERE / target)
    for path in written:
        print(hashlib.sha256(path.read_bytes()).hexdigest(), path.name)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    main(Path(sys.argv[1]), Path(sys.argv[2]))
