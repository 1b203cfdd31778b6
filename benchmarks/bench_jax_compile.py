"""Compile and run times of robodyn.jax and rd.compile(..., backend="jax") under jit, grad, vmap(grad), a scanned
rollout's value_and_grad and the Hessian of forward dynamics (CPU, float64).

    PYTHONPATH=src:. python benchmarks/bench_jax_compile.py [--robot panda] [--cases jit,grad,...]

"compile" is the first call's extra time: tracing, lowering and XLA's compilation (``jax.jit(f).lower(...).compile()``);
"cpu" the process's CPU seconds during that compilation (less sensitive than wall time to other jobs on a shared
machine; XLA compiles on one thread here); "run" the best of 5 calls of the compiled function, results ready. Cases:

- jit: ``jit(vmap(inverse_dynamics))`` on 10^4 states (run: states/s);
- grad: ``jit(grad(|Γ(q)|²))`` at one state;
- vmap_grad: ``jit(vmap(grad(|Γ(q)|²)))`` on 10^3 states;
- rollout: ``jit(value_and_grad)`` of a 50-step semi-implicit Euler rollout (``lax.scan`` over forward dynamics,
  dt = 10 ms) with respect to the torque sequence, cost Σ |q_t|² + 1e-3 |τ_t|²;
- hessian: ``jit(jax.hessian(q ↦ q̈(q, q̇, τ)))`` at one state, (n, n, n);
- compiled_grad, compiled_vmap_grad, compiled_rollout, compiled_hessian: the same with
  ``rd.compile(robot, kind, backend="jax")`` (whose derivatives come from robodyn.dynamics.loop_free, as
  robodyn.jax's do).

Run it twice, or against another checkout, in the same conditions (``uptime`` before and after): on a shared
machine the wall times carry the waiting for a core; the CPU seconds are disturbed less.
"""

from __future__ import annotations

import argparse
import time

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import robodyn as rd  # noqa: E402
import robodyn.jax as rj  # noqa: E402

CASES = ("jit", "grad", "vmap_grad", "rollout", "hessian", "compiled_grad", "compiled_vmap_grad", "compiled_rollout",
         "compiled_hessian")


def timed(f, *args, repeat: int = 5):
    """((compile s, its CPU s), best run s, result) of jax.jit(f) on args."""
    t, cpu = time.perf_counter(), time.process_time()
    compiled = jax.jit(f).lower(*args).compile()
    compile_s = (time.perf_counter() - t, time.process_time() - cpu)
    run = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        out = jax.block_until_ready(compiled(*args))
        run = min(run, time.perf_counter() - t)
    return compile_s, run, out


def rollout_cost(forward, q0, qd0, dt: float = 0.01):
    """Σ |q_t|² + 1e-3 |τ_t|² over a semi-implicit Euler rollout, a function of the torques (T, n)."""
    def cost(taus):
        def step(x, tau):
            q, qd = x
            qd = qd + dt * forward(q, qd, tau)
            q = q + dt * qd
            return (q, qd), jnp.sum(q * q) + 1e-3 * jnp.sum(tau * tau)

        _, c = jax.lax.scan(step, (q0, qd0), taus)
        return jnp.sum(c)
    return cost


def case(name: str, robot, rng):
    n = robot.n
    q, qd, qdd = (jnp.asarray(rng.uniform(-1, 1, n)) for _ in range(3))
    tau = jnp.asarray(rd.inverse_dynamics(robot, np.asarray(q), np.asarray(qd), np.asarray(qdd)))
    ID = lambda a, b, c: rj.inverse_dynamics(robot, a, b, c)  # noqa: E731
    FD = lambda a, b, c: rj.forward_dynamics(robot, a, b, c)  # noqa: E731
    if name.startswith("compiled"):
        cid, cfd = rd.compile(robot, "inverse_dynamics", backend="jax"), rd.compile(robot, "forward_dynamics", backend="jax")
        ID, FD = (lambda a, b, c: cid(a, b, c)), (lambda a, b, c: cfd(a, b, c))
    square = lambda x: jnp.sum(ID(x, qd, qdd) ** 2)  # noqa: E731
    if name == "jit":
        Q, QD, QDD = (jnp.asarray(rng.uniform(-1, 1, (10_000, n))) for _ in range(3))
        c, r, _ = timed(jax.vmap(ID), Q, QD, QDD)
        return c, r, f"{10_000 / r:.3g} states/s"
    if name in ("grad", "compiled_grad"):
        c, r, _ = timed(jax.grad(square), q)
        return c, r, ""
    if name in ("vmap_grad", "compiled_vmap_grad"):
        Q = jnp.asarray(rng.uniform(-1, 1, (1000, n)))
        c, r, _ = timed(jax.vmap(jax.grad(square)), Q)
        return c, r, f"{1000 / r:.3g} states/s"
    if name in ("rollout", "compiled_rollout"):
        taus = jnp.broadcast_to(tau, (50, n)) * 0.9
        c, r, (v, _) = timed(jax.value_and_grad(rollout_cost(FD, q, qd)), taus)
        return c, r, f"cost {float(v):.12g}"
    if name in ("hessian", "compiled_hessian"):
        c, r, h = timed(jax.hessian(lambda x: FD(x, qd, tau)), q)
        return c, r, f"shape {tuple(h.shape)}"
    raise SystemExit(f"unknown case {name!r}: one of {', '.join(CASES)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--robot", default="panda")
    ap.add_argument("--cases", default=",".join(CASES))
    args = ap.parse_args()
    robot = rd.load(args.robot)
    print(f"{robot.name} (n = {robot.n}), jax {jax.__version__}, {jax.default_backend()}, float64")
    print(f"{'case':<18}{'compile s':>11}{'cpu s':>8}{'run s':>12}  note")
    for name in args.cases.split(","):
        c, r, note = case(name, robot, np.random.default_rng(0))
        print(f"{name:<18}{c[0]:>11.2f}{c[1]:>8.2f}{r:>12.3g}  {note}", flush=True)


if __name__ == "__main__":
    main()
