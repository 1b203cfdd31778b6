"""Rebuild the data file of this folder from a clone of github.com/nikhilushinde/AutoKoopman (branch experiment_rerun).

    python tests/data/measured/schunk_lwa4p/make_schunk_lwa4p.py /path/to/AutoKoopman

Run by hand, never by the tests (they read the file it wrote; nothing is downloaded).  The 100 measured runs of a
Schunk LWA 4P arm (S. Liu and M. Althoff, "Reachset conformance of forward dynamic models for the formal analysis of
robots", IROS 2018), as redistributed in ``autoKoopman_codeocean/data/Robot/measurement_K/`` (``time.csv``: one
time stamp a row; ``trajectory.csv``: q1..q6 (rad), qd1..qd6 (rad/s) a row; ``input.csv``: the six joint torques
(N m) applied over each step, one row fewer than the states), are joined into one CSV
``run, t, q1..q6, qd1..qd6, tau1..tau6``: row i of run K holds state i and the torque of step i (the last state of
each run, which has no torque, is left out); every number copied as text unchanged, gzip-compressed with mtime 0
(so the bytes are reproducible).  It also writes ``lwa4p_kinematics.urdf``: the joint frames of the arm as
published in ``schunk_description/urdf/lwa4p/lwa4p.urdf.xacro`` of github.com/ipa320/schunk_modular_robotics
(joint origins and axes; the xacro's 1.5708 and 3.14159 written as π/2 and π), with the link masses its comments
give and placeholder inertias: a kinematic model for identification, not an a priori dynamic model.
"""

from __future__ import annotations

import gzip
import hashlib
import math
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
COMMIT = "6edafed221599dd75fd941af68865f7ad100cc08"
FOLDER = "autoKoopman_codeocean/data/Robot/measurement_{}/{}.csv"
RUNS = 100
JOINTS = 6
#: (xyz, rpy) of arm_1_joint ... arm_6_joint in lwa4p.urdf.xacro (ipa320/schunk_modular_robotics); axes z.
ORIGINS = [((0, 0, 0.11), (0, 0, 0)), ((0, 0, 0), (math.pi / 2, 0, 0)), ((0, 0.350, 0), (0, math.pi, 0)),
           ((0, 0, 0), (-math.pi / 2, math.pi, 0)), ((0, 0.005263, 0.305), (math.pi / 2, 0, math.pi)),
           ((0, 0, 0), (-math.pi / 2, 0, 0))]
MASSES = [0.29364, 1.68311, 2.1, 1.68311, 0.807, 0.819]  # kg, the xacro's commented-out values
INERTIAS = [0.01, 0.03, 0.03, 0.03, 0.03, 0.01]  # kg m², the same placeholders (diagonal)


def blob(src: Path, path: str) -> list[str]:
    text = subprocess.run(["git", "-C", str(src), "show", f"{COMMIT}:{path}"], check=True,
                          capture_output=True).stdout.decode("ascii")
    return [line for line in text.splitlines() if line.strip()]


def urdf() -> str:
    lines = ['<?xml version="1.0"?>', '<robot name="schunk_lwa4p">', '  <link name="arm_0_link"/>']
    for i, ((xyz, rpy), m, inertia) in enumerate(zip(ORIGINS, MASSES, INERTIAS), 1):
        lines += [f'  <joint name="arm_{i}_joint" type="revolute">',
                  f'    <origin xyz="{" ".join(map(repr, xyz))}" rpy="{" ".join(map(repr, rpy))}"/>',
                  f'    <parent link="arm_{i - 1}_link"/>', f'    <child link="arm_{i}_link"/>',
                  '    <axis xyz="0 0 1"/>',
                  '    <limit effort="370" velocity="2.0" lower="-6.2831853" upper="6.2831853"/>', '  </joint>',
                  f'  <link name="arm_{i}_link">', '    <inertial>', '      <origin xyz="0 0 0" rpy="0 0 0"/>',
                  f'      <mass value="{m}"/>',
                  f'      <inertia ixx="{inertia}" ixy="0" ixz="0" iyy="{inertia}" iyz="0" izz="{inertia}"/>',
                  '    </inertial>', '  </link>']
    return "\n".join(lines + ["</robot>"]) + "\n"


def main(src: Path) -> None:
    header = ",".join(["run", "t"] + [f"{key}{j}" for key in ("q", "qd", "tau") for j in range(1, JOINTS + 1)])
    lines = [header]
    for run in range(1, RUNS + 1):
        t, x, u = (blob(src, FOLDER.format(run, name)) for name in ("time", "trajectory", "input"))
        if not len(t) == len(x) == len(u) + 1:
            raise SystemExit(f"run {run}: {len(t)} times, {len(x)} states, {len(u)} inputs")
        for ti, xi, ui in zip(t, x, u):
            if len(xi.split(",")) != 2 * JOINTS or len(ui.split(",")) != JOINTS:
                raise SystemExit(f"run {run}: unexpected row {xi!r} / {ui!r}")
            lines.append(",".join([str(run), ti.strip(), xi.strip(), ui.strip()]))
    out = HERE / "schunk_lwa4p_runs.csv.gz"
    with open(out, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as z:
        z.write(("\n".join(lines) + "\n").encode("ascii"))
    (HERE / "lwa4p_kinematics.urdf").write_text(urdf())
    for name in (out.name, "lwa4p_kinematics.urdf"):
        print(hashlib.sha256((HERE / name).read_bytes()).hexdigest(), name)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__.split("\n\n")[1])
    main(Path(sys.argv[1]))
