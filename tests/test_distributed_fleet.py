"""robodyn.distributed.identify(per_robot=...) on a LocalCluster (2 worker processes): a fleet of robots of one
model, inertial base parameters shared, friction and torque offsets per robot. Checked against the true parameters
of each robot (noise-free torques of rd.inverse_dynamics on robots that differ only in friction), against a NumPy
least squares on the explicit block regressor, and against the one-robot path."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

import robodyn as rd
from robodyn.errors import InputError
from robodyn.identification.factors import IdentificationError

dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")
import dask.array as da  # noqa: E402

from robodyn import distributed as dd  # noqa: E402
from tests.support.cluster import local_client  # noqa: E402

NAMES = ("arm_a", "arm_b", "arm_c")


@pytest.fixture(scope="module")
def client():
    with local_client() as c:
        yield c


@pytest.fixture(scope="module")
def robot():
    return rd.load("rx90")


@pytest.fixture(scope="module")
def base(robot):
    return rd.base_parameters(robot, friction=True)


@pytest.fixture(scope="module")
def fleet(robot):
    """Three rx90 that differ in Fc, Fv, Foff: (robot, q, qd, qdd, noise-free τ) each, of different lengths."""
    rng = np.random.default_rng(7)
    out = []
    for r in range(3):
        arm = robot.with_joint_parameters(Fc=rng.uniform(0.5, 3, 6), Fv=rng.uniform(0.1, 2, 6),
                                          Foff=rng.uniform(-1, 1, 6))
        N = 150 + 40 * r
        q, qd, qdd = rng.uniform(-2, 2, (N, 6)), rng.uniform(-2, 2, (N, 6)), rng.uniform(-5, 5, (N, 6))
        out.append((arm, q, qd, qdd, rd.inverse_dynamics(arm, q, qd, qdd)))
    return out


def _samples(fleet, noise=0.0, chunk=97, names=NAMES):
    """The fleet's rows shuffled (chunks hold several robots), with the robot index of each row."""
    rng = np.random.default_rng(3)
    rows = [np.concatenate([f[k] for f in fleet]) for k in range(1, 5)]
    labels = np.concatenate([np.full(len(f[1]), r) for r, f in enumerate(fleet)])
    rows[3] = rows[3] + noise * rng.standard_normal(rows[3].shape)
    perm = rng.permutation(len(labels))
    rows, labels = [x[perm] for x in rows], labels[perm]
    return dd.Samples(*[da.from_array(x, chunks=(chunk, 6)) for x in rows], robot=da.from_array(labels, chunks=chunk),
                      robots=names), rows, labels


def _split(base, options):
    own = [i for i, n in enumerate(base.names) if any(re.fullmatch(p, n) for p in options)]
    return np.array([i for i in range(base.count) if i not in own]), np.array(own)


def _block_lstsq(base, rows, labels, options, R, weights=None):
    """Independent reference: the explicit block regressor [W_s  0 … W_f,r … 0] materialised, numpy.linalg.lstsq."""
    shared, own = _split(base, options)
    W = base.regressor(*rows[:3])  # (N, n, b)
    N, n, _ = W.shape
    k = own.size
    A = np.zeros((N, n, shared.size + R * k))
    A[:, :, :shared.size] = W[:, :, shared]
    for r in range(R):
        A[labels == r, :, shared.size + r * k: shared.size + (r + 1) * k] = W[labels == r][:, :, own]
    w = np.ones(n) if weights is None else weights
    Aw, y = (A * w[:, None]).reshape(N * n, -1), (rows[3] * w).reshape(-1)
    theta = np.linalg.lstsq(Aw, y, rcond=None)[0]
    s2 = 1.0 if weights is not None else np.sum((y - Aw @ theta) ** 2) / (N * n - Aw.shape[1])
    cov = np.linalg.inv(Aw.T @ Aw) * s2
    rho = np.linalg.norm(rows[3] - np.einsum("snp,p->sn", A, theta), axis=0)
    return theta, np.sqrt(np.diag(cov)), rho, np.linalg.cond(Aw)


FRICTION_OFFSETS = (r"F[cv]\d+", r"Foff\d+")


@pytest.mark.parametrize("reduction", ["gram", "tsqr"])
def test_noise_free_fleet_recovers_shared_inertia_and_each_robots_friction(client, robot, base, fleet, reduction):
    samples, _, _ = _samples(fleet)
    res = dd.identify(robot, samples, base=base, per_robot=("friction", "offsets"), reduction=reduction, method="ols")
    shared, own = _split(base, FRICTION_OFFSETS)
    assert res.names[:shared.size] == tuple(base.names[i] for i in shared)
    assert res.names[shared.size:] == tuple(f"{base.names[i]}[{r}]" for r in NAMES for i in own)
    assert res.values.shape == res.std.shape == (shared.size + 3 * own.size,) and res.samples == 150 + 190 + 230
    for name, (arm, *_) in zip(NAMES, fleet):
        truth = rd.base_parameters(arm, friction=True).values  # friction base parameters: Fc_j, Fv_j, Foff_j
        got = dd.fleet_values(res, name)
        assert np.abs(got - truth).max() <= 1e-10 * np.abs(truth).max()
    inertial = rd.base_parameters(robot, friction=True).values[shared]
    assert np.abs(res.values[:shared.size] - inertial).max() <= 1e-10 * np.abs(inertial).max()
    with pytest.raises(rd.InputError, match="fleet_values"):
        res.predict(*np.zeros((3, robot.n)))


@pytest.mark.parametrize("reduction", ["gram", "tsqr"])
def test_fleet_equals_least_squares_on_the_explicit_block_regressor(client, robot, base, fleet, reduction):
    samples, rows, labels = _samples(fleet, noise=0.05)
    res = dd.identify(robot, samples, base=base, per_robot=("friction", "offsets"), reduction=reduction, method="ols")
    theta, std, rho, cond = _block_lstsq(base, rows, labels, FRICTION_OFFSETS, 3)
    assert np.abs(res.values - theta).max() <= 1e-12 * np.abs(theta).max()
    # standard deviations carry the residual norm, from the Gram factor to ε (‖y‖/‖ρ‖)² (see test_distributed._close)
    tol = 1e-9 if reduction == "gram" else 1e-12
    np.testing.assert_allclose(res.std, std, rtol=tol)
    np.testing.assert_allclose(res.residual_rms, rho / np.sqrt(len(labels)), rtol=tol)
    assert res.condition_number == pytest.approx(cond, rel=1e-9)


def test_fleet_wls_equals_a_weighted_block_least_squares(client, robot, base, fleet):
    samples, rows, labels = _samples(fleet, noise=0.05)
    res = dd.identify(robot, samples, base=base, per_robot=("friction",), method="wls")
    theta, std, _, _ = _block_lstsq(base, rows, labels, (r"F[cv]\d+",), 3, weights=1.0 / res.noise)
    assert np.abs(res.values - theta).max() <= 1e-12 * np.abs(theta).max()
    np.testing.assert_allclose(res.std, std, rtol=1e-12)
    assert "Foff1" in res.names and "Foff1[arm_a]" not in res.names and "Fv6[arm_c]" in res.names


def test_fleet_irls_rejects_outliers_of_noise_free_torques(client, robot, base, fleet):
    samples, rows, labels = _samples(fleet)
    tau = rows[3].copy()
    tau[::29, 2] += 5.0
    samples = dd.Samples(samples.q, samples.qd, samples.qdd, da.from_array(tau, chunks=(97, 6)), robot=samples.robot,
                         robots=NAMES)
    res = dd.identify(robot, samples, base=base, per_robot=("friction", "offsets"), method="irls",
                      robust="bisquare")
    assert res.converged
    for name, (arm, *_) in zip(NAMES, fleet):
        truth = rd.base_parameters(arm, friction=True).values
        assert np.abs(dd.fleet_values(res, name) - truth).max() <= 1e-9 * np.abs(truth).max()


def _solo(fleet, k: int, seed: int):
    """Robot k's (q, qd, qdd, τ + noise) and the same samples as a fleet of one robot named "solo"."""
    _, *data = fleet[k]
    data[3] = data[3] + 0.05 * np.random.default_rng(seed).standard_normal(data[3].shape)
    samples = dd.Samples(*[da.from_array(x, chunks=(64, 6)) for x in data], robot=np.zeros(len(data[0]), int),
                         robots=("solo",))
    return data, samples


def test_one_robot_equals_todays_path(client, robot, base, fleet):
    data, samples = _solo(fleet, 0, 5)
    ref = dd.identify(robot, *data, base=base, chunk=64, position_terms=None)  # random states: "auto" selects no term
    res = dd.identify(robot, samples, base=base, per_robot=("friction", "offsets"), chunk=64)
    order = [ref.names.index(re.sub(r"\[solo\]$", "", name)) for name in res.names]
    assert sorted(order) == list(range(base.count))
    assert np.abs(res.values - ref.values[order]).max() <= 1e-12 * np.abs(ref.values).max()
    np.testing.assert_allclose(res.std, ref.std[order], rtol=1e-9)
    np.testing.assert_allclose(res.noise, ref.noise, rtol=1e-9)
    np.testing.assert_allclose(res.residual_rms, ref.residual_rms, rtol=1e-9)
    assert res.condition_number == pytest.approx(ref.condition_number, rel=1e-9)
    np.testing.assert_array_equal(dd.fleet_values(res, "solo"), res.values[np.argsort(order)])
    # per_robot=None: the labels are ignored, the fleet is one robot (today's path)
    pooled = dd.identify(robot, samples, base=base, position_terms=None)
    assert pooled.names == ref.names and np.abs(pooled.values - ref.values).max() <= 1e-12 * np.abs(ref.values).max()


@pytest.mark.parametrize("method", ["ols", "irls", "physical"])
def test_fleet_position_terms_equal_least_squares_on_the_explicit_block_regressor(client, robot, base, fleet, method):
    """A torque k sin q_j + c cos q_j on joints 1 and 4 of every robot (one cable, shared by the fleet): "auto"
    selects those joints (each robot's own columns eliminated), and the fit is the least squares on
    [E  W_s  0 … W_f,r … 0] (E shared, 2 columns per joint) to 1e-10; "irls" on noise-free data is that fit too;
    "physical" takes the least-squares terms and fits the consistent parameters to the torques less them."""
    terms = {0: (0.8, -0.5), 3: (0.4, 0.3)}
    withterm = [(arm, q, qd, qdd, tau + sum(np.outer(np.sin(q[:, j]) * k + np.cos(q[:, j]) * c, np.eye(6)[j])
                                            for j, (k, c) in terms.items())) for arm, q, qd, qdd, tau in fleet]
    samples, rows, labels = _samples(withterm)
    res = dd.identify(robot, samples, base=base, per_robot=("friction", "offsets"), method=method)
    assert res.position_joints == (0, 3) and res.position_shares.shape == (6,)
    shared, own = _split(base, FRICTION_OFFSETS)
    W = base.regressor(*rows[:3])
    N, n, _ = W.shape
    k = own.size
    A = np.zeros((N, n, 4 + shared.size + 3 * k))
    for s, j in enumerate(terms):
        A[:, j, 2 * s], A[:, j, 2 * s + 1] = np.sin(rows[0][:, j]), np.cos(rows[0][:, j])
    A[:, :, 4:4 + shared.size] = W[:, :, shared]
    for r in range(3):
        A[labels == r, :, 4 + shared.size + r * k: 4 + shared.size + (r + 1) * k] = W[labels == r][:, :, own]
    theta = np.linalg.lstsq(A.reshape(N * n, -1), rows[3].reshape(-1), rcond=None)[0]
    np.testing.assert_allclose(res.position_coefficients.ravel(), theta[:4], rtol=1e-10)
    np.testing.assert_allclose(res.position_coefficients, [terms[0], terms[3]], rtol=1e-10)
    np.testing.assert_array_equal(res.position_range, [[rows[0][:, j].min(), rows[0][:, j].max()] for j in terms])
    if method == "physical":
        assert res.converged and res.solver["certified"]
        return
    assert np.abs(res.values - theta[4:]).max() <= 1e-10 * np.abs(theta).max()


def _fleet_ssr(res) -> float:
    """The fleet's residual sum of squares ‖y − W θ‖² from the result's per-joint RMS."""
    return float(np.sum(res.residual_rms ** 2) * res.samples)


def test_physical_fleet_on_noise_free_data_equals_least_squares(client, robot, base, fleet):
    samples, _, _ = _samples(fleet)
    opts = ("friction", "offsets")
    ls = dd.identify(robot, samples, base=base, per_robot=opts, method="ols")
    # the model's friction (the prior) differs from each robot's: the default pull of 1e-6 towards it moves the
    # friction by ~1e-5 relative; 1e-10 leaves the least-squares optimum (consistent here) to ~1e-9
    res = dd.identify(robot, samples, base=base, per_robot=opts, method="physical", regularization=1e-10)
    assert res.method == "physical" and res.names == ls.names
    assert res.solver["name"] == "CLARABEL" and res.solver["status"] == "optimal" and res.solver["iterations"] > 0
    assert res.solver["constraint_violation"] < 1e-8
    assert np.abs(res.values - ls.values).max() <= 1e-6 * np.abs(ls.values).max()
    np.testing.assert_array_equal(res.std, ls.std)
    for name, (arm, *_) in zip(NAMES, fleet):
        truth = rd.base_parameters(arm, friction=True).values
        assert np.abs(dd.fleet_values(res, name) - truth).max() <= 1e-6 * np.abs(truth).max()
    assert res.robot is None and res.standard is None and res.to_dict()["solver"]["status"] == "optimal"


def test_physical_fleet_with_shared_offsets(client, robot, base, fleet):
    """per_robot=("friction",): one Foff per joint for the whole fleet, each robot's Fc, Fv."""
    same = []
    for arm, q, qd, qdd, _ in fleet:
        arm = arm.with_joint_parameters(Foff=np.linspace(-0.5, 0.5, 6))
        same.append((arm, q, qd, qdd, rd.inverse_dynamics(arm, q, qd, qdd)))
    samples, _, _ = _samples(same)
    ls = dd.identify(robot, samples, base=base, per_robot=("friction",))
    res = dd.identify(robot, samples, base=base, per_robot=("friction",), method="physical", regularization=1e-10)
    assert res.names == ls.names and "Foff2" in res.names and "Foff2[arm_a]" not in res.names
    assert np.abs(res.values - ls.values).max() <= 1e-6 * np.abs(ls.values).max()
    for name, (arm, *_) in zip(NAMES, same):
        truth = rd.base_parameters(arm, friction=True).values
        assert np.abs(dd.fleet_values(res, name) - truth).max() <= 1e-6 * np.abs(truth).max()


def test_physical_fleet_of_one_robot_equals_physical_fit(client, robot, base, fleet):
    """The fleet's program (its own friction variables) against rd.identification.physical_fit's on the same single robot, both
    without regularization (which each scales its own way): the base parameters of the one consistent optimum."""
    data, samples = _solo(fleet, 1, 11)
    ref = dd.identify(robot, *data, base=base, method="physical", chunk=64, regularization=0.0)
    res = dd.identify(robot, samples, base=base, per_robot=("friction", "offsets"), method="physical", chunk=64,
                      regularization=0.0)
    got = dd.fleet_values(res, "solo")
    assert np.abs(got - ref.values).max() <= 1e-8 * np.abs(ref.values).max()


def test_physical_fleet_holds_a_robots_unexcited_friction_at_the_model_values(client, robot, base, fleet):
    """arm_c's joint 3 never moves: least squares stops, naming Fc3[arm_c], Fv3[arm_c] and "physical"; "physical"
    holds those two at the model's (the prior's) values, warns, leaves their σ undefined, and recovers every other
    parameter of every robot as on exciting data."""
    frozen = list(fleet)
    arm, q, qd, qdd, _ = fleet[2]
    qd = qd.copy()
    qd[:, 2] = 0.0
    frozen[2] = (arm, q, qd, qdd, rd.inverse_dynamics(arm, q, qd, qdd))
    samples, _, _ = _samples(frozen)
    opts = ("friction", "offsets")
    with pytest.raises(IdentificationError, match=r"'arm_c' do not excite Fc3\[arm_c\], Fv3\[arm_c\].*'physical'"):
        dd.identify(robot, samples, base=base, per_robot=opts, method="ols")
    with pytest.warns(UserWarning, match=r"do not excite 2 of the fleet's \d+ parameters \(Fc3\[arm_c\], "
                                         r"Fv3\[arm_c\]: .*model's values"):
        res = dd.identify(robot, samples, base=base, per_robot=opts, method="physical")
    held = [res.names.index(f"{p}3[arm_c]") for p in ("Fc", "Fv")]
    np.testing.assert_allclose(res.values[held], [robot.Fc[2], robot.Fv[2]], rtol=1e-6)
    assert np.all(np.isnan(res.std[held])) and np.isfinite(res.condition_number) and res.converged
    assert np.all(np.isfinite(np.delete(res.std, held)))
    for name, (arm, *_) in zip(NAMES, frozen):
        got, truth = dd.fleet_values(res, name), rd.base_parameters(arm, friction=True).values
        if name == "arm_c":
            got, truth = (np.delete(x, [base.names.index("Fc3"), base.names.index("Fv3")]) for x in (got, truth))
        assert np.abs(got - truth).max() <= 1e-6 * np.abs(truth).max(), name
    json.dumps(res.to_dict(), allow_nan=False)


def test_physical_fleet_keeps_a_tiny_viscous_friction_nonnegative(client, robot, base, fleet):
    """arm_c's true Fv is 1e-3 on every joint; with noisy torques least squares gives some of them < 0."""
    arm, q, qd, qdd, _ = fleet[2]
    arm = arm.with_joint_parameters(Fv=np.full(6, 1e-3))
    noisy = list(fleet[:2]) + [(arm, q, qd, qdd, rd.inverse_dynamics(arm, q, qd, qdd))]
    samples, _, _ = _samples(noisy, noise=0.5)
    opts = ("friction", "offsets")
    ls = dd.identify(robot, samples, base=base, per_robot=opts, method="ols")
    res = dd.identify(robot, samples, base=base, per_robot=opts, method="physical")
    fv = [base.names.index(f"Fv{j}") for j in range(1, 7)]
    fc = [base.names.index(f"Fc{j}") for j in range(1, 7)]
    assert dd.fleet_values(ls, "arm_c")[fv].min() < 0.0
    assert res.converged and res.solver["certified"]  # the checked program's certificate, whatever the solver's status
    for name in NAMES:
        values = dd.fleet_values(res, name)
        assert values.shape == (base.count,) and np.all(values[fv] >= 0.0) and np.all(values[fc] >= 0.0)
    # least squares is the unconstrained minimum: the constrained fit cannot explain the torques better
    assert _fleet_ssr(res) >= _fleet_ssr(ls) * (1.0 - 1e-12)
    assert _fleet_ssr(res) <= 1.05 * _fleet_ssr(ls)


def test_physical_fleet_that_does_not_converge_raises(client, robot, base, fleet):
    samples, _, _ = _samples(fleet)
    with pytest.raises(IdentificationError, match="physically consistent fleet identification"):
        dd.identify(robot, samples, base=base, per_robot=("friction",), method="physical", min_mass=1e9,
                    regularization=1e-6)


def _write_logs(folder: Path, fleet, names):
    """One CSV joint log per robot: t, q1..q6, qd1.., qdd1.., tau1..."""
    folder.mkdir()
    for name, (_, *data) in zip(names, fleet):
        cols = {"t": 0.001 * np.arange(len(data[0]))}
        cols.update({f"{p}{k + 1}": x[:, k] for p, x in zip(("q", "qd", "qdd", "tau"), data) for k in range(6)})
        text = ",".join(cols) + "\n" + "\n".join(",".join(repr(float(cols[c][i])) for c in cols)
                                                 for i in range(len(cols["t"]))) + "\n"
        (folder / name).write_text(text)


def test_fleet_from_a_folder_of_logs_and_a_parquet_robot_column(client, robot, base, fleet, tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    # least squares, whose result depends on the rows' order only by round-off: the logs hold the fleet's rows in
    # another order than _samples, and "physical" would differ by its solver's tolerance (~1e-8), not by the reading
    opts = dict(base=base, per_robot=("friction", "offsets"), method="ols")
    _write_logs(tmp_path / "logs", fleet, [f"{n}.csv" for n in NAMES])
    samples = dd.read_samples(tmp_path / "logs", robot, robots="stem")
    assert samples.robots == NAMES
    res = dd.identify(robot, samples, **opts)
    ref = dd.identify(robot, _samples(fleet)[0], **opts)
    assert res.names == ref.names and np.abs(res.values - ref.values).max() <= 1e-12 * np.abs(ref.values).max()
    # one name per log, two logs of one robot pooled
    named = dd.read_samples(tmp_path / "logs", robot, robots=["left", "right", "left"])
    assert named.robots == ("left", "right")
    _, rows, labels = _samples(fleet)
    cols = {f"{p}{k + 1}": x[:, k] for p, x in zip(("q", "qd", "qdd", "tau"), rows) for k in range(6)}
    cols["robot"] = np.array(NAMES)[labels]
    pq.write_table(pa.table(cols), tmp_path / "fleet.parquet", row_group_size=128)
    samples = dd.read_samples(tmp_path / "fleet.parquet", robot, robots="column")
    assert samples.robots == tuple(sorted(NAMES))
    res = dd.identify(robot, samples, **opts)
    assert res.names == ref.names and np.abs(res.values - ref.values).max() <= 1e-12 * np.abs(ref.values).max()


def test_bad_fleet_input(robot, base, fleet, tmp_path):
    samples, rows, labels = _samples(fleet)
    opts = ("friction", "offsets")
    # a robot without rows
    four = dd.Samples(samples.q, samples.qd, samples.qdd, samples.tau, robot=samples.robot, robots=NAMES + ("arm_d",))
    with pytest.raises(IdentificationError, match="'arm_d' have no samples"):
        dd.identify(robot, four, base=base, per_robot=opts, method="ols")
    # names that would be unsafe in parameter names, identifiers or paths
    for bad in ("../etc", "arm]x", "", "class", "9arm"):
        unsafe = dd.Samples(samples.q, samples.qd, samples.qdd, samples.tau, robot=samples.robot,
                            robots=("arm_a", "arm_b", bad))
        with pytest.raises(InputError, match="is not a plain name"):
            dd.identify(robot, unsafe, base=base, per_robot=opts, method="ols")
    _write_logs(tmp_path / "logs", fleet[:2], ["arm-1.csv", "arm 2.csv"])
    with pytest.raises(InputError, match="robot name 'arm 2' .*not a plain name.*'arm_2'"):
        dd.read_samples(tmp_path / "logs", robot, robots="stem")
    with pytest.raises(InputError, match="2 names for 2 logs|1 names for 2 logs"):
        dd.read_samples(tmp_path / "logs", robot, robots=["one"])
    with pytest.raises(InputError, match="repeat a name"):
        dd.identify(robot, dd.Samples(*[samples.q] * 4, robot=samples.robot, robots=("a", "b", "a")), base=base,
                    per_robot=opts, method="ols")
    # a robot whose joint 3 never moves: its Fc3, Fv3 are not excited
    still = rows[1].copy()
    still[labels == 2, 2] = 0.0
    frozen = dd.Samples(samples.q, da.from_array(still, chunks=(97, 6)), samples.qdd, samples.tau,
                        robot=samples.robot, robots=NAMES)
    with pytest.raises(IdentificationError, match=r"robot 'arm_c' do not excite Fc3\[arm_c\], Fv3\[arm_c\]"):
        dd.identify(robot, frozen, base=base, per_robot=opts, method="ols")
    with pytest.raises(InputError, match="outside 0"):
        dd.identify(robot, dd.Samples(*[samples.q] * 4, robot=np.full(len(labels), 5), robots=NAMES), base=base,
                    per_robot=opts, method="ols")
    with pytest.raises(InputError, match="per_robot = 'inertia'"):
        dd.identify(robot, samples, base=base, per_robot="inertia", method="ols")
    with pytest.raises(InputError, match="friction=False"):
        dd.identify(robot, samples, per_robot=opts, friction=False, method="ols")
    with pytest.raises(InputError, match="per_robot needs Samples"):
        dd.identify(robot, *rows, base=base, per_robot=opts, method="ols")
    with pytest.raises(InputError, match="name no robots"):
        dd.identify(robot, dd.Samples(*[samples.q] * 4), base=base, per_robot=opts, method="ols")
    with pytest.raises(InputError, match="robots = 'fleet'"):
        dd.read_samples(tmp_path / "logs", robot, robots="fleet")
    res = dd.identify(robot, samples, base=base, per_robot=opts, method="ols")
    with pytest.raises(InputError, match="'arm_z' is not in this identification"):
        dd.fleet_values(res, "arm_z")


def test_log_names_given_as_an_array(robot, fleet, tmp_path):
    _write_logs(tmp_path / "logs", fleet, [f"{n}.csv" for n in NAMES])
    samples = dd.read_samples(tmp_path / "logs", robot, robots=np.array(["x", "y", "x"]))
    assert samples.robots == ("x", "y")
    np.testing.assert_array_equal(samples.robot.compute(), np.repeat([0, 1, 0], [150, 190, 230]))
    with pytest.raises(InputError, match="robots = 5"):
        dd.read_samples(tmp_path / "logs", robot, robots=5)
