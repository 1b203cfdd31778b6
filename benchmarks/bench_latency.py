"""Latency: how long a user waits for robodyn to start, each measurement in a fresh Python process.

    python benchmarks/bench_latency.py                  # best of 5 runs of each measurement
    python benchmarks/bench_latency.py --repeat 9 --src /path/to/other/checkout/src   # another version (before/after)

Each measurement is a named Python snippet run as ``python -c SNIPPET`` with the checkout's ``src`` first on the
path; the figures are the best wall time of ``--repeat`` runs (other processes only ever add time) and the
best CPU time (user + system) of the process, which a loaded machine inflates less; the interpreter's own
start-up is included and printed on the first line.  The ``robodyn ...`` rows run exactly what the
console script runs (``robodyn.cli.main``, or ``app`` for a version without it).  Targets (issue 33, idle 2-core
machine): ``import robodyn`` and ``robodyn --version`` ≤ 0.3 s.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

_CLI = "import sys; sys.argv = ['robodyn', {args}]; import robodyn.cli as c; (getattr(c, 'main', None) or c.app)()"

#: (name, Python snippet): one row each.  Add a row to measure something else.
MEASUREMENTS = [
    ("python -c pass (the interpreter alone)", "pass"),
    ("import robodyn", "import robodyn"),
    ("robodyn --version", _CLI.format(args="'--version'")),
    ("import robodyn + load rx90 + one inverse dynamics",
     "import robodyn as rd; r = rd.load('rx90'); rd.inverse_dynamics(r, [0.1] * 6, [0.0] * 6, [0.0] * 6)"),
    ("robodyn --help", _CLI.format(args="'--help'")),
    ("robodyn info rx90", _CLI.format(args="'info', 'rx90'")),
]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_once(snippet: str, src: Path) -> tuple[float, float]:
    """(wall s, CPU s) of one run of ``python -c snippet``."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(src), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    cpu, start = _children_cpu(), time.perf_counter()
    done = subprocess.run([sys.executable, "-c", snippet], env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    wall, cpu = time.perf_counter() - start, _children_cpu() - cpu
    if done.returncode != 0:
        raise SystemExit(f"{snippet!r} failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs of each measurement (the best is kept)")
    parser.add_argument("--src", type=Path, default=SRC, help="the robodyn source folder to measure")
    args = parser.parse_args()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"robodyn from {args.src}; Python {sys.version.split()[0]}; {os.cpu_count()} CPUs; "
          f"load average {load:.2f}; best of {args.repeat}\n")
    print("| measurement | wall s | CPU s |\n|---|---:|---:|")
    for name, snippet in MEASUREMENTS:
        runs = [run_once(snippet, args.src) for _ in range(args.repeat)]
        print(f"| {name} | {min(w for w, _ in runs):.3f} | {min(c for _, c in runs):.3f} |")


if __name__ == "__main__":
    main()
