"""Benchmark: robodyn's default batched call vs Pinocchio's C++ called in a C++ loop, one core each side.

Run:  PYTHONPATH=src:. python benchmarks/bench_pinocchio_cpp.py [--states 10000] [--sizes 6,25,100] [--repeat 5]
      [--floating solo12.urdf ...] [--core K] [--cpu-time]

The anchor is Pinocchio itself, not its Python bindings: benchmarks/bench_pinocchio_cpp.cpp is compiled with
``-O3 -march=native`` against the headers the ``pin`` wheel ships (its cmeel prefix, with the Eigen headers of
``cmeel-eigen`` and Boost's of ``cmeel-boost``) and the defines of Pinocchio's CMake configuration. The compile
takes minutes, so the program is kept in robodyn's compile cache (``$ROBODYN_CACHE``, else ``~/.cache/robodyn``:
a folder only this user can write) under a key of the C++ source, the compiler, its flags, the pin version and the
CPU model (``-march=native``), and verified against its SHA-256 sidecar before every run
(robodyn.native.build.build_library).

Robots: those of benchmarks/bench_native.py (puma560 for n = 6, random revolute chains for n = 25 and 100), exported
with ``rd.to_pinocchio``, and free flyers of example-robot-data loaded by Pinocchio's URDF parser with
``JointModelFreeFlyer`` and by robodyn with ``floating=True``. The C++ program rebuilds each model from its joints,
placements, inertias and armature (written by this script), reads the same random states and loops over them:
rnea, crba, aba, computeJointTorqueRegressor, computeRNEADerivatives, computeABADerivatives (fixed bases), rnea,
crba, aba (free flyers). Pinocchio's crba and aba run in both its conventions (LOCAL, its default, and WORLD); the
faster is the anchor ("conv.").

Both sides run on ONE core: the process (and the C++ program it starts) is bound to core --core with
sched_setaffinity, so robodyn's default call (``rd.inverse_dynamics(robot, Q, QD, QDD)`` etc., every usable core)
runs its compiled kernels on one thread. µs per state, the best of --repeat rounds (wall time; with --cpu-time each
side's thread CPU time, page faults included, which a machine shared with other jobs disturbs less); each round runs the C++ program
(one loop over the --states states per algorithm), then robodyn's calls, so a burst of load from other processes
hits both sides. robodyn is timed on the first "rd states" states, all of them unless its output would pass 256 MB
per call (the regressor, derivatives and inertia matrix at n = 100), each timed call after an untimed one, whose
result, dropped, is kept by robodyn's pool of result blocks and written again by the timed call, as the calls of a
user's loop over batches of one shape are (docs/scaling.md); with --fresh the pool is emptied before each timed
call, which then writes fresh pages (page faults and the system's zeroing included).

Before timing, the C++ results of the first states are checked against robodyn's (max relative difference printed;
the row is marked FAIL above 1e-10): torques, inertia matrix (Pinocchio fills its upper triangle), accelerations,
the regressor through Y·π against the rigid-body torque (Pinocchio's regressor has no armature column), the four
derivative matrices. "pin/rd" is Pinocchio's time over robodyn's (> 1: robodyn faster); "% peak" as in
bench_native.py, over one core's float64 peak; "mem floor" the roofline of the output, its bytes per state over the
rate at which NumPy fills a fresh array on this core (page faults included, measured first and printed): no call
that returns a fresh array can beat it ("pin/floor": Pinocchio's time over it, the most "pin/rd" can reach where
storing the output is the limit, as for the derivative matrices at n = 100: 160 / 240 kB per state), whereas
Pinocchio's loop writes into the same data.M each time (80 kB at nv = 100, staying in the cache, its upper triangle
only). The inertia matrix therefore has a second anchor,
"→batch": Pinocchio's crba with each M mirrored whole in data.M and copied out with memcpy into a fresh batch
array of "rd states" matrices (malloc'd with transparent huge pages advised, as NumPy does for robodyn's result),
the work a user's batch needs and what robodyn's call does; "pb/rd" is its time over robodyn's.

Fixed bases are timed twice in each round, by default and with ``trig="fast"`` (the generic kernels' vectorised
sincos, within 1 ulp of the C library's: docs/scaling.md): "fast" is robodyn's µs with it, "pin/fast" Pinocchio's
time over that, "fast/rd" the default's time over it (> 1: the option gains), "% pk fast" its fraction of the peak;
its results enter "max rel diff" too.

Under each inverse-dynamics row, "bound" says what limits it: the sin + cos pairs, one per revolute joint and
state, of the default trigonometry (NumPy's values to the last bit), timed here in a C loop on the states' θ_j +
q_j as the kernels compute them: four angles at a time by the kernels' own ``libm_sincos_body`` where
``robodyn.native.exact_trig()`` is "lanes" (as the header says), else a call of the C library's sin and cos each;
then the % of peak that the counted flops would reach with no arithmetic but those pairs and in the time left after
them, the inputs and output (32 n bytes per state) at the store rate, and the recursion's serial chain (CHAIN_OPS
dependent FP operations per frame and block of 4 states at LATENCY cycles each, at the clock of /proc/cpuinfo).
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from robodyn import native

HERE = Path(__file__).resolve().parent
CPP = HERE / "bench_pinocchio_cpp.cpp"

#: defines of Pinocchio's CMake configuration (pinocchioConfig / the compile definitions of its targets)
DEFINES = ("-DBOOST_MPL_LIMIT_LIST_SIZE=30", "-DBOOST_MPL_LIMIT_VECTOR_SIZE=30",
           "-DBOOST_MPL_CFG_NO_PREPROCESSED_HEADERS", "-DBOOST_FUSION_INVOKE_MAX_ARITY=12")
FLAGS = ("-x", "c++", "-std=c++17", "-O3", "-march=native", "-DNDEBUG")
JOINT_TYPES = {"JointModelRX": "RX", "JointModelRY": "RY", "JointModelRZ": "RZ", "JointModelPX": "PX",
               "JointModelPY": "PY", "JointModelPZ": "PZ", "JointModelFreeFlyer": "FF"}
TOLERANCE = 1e-10
#: robodyn's output per timed call at most this many bytes (the n = 100 regressor is 640 kB per state)
MAX_BYTES = 1 << 28
#: the suffix of a quantity timed with trig="fast"
FAST = " (fast)"


def fail(message: str) -> None:
    print(f"bench_pinocchio_cpp: {message}", file=sys.stderr)
    raise SystemExit(2)


def find_cxx() -> str:
    for cand in ([os.environ["CXX"]] if os.environ.get("CXX") else []) + ["c++", "g++", "clang++"]:
        path = shutil.which(cand)
        if path:
            return path
    fail("no C++ compiler found (looked for $CXX, c++, g++, clang++ on PATH); install g++ or clang++, or set CXX")


def cpu_flag() -> str:
    """A define naming this CPU (-march=native code is for it alone: the key then differs on another CPU)."""
    import hashlib
    import platform

    model = platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            model += next((line.partition(":")[2].strip() for line in f if line.startswith("model name")), "")
    except OSError:
        pass
    return "-DRD_CPU_" + hashlib.sha256(model.encode()).hexdigest()[:16]


def include_flags(pin_version: str) -> list[str]:
    """-I flags of the pin wheel's cmeel prefix (Pinocchio, Boost, Eigen); a clear exit when a header is missing."""
    import cmeel

    prefix = Path(cmeel.__file__).resolve().parent.parent / "cmeel.prefix" / "include"
    for header, package in (("pinocchio/algorithm/rnea.hpp", "pin"), ("boost/mpl/vector.hpp", "cmeel-boost"),
                            ("eigen3/Eigen/Core", "cmeel-eigen")):
        if not (prefix / header).exists():
            fail(f"{header} not found under {prefix}; install {package} (pip install {package}) in this environment")
    return [f"-I{prefix}", f"-I{prefix / 'eigen3'}", f"-DRD_PIN_VERSION_{pin_version.replace('.', '_')}"]


def build(pin_version: str) -> Path:
    """The C++ program from the verified cache, compiled there first when needed (minutes)."""
    from robodyn.errors import RobodynError
    from robodyn.native import build as native_build

    cxx = find_cxx()
    flags = [*FLAGS, *DEFINES, *include_flags(pin_version), cpu_flag()]
    old = os.environ.get("CC")
    os.environ["CC"] = cxx  # build_library compiles with $CC: here the C++ compiler
    try:
        return native_build.build_library(CPP.read_text(encoding="utf-8"), flags, timeout=3600,
                                          description="compiling the Pinocchio C++ benchmark", prefix="pinbench")
    except RobodynError as exc:
        fail(f"building {CPP.name} failed: {exc}")
    finally:
        if old is None:
            del os.environ["CC"]
        else:
            os.environ["CC"] = old


def model_text(model) -> str:
    """The Pinocchio model as the C++ program reads it (bench_pinocchio_cpp.cpp)."""
    lines = ["gravity " + " ".join(repr(float(x)) for x in model.gravity.linear)]
    for j in range(1, model.njoints):
        kind = JOINT_TYPES.get(model.joints[j].shortname())
        if kind is None:
            fail(f"joint {model.names[j]!r}: {model.joints[j].shortname()} is not handled by {CPP.name}")
        M, Y = model.jointPlacements[j], model.inertias[j]
        numbers = [*np.asarray(M.rotation).ravel(), *M.translation, Y.mass, *Y.lever]
        I = np.asarray(Y.inertia)
        numbers += [I[0, 0], I[0, 1], I[1, 1], I[0, 2], I[1, 2], I[2, 2]]
        lines.append(f"{kind} {model.parents[j]} " + " ".join(repr(float(x)) for x in numbers))
    lines.append("armature " + " ".join(repr(float(x)) for x in model.armature))
    return "\n".join(lines) + "\n"


#: the C++ program's environment: glibc's malloc advises transparent huge pages on its large blocks, as NumPy does
#: on the arrays robodyn returns (where the system leaves huge pages to madvise, a fresh batch of 4 kB pages costs
#: the anchor a page fault per 4 kB: at nv = 100, 60 instead of 29 µs per state)
CPP_ENV = dict(os.environ, GLIBC_TUNABLES="glibc.malloc.hugetlb=1")
#: "wall" or "cpu" (--cpu-time): how both sides are timed
CLOCK = {"mode": "wall", "fresh": False}


def run_cpp(binary: Path, model, q, v, a, tau, repeat: int, batch: int):
    """(timings {name: µs per state}, raw results of the first states) of the C++ program on these states; its
    "crba_batch" loops copy each M out into a fresh array of ``batch`` states."""
    with tempfile.TemporaryDirectory(prefix="rd-pinbench-") as tmp:
        tmp = Path(tmp)
        (tmp / "model.txt").write_text(model_text(model), encoding="ascii")
        np.ascontiguousarray(np.concatenate([q, v, a, tau], -1), dtype=np.float64).tofile(tmp / "states.bin")
        done = subprocess.run([str(binary), str(tmp / "model.txt"), str(tmp / "states.bin"), str(len(q)),
                               str(repeat), str(tmp / "out.bin"), str(batch), *(["cpu"] if CLOCK["mode"] == "cpu" else [])],
                              capture_output=True, text=True, env=CPP_ENV)
        if done.returncode:
            fail(f"the C++ program failed (exit {done.returncode}): {done.stderr.strip()}")
        times = {name: float(t) for name, t in (line.split() for line in done.stdout.splitlines())}
        return times, np.fromfile(tmp / "out.bin", dtype=np.float64)


class Results:
    """Reads the C++ program's results in order: for each case, for each checked state, its matrices."""

    def __init__(self, flat, checked: int):
        self.flat, self.at, self.checked = flat, 0, checked

    def take(self, *shapes):
        """[case results][state] → arrays of ``shapes`` (column-major), stacked over the checked states."""
        out = [[] for _ in shapes]
        for _ in range(self.checked):
            for k, shape in enumerate(shapes):
                size = math.prod(shape)
                out[k].append(self.flat[self.at:self.at + size].reshape(shape, order="F"))
                self.at += size
        return [np.stack(x) for x in out]


def upper_to_full(M):
    """Pinocchio's inertia matrix (upper triangle filled) → the symmetric matrix; (..., n, n)."""
    return np.triu(M) + np.swapaxes(np.triu(M, 1), -1, -2)


def anchor(times: dict, name: str):
    """(µs, convention) of the faster of Pinocchio's two conventions where it has both (crba, aba)."""
    if times.get(name + "_world", float("inf")) < times[name]:
        return times[name + "_world"], "WORLD"
    return times[name], "LOCAL" if name + "_world" in times else ""


def rel(a, b) -> float:
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))) / max(1.0, np.max(np.abs(b))))


def interleaved(cpp, ours: dict, rounds: int):
    """(C++ µs {case: best}, robodyn µs {quantity: best}) over ``rounds`` rounds, each running the C++ program
    (``cpp()``: its timings) and then robodyn's calls (``ours``: quantity -> (call, states)): a burst of load from
    other processes hits both sides alike, and the best round of each is kept."""
    theirs, mine = {}, {}
    for _ in range(rounds):
        for name, t in cpp().items():
            theirs[name] = min(t, theirs.get(name, float("inf")))
        for name, (fn, m) in ours.items():
            # an untimed call first: the kernels' library loaded, the robot's arrays cached, its dropped result
            # kept by robodyn's pool for the timed call (as in a user's loop), unless --fresh empties the pool
            fn(m)
            if CLOCK["fresh"]:
                native.release_memory()
            mine[name] = min(timed(lambda: fn(m)) * 1e6 / m, mine.get(name, float("inf")))
    return theirs, mine


#: a reused array filled with non-temporal stores (x86-64; elsewhere ordinary ones), as robodyn's kernels write
#: results of 8 MB and more (kernels.c, RD_STREAM): each line written whole without being fetched first
STREAM_C = r"""
#if defined(__x86_64__)
#include <emmintrin.h>
#endif
void rd_stream_fill(double *a, long count) {
    long k = 0;
#if defined(__x86_64__)
    if ((unsigned long)a & 15) a[k++] = 1.0;
    for (; k + 2 <= count; k += 2) _mm_stream_pd(a + k, _mm_set1_pd(1.0));
    _mm_sfence();
#endif
    for (; k < count; k++) a[k] = 1.0;
}
"""


def store_bandwidth(size: int = MAX_BYTES) -> tuple[float, float, float]:
    """(bytes/s into a reused array, into a fresh one, into a reused one with non-temporal stores) on this core,
    best of 3: the rates at which a batched call can write its output, NumPy's fill (page faults of the fresh array
    included) and STREAM_C's, the kernels' way for results of 8 MB and more."""
    import ctypes

    from robodyn.native import build as native_build

    path = native_build.build_library(STREAM_C, list(native_build.FLAGS), description="compiling the store timer",
                                      prefix="streambench")
    fill = ctypes.CDLL(str(path)).rd_stream_fill
    fill.restype, fill.argtypes = None, [ctypes.c_void_p, ctypes.c_long]
    reused, fresh = np.empty(size // 8), float("inf")
    best = streamed = float("inf")
    for _ in range(3):
        best = min(best, timed(lambda: reused.fill(1.0)))
        fresh = min(fresh, timed(lambda: np.empty(size // 8).fill(1.0)))
        streamed = min(streamed, timed(lambda: fill(reused.ctypes.data, reused.size)))
    return size / best, size / fresh, size / streamed


#: sin and cos of the C library as the generic kernels call them by default (one pair per revolute frame and state,
#: GCC merging the two into one sincos call), on the arguments θ_j + q_j of the timed states, in this thread's CPU
#: time: the part of the inverse dynamics that its arithmetic cannot shorten
SINCOS_C = r"""
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <time.h>
double rd_sincos_ns(const double *x, long count, long repeat) {
    struct timespec t0, t1;
    volatile double sink;
    double acc = 0.0;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    for (long r = 0; r < repeat; r++)
        for (long k = 0; k < count; k++) acc += sin(x[k]) + cos(x[k]);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
    sink = acc;
    (void)sink;
    return ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / (double)(count * repeat);
}
"""


#: the kernels' own sines and cosines in lanes (kernels.c up to its 3-vectors, libm_sincos_body), four angles a call,
#: timed as SINCOS_C times the C library's
LANES_C = r"""
#include <time.h>
RD_CLONES double rd_lanes_sincos_ns(const double *x, long count, long repeat) {
    struct timespec t0, t1;
    volatile double sink;
    double acc = 0.0, s[RD_LANES], c[RD_LANES];
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    for (long r = 0; r < repeat; r++)
        for (long k = 0; k + RD_LANES <= count; k += RD_LANES) {
            libm_sincos_body(x + k, s, c);
            acc += s[0] + c[RD_LANES - 1];
        }
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
    sink = acc;
    (void)sink;
    return ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec))
           / (double)(count / RD_LANES * RD_LANES * repeat);
}
"""


def sincos_ns(robot, q, lanes: bool) -> float:
    """ns per sin + cos pair on θ_j + q_j of the states ``q`` (best of 5): the C library's, built with the generic
    kernels' flags, or with ``lanes`` the kernels' own four angles at a time (``libm_sincos_body``, in the clone
    the kernels run here)."""
    import ctypes

    from robodyn.native import build as native_build

    if lanes:
        kernels = (Path(native.__file__).parent / "kernels.c").read_text(encoding="utf-8")
        head = kernels[:kernels.index("/* ---- 3-vectors of lanes")]
        flags = [*native_build.FLAGS, *(f for f in native_build.python_flags() if f != "-DRD_PYTHON")]
        path = native_build.build_library(head + LANES_C, flags,
                                          description="compiling the lanes' sincos timer", prefix="sincosbench")
        fn = ctypes.CDLL(str(path)).rd_lanes_sincos_ns
    else:
        path = native_build.build_library(SINCOS_C, list(native_build.FLAGS),
                                          description="compiling the sincos timer", prefix="sincosbench")
        fn = ctypes.CDLL(str(path)).rd_sincos_ns
    fn.restype, fn.argtypes = ctypes.c_double, [ctypes.c_void_p, ctypes.c_long, ctypes.c_long]
    revolute = robot.sigma[robot.joint_frames] == 0
    x = np.ascontiguousarray((robot.theta[robot.joint_frames][revolute] + q[:, revolute]).reshape(-1)[:1 << 18])
    return min(fn(x.ctypes.data, x.size, max(1, 10**6 // x.size)) for _ in range(5))


def cpu_hz() -> float:
    """The clock of /proc/cpuinfo (its first ``cpu MHz``) in Hz, 2 GHz where it is not listed."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == "cpu MHz":
                    return float(value) * 1e6
    except (OSError, ValueError):
        pass
    return 2e9


#: FP operations on the serial chain of the Newton–Euler recursion per frame (kernels.c, forward_frame and
#: backward_recursion): V̇_j from V̇_a (two additions, R^T: a product and two additions) and m_a from m_j (R m: a
#: product and two additions, two additions); the rest of a frame's work hangs off this chain
CHAIN_OPS = 10
#: latency of one FP addition or multiplication in cycles (3 on AMD Zen and Intel cores since Skylake: 4)
LATENCY = 3


def bound_line(robot, counted: int, t_rd: float, t_sc: float, lanes: bool, peak: float, bw: float) -> str:
    """What bounds the batched inverse dynamics: its sines and cosines (t_sc ns a pair; ``lanes``: the kernels'
    own, else the C library's calls), its memory traffic, its serial chain (µs)."""
    n, nf, pairs = robot.n, robot.nf, int(np.sum(robot.sigma == 0))
    trig = pairs * t_sc / 1e3
    rest = t_rd - trig
    chain = nf * CHAIN_OPS * LATENCY / 4 / cpu_hz() * 1e6  # 4 states per block share each chain
    ceiling = counted / (trig * 1e-6) / peak * 100
    arith = "—" if rest <= 0 else f"{counted / (rest * 1e-6) / peak * 100:.1f} %"
    how = "sin+cos in lanes" if lanes else "C library's sin+cos"
    return (f"{'':<16} {'':>4} {'  bound':<17} {how} {pairs} × {t_sc:.1f} ns = {trig:.3f} µs of {t_rd:.3f} (ceiling "
            f"{ceiling:.1f} % of peak with no arithmetic; the rest: {counted} flops at {arith}); memory "
            f"{32 * n} B/state in + out = {32 * n / bw * 1e6:.3f} µs; serial chain {CHAIN_OPS}×{LATENCY} cycles/frame = "
            f"{chain:.3f} µs")


def timed(fn) -> float:
    """Wall time (or with --cpu-time this thread's CPU time) of one call of ``fn()`` (s)."""
    clock = time.thread_time if CLOCK["mode"] == "cpu" else time.perf_counter
    t = clock()
    fn()
    return clock() - t


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--states", type=int, default=10_000, help="states per loop (default 10^4)")
    ap.add_argument("--sizes", default="6,25,100", help="joint counts of the fixed-base robots")
    ap.add_argument("--repeat", type=int, default=5, help="rounds (the C++ program, then robodyn); best kept")
    ap.add_argument("--floating", nargs="*", default=["solo12.urdf", "talos_reduced.urdf", "g1_29dof_rev_1_0.urdf"],
                    help="free flyers of example-robot-data")
    ap.add_argument("--core", type=int, default=None, help="the core both sides run on (default: the last usable)")
    ap.add_argument("--cpu-time", action="store_true",
                    help="time both sides in their thread's CPU time, not wall time (a machine shared with other jobs)")
    ap.add_argument("--fresh", action="store_true",
                    help="robodyn's results into fresh pages: its pool of result blocks emptied before each timed call")
    args = ap.parse_args(argv)
    CLOCK["mode"], CLOCK["fresh"] = "cpu" if args.cpu_time else "wall", args.fresh
    try:
        import pinocchio as pin
    except ImportError:
        fail("Pinocchio is not installed (pip install pin)")
    import robodyn as rd
    from robodyn.analysis.opcount import count_operations

    sys.path.insert(0, str(HERE))
    from _timing import flops, machine_peak
    from bench_native import _COUNTED, robot_of_size

    binary = build(pin.__version__)
    core = args.core if args.core is not None else max(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {core})  # robodyn's default call then uses one thread; the C++ program inherits it
    peak, how = machine_peak()
    bw_reused, bw_fresh, bw_stream = store_bandwidth()
    load = os.getloadavg()
    print(f"{args.states} states, one core (core {core}), µs per state ({CLOCK['mode']} time), best of {args.repeat}; "
          f"pin {pin.__version__} "
          f"in C++ (-O3 -march=native); peak {peak / 1e9:.0f} GFLOP/s = {how}; load average {load[0]:.2f} "
          f"{load[1]:.2f} {load[2]:.2f}; stores {bw_reused / 1e9:.1f} GB/s into a reused array, "
          f"{bw_fresh / 1e9:.1f} GB/s into a fresh one, {bw_stream / 1e9:.1f} GB/s non-temporal; "
          f"trig='exact' by {native.exact_trig()}")
    print(f"{'robot':<16} {'nv':>4} {'quantity':<17} {'rd states':>9} {'robodyn':>9} {'Pin C++':>9} {'conv.':<6} "
          f"{'pin/rd':>7} {'fast':>9} {'pin/fast':>8} {'fast/rd':>7} {'→batch':>9} {'pb/rd':>7} {'% peak':>7} "
          f"{'% pk fast':>9} {'mem floor':>9} {'pin/floor':>9} {'max rel diff':>12}")
    checked = 3
    roofline = []  # (robot, nv, robodyn fresh, robodyn out=, Pin C++ in place, Pin C++ → batch, Pin Python loop)

    def row(name, nv, quantity, m, t_rd, t_pin, convention, diff, counted=None, floats=None, batch=None, fast=None):
        frac = "—" if counted is None else f"{counted / (t_rd * 1e-6) / peak * 100:.1f}"
        frac_fast = "—" if counted is None or fast is None else f"{counted / (fast * 1e-6) / peak * 100:.1f}"
        trig = f"{'—':>9} {'—':>8} {'—':>7}" if fast is None else f"{fast:>9.3f} {t_pin / fast:>8.2f} {t_rd / fast:>7.2f}"
        # the roofline of the output: its bytes per state at the store rate into a fresh array (µs)
        floor = "—" if floats is None else f"{8 * floats / bw_fresh * 1e6:.3f}"
        # the most pin/rd can reach where storing the output is the limit: Pinocchio's time over that floor
        most = "—" if floats is None else f"{t_pin / (8 * floats / bw_fresh * 1e6):.2f}"
        mark = "" if diff <= TOLERANCE else "  FAIL: results differ"
        copied = f"{'—':>9} {'—':>7}" if batch is None else f"{batch:>9.3f} {batch / t_rd:>7.2f}"
        print(f"{name:<16} {nv:>4} {quantity:<17} {m:>9} {t_rd:>9.3f} {t_pin:>9.3f} {convention:<6} "
              f"{t_pin / t_rd:>7.2f} {trig} {copied} {frac:>7} {frac_fast:>9} {floor:>9} {most:>9} {diff:>12.1e}{mark}",
              flush=True)

    for n in (int(s) for s in args.sizes.split(",")):
        robot = robot_of_size(n).replace(Fv=None, Fc=None)
        model, mapping = rd.to_pinocchio(robot)
        if not np.array_equal(np.asarray(mapping.v_index), np.arange(robot.n)):
            fail(f"n = {n}: Pinocchio's joint order differs from robodyn's (a serial chain is expected)")
        rng = np.random.default_rng(0)
        q, qd, qdd = rng.uniform(-1, 1, (3, args.states, robot.n))
        tau = rd.inverse_dynamics(robot, q, qd, qdd)
        m_crba = min(args.states, max(256, MAX_BYTES // (8 * robot.n * robot.n)))
        flat = run_cpp(binary, model, q, qd, qdd, tau, 1, m_crba)[1]
        res, k = Results(flat, checked), slice(0, checked)
        N = robot.n
        # quantity -> (robodyn's call on the first m states with trig=, the C++ case, output floats per state)
        calls = {
            "inverse dyn.": (lambda m, t="exact": rd.inverse_dynamics(robot, q[:m], qd[:m], qdd[:m], trig=t), "rnea", N),
            "inertia matrix": (lambda m, t="exact": rd.inertia_matrix(robot, q[:m], trig=t), "crba", N * N),
            "forward dyn.": (lambda m, t="exact": rd.forward_dynamics(robot, q[:m], qd[:m], tau[:m], trig=t), "aba", N),
            "regressor": (lambda m, t="exact": rd.regressor(robot, q[:m], qd[:m], qdd[:m], friction=False, trig=t),
                          "regressor", 11 * N * N),
            "ID derivatives": (lambda m, t="exact": rd.inverse_dynamics_derivatives(robot, q[:m], qd[:m], qdd[:m],
                                                                                    trig=t),
                               "rnea_derivatives", 2 * N * N),
            "FD derivatives": (lambda m, t="exact": rd.forward_dynamics_derivatives(robot, q[:m], qd[:m], tau[:m],
                                                                                    trig=t),
                               "aba_derivatives", 3 * N * N),
        }
        t_c, M_c, a_c, Mw_c, aw_c, Mb_c, Mbw_c = (res.take(shape)[0] for shape in
                                                  ((N,), (N, N), (N,), (N, N), (N,), (N, N), (N, N)))
        (y_c,) = res.take((N,))
        dq_c, dv_c = res.take((N, N), (N, N))
        fq_c, fv_c = res.take((N, N), (N, N))
        armature = np.asarray(model.armature)
        did, dfd = (rd.inverse_dynamics_derivatives(robot, q[k], qd[k], qdd[k]),
                    rd.forward_dynamics_derivatives(robot, q[k], qd[k], tau[k]))
        K = rd.parameters.standard_parameter_vector(robot, False)
        Y = rd.regressor(robot, q[k], qd[k], qdd[k], friction=False)
        diffs = {
            "inverse dyn.": rel(tau[k], t_c),
            "inertia matrix": max([rel(rd.inertia_matrix(robot, q[k]), upper_to_full(M)) for M in (M_c, Mw_c)]
                                  + [rel(rd.inertia_matrix(robot, q[k]), M) for M in (Mb_c, Mbw_c)]),
            "forward dyn.": max(rel(qdd[k], a_c), rel(qdd[k], aw_c)),
            # Pinocchio's Y·π is the rigid-body torque; robodyn's regressor·K includes the armature column
            "regressor": max(rel(tau[k] - armature * qdd[k], y_c), rel(np.einsum("...ij,j->...i", Y, K), tau[k])),
            "ID derivatives": max(rel(did[0], dq_c), rel(did[1], dv_c)),
            "FD derivatives": max(rel(dfd[0], fq_c), rel(dfd[1], fv_c)),
        }
        for quantity, (fn, _, _) in calls.items():  # trig="fast" within rounding of the default
            diffs[quantity] = max(diffs[quantity], rel(fn(checked, "fast"), fn(checked)))
        # an output of at most MAX_BYTES per call; each quantity by default, then with trig="fast"
        ours = {}
        for quantity, (fn, _, size) in calls.items():
            m = min(args.states, max(256, MAX_BYTES // (8 * size)))
            ours[quantity] = (fn, m)
            ours[quantity + FAST] = (lambda m, fn=fn: fn(m, "fast"), m)
        # the inertia matrix into a reused out= (no page faults), and Pinocchio's crba in a Python loop
        reused = np.empty((ours["inertia matrix"][1], N, N))
        data = model.createData()
        ours["A out="] = (lambda m: rd.inertia_matrix(robot, q[:m], out=reused[:m]), ours["inertia matrix"][1])
        ours["pin.crba loop"] = (lambda m: [pin.crba(model, data, q[i]) for i in range(m)], min(args.states, 2000))
        times, t_ours = interleaved(lambda: run_cpp(binary, model, q, qd, qdd, tau, 1, m_crba)[0], ours,
                                    args.repeat)
        roofline.append((f"n = {n}" if n != 6 else "puma560", N, t_ours["inertia matrix"], t_ours["A out="],
                         anchor(times, "crba")[0], anchor(times, "crba_batch")[0], t_ours["pin.crba loop"]))
        for quantity, (_, cname, size) in calls.items():
            m, t_rd = ours[quantity][1], t_ours[quantity]
            counted = None
            if quantity in _COUNTED:
                counted = flops(count_operations(robot, *_COUNTED[quantity])[0])
            row(f"n = {n}" if n != 6 else "puma560", N, quantity, m, t_rd, *anchor(times, cname), diffs[quantity],
                counted, size, anchor(times, "crba_batch")[0] if cname == "crba" else None, t_ours[quantity + FAST])
            if cname == "rnea":
                lanes = native.exact_trig() == "lanes"
                print(bound_line(robot, counted, t_rd, sincos_ns(robot, q, lanes), lanes, peak, bw_fresh), flush=True)


    if args.floating:
        from bench_floating import free_flyer_pair, urdf_paths

        paths = urdf_paths()
        for name in args.floating:
            if name not in paths:
                print(f"{name}: not in the installed example-robot-data, skipped")
                continue
            robot, model, perm, (q, v, a, tau), (qp, vp, ap_, taup) = free_flyer_pair(paths[name], args.states)
            flat = run_cpp(binary, model, qp, vp, ap_, taup, 1, args.states)[1]
            res, k, nv = Results(flat, checked), slice(0, checked), model.nv
            t_c, M_c, a_c, Mw_c, aw_c, Mb_c, Mbw_c = (res.take(shape)[0] for shape in
                                                      ((nv,), (nv, nv), (nv,), (nv, nv), (nv,), (nv, nv), (nv, nv)))
            M_rd = rd.floating.floating_inertia_matrix(robot, q[k])
            diffs = {"rnea": rel(taup[k], t_c),
                     "crba": max([rel(M_rd, upper_to_full(M)[:, perm][:, :, perm]) for M in (M_c, Mw_c)]
                                 + [rel(M_rd, M[:, perm][:, :, perm]) for M in (Mb_c, Mbw_c)]),
                     "aba": max(rel(ap_[k], a_c), rel(ap_[k], aw_c))}
            calls = {"rnea": lambda m: rd.floating.floating_inverse_dynamics(robot, q[:m], v[:m], a[:m]),
                     "crba": lambda m: rd.floating.floating_inertia_matrix(robot, q[:m]),
                     "aba": lambda m: rd.floating.floating_forward_dynamics(robot, q[:m], v[:m], tau[:m])}
            reused = np.empty((args.states, nv, nv))   # the inertia matrix into a reused out= (no page faults)
            ours = {cname: (fn, args.states) for cname, fn in calls.items()}
            ours["crba out="] = (lambda m: rd.floating.floating_inertia_matrix(robot, q[:m], out=reused[:m]),
                                 args.states)
            ours["crba" + FAST] = (lambda m: rd.floating.floating_inertia_matrix(robot, q[:m], trig="fast"),
                                   args.states)
            times, t_ours = interleaved(lambda: run_cpp(binary, model, qp, vp, ap_, taup, 1, args.states)[0],
                                        ours, args.repeat)
            for cname in calls:
                row(name.removesuffix(".urdf")[:16], nv, f"floating {cname}", args.states, t_ours[cname],
                    *anchor(times, cname), diffs[cname], floats=nv * nv if cname == "crba" else None,
                    batch=anchor(times, "crba_batch")[0] if cname == "crba" else None, fast=t_ours.get(cname + FAST))
            roofline.append((name.removesuffix(".urdf")[:16], nv, t_ours["crba"], t_ours["crba out="],
                             anchor(times, "crba")[0], anchor(times, "crba_batch")[0], None))
    print_roofline(roofline, bw_fresh, bw_reused, bw_stream)


def print_roofline(rows, bw_fresh: float, bw_reused: float, bw_stream: float) -> None:
    """The inertia matrix against the rates at which this core stores its output (measured above, MAX_BYTES): the
    n x n matrix of every state is 8 n² bytes, written by robodyn's call into a block of its pool (fresh pages with
    --fresh: page faults and the system's zeroing of each page included) and into a reused array with out=, with
    non-temporal stores where a call's results reach 8 MB (all rows here but the PUMA 560's).  "floor" = bytes /
    bandwidth: no call can take less (fr: NumPy's fill of a fresh array, re: of a reused one, nt: non-temporal
    stores into a reused one); "max" = Pinocchio's time over the nt floor: the largest ratio reachable.
    Pinocchio's crba in place writes its upper triangle into the same data.M (cache resident); "→batch" copies
    each M into a fresh batch; "Py loop" is pin.crba called from Python on each state."""
    print("\ninertia matrix: roofline of the output (µs per state; floors at "
          f"{bw_fresh / 1e9:.1f} GB/s into a fresh array, {bw_reused / 1e9:.1f} GB/s into a reused one, "
          f"{bw_stream / 1e9:.1f} GB/s non-temporal)")
    print(f"{'robot':<16} {'nv':>4} {'bytes':>7} {'floor fr':>8} {'floor re':>8} {'floor nt':>8} {'robodyn':>8} "
          f"{'rd out=':>8} {'Pin C++':>8} {'pin/rd':>7} {'max':>6} {'→batch':>8} {'pb/rd':>6} {'max':>6} {'Py loop':>8} "
          f"{'Py/rd':>6}")
    for name, nv, t_rd, t_out, t_pin, t_batch, t_py in rows:
        size = 8 * nv * nv
        fresh, kept, streamed = size / bw_fresh * 1e6, size / bw_reused * 1e6, size / bw_stream * 1e6
        out = "—" if t_out is None else f"{t_out:.3f}"
        py = f"{'—':>8} {'—':>6}" if t_py is None else f"{t_py:>8.3f} {t_py / t_rd:>6.2f}"
        print(f"{name:<16} {nv:>4} {size:>7} {fresh:>8.3f} {kept:>8.3f} {streamed:>8.3f} {t_rd:>8.3f} {out:>8} "
              f"{t_pin:>8.3f} {t_pin / t_rd:>7.2f} {t_pin / streamed:>6.2f} {t_batch:>8.3f} {t_batch / t_rd:>6.2f} "
              f"{t_batch / streamed:>6.2f} {py}", flush=True)


if __name__ == "__main__":
    main()
