"""Benchmark: what a second thread costs the compiled kernels, measured in CPU time (usable on a shared machine).

Run:  PYTHONPATH=src:. python benchmarks/bench_threads.py [--sizes 25,100] [--repeat 5] [--fresh]

For each kernel of robodyn.native (inverse dynamics, inertia matrix, forward dynamics, their derivatives) on the
robots of bench_native.py, one call on 1 thread and one on 2 threads, interleaved, --repeat rounds (medians). Each
call is sized to last at least --min-ms on one thread (at most 64 MB of output): a call of a few milliseconds is at
the mercy of the scheduler of a shared or virtual machine, whose second core is not always free for its whole span.

- the process's CPU time per state (every thread: getrusage), whose ratio 2 threads / 1 thread is what the second
  thread costs in extra work (chunking, false sharing, a memory bus both threads wait on, page faults: a thread
  stalled on memory still burns its CPU time). 2 / that ratio bounds the wall-time scaling on two idle cores;
- the wall time per state, the scaling itself, which means something only on an idle machine (with other jobs on
  the cores a second thread mostly waits for one);
- the minor page faults per call;
- "busy": the CPU time per state of one thread while a forked copy of this process runs the same one-thread calls
  on the other core, and "2 procs", 2 × "cpu 1 thr" / "busy": the scaling two independent copies reach, with nothing
  shared but the machine (caches, memory bus, a virtual machine's host). It is the most a second thread can gain
  here: where "1->2" falls short of 1.8 but "2 procs" does as well, the machine, not the threading, is the limit.

The output is an array the kernels have written before (its pages mapped), or with --fresh a new one per call, as
robodyn's functions return (then the page faults of the first touch count, on both sides).
"""

from __future__ import annotations

import argparse
import os
import resource
import signal
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_native import robot_of_size  # noqa: E402

from robodyn import native  # noqa: E402

#: kind of the kernels' batch entry -> (name, output floats per state of n joints)
KINDS = {0: ("inverse dyn.", lambda n: n), 2: ("inertia matrix", lambda n: n * n), 3: ("forward dyn.", lambda n: n),
         5: ("ID derivatives", lambda n: 2 * n * n), 6: ("FD derivatives", lambda n: 3 * n * n)}


def usage() -> tuple[float, int]:
    """(CPU seconds of every thread of this process, minor page faults so far)."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime, r.ru_minflt


def calibrated_count(module, capsule, kind: int, n: int, size: int, g, min_ms: float) -> int:
    """States per call so that one thread computes for at least min_ms, between 64 and 64 MB of output."""
    probe = 256
    q, qd, x = np.random.default_rng(1).uniform(-1, 1, (3, probe, n))
    out = np.zeros((probe, size))
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        run(module, capsule, kind, 1, q, qd, x, g, out)
        best = min(best, time.perf_counter() - t0)
    wanted = int(min_ms * 1e-3 / max(best / probe, 1e-9))
    return max(64, min(wanted, (1 << 26) // (8 * size)))


def run(module, capsule, kind: int, threads: int, q, qd, x, g, out) -> None:
    """One call of the kernels' batch entry (trig="exact"); a status other than 0 ends the benchmark."""
    status = module.batch(capsule, kind, threads, True, q, qd, x, g, None, out, False)
    if status != 0:
        raise SystemExit(f"bench_threads: kernel {KINDS[kind][0]} answered {status}")


def busy(module, capsule, kind: int, q, qd, x, g, out, repeat: int) -> list[float]:
    """CPU µs per state of ``repeat`` one-thread calls on the first usable core while a forked copy of this process
    makes the same calls on the second, into its own output."""
    cores = sorted(os.sched_getaffinity(0))
    pid = os.fork()
    if pid == 0:  # the copy: the same calls until it is killed
        try:
            os.sched_setaffinity(0, {cores[1]})
            mine = np.empty_like(out)
            while True:
                run(module, capsule, kind, 1, q, qd, x, g, mine)
        finally:
            os._exit(0)
    try:
        os.sched_setaffinity(0, {cores[0]})
        run(module, capsule, kind, 1, q, qd, x, g, out)  # the copy is running by now
        times = []
        for _ in range(repeat):
            c0 = usage()[0]
            run(module, capsule, kind, 1, q, qd, x, g, out)
            times.append((usage()[0] - c0) * 1e6 / len(q))
        return times
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.sched_setaffinity(0, set(cores))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="25,100")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--fresh", action="store_true", help="a new output array per call (robodyn's functions)")
    ap.add_argument("--min-ms", type=float, default=20.0, help="least duration of a one-thread call (ms)")
    args = ap.parse_args(argv)
    if len(os.sched_getaffinity(0)) < 2 or not native.threaded():
        print("bench_threads: skipped (it needs 2 usable cores and robodyn.native built with threads)")
        return
    module, g = native._module(), np.array([0.0, 0.0, -9.81])
    print(f"load average {os.getloadavg()[0]:.2f}; µs per state, medians of {args.repeat}; output "
          f"{'fresh' if args.fresh else 'reused'}")
    print(f"{'n':>4} {'quantity':<15} {'states':>6} {'cpu 1 thr':>9} {'cpu 2 thr':>9} {'ratio':>6} {'bound':>6} "
          f"{'wall 1':>8} {'wall 2':>8} {'1->2':>5} {'faults 1':>8} {'faults 2':>8} {'busy':>9} {'2 procs':>7}")
    for n in (int(s) for s in args.sizes.split(",")):
        robot = robot_of_size(n)
        capsule = native._new_capsule(robot, module)
        for kind, (name, size) in KINDS.items():
            count = calibrated_count(module, capsule, kind, n, size(n), g, args.min_ms)
            q, qd, x = np.random.default_rng(0).uniform(-1, 1, (3, count, n))
            reused = np.zeros((count, size(n)))
            cpu, wall, faults = {1: [], 2: []}, {1: [], 2: []}, {1: [], 2: []}
            for _ in range(args.repeat):
                for threads in (1, 2):
                    out = np.empty((count, size(n))) if args.fresh else reused
                    (c0, f0), w0 = usage(), time.perf_counter()
                    run(module, capsule, kind, threads, q, qd, x, g, out)
                    (c1, f1), w1 = usage(), time.perf_counter()
                    cpu[threads].append((c1 - c0) * 1e6 / count)
                    wall[threads].append((w1 - w0) * 1e6 / count)
                    faults[threads].append(f1 - f0)
            c1, c2 = statistics.median(cpu[1]), statistics.median(cpu[2])
            w1, w2 = statistics.median(wall[1]), statistics.median(wall[2])
            cb = statistics.median(busy(module, capsule, kind, q, qd, x, g, reused, args.repeat))
            print(f"{n:>4} {name:<15} {count:>6} {c1:>9.3f} {c2:>9.3f} {c2 / c1:>6.2f} {2 * c1 / c2:>6.2f} "
                  f"{w1:>8.3f} {w2:>8.3f} {w1 / w2:>5.2f} {statistics.median(faults[1]):>8.0f} "
                  f"{statistics.median(faults[2]):>8.0f} {cb:>9.3f} {2 * c1 / cb:>7.2f}", flush=True)


if __name__ == "__main__":
    main()
