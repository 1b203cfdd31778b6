"""Benchmark: time to generate and compile a customized model from a cold cache (``rd.compile``).

Run:  PYTHONPATH=src:. python benchmarks/bench_generate.py [--cases wam7:inverse_dynamics,chain20:regressor]

Each case runs in a fresh process with an empty cache folder (ROBODYN_CACHE), so it measures what a user waits
for the first time: symbolic generation (Khalil & Dombre's customized Newton–Euler, §9.6), writing the C source,
and the C compiler. Then the same model again in a second fresh process (warm cache: generation + verified load,
no compiler). Robots: built-in ones by name, ``chainN`` = a random revolute serial chain of N joints
(tests/support/random_robots.py). The compiled result is checked against the NumPy algorithms before timing is
printed. Columns: assignments in the generated program, C source size, generation (s), C source (s), total cold
rd.compile (s), warm rd.compile (s).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

CHILD = r"""
import json, sys, time
import numpy as np
t0 = time.perf_counter()
import robodyn as rd
from robodyn.symbolic.models import customized_model
from robodyn.symbolic.codegen import c_code
from tests.support.random_robots import random_robot
name, kind, detail = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
robot = random_robot(int(name[5:]), nf=int(name[5:]), prismatic=False, friction=False) if name.startswith("chain") \
    else rd.load(name)
out = {}
if detail:
    t = time.perf_counter()
    m = customized_model(robot, kind, gravity="input", wrenches="none")
    out["generate"] = time.perf_counter() - t
    t = time.perf_counter()
    src = c_code.source(m, "rd_model", python_entry=True)
    out["source"] = time.perf_counter() - t
    out["assignments"], out["chars"] = len(m.program.assignments), len(src)
t = time.perf_counter()
f = rd.compile(robot, kind)
out["compile"] = time.perf_counter() - t
rng = np.random.default_rng(0)
q, qd, qdd = rng.uniform(-1, 1, (3, 4, robot.n))
ref = {"inverse_dynamics": lambda: rd.inverse_dynamics(robot, q, qd, qdd),
       "regressor": lambda: rd.regressor(robot, q, qd, qdd),
       "inertia_matrix": lambda: rd.inertia_matrix(robot, q),
       "forward_dynamics": lambda: rd.forward_dynamics(robot, q, qd, qdd)}[kind]()
got = {"inverse_dynamics": lambda: f(q, qd, qdd), "regressor": lambda: f(q, qd, qdd),
       "inertia_matrix": lambda: f(q), "forward_dynamics": lambda: f(q, qd, qdd)}[kind]()
out["error"] = float(np.max(np.abs(got - ref)) / max(np.max(np.abs(ref)), 1e-300))
print(json.dumps(out))
"""


def run(name: str, kind: str, cache: str, detail: bool) -> dict:
    env = dict(os.environ, ROBODYN_CACHE=cache, ROBODYN_PROGRESS="0")
    res = subprocess.run([sys.executable, "-c", CHILD, name, kind, "1" if detail else "0"], env=env,
                         capture_output=True, text=True)
    if res.returncode:
        raise SystemExit(f"{name} {kind} failed:\n{res.stderr}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default="wam7:inverse_dynamics,panda:forward_dynamics,chain20:regressor")
    args = ap.parse_args()
    print(f"{'case':32s} {'assign.':>8s} {'C chars':>9s} {'gen s':>7s} {'C src s':>8s} {'cold s':>8s} "
          f"{'warm s':>8s} {'rel. err':>9s}")
    for case in args.cases.split(","):
        name, kind = case.split(":")
        with tempfile.TemporaryDirectory() as cache:
            cold = run(name, kind, cache, True)
            warm = run(name, kind, cache, False)
        print(f"{name + ' ' + kind:32s} {cold['assignments']:8d} {cold['chars']:9d} {cold['generate']:7.2f} "
              f"{cold['source']:8.2f} {cold['compile']:8.2f} {warm['compile']:8.2f} {cold['error']:9.1e}", flush=True)


if __name__ == "__main__":
    main()
