"""robodyn.distributed on a real dask.distributed LocalCluster (2 worker processes): results equal the in-memory
functions, a regressor larger than a worker's memory limit is identified chunk by chunk, a worker killed in the
middle of a job is replaced and the result is the same."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import robodyn as rd
from robodyn.errors import InputError

dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")
import dask.array as da  # noqa: E402

from robodyn import distributed as dd  # noqa: E402
from tests.support.cluster import local_client  # noqa: E402

#: Memory limit of each worker: the regressor of the chunking test is larger (about 1.7 of it).
WORKER_MEMORY = 400 * 2**20


@pytest.fixture(scope="module")
def client():
    with local_client(memory_limit=WORKER_MEMORY) as c:
        yield c


@pytest.fixture(scope="module")
def robot():
    return rd.load("rx90")


@pytest.fixture(scope="module")
def base(robot):
    return rd.base_parameters(robot, friction=True)


@pytest.fixture(scope="module")
def data(robot):
    """Random states (odd N: the medians of IRLS are single values), torques with noise and outliers."""
    rng = np.random.default_rng(0)
    N = 601
    q, qd, qdd = rng.uniform(-2, 2, (N, robot.n)), rng.uniform(-2, 2, (N, robot.n)), rng.uniform(-5, 5, (N, robot.n))
    tau = rd.inverse_dynamics(robot, q, qd, qdd) + 0.05 * rng.standard_normal(q.shape)
    tau[::37, 1] += 4.0
    return q, qd, qdd, tau


def test_batched_functions_equal_the_in_memory_ones(client, robot):
    rng = np.random.default_rng(1)
    q, qd, qdd = (rng.uniform(-1, 1, (4, 150, 6)) for _ in range(3))
    Q, QD, QDD = (da.from_array(x, chunks=(2, 75, 3)) for x in (q, qd, qdd))  # joint axis split: rechunked
    cases = [
        (rd.inverse_dynamics(robot, Q, QD, QDD), rd.inverse_dynamics(robot, q, qd, qdd)),
        (rd.forward_dynamics(robot, Q, QD, QDD), rd.forward_dynamics(robot, q, qd, qdd)),
        (rd.inertia_matrix(robot, Q), rd.inertia_matrix(robot, q)),
        (rd.gravity_torques(robot, Q), rd.gravity_torques(robot, q)),
        (rd.bias_torques(robot, Q, QD), rd.bias_torques(robot, q, qd)),
        (rd.regressor(robot, Q, QD, qdd), rd.regressor(robot, q, qd, qdd)),  # NumPy and Dask mixed
        (dd.jacobian(robot, Q, frame=3), rd.jacobian(robot, q, frame=3)),
        *zip(dd.inverse_dynamics_derivatives(robot, Q, QD, QDD), rd.inverse_dynamics_derivatives(robot, q, qd, qdd)),
        *zip(dd.forward_dynamics_derivatives(robot, Q, QD, QDD), rd.forward_dynamics_derivatives(robot, q, qd, qdd)),
    ]
    lazy = [c[0] for c in cases]
    assert all(isinstance(x, da.Array) for x in lazy)
    values = dask.compute(*lazy)  # on the cluster
    for (x, ref), v in zip(cases, values):
        assert x.shape == ref.shape == v.shape and x.chunks[0] == ((2, 2))
        np.testing.assert_allclose(v, ref, rtol=1e-12, atol=1e-12 * np.abs(ref).max())
    local = rd.inverse_dynamics(robot, *(da.from_array(x, chunks=(2, 64, 6)) for x in (q, qd, qdd)))
    np.testing.assert_allclose(local.compute(scheduler="threads"), cases[0][1], rtol=1e-12,  # embedded default
                               atol=1e-12 * np.abs(cases[0][1]).max())


@pytest.mark.parametrize("name, args", [("inverse_dynamics", 3), ("forward_dynamics", 3), ("inertia_matrix", 1),
                                        ("gravity_torques", 1), ("bias_torques", 2), ("regressor", 3)])
def test_the_old_batched_functions_are_deprecated_aliases(robot, name, args):
    """robodyn.distributed's copies of the dynamics functions warn, name robodyn's own, and give its lazy result
    (NumPy arguments split into ``chunk`` states per block)."""
    q = np.random.default_rng(2).uniform(-1, 1, (3, 100, 6))
    with pytest.warns(DeprecationWarning, match=f"robodyn.distributed.{name} is deprecated; give Dask arrays to "
                                                f"robodyn.{name}"):
        lazy = getattr(dd, name)(robot, *[q] * args, chunk=64)
    assert isinstance(lazy, da.Array) and lazy.chunks[:2] == ((3,), (64, 36))
    ref = getattr(rd, name)(robot, *[q] * args)
    np.testing.assert_allclose(lazy.compute(scheduler="threads"), ref, rtol=1e-12, atol=1e-12 * np.abs(ref).max())


def test_the_robot_is_one_task_of_the_graph(robot):
    Q = da.zeros((1000, 6), chunks=(100, 6))
    graph = dict(rd.inverse_dynamics(robot, Q, Q, Q).__dask_graph__())
    shipped = [k for k, v in graph.items() if v is robot or getattr(v, "value", None) is robot]
    assert len(shipped) == 1


def _close(res, ref, std=1e-9):
    """Identifications equal: estimates to 1e-12 of the largest, the rest relatively to `std`: standard deviations
    and residuals come from residual norms ‖y − W θ‖ taken from the factor of [W y]ᵀ[W y], whose relative rounding
    is ε (‖y‖ / ‖y − W θ‖)² (about 1e-10 for torques 10³ times the noise); the in-memory path also factors it
    without scaling the columns."""
    assert np.abs(res.values - ref.values).max() <= 1e-12 * np.abs(ref.values).max()
    np.testing.assert_allclose(res.std, ref.std, rtol=std)
    assert res.samples == ref.samples and res.names == ref.names
    assert res.condition_number == pytest.approx(ref.condition_number, rel=1e-12)
    np.testing.assert_allclose(res.residual_rms, ref.residual_rms, rtol=std)
    np.testing.assert_allclose(res.noise, ref.noise, rtol=std)


def _dense(base, q, qd, qdd, tau, weights=None):
    """Independent reference: W materialised, numpy.linalg.lstsq; estimate, standard deviations, σ_j."""
    W = base.regressor(q, qd, qdd)
    N, n, b = W.shape
    w = np.ones(N * n) if weights is None else np.tile(weights, N)
    A, y = W.reshape(-1, b) * w[:, None], tau.reshape(-1) * w
    theta = np.linalg.lstsq(A, y, rcond=None)[0]
    cov = np.linalg.inv(A.T @ A) * (1.0 if weights is not None else np.sum((y - A @ theta) ** 2) / (N * n - b))
    norms = np.linalg.norm(W, axis=0)  # (n, b); a column of rounding only (cos 90° = 6e-17) is not present
    bj = (norms > 1e-12 * norms.max(axis=1, keepdims=True)).sum(axis=1)  # b_j: parameters in joint j's equations
    rho = np.linalg.norm(tau - W @ theta, axis=0)
    return theta, np.sqrt(np.diag(cov)), rho / np.sqrt(N - bj), rho / np.sqrt(N)


@pytest.mark.parametrize("reduction", ["gram", "tsqr"])
def test_ols_equals_the_in_memory_identification(client, robot, base, data, reduction):
    ref = rd.identify(robot, *data, base=base, method="ols")
    res = dd.identify(robot, *data, base=base, chunk=97, reduction=reduction, method="ols")
    _close(res, ref)
    theta, std, _, rms = _dense(base, *data)
    assert np.abs(res.values - theta).max() <= 1e-13 * np.abs(theta).max()
    # (see _close: the Gram reduction's residual norm carries ε (‖y‖/‖ρ‖)², the QR's ε ‖y‖/‖ρ‖)
    tol = 1e-9 if reduction == "gram" else 1e-12
    np.testing.assert_allclose(res.std, std, rtol=tol)
    np.testing.assert_allclose(res.residual_rms, rms, rtol=tol)


def test_wls_equals_a_dense_weighted_least_squares(client, robot, base, data):
    """Gautier's per-joint noise σ_j = ‖ρ_j‖ / √(N − b_j), b_j the parameters present in joint j's equations, of
    the weighted fit's own residual ρ_j (re-estimated from the OLS one until it settles to WLS_TOLERANCE).  Both
    paths count b_j from the exact column norms (the Gram diagonal), so they agree with each other too."""
    from robodyn.identification.solvers import WLS_TOLERANCE

    res = dd.identify(robot, *data, base=base, method="wls", chunk=128)
    ref = rd.identify(robot, *data, base=base, method="wls")
    assert res.iterations == ref.iterations
    assert np.abs(res.values - ref.values).max() <= 1e-10 * np.abs(ref.values).max()
    np.testing.assert_allclose(res.noise, ref.noise, rtol=1e-8)  # residual norms: ε (‖y‖/‖ρ‖)², see _close
    theta, std, sig, _ = _dense(base, *data, weights=1.0 / res.noise)
    assert np.abs(res.values - theta).max() <= 1e-13 * np.abs(theta).max()
    np.testing.assert_allclose(res.std, std, rtol=1e-12)
    # σ_j of the weighted fit's residual: the fixed point the weights settled on
    np.testing.assert_allclose(res.noise, sig, rtol=2 * WLS_TOLERANCE)


def test_irls_equals_the_in_memory_identification(client, robot, base, data):
    """Six iterations (of the 13 to convergence), each a pass of residuals, two exact medians and a weighted
    reduction on the cluster: the same weights and estimates as in memory, iteration by iteration."""
    ref = rd.identify(robot, *data, base=base, method="irls", max_iterations=6)
    res = dd.identify(robot, *data, base=base, method="irls", max_iterations=6, chunk=301)
    assert res.iterations == ref.iterations == 6 and not res.converged and res.message == ref.message
    _close(res, ref)


def test_physical_equals_the_in_memory_identification(robot, base, data):
    """The semidefinite program on the reduced (b + 1) × (b + 1) factor (local threaded scheduler: the solve is on
    the client). The two factors agree to rounding; the conic solver stops at a duality gap of 1e-10 (SOLVERS in
    robodyn.identification.physical), which bounds the estimates' agreement at ~1e-8 of their size."""
    ref = rd.identify(robot, *data, base=base, method="physical")
    with dask.config.set(scheduler="threads"):
        res = dd.identify(robot, *data, base=base, method="physical", chunk=151)
    assert res.method == "physical" and res.converged and res.solver["certified"]
    assert np.abs(res.values - ref.values).max() <= 1e-8 * np.abs(ref.values).max()  # 1e-14 seen
    assert np.abs(res.standard - ref.standard).max() <= 1e-8 * np.abs(ref.standard).max()
    np.testing.assert_allclose(res.robot.params, ref.robot.params, atol=1e-8 * np.abs(ref.robot.params).max())
    np.testing.assert_allclose(res.std, ref.std, rtol=1e-9)


def test_exact_medians_of_a_chunked_array(client):
    """Large enough for the bisection by counts (N > GATHER), with > GATHER ties at the median (column 1) and
    ties everywhere (column 2); small (gathered at once); one row."""
    assert 140_001 > dd.GATHER
    rng = np.random.default_rng(3)
    x = rng.standard_normal((140_001, 3))
    x[:100_000, 1] = 0.0
    x[:, 2] = np.round(x[:, 2], 1)
    for rows in (140_001, 140_000, 601, 1):
        got = dd.median(da.from_array(x[:rows], chunks=(30_000, 3)))
        np.testing.assert_array_equal(got, np.median(x[:rows], axis=0))


def test_a_regressor_larger_than_a_workers_memory_is_identified_in_chunks(client, robot, base):
    N = 160_000  # regressor N n b float64: 160000 * 6 * 58 * 8 B = 445 MB > 400 MiB per worker
    assert N * robot.n * base.count * 8 > WORKER_MEMORY
    g = da.random.default_rng(4)
    q, qd, qdd = (g.uniform(-2, 2, (N, robot.n), chunks=(16_384, robot.n)) for _ in range(3))
    tau = rd.inverse_dynamics(robot, q, qd, qdd)  # lazy: never leaves the workers
    pids = client.run(os.getpid)
    res = dd.identify(robot, q, qd, qdd, tau, base=base)
    assert client.run(os.getpid) == pids  # no worker died (and none was restarted)
    assert res.samples == N
    np.testing.assert_allclose(res.values, base.values, rtol=1e-9, atol=1e-9 * np.abs(base.values).max())


def test_a_worker_killed_mid_job_is_replaced_and_the_result_is_the_same(client, robot, base, data):
    big = [np.tile(x, (40, 1)) for x in data]
    expected = rd.identify(robot, *big, base=base, method="ols")
    pids = client.run(os.getpid)
    out = {}
    job = threading.Thread(
        target=lambda: out.setdefault("res", dd.identify(robot, *big, method="ols", base=base, chunk=1024)),
        daemon=True)
    job.start()
    deadline = time.monotonic() + 20
    while not any(client.processing().values()) and time.monotonic() < deadline:
        time.sleep(0.02)
    victim = next(iter(pids.values()))
    os.kill(victim, signal.SIGKILL)  # a worker process this test's cluster started
    job.join(timeout=45)
    assert not job.is_alive(), "the identification did not finish within 45 s of the worker's death"
    _close(out["res"], expected)
    assert victim not in client.run(os.getpid).values()


def test_samples_from_hdf5_parquet_zarr_and_a_folder_of_logs(client, robot, base, data, tmp_path):
    h5py = pytest.importorskip("h5py")
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    q = data[0]
    ref = rd.identify(robot, *data, base=base)
    with h5py.File(tmp_path / "s.h5", "w") as f:
        for k, x in zip(("q", "qd", "qdd", "tau"), data):
            f[k] = x
    cols = {f"{p}{k + 1}": x[:, k] for p, x in zip(("q", "qd", "qdd", "tau"), data) for k in range(robot.n)}
    pq.write_table(pa.table(cols), tmp_path / "s.parquet", row_group_size=100)
    logs = tmp_path / "fleet"
    logs.mkdir()
    half = len(q) // 2
    for name, rows in (("a.csv", slice(0, half)), ("b.parquet", slice(half, None))):
        part = {"t": 0.01 * np.arange(len(q))[rows], **{c: v[rows] for c, v in cols.items()}}
        if name.endswith(".csv"):
            text = ",".join(part) + "\n" + "\n".join(",".join(repr(float(part[c][i])) for c in part)
                                                     for i in range(len(part["t"]))) + "\n"
            (logs / name).write_text(text)
        else:
            pq.write_table(pa.table(part), logs / name)
    sources = [tmp_path / "s.h5", tmp_path / "s.parquet", logs]
    try:
        import zarr
    except ImportError:
        pass
    else:
        group = zarr.open_group(str(tmp_path / "s.zarr"), mode="w")
        for k, x in zip(("q", "qd", "qdd", "tau"), data):
            group.create_array(k, data=x, chunks=(64, robot.n))
        sources.append(tmp_path / "s.zarr")
    for source in sources:
        samples = dd.read_samples(source, robot, chunk=64)
        _close(dd.identify(robot, samples, base=base), ref)
    assert len(dd.read_samples(logs, robot).sources) == 2


def test_simulate_many_equals_simulate(client):
    from robodyn.control import ComputedTorque, QuinticReference

    robot = rd.load("planar2r")
    t = np.linspace(0.0, 0.5, 26)
    cases = [{"torque": ComputedTorque(robot, kp, 10.0, QuinticReference([0.1, -0.2], [1.0, 0.7], duration=0.5)),
              "q0": [0.1, -0.2], "qd0": [0.0, 0.0], "t_eval": t} for kp in (50.0, 100.0)]
    heavy = robot.replace(params=robot.params * 1.5)
    cases.append({**cases[0], "robot": heavy})
    sweep = rd.distributed.simulate_many(robot, cases, rtol=1e-8, atol=1e-8, progress=False)
    assert sweep.q.shape == (3, 26, 2) and sweep.nfev.shape == (3,)
    for i, case in enumerate(cases):
        case = dict(case)
        sim = rd.simulate(case.pop("robot", robot), **case, rtol=1e-8, atol=1e-8)
        np.testing.assert_array_equal(sweep.q[i], sim.q)
        np.testing.assert_array_equal(sweep.tau[i], sim.tau)
    shown = rd.distributed.simulate_many(robot, cases[:1], rtol=1e-8, atol=1e-8, progress=True)  # distributed.progress's bar
    np.testing.assert_array_equal(shown.q[0], sweep.q[0])
    with dask.config.set(scheduler="threads"):  # no cluster: dask.diagnostics.ProgressBar
        local = rd.distributed.simulate_many(robot, cases[1:], rtol=1e-8, atol=1e-8, progress=True)
    np.testing.assert_array_equal(local.q, sweep.q[1:])
    with pytest.raises(InputError, match="case 1: "):
        rd.distributed.simulate_many(robot, [cases[0], {**cases[0], "q0": [0.0]}], progress=False)
    with pytest.raises(InputError, match="different numbers of times"):
        rd.distributed.simulate_many(robot, [cases[0], {**cases[0], "t_eval": t[:5]}], progress=False)


def test_bad_input(robot, data):
    with pytest.raises(InputError, match="last axis must be the n = 6 joints"), pytest.warns(DeprecationWarning):
        dd.inverse_dynamics(robot, np.zeros((3, 5)), np.zeros((3, 5)), np.zeros((3, 5)))
    with pytest.raises(InputError, match="method = 'lasso'"):
        dd.identify(robot, *data, method="lasso")
    with pytest.raises(InputError, match="reduction = 'svd'"):
        dd.identify(robot, *data, reduction="svd")
    with pytest.raises(InputError, match="robot must be a robodyn Robot"), pytest.warns(DeprecationWarning):
        dd.gravity_torques("rx90", np.zeros((2, 6)))
    with pytest.raises(InputError, match="give either Samples or the arrays"):
        dd.identify(robot, dd.Samples(*[da.zeros((10, 6))] * 4, sources=()), data[1])


def _run_python(code: str) -> str:
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(rd.__file__).resolve().parents[1]),
                                                        os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_dask_is_imported_on_first_use_and_its_absence_names_the_extra():
    assert _run_python("import sys, robodyn, robodyn.distributed, robodyn.logs; print('dask' in sys.modules)") \
        == "False"
    out = _run_python(
        "import sys; sys.modules['dask'] = None\n"  # this child process only: `import dask` fails there
        "import numpy as np, robodyn as rd\n"
        "try:\n"
        "    rd.distributed.gravity_torques(rd.load('planar2r'), np.zeros((3, 2)))\n"
        "except rd.RobodynError as e:\n"
        "    print(e)\n")
    assert out == "robodyn.distributed needs Dask; install it with: pip install 'robodyn[dask]'"


def test_rd_identify_takes_dask_arrays_and_every_option_on_both_sources(robot, base, data):
    """One entry, one options record: rd.identify given Dask arrays or Samples runs the cluster path (local
    threaded scheduler) and equals the in-memory fit with the same options (weights, min_velocity, reduction,
    chunk) to 1e-10; a field a source cannot honour is an InputError naming it."""
    from robodyn.identification import IdentificationOptions

    lazy = [da.from_array(x, chunks=(128, robot.n)) for x in data]
    opts = IdentificationOptions(base=base, weights=np.arange(1.0, 7.0), min_velocity=0.2, reduction="tsqr",
                                 chunk=150)
    with dask.config.set(scheduler="threads"):
        for method in ("ols", "wls"):
            ref = rd.identify(robot, *data, method=method, options=opts)
            for res in (rd.identify(robot, *lazy, method=method, options=opts),
                        rd.identify(robot, dd.Samples(*lazy), method=method, options=opts),
                        dd.identify(robot, *data, method=method, options=opts)):
                assert np.abs(res.values - ref.values).max() <= 1e-10 * np.abs(ref.values).max()
                np.testing.assert_array_equal(res.equations, ref.equations)
        assert ref.equations.max() < len(data[0])  # min_velocity dropped rows
        from robodyn.dynamics.transmission import Transmission

        J = np.diag([100.0, 100.0, 80.0, 60.0, 60.0, 50.0])
        J[5, 4] = 50.0  # a coupled wrist: its motors' inertia and friction are parameters too
        tr = Transmission.from_motor_matrix(J, J_m=np.full(6, 1e-5))
        ref = rd.identify(robot, *data, transmission=tr)
        res = rd.identify(robot, *lazy, transmission=tr)
        assert res.names == ref.names and np.abs(res.values - ref.values).max() <= 1e-10 * np.abs(ref.values).max()
        gram = rd.identify(robot, *data, options=IdentificationOptions(base=base, chunk=100))
        tsqr = rd.identify(robot, *data, base=base, reduction="tsqr")
        assert np.abs(gram.values - tsqr.values).max() <= 1e-10 * np.abs(tsqr.values).max()
        with pytest.raises(InputError, match="parallel: the full-rate regressor is filtered in memory"):
            rd.identify(robot, *lazy, parallel=object())
        with pytest.raises(InputError, match="per_robot"):
            rd.identify(robot, *data, per_robot=("friction",))
        with pytest.raises(InputError, match="reduction = 'svd'"):
            rd.identify(robot, *data, reduction="svd")
        with pytest.raises(InputError, match="chunk = 0"):
            rd.identify(robot, *data, chunk=0)
