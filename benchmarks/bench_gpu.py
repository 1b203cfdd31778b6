"""Benchmark on a GPU: robodyn's customized models as CUDA kernels (rd.compile(..., backend="cuda")), the same
kernels launched from jax.jit (its ``.jax()``, "cudajax"), as JAX functions (rd.compile(..., backend="jax"),
"jaxc"), and the JAX recursions (robodyn.jax), all under jax.jit and checked against NumPy, then states per second
for 10^4 … 10^8 states, float64 and float32, on puma560, panda and wam7, next to MuJoCo MJX's inverse dynamics
(``mjx.inverse`` under jax.vmap and jax.jit) on the same card where mujoco-mjx is installed.

Run on a machine with an NVIDIA GPU, CuPy (robodyn[cuda]) and JAX with CUDA (robodyn[jax] + jax[cuda12]):

    PYTHONPATH=src python benchmarks/bench_gpu.py [--robots puma560,panda,wam7] [--max-exp 8] [--budget 240]
                                                  [--backends cuda,cudajax,jax,jaxc,mjx] [--latency]
                                                  [--floating solo12.urdf talos_reduced.urdf ...]

It prints one line per (backend, robot, dtype, states): the best of 5 timed calls with the states resident on the
GPU (structure-of-arrays layout for CUDA), states/s, and for CUDA the fraction of the memory-bandwidth limit
(bytes read and written per state / the card's peak bandwidth). Correctness is checked first on 10^4 random states:
max relative difference to rd.inverse_dynamics (NumPy, float64). Sizes are skipped when the time budget (seconds)
would be exceeded (each back end gets an equal share), so the whole script ends in about --budget seconds plus
compile times. ``--latency`` adds, per back end, the median wall time of one call on 10^4 states resident on the
GPU, synchronized after each call (CUDA: ``f.soa`` into a new array and into ``out=``; JAX: the jitted function
and ``block_until_ready``).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import robodyn as rd


def best_of(f, sync, repeat: int = 5) -> float:
    f()
    sync()
    t_best = np.inf
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        sync()
        t_best = min(t_best, time.perf_counter() - t)
    return t_best


def median_call(f, repeat: int = 300, warm: float = 0.5) -> float:
    """Median wall time (s) of ``f()``, which waits for its result, after ``warm`` seconds of calls: an idle GPU
    clocks down (to 345 MHz on an H200), and a few calls do not bring it back up."""
    t = time.perf_counter()
    while time.perf_counter() - t < warm:
        f()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def peak_bandwidth(cp) -> float:
    """Peak memory bandwidth of device 0 (bytes/s) from its clock and bus width."""
    attrs = cp.cuda.runtime.getDeviceProperties(0)
    return 2.0 * attrs["memoryClockRate"] * 1e3 * attrs["memoryBusWidth"] / 8


def cuda_rows(robot, dtype, sizes, budget, start, latency=False):
    import cupy as cp

    f = rd.compile(robot, "inverse_dynamics", backend="cuda", dtype=dtype)
    rng = np.random.default_rng(0)
    q, qd, qdd = rng.uniform(-1, 1, (3, 10_000, robot.n))
    ref = rd.inverse_dynamics(robot, q, qd, qdd)
    got = cp.asnumpy(f(q, qd, qdd))
    err = np.max(np.abs(got - ref)) / np.max(np.abs(ref))
    print(f"cuda  {robot.name:8s} {dtype:7s} check: max rel diff {err:.1e}  (kernel {len(f.source)} chars)")
    item = np.dtype(dtype).itemsize
    per_state = (4 * robot.n) * item  # q, qd, qdd read, tau written
    g = np.asarray(robot.gravity, dtype=dtype)  # shared by all states: passed by value with the launch
    p = np.asarray(f.nominal_parameters, dtype=dtype)
    if latency:
        arrays = [cp.random.uniform(-1, 1, (robot.n, 10_000)).astype(dtype) for _ in range(3)]
        out = cp.empty((robot.n, 10_000), dtype=dtype)
        sync = cp.cuda.get_current_stream().synchronize
        fresh = median_call(lambda: (f.soa(*arrays, g, p), sync()))
        into = median_call(lambda: (f.soa(*arrays, g, p, out=out), sync()))
        print(f"cuda  {robot.name:8s} {dtype:7s} latency, 10^4 states: {fresh * 1e6:.1f} µs per call "
              f"({into * 1e6:.1f} µs with out=)")
    for count in sizes:
        if time.perf_counter() - start > budget:
            print(f"cuda  {robot.name:8s} {dtype:7s} {count:>10d} skipped (time budget)")
            continue
        arrays = [cp.random.uniform(-1, 1, (robot.n, count)).astype(dtype) for _ in range(3)]
        t = best_of(lambda: f.soa(*arrays, g, p), cp.cuda.Device().synchronize)
        rate = count / t
        frac = rate * per_state / peak_bandwidth(cp)
        print(f"cuda  {robot.name:8s} {dtype:7s} {count:>10d} {t * 1e3:10.3f} ms {rate:10.3e} states/s "
              f"{100 * frac:5.1f} % of bandwidth")
        del arrays
    cp.get_default_memory_pool().free_all_blocks()  # CuPy's pool would keep the memory from JAX

def device_states(count, n, dtype):
    """Three (count, n) arrays of uniform random joint values in [-1, 1), drawn on the default JAX device."""
    import jax

    keys = jax.random.split(jax.random.PRNGKey(count), 3)
    return [jax.random.uniform(k, (count, n), dtype=dtype, minval=-1.0, maxval=1.0) for k in keys]


def xla_rows(label, robot, dtype, f, sizes, budget, start, note="", latency=False):
    """Check a jitted JAX function f(q, qd, qdd) against rd.inverse_dynamics on 10^4 states (its first call
    compiles), then time it on device-resident batches until the time budget is spent or memory runs out."""
    import jax.numpy as jnp

    t0 = time.perf_counter()
    q, qd, qdd = np.random.default_rng(0).uniform(-1, 1, (3, 10_000, robot.n))
    got = np.asarray(f(*(jnp.asarray(x, dtype=dtype) for x in (q, qd, qdd))))
    compile_s = time.perf_counter() - t0
    ref = rd.inverse_dynamics(robot, q, qd, qdd)
    err = np.max(np.abs(got - ref)) / np.max(np.abs(ref))
    print(f"{label:5s} {robot.name:8s} {dtype:7s} check: max rel diff {err:.1e}  ({note}first call with compile "
          f"{compile_s:.1f} s)")
    if latency:
        arrays = device_states(10_000, robot.n, dtype)
        t = median_call(lambda: f(*arrays).block_until_ready())
        print(f"{label:5s} {robot.name:8s} {dtype:7s} latency, 10^4 states: {t * 1e6:.1f} µs per call")
    for count in sizes:
        if time.perf_counter() - start > budget:
            print(f"{label:5s} {robot.name:8s} {dtype:7s} {count:>10d} skipped (time budget)")
            continue
        arrays = device_states(count, robot.n, dtype)
        try:
            t = best_of(lambda: f(*arrays).block_until_ready(), lambda: None)
        except Exception as exc:  # XLA reports running out of device memory as its own runtime error
            print(f"{label:5s} {robot.name:8s} {dtype:7s} {count:>10d} failed: {str(exc).splitlines()[0][:100]}")
            break
        print(f"{label:5s} {robot.name:8s} {dtype:7s} {count:>10d} {t * 1e3:10.3f} ms {count / t:10.3e} states/s")
        del arrays


def jax_rows(robot, dtype, sizes, budget, start, latency=False):
    import jax

    import robodyn.jax as rj

    jax.config.update("jax_enable_x64", dtype == "float64")
    f = jax.jit(lambda q, qd, qdd: rj.inverse_dynamics(robot, q, qd, qdd))
    xla_rows("jax", robot, dtype, f, sizes, budget, start, latency=latency)


def jaxc_rows(robot, dtype, sizes, budget, start, latency=False):
    import jax

    jax.config.update("jax_enable_x64", dtype == "float64")
    f = jax.jit(rd.compile(robot, "inverse_dynamics", backend="jax"))
    xla_rows("jaxc", robot, dtype, f, sizes, budget, start, "rd.compile(backend='jax'), ", latency)


def cudajax_rows(robot, dtype, sizes, budget, start, latency=False):
    import jax

    jax.config.update("jax_enable_x64", dtype == "float64")
    f = jax.jit(rd.compile(robot, "inverse_dynamics", backend="cuda", dtype=dtype).jax())
    xla_rows("cudajax", robot, dtype, f, sizes, budget, start, "rd.compile(backend='cuda').jax(), ", latency)


def frictionless(robot):
    """The robot without Coulomb and viscous friction: MuJoCo's frictionloss is a constraint solved in the
    forward dynamics, not a term of mj_inverse, so the comparison keeps the rigid-body terms and the rotor inertia
    (MuJoCo's armature); without joint limits, whose constraint forces mj_inverse would subtract for random states
    outside them."""
    zeros = np.zeros(robot.n)
    return robot.with_joint_parameters(Fc=zeros, Fv=zeros, Foff=zeros, qlim=np.tile([-np.inf, np.inf], (robot.n, 1)))


def mjx_rows(robot, dtype, sizes, budget, start, latency=False):
    import jax
    import mujoco
    from mujoco import mjx

    from robodyn.errors import ModelError
    from robodyn.interop import to_mujoco_xml

    jax.config.update("jax_enable_x64", dtype == "float64")
    robot = frictionless(robot)
    try:
        m = mujoco.MjModel.from_xml_string(to_mujoco_xml(robot))
    except ModelError as exc:
        print(f"mjx   {robot.name:8s} {dtype:7s} skipped: {exc}")
        return
    mx = mjx.put_model(m)
    d0 = mjx.make_data(mx)

    def inverse(q, qd, qdd):
        return mjx.inverse(mx, d0.replace(qpos=q, qvel=qd, qacc=qdd)).qfrc_inverse

    xla_rows("mjx", robot, dtype, jax.jit(jax.vmap(inverse)), sizes, budget, start, f"MuJoCo {mujoco.__version__}, ",
             latency)


def floating_rows(path, exponents=(6, 7), memory=40e9):
    """The free-flyer robot of a URDF (floating=True, friction removed): the CUDA kernels of its inverse dynamics and
    inertia matrix (the augmented robot's customized models), checked on 1000 states against
    rd.floating.floating_inverse_dynamics / floating_inertia_matrix, then timed on states resident on the GPU
    (augmented arrays, structure of arrays, CUDA events), with the kernel's registers and local memory per thread
    (spills)."""
    import warnings

    import cupy as cp

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        robot = rd.load(path, floating=True, strict=False).replace(Fv=None, Fc=None)
    rng = np.random.default_rng(3)
    quat = rng.normal(size=(1000, 4))
    quat /= np.linalg.norm(quat, axis=-1, keepdims=True)
    q = np.concatenate([rng.normal(size=(1000, 3)), quat, rng.uniform(-1, 1, (1000, robot.n))], -1)
    v, a = rng.normal(size=(2, 1000, robot.n + 6))
    n6 = robot.n + 6
    for kind, joint, size in (("inverse_dynamics", 3, n6), ("inertia_matrix", 1, n6 * n6)):
        t0 = time.perf_counter()
        f = rd.compile(robot, kind, backend="cuda")
        if kind == "inverse_dynamics":
            got, ref = cp.asnumpy(f(q, v, a)), rd.floating.floating_inverse_dynamics(robot, q, v, a)
            shared = [np.asarray(robot.gravity, float)]
        else:
            got, ref = cp.asnumpy(f(q)), rd.floating.floating_inertia_matrix(robot, q)
            shared = []
        m = f.model  # the augmented robot's CudaModel
        shared.append(np.asarray(m.nominal_parameters, float))
        err = np.max(np.abs(got - ref)) / np.max(np.abs(ref))
        use = m.kernel_attributes()
        print(f"float {robot.name[:12]:12s} {kind:16s} n+6 = {n6}: max rel diff {err:.1e}, {use['registers']} "
              f"registers, {use['local_bytes']} bytes of local memory per thread (compile and check "
              f"{time.perf_counter() - t0:.1f} s)")
        for e in exponents:
            count = 10 ** e
            if count * (joint * n6 + size) * 8 > memory:
                continue
            arrays = [cp.random.uniform(-1, 1, (n6, count)) for _ in range(joint)]
            start, end = cp.cuda.Event(), cp.cuda.Event()
            m.soa(*arrays, *shared)
            best = np.inf
            for _ in range(3):
                start.record()
                m.soa(*arrays, *shared)
                end.record()
                end.synchronize()
                best = min(best, cp.cuda.get_elapsed_time(start, end) / 1e3)
            print(f"float {robot.name[:12]:12s} {kind:16s} {count:>10d} {best * 1e3:10.3f} ms {count / best:10.3e} "
                  f"states/s {count * (joint * n6 + size) * 8 / best / 1e12:5.2f} TB/s")
            del arrays
        cp.get_default_memory_pool().free_all_blocks()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--robots", default="puma560,panda,wam7")
    ap.add_argument("--max-exp", type=int, default=8)
    ap.add_argument("--max-exp-xla", type=int, default=7,
                    help="largest batch exponent for JAX and MJX, whose intermediates take far more memory per state")
    ap.add_argument("--budget", type=float, default=240.0)
    ap.add_argument("--backends", default="cuda,cudajax,jax,jaxc,mjx")
    ap.add_argument("--latency", action="store_true", help="also the time of one call on 10^4 states")
    ap.add_argument("--floating", nargs="*", default=[],
                    help="URDF files of free-flyer robots whose CUDA kernels are timed too (after the back ends)")
    args = ap.parse_args()
    sizes = [10 ** e for e in range(4, args.max_exp + 1)]
    try:
        import cupy as cp

        print(f"device: {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}, "
              f"peak bandwidth {peak_bandwidth(cp) / 1e12:.2f} TB/s")
    except Exception as exc:  # the CUDA rows need CuPy; JAX may still run
        print(f"CuPy unavailable ({exc}); CUDA rows skipped")
        args.backends = ",".join(b for b in args.backends.split(",") if b not in ("cuda", "cudajax"))
    rows = {"cuda": cuda_rows, "cudajax": cudajax_rows, "jax": jax_rows, "jaxc": jaxc_rows, "mjx": mjx_rows}
    backends = [b for b in args.backends.split(",") if b]
    for backend in backends:  # each back end gets an equal share of the time budget
        start = time.perf_counter()
        share = args.budget / len(backends)
        for name in args.robots.split(","):
            robot = rd.load(name)
            for dtype in ("float64", "float32"):
                if time.perf_counter() - start > share:
                    print(f"{backend:5s} {name:8s} {dtype:7s} skipped (time budget)")
                    continue
                rows[backend](robot, dtype, sizes if backend == "cuda" else sizes[: args.max_exp_xla - 3],
                              share, start, args.latency)
    for path in args.floating:
        floating_rows(path)


if __name__ == "__main__":
    main()
