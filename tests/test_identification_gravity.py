"""Gravity-compensation calibration (Dellin): cumulative first moments, regressor, calibration, pose design,
second moments from single-joint motions, the WAM study."""

import numpy as np
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

import robodyn as rd
from robodyn.identification.wam import (
    LIBBARRETT_MUS,
    libbarrett_first_moments,
    libbarrett_to_robodyn,
    standard_dh_frames,
)
from tests.support.random_robots import random_robot

SERIAL = [name for name in rd.list_robots() if rd.load(name).is_serial]


def _relerr(a, b):
    return np.max(np.abs(np.asarray(a) - b)) / max(np.max(np.abs(b)), 1e-300)


@pytest.mark.parametrize("name", SERIAL)
def test_regressor_times_first_moments_is_gravity_torque(name):
    robot = rd.load(name)
    q = np.random.default_rng(0).uniform(-2, 2, (2, 5, robot.n))
    Y = rd.identification.gravity_regressor(robot, q)
    assert Y.shape == (2, 5, robot.n, 3 * robot.n)
    Q = rd.gravity_torques(robot, q)
    assert _relerr(Y @ rd.identification.first_moments(robot).ravel(), Q) < 1e-12
    assert _relerr(Y @ rd.identification.first_moments(robot, grouped=True).ravel(), Q) < 1e-12
    assert np.array_equal(rd.identification.gravity_regressor(robot, q[1, 3]), Y[1, 3])
    Y32 = rd.identification.gravity_regressor(robot, q.astype(np.float32))
    assert Y32.dtype == np.float32 and np.allclose(Y32, Y, rtol=0, atol=1e-4 * np.abs(Y).max())


@given(seed=st.integers(0, 2**31 - 1), fixed=st.booleans())
def test_regressor_random_serial_robots(seed, fixed):
    robot = random_robot(seed, fixed=fixed)
    q = np.random.default_rng(seed).uniform(-2, 2, (7, robot.n))
    Q = rd.gravity_torques(robot, q)
    for mu in (rd.identification.first_moments(robot), rd.identification.first_moments(robot, grouped=True)):
        assert np.max(np.abs(rd.identification.gravity_regressor(robot, q) @ mu.ravel() - Q)) < 1e-12 * max(1.0, np.abs(Q).max())


def test_first_moments_are_cumulative_moments_about_the_joint():
    # Independent of the recursion: Σ_{i≥j} ^0A_i μ_i is the first moment of links j..n about O_j (Dellin eq. (72)),
    # here from the centres of mass of the model in the base frame.
    robot = rd.load("puma560")
    q = np.random.default_rng(3).uniform(-2, 2, robot.n)
    T = rd.forward_kinematics(robot, q)
    ms = np.einsum("jab,jb->ja", T[:, :3, :3], robot.MS)          # first moments about O_i, base axes
    mu = rd.identification.first_moments(robot)
    for j in range(robot.n):
        direct = np.sum(ms[j:] + robot.M[j:, None] * (T[j:, :3, 3] - T[j, :3, 3]), axis=0)
        assert np.allclose(np.einsum("iab,ib->a", T[j:, :3, :3], mu[j:]), direct, atol=1e-13, rtol=0)


def test_first_moments_planar_closed_form():
    robot = rd.load("planar2r")
    m1, m2 = robot.M
    l1 = robot.d[1]
    expected = np.array([robot.MS[0] + [m2 * l1, 0, 0], robot.MS[1]])
    assert np.allclose(rd.identification.first_moments(robot), expected, atol=1e-15)


def test_tree_is_refused():
    tree = random_robot(5, nf=4, tree=True)
    while tree.is_serial:
        tree = random_robot(int(tree.name[6:]) + 1, nf=4, tree=True)
    with pytest.raises(rd.ModelError, match="tree"):
        rd.identification.first_moments(tree)


def test_structure_names_what_static_poses_cannot_see():
    s = rd.identification.gravity_parameter_structure(rd.load("wam7"))
    assert s.unexcited == ("mu1x", "mu1y", "mu1z", "mu2z")     # joint 1 is vertical; μ_2z is along joint 2
    assert s.grouped == tuple(f"mu{j}z" for j in range(3, 8))
    assert s.base.size == 12


@pytest.mark.parametrize("name", ["wam7", "puma560", "planar3r", "stanford"])
def test_noise_free_recovery_all_methods_agree(name):
    robot = rd.load(name)
    q = rd.identification.calibration_poses(robot, 12, seed=2, unlimited=True)
    off = np.linspace(-0.4, 0.3, robot.n)
    tau = rd.gravity_torques(robot, q) + off
    truth = rd.identification.first_moments(robot, grouped=True)
    methods = ["ols"] if name == "stanford" else ["coupled", "iterative", "ols"]
    results = {m: rd.identification.calibrate_gravity(robot, q, tau, method=m, offsets=True) for m in methods}
    for m, cal in results.items():
        assert _relerr(cal.mu, truth) < 1e-8, m
        assert np.max(np.abs(cal.offsets - off)) < 1e-8 * np.abs(tau).max(), m
        assert np.all(cal.residual_rms < 1e-9 * np.abs(tau).max())
        assert np.all(cal.mu[~cal.identifiable] == 0) and np.all(np.isnan(cal.std[~cal.identifiable]))
        assert _relerr(cal.torques(q), tau) < 1e-10
    if "coupled" in results:
        assert _relerr(results["coupled"].mu, results["iterative"].mu) < 1e-10


@given(seed=st.integers(0, 2**31 - 1), prismatic=st.booleans(), fixed=st.booleans())
def test_noise_free_recovery_random_serial_robots(seed, prismatic, fixed):
    robot = random_robot(seed, prismatic=prismatic, fixed=fixed)
    q = rd.identification.calibration_poses(robot, robot.n + 3, seed=seed, candidates=200, unlimited=True)
    tau = rd.gravity_torques(robot, q)
    truth = rd.identification.first_moments(robot, grouped=True)
    for method in ("ols", "coupled", "iterative"):                 # prismatic joints included
        cal = rd.identification.calibrate_gravity(robot, q, tau, method=method)
        assert np.max(np.abs(cal.mu - truth)) <= 1e-8 * max(np.abs(truth).max(), 1e-12), method


@pytest.mark.parametrize("name", ["cartesian3p", "pr", "stanford"])
def test_dellin_methods_with_prismatic_joints(name):
    # A prismatic joint measures the force −g^j·μ_j (μ_j = M_j z) and carries its whole moment (3 unknowns c_j).
    robot = rd.load(name)
    q = rd.identification.calibration_poses(robot, 12, seed=1, unlimited=True)
    tau = rd.gravity_torques(robot, q)
    truth = rd.identification.first_moments(robot, grouped=True)
    cals = {m: rd.identification.calibrate_gravity(robot, q, tau, method=m) for m in ("coupled", "iterative", "ols")}
    for m, cal in cals.items():
        assert np.max(np.abs(cal.mu - truth)) <= 1e-8 * np.abs(truth).max(), m
        assert np.array_equal(cal.identifiable, cals["ols"].identifiable)
    prismatic = np.flatnonzero(robot.sigma[robot.joint_frames] == 1)
    assert np.allclose(cals["coupled"].mu[prismatic, 2], robot.M[::-1].cumsum()[::-1][robot.joint_frames][prismatic],
                       rtol=1e-10) or not cals["ols"].identifiable[prismatic, 2].all()
    # with noise: each method's std is that of its own linear map (the iterative one built step by step)
    from robodyn.identification.gravity import _iterative_map, _iterative_solve

    measured = np.arange(robot.n)
    base = rd.identification.gravity_parameter_structure(robot).base
    eye = np.eye(q.shape[0] * robot.n).reshape(q.shape[0], robot.n, -1)
    K_solve = _iterative_solve(robot, q, eye, measured, False, base)[base]
    assert np.allclose(_iterative_map(robot, q, measured, False, base), K_solve, rtol=0, atol=1e-12)


def test_prismatic_noisy_estimates_within_three_std():
    robot = rd.load("stanford")
    rng = np.random.default_rng(11)
    q = rd.identification.calibration_poses(robot, 40, seed=2, unlimited=True)
    tau = rd.gravity_torques(robot, q) + 0.05 * rng.standard_normal(q.shape)
    truth = rd.identification.first_moments(robot, grouped=True)
    for m in ("coupled", "iterative"):
        cal = rd.identification.calibrate_gravity(robot, q, tau, method=m)
        z = np.abs(cal.mu - truth)[cal.identifiable] / cal.std[cal.identifiable]
        assert np.all(z < 3), (m, z)


def test_joint_subset_calibrates_the_last_links():
    robot = rd.load("wam7")
    q = rd.identification.calibration_poses(robot, 15, seed=4, unlimited=True)
    tau = rd.gravity_torques(robot, q)
    tau[:, :3] = np.nan                                            # joints 1..3 not measured
    truth = rd.identification.first_moments(robot, grouped=True)
    for method in ("coupled", "iterative", "ols"):
        cal = rd.identification.calibrate_gravity(robot, q, tau, method=method, joints=[4, 5, 6, 7])
        assert _relerr(cal.mu[3:, :2], truth[3:, :2]) < 1e-8
        assert not cal.identifiable[:3].any() and "mu4z" in cal.unidentifiable
        assert np.all(np.isnan(cal.residual_rms[:3]))
    with pytest.raises(rd.InputError, match="last link inward"):
        rd.identification.calibrate_gravity(robot, q, rd.gravity_torques(robot, q), method="iterative", joints=[2, 3])


def test_noisy_estimates_within_three_std():
    robot = rd.load("puma560")
    q = rd.identification.calibration_poses(robot, 20, seed=0, unlimited=True)
    clean = rd.gravity_torques(robot, q)
    truth = rd.identification.first_moments(robot, grouped=True)
    rng = np.random.default_rng(1234)
    z = {m: [] for m in ("coupled", "iterative", "ols")}
    for _ in range(25):
        tau = clean + 0.05 * rng.standard_normal(clean.shape)
        for m in z:
            cal = rd.identification.calibrate_gravity(robot, q, tau, method=m)
            z[m].append(((cal.mu - truth) / cal.std)[cal.identifiable])
    for m, values in z.items():
        values = np.concatenate(values)
        assert np.mean(np.abs(values) > 3) < 0.01, m
        assert 0.7 < np.std(values) < 1.3, m


def test_bad_input_is_specific():
    robot = rd.load("puma560")
    q = rd.identification.calibration_poses(robot, 10, seed=0, unlimited=True)
    tau = rd.gravity_torques(robot, q)
    with pytest.raises(rd.InputError, match="10 and 9 rows"):
        rd.identification.calibrate_gravity(robot, q, tau[:9])
    bad = tau.copy()
    bad[[2, 6], 1] = np.nan
    with pytest.raises(rd.InputError, match="rows 3, 7"):
        rd.identification.calibrate_gravity(robot, q, bad)
    with pytest.raises(rd.InputError, match=r"shape \(N, 6\)"):
        rd.identification.calibrate_gravity(robot, q[:, :5], tau)
    with pytest.raises(rd.InputError, match="method"):
        rd.identification.calibrate_gravity(robot, q, tau, method="magic")
    with pytest.raises(rd.InputError, match="undetermined: .*mu") as info:
        rd.identification.calibrate_gravity(robot, q[:1], tau[:1])
    assert "calibration_poses" in str(info.value)
    # one pose repeated: rank deficient however many rows
    with pytest.raises(rd.InputError, match="undetermined"):
        rd.identification.calibrate_gravity(robot, np.repeat(q[:1], 20, 0), np.repeat(tau[:1], 20, 0))


def test_save_load_round_trip_and_errors(tmp_path):
    robot = rd.load("wam7")
    q = rd.identification.calibration_poses(robot, 12, seed=1, unlimited=True)
    tau = rd.gravity_torques(robot, q) + 0.01 * np.random.default_rng(0).standard_normal((12, 7))
    cal = rd.identification.calibrate_gravity(robot, q, tau, method="iterative", offsets=True)
    path = cal.save(tmp_path / "calib.yaml")
    back = rd.identification.load_gravity_calibration(path)
    assert np.array_equal(back.mu, cal.mu) and np.array_equal(back.offsets, cal.offsets)
    assert np.array_equal(np.isnan(back.std), np.isnan(cal.std)) and np.allclose(back.std, cal.std, equal_nan=True)
    assert np.array_equal(back.identifiable, cal.identifiable) and back.method == "iterative"
    assert np.allclose(back.torques(q), cal.torques(q), rtol=0, atol=1e-12)
    doc = yaml.safe_load(path.read_text())
    doc["mu"] = doc["mu"][:3]
    (tmp_path / "short.yaml").write_text(yaml.safe_dump(doc))
    with pytest.raises(rd.InputError, match=r"field 'mu' has shape \(3, 3\)"):
        rd.identification.load_gravity_calibration(tmp_path / "short.yaml")
    (tmp_path / "other.yaml").write_text("a: 1\n")
    with pytest.raises(rd.InputError, match="not a gravity calibration"):
        rd.identification.load_gravity_calibration(tmp_path / "other.yaml")
    (tmp_path / "bad.yaml").write_text("mu: [1, 2\n")
    with pytest.raises(rd.InputError, match="not valid YAML"):
        rd.identification.load_gravity_calibration(tmp_path / "bad.yaml")
    with pytest.raises(rd.InputError, match="does not exist"):
        cal.save(tmp_path / "missing" / "c.yaml")
    assert not (tmp_path / "missing").exists()


def test_calibration_poses_deterministic_inside_limits_and_better_than_random():
    robot = rd.load("puma560")
    limits = np.tile([-1.5, 1.2], (6, 1))
    a = rd.identification.calibration_poses(robot, 10, limits=limits, seed=7)
    assert np.array_equal(a, rd.identification.calibration_poses(robot, 10, limits=limits, seed=7))
    assert a.shape == (10, 6) and np.all((a >= -1.5) & (a <= 1.2))
    base = rd.identification.gravity_parameter_structure(robot).base

    def smin(q):
        return np.linalg.svd(rd.identification.gravity_regressor(robot, q).reshape(-1, 18)[:, base], compute_uv=False)[-1]

    rng = np.random.default_rng(0)
    random_best = max(smin(rng.uniform(-1.5, 1.2, (10, 6))) for _ in range(20))
    assert smin(a) > random_best
    with pytest.raises(rd.InputError, match="at least"):
        rd.identification.calibration_poses(robot, 1, unlimited=True)


# ---- second moments (Dellin §5) --------------------------------------------------------------------------------


def _single_joint_motion(robot, k, samples, rng):
    q = np.tile(rng.uniform(-2, 2, robot.n), (samples, 1))
    q[:, : k - 1] = rng.uniform(-2, 2, (samples, k - 1))        # lower poses vary, upper pose held
    q[:, k - 1] = rng.uniform(-2, 2, samples)
    qd, qdd = np.zeros_like(q), np.zeros_like(q)
    qd[:, k - 1] = rng.normal(size=samples)
    qdd[:, k - 1] = rng.normal(size=samples)
    return q, qd, qdd


def test_locked_body_inertia_matches_the_inertia_matrix():
    robot = rd.load("wam7")
    q = np.random.default_rng(2).uniform(-2, 2, (4, 7))
    A = rd.inertia_matrix(robot, q)
    for k in range(1, 8):
        J = rd.identification.locked_body_inertia(robot, q, k)
        assert np.allclose(J[:, 2, 2] + robot.Ia[k - 1], A[:, k - 1, k - 1], rtol=1e-12, atol=0)
        assert np.allclose(J, np.swapaxes(J, -1, -2), atol=1e-15)


@pytest.mark.parametrize("k", [1, 2, 4, 7])
def test_single_joint_motion_recovers_locked_inertia(k):
    robot = rd.load("wam7").replace(Ia=np.linspace(0.1, 0.4, 7), Fc=np.full(7, 0.3), Fv=np.full(7, 0.2))
    rng = np.random.default_rng(k)
    qs = rd.identification.calibration_poses(robot, 12, unlimited=True)
    cal = rd.identification.calibrate_gravity(robot, qs, rd.gravity_torques(robot, qs))
    q, qd, qdd = _single_joint_motion(robot, k, 30, rng)
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
    res = rd.identification.identify_locked_inertia(robot, cal, q, qd, qdd, tau, joint=k, friction=True)
    J = rd.identification.locked_body_inertia(robot, q[0], k)
    truth = dict(XZ=J[0, 2], YZ=J[1, 2], ZZ=J[2, 2], Ia=robot.Ia[k - 1], Fc=0.3, Fv=0.2)
    if k == 1:      # vertical first axis: only ZZ + Ia is seen, XZ and YZ not at all
        truth.update(ZZ=J[2, 2] + robot.Ia[0], XZ=0.0, YZ=0.0, Ia=0.0)
        assert list(res.identifiable) == [False, False, True, False, True, True]
    elif k == 2:    # joint 1 ⟂ joint 2: rotor and link inertia about axis 2 cannot be told apart
        truth.update(ZZ=J[2, 2] + robot.Ia[1], Ia=0.0)
        assert not res.identifiable[3]
    else:
        assert res.identifiable.all()
    expected = np.array([truth[nm] for nm in res.names])
    assert np.allclose(res.values, expected, rtol=1e-9, atol=1e-12 * np.abs(expected).max())
    assert np.all(res.residual_rms < 1e-10)


def test_single_joint_motion_bad_input():
    robot = rd.load("wam7")
    mu = rd.identification.first_moments(robot)
    q, qd, qdd = _single_joint_motion(robot, 4, 10, np.random.default_rng(0))
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
    moved = qd.copy()
    moved[3, 1] = 0.1
    with pytest.raises(rd.InputError, match="rows 4 .*other than 4 move"):
        rd.identification.identify_locked_inertia(robot, mu, q, moved, qdd, tau, joint=4)
    drift = q.copy()
    drift[5, 6] += 0.1
    with pytest.raises(rd.InputError, match="rows 6 .*upper pose"):
        rd.identification.identify_locked_inertia(robot, mu, drift, qd, qdd, tau, joint=4)
    with pytest.raises(rd.InputError, match="'joint'"):
        rd.identification.identify_locked_inertia(robot, mu, q, qd, qdd, tau, joint=8)


def test_joints_by_name():
    """joints= takes joint names as well as numbers (robot.joint_number); an unknown one is an InputError."""
    robot = rd.load("wam7")
    q = rd.identification.calibration_poses(robot, 20, unlimited=True)
    tau = rd.gravity_torques(robot, q)
    names = list(robot.q_names[3:])                                # elbow, wrist_yaw, wrist_pitch, wrist_twist
    by_name = rd.identification.calibrate_gravity(robot, q, tau, joints=names)
    by_number = rd.identification.calibrate_gravity(robot, q, tau, joints=[4, 5, 6, 7])
    assert by_name.joints == by_number.joints == (4, 5, 6, 7)
    np.testing.assert_array_equal(by_name.mu, by_number.mu)
    mixed = rd.identification.gravity_parameter_structure(robot, joints=["elbow", 5, np.int64(6), "wrist_twist"])
    np.testing.assert_array_equal(mixed.base, rd.identification.gravity_parameter_structure(robot, joints=[4, 5, 6, 7]).base)
    assert rd.identification.gravity_parameter_structure(robot, joints="wrist_twist").base.tolist() == \
        rd.identification.gravity_parameter_structure(robot, joints=7).base.tolist()
    for bad in (["knee"], [0], [8], [], [True]):
        with pytest.raises(rd.InputError, match="argument 'joints'"):
            rd.identification.calibrate_gravity(robot, q, tau, joints=bad)


# ---- the Barrett WAM study ---------------------------------------------------------------------------------------


def test_libbarrett_frames_are_the_wam7_joint_axes():
    robot = rd.load("wam7")
    q = np.random.default_rng(0).uniform(-2, 2, (5, 7))
    T = rd.forward_kinematics(robot, q)
    Rs, Ps = standard_dh_frames(q)
    # standard-DH frame j−1 carries joint j's axis, and its origin lies on it
    assert np.allclose(Rs[:, :7, :, 2], T[:, :, :3, 2], atol=1e-14)
    assert np.allclose(np.cross(Ps[:, :7] - T[:, :, :3, 3], T[:, :, :3, 2]), 0, atol=1e-14)
    mu = libbarrett_first_moments(robot, q)
    assert np.allclose(mu, libbarrett_first_moments(robot), atol=1e-14)     # pose independent


def test_libbarrett_convention_differs_only_in_unseen_components():
    robot = rd.load("wam7")
    s = rd.identification.gravity_parameter_structure(robot)
    converted = libbarrett_to_robodyn(robot, libbarrett_first_moments(robot))
    assert _relerr(s.group(converted.ravel()).reshape(7, 3), rd.identification.first_moments(robot, grouped=True)) < 1e-12


def test_wam_study_numbers():
    study = rd.identification.wam_gravity_study(poses=200)
    assert np.array_equal(study.calibrated_libbarrett, LIBBARRETT_MUS)
    assert np.isnan(study.link_relative_difference[0])
    assert study.calibrated_grouped[1, 1] == pytest.approx(-2.9589, abs=1e-4)
    assert study.model_grouped[1, 1] == pytest.approx(-2.3346, abs=1e-4)
    assert study.link_relative_difference[1] == pytest.approx(0.2134, abs=1e-3)


def test_iterative_linear_map_is_the_iterative_method():
    # The covariance of the iterative method uses its linear map K, propagated through eqs (26)–(28); applied to
    # unit torque vectors, the method itself must give the same map.
    from robodyn.identification.gravity import _iterative_map, _iterative_solve

    robot = rd.load("puma560")
    q = rd.identification.calibration_poses(robot, 8, seed=5, unlimited=True)
    measured = np.arange(1, 6)
    base = rd.identification.gravity_parameter_structure(robot, offsets=True, joints=measured + 1).base
    K = _iterative_map(robot, q, measured, True, base)
    eye = np.eye(8 * 5).reshape(8, 5, 40)
    assert np.allclose(_iterative_solve(robot, q, eye, measured, True, base)[base], K, rtol=0, atol=1e-12)


@pytest.mark.parametrize("method", ["coupled", "iterative"])
def test_two_poses_suffice_for_the_wam(method):
    """Dellin's k ≥ 3 counts the axial components no pose sees; with them grouped, nk ≥ p = 12 for the WAM:
    two poses in general position determine every grouped μ (docs/gravity-calibration.md, "How many poses"),
    one pose only n = 7 equations, hence at most 7 of the 12."""
    robot = rd.load("wam7")
    q = np.random.default_rng(0).uniform(-2, 2, (2, 7))
    cal = rd.identification.calibrate_gravity(robot, q, rd.gravity_torques(robot, q), method=method)
    ref = rd.identification.first_moments(robot, grouped=True)
    assert cal.identifiable.sum() == 12
    assert _relerr(cal.mu[cal.identifiable], ref[cal.identifiable]) < 1e-10
    with pytest.raises(rd.InputError, match="determine only"):
        rd.identification.calibrate_gravity(robot, q[:1], rd.gravity_torques(robot, q[:1]), method=method)
