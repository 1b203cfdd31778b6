"""Rebuild the data files of this folder from a clone of github.com/JonasWeigand/Robot_Identification.

    python tests/data/measured/kuka_kr300/make_kuka_kr300.py /path/to/Robot_Identification

Run by hand, never by the tests (they read the files it wrote; nothing is downloaded).  The three recorded runs
``data/recorded_trajectories/2020-10-21 10s FF {A,B,C} 08ms/data.mat`` of a KUKA KR 300 R2500 ultra (MATLAB files;
struct ``rec``: ``time_cont`` (s), ``act_pos_mot_deg`` (6, N) (the motor encoders' positions on the link side,
deg, relative to the start pose), ``act_torque_abs_nm`` (6, N) (motor torques, N m)) are written as CSV files
``t, q1..q6, tau1..tau6``: q in rad (deg × π/180), τ = N_j × motor torque on the joint side with the gear ratios
N_j of the repository's model (``para.u`` of the same files: 1798/7, 1872/7, 757/3, 221, 5032/21, 206793/1340),
printed with 17 significant digits, gzip-compressed with mtime 0 (so the bytes are reproducible).  It also writes
``kr300_sdh.yaml``, the kinematics of ``robot_model/model_KUKA_Quantec_Ultra_KR300.m`` (standard DH, Corke's
Robotics Toolbox; base rotated by 180° about x) with the start pose q_s = (0, −π/2, π/2, 0, 0, 0) of
``ident_functions/robot_dynamics.m`` and the toolbox offsets folded into θ, as the arguments of
``rd.model.from_standard_dh``.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
from scipy.io import loadmat

HERE = Path(__file__).resolve().parent
COMMIT = "9e403c07d9dadbb391a9f3921e8d219f714636a8"
RUN = "data/recorded_trajectories/2020-10-21 10s FF {} 08ms/data.mat"
GEARS = np.array([1798 / 7, 1872 / 7, 757 / 3, 221, 5032 / 21, 206793 / 1340])
#: standard DH of model_KUKA_Quantec_Ultra_KR300.m; theta = start pose q_s + the toolbox offset (90° on joint 3).
SDH = {"a": [0.350, 1.15, 0.041, 0.0, 0.0, 0.0],
       "alpha": [math.pi / 2, 0.0, -math.pi / 2, math.pi / 2, -math.pi / 2, math.pi],
       "d": [-0.675, -0.189, 0.189, -1.0, 0.0, -0.24], "theta": [0.0, -math.pi / 2, math.pi, 0.0, 0.0, 0.0],
       # base = Rx(180°): the world's gravity (0, 0, -9.81) in the base frame
       "gravity": [0.0, 0.0, 9.81]}


def main(src: Path) -> None:
    names = []
    for run in "ABC":
        raw = subprocess.run(["git", "-C", str(src), "show", f"{COMMIT}:{RUN.format(run)}"], check=True,
                             capture_output=True).stdout
        mat = loadmat(io.BytesIO(raw), squeeze_me=True, struct_as_record=False)
        rec = mat["rec"]
        if np.any(np.abs(mat["para"].u - GEARS) > 1e-9 * GEARS):
            raise SystemExit(f"run {run}: gear ratios {mat['para'].u}, expected {GEARS}")
        t = np.asarray(rec.time_cont, float)
        q = np.deg2rad(np.asarray(rec.act_pos_mot_deg, float).T)
        tau = GEARS * np.asarray(rec.act_torque_abs_nm, float).T
        header = ",".join(["t"] + [f"q{j}" for j in range(1, 7)] + [f"tau{j}" for j in range(1, 7)])
        body = "\n".join(",".join(f"{x:.17g}" for x in row) for row in np.column_stack([t, q, tau]))
        out = HERE / f"kr300_run_{run}.csv.gz"
        with open(out, "wb") as fh, gzip.GzipFile(filename="", mode="wb", fileobj=fh, mtime=0) as z:
            z.write((header + "\n" + body + "\n").encode("ascii"))
        names.append(out.name)
    lines = [f"{k}: [{', '.join(repr(float(x)) for x in v)}]" for k, v in SDH.items()]
    (HERE / "kr300_sdh.yaml").write_text("\n".join(lines) + "\n")
    for name in names + ["kr300_sdh.yaml"]:
        print(hashlib.sha256((HERE / name).read_bytes()).hexdigest(), name)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__.split("\n\n")[1])
    main(Path(sys.argv[1]))
