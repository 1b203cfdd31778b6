"""Benchmark: what a user waits for when bringing a robot as a URDF: the first ``rd.load("ur5.urdf")`` in a fresh
process, and ``robodyn generate`` of that 6-joint arm (customized inverse dynamics, inertia matrix and direct
dynamics in Python and C, plus the base parameters), wall clock and CPU time.

Run:  PYTHONPATH=src python benchmarks/bench_latency_urdf.py [--urdf PATH] [--repeat 3]

Each measurement runs in a fresh Python process (nothing imported, no cache of a previous run), ``--repeat`` times;
the smallest wall time is printed (the run least disturbed by other processes) with the CPU time of that run.
The URDF is the UR5 of example-robot-data (the test extra) unless ``--urdf`` names another file.  Targets on an
idle machine (issue 33): first URDF load <= 0.5 s, ``robodyn generate`` <= 5 s.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LOAD = r"""
import json, sys, time
t0 = time.perf_counter(); c0 = time.process_time()
import robodyn as rd
t1 = time.perf_counter(); c1 = time.process_time()
robot = rd.load(sys.argv[1])
t2 = time.perf_counter(); c2 = time.process_time()
print(json.dumps({"import": t1 - t0, "load": t2 - t1, "load_cpu": c2 - c1, "frames": robot.nf, "n": robot.n,
                  "modules": sorted(m for m in ("yourdfpy", "trimesh", "lxml") if m in sys.modules)}))
"""

GENERATE = r"""
import sys
from robodyn.cli import app
sys.argv = ["robodyn", "generate"] + sys.argv[1:]
app()
"""


def _ur5() -> str:
    for base in map(Path, sys.path):
        path = base / "cmeel.prefix/share/example-robot-data/robots/ur_description/urdf/ur5_robot.urdf"
        if path.is_file():
            return str(path)
    raise SystemExit("no UR5 URDF found (install the test extra: example-robot-data), give --urdf PATH")


def _child(code: str, *args: str, env=None) -> tuple[float, float, str]:
    """(wall s, CPU s of the child, its stdout) of a fresh ``python -c code args``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode:
        raise SystemExit(out.stderr)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), out.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--urdf", default=None)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    urdf = args.urdf or _ur5()
    loads = [json.loads(_child(LOAD, urdf)[2]) for _ in range(args.repeat)]
    best = min(loads, key=lambda r: r["load"])
    print(f"URDF {Path(urdf).name}: {best['n']} joints, {best['frames']} frames")
    print(f"  first rd.load in a fresh process: {best['load']:.3f} s wall, {best['load_cpu']:.3f} s CPU "
          f"(import robodyn before it: {best['import']:.3f} s); URDF packages imported: {best['modules'] or 'none'}")
    runs = []
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as tmp:
            cold = dict(os.environ, ROBODYN_CACHE=str(Path(tmp) / "cache"))  # an empty cache: a first run
            runs.append(_child(GENERATE, urdf, "--out", str(Path(tmp) / "ur5"), env=cold)[:2])
    wall, cpu = min(runs)
    print(f"  robodyn generate (idm, inm, ddm; python, c; base parameters): {wall:.2f} s wall, {cpu:.2f} s CPU")


if __name__ == "__main__":
    main()
