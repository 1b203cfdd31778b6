"""The walk of ``rd.inverse_dynamics``'s ``q``: which robodyn modules a call passes through (issue 36).

    python benchmarks/walk_of_q.py            # rx90, one state and a batch of 1000

A *stay* is a run of calls in one module (``sys.settrace`` call events in robodyn's modules, consecutive calls in
the same module counted once); a *climb* is a call from a module into one of a higher layer of
``tests/test_architecture.LAYERS``.  Each walk is taken after three warm-up calls (the workspace filled).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests")]

import robodyn as rd  # noqa: E402
from test_architecture import LAYER  # noqa: E402


def layer(module: str):
    parts = module.split(".")
    return next((LAYER[".".join(parts[:k])] for k in range(len(parts), 0, -1) if ".".join(parts[:k]) in LAYER), None)


def walk(call) -> tuple[list, list]:
    stays, climbs = [], []

    def tracer(frame, event, arg):
        module = frame.f_globals.get("__name__", "")
        if event == "call" and module.startswith("robodyn"):
            caller = frame.f_back.f_globals.get("__name__", "") if frame.f_back else ""
            low, high = layer(caller), layer(module)
            if caller.startswith("robodyn") and low is not None and high is not None and high > low:
                climbs.append(f"{caller} -> {module}.{frame.f_code.co_name}")
            if not stays or stays[-1] != module:
                stays.append(module)

    sys.settrace(tracer)
    try:
        call()
    finally:
        sys.settrace(None)
    return stays, climbs


def main() -> None:
    robot = rd.load("rx90")
    rng = np.random.default_rng(0)
    for label, shape in (("one state", (robot.n,)), ("a batch of 1000", (1000, robot.n))):
        q, qd, qdd = (rng.standard_normal(shape) for _ in range(3))
        for _ in range(3):
            rd.inverse_dynamics(robot, q, qd, qdd)
        stays, climbs = walk(lambda: rd.inverse_dynamics(robot, q, qd, qdd))
        print(f"{label}: {len(stays)} stays, {len(climbs)} climbs: "
              + " -> ".join(s.removeprefix("robodyn.") for s in stays))
        for c in climbs:
            print("  climb:", c)


if __name__ == "__main__":
    main()
