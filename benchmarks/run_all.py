"""Every benchmark in one run: robodyn side by side with Pinocchio and the Robotics Toolbox, ratios printed.

    python benchmarks/run_all.py            # full sizes (several minutes)
    python benchmarks/run_all.py --quick    # small batches and few repeats (about a minute)

Run from the repository root with the test extra installed (``pip install -e '.[test]'``).  Each script is run
in its own process, so one library's state cannot bias another's timings.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

SCRIPTS = {
    "inverse dynamics (Newton-Euler) vs pin.rnea and RTB rne": (
        "bench_inverse_dynamics.py", [], ["--sizes", "1", "1000", "10000", "--repeat", "2"]),
    "inertia matrix and forward dynamics vs pin.crba/aba and RTB inertia/accel": (
        "bench_inertia_forward.py", [], ["--batch", "300", "--repeat", "2", "--loop", "100"]),
    "regressor vs pin.computeJointTorqueRegressor": ("bench_regressor.py", [], ["--batch", "300", "--repeat", "2"]),
    "compiled customized inverse dynamics (rd.compile) vs pin.rnea": (
        "bench_compiled.py", [], ["puma560", "--states", "10000"]),
    "dynamic identification (10^5 samples, 7 joints) and regressor vs pin.computeJointTorqueRegressor": (
        "bench_identification.py", [], ["--samples", "20000", "--repeat", "1", "--pin-states", "2000"]),
    "time-optimal path parameterisation (rd.simulation.time_optimal) vs toppra": (
        "bench_time_scaling.py", [], ["--grid", "100", "--repeat", "1"]),
    "dynamics derivatives vs pin.computeRNEADerivatives / computeABADerivatives, batched and one state": (
        "bench_derivatives.py", [], ["--robots", "panda", "--batch", "300", "--repeat", "2"]),
    "simulation with friction (7 joints, 5 s at 1 kHz; every built-in robot over 2 s)": (
        "bench_simulation.py", [], ["--duration", "1", "--all-duration", "0.5"]),
    "single states (straight-line kernels) vs Pinocchio from Python": ("bench_single_state.py", [], []),
    "kinematics and task space (robodyn.native) vs Pinocchio from Python, one state and batched": (
        "bench_kinematics.py", [], ["--batch", "300", "--repeat", "2"]),
    "customized models: generation + compile time from a cold and a warm cache": (
        "bench_generate.py", [], ["--cases", "wam7:inverse_dynamics"]),
    "generic compiled kernels (robodyn.native, threaded) vs Pinocchio loops, n = 6 ... 100": (
        "bench_native.py", [], ["--sizes", "6,25", "--repeat", "2"]),
    "what a second thread costs the compiled kernels (CPU time of every thread), n = 25, 100": (
        "bench_threads.py", [], ["--sizes", "25", "--repeat", "2"]),
    "robodyn vs Pinocchio's C++ in a C++ loop, one core each (compiled once, minutes; needs a C++ compiler)": (
        "bench_pinocchio_cpp.py", [], ["--states", "2000", "--sizes", "6,25", "--repeat", "2"]),
    "floating-base rnea/crba/aba vs Pinocchio's free flyer (solo12, talos)": (
        "bench_floating.py", [], ["--batch", "300", "--repeat", "2"]),
    "small batches (1, 10, 100 states) vs a Pinocchio loop": ("bench_small_batches.py", [], ["--repeat", "3"]),
    "start-up latency: import robodyn, robodyn --version, first call": ("bench_latency.py", [], ["--repeat", "3"]),
    "latency with a URDF: first load, robodyn generate of the UR5": ("bench_latency_urdf.py", [], ["--repeat", "1"]),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small batches, few repeats")
    args = parser.parse_args()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE.parent / "src"), str(HERE.parent)]))
    failed = []
    for title, (script, full, quick) in SCRIPTS.items():
        print(f"\n## {title}  ({script})\n", flush=True)
        rc = subprocess.call([sys.executable, str(HERE / script), *(quick if args.quick else full)], env=env, cwd=HERE.parent)
        if rc:
            failed.append(script)
    if failed:
        print(f"\nfailed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
