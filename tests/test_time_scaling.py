"""Dynamic time scaling: De Luca's uniform scaling (exact) and time-optimal path parameterisation vs toppra."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import robodyn as rd
from robodyn.errors import InputError, RobodynError
from robodyn.simulation.time_scaling import InfeasibleLimitsError, time_optimal, time_scale
from robodyn.simulation.trajectories import RestToRest, Spline
from tests.support.random_robots import random_robot

# De Luca's numerical example: 2R arm under gravity, cubic rest-to-rest from the downward equilibrium to link 1
# horizontal and link 2 pointing up, in T = 0.5 s
DOWN, UP = np.array([-np.pi / 2, 0.0]), np.array([0.0, np.pi / 2])


@pytest.fixture(scope="module")
def arm():
    r = rd.load("planar2r")
    return r.replace(Fc=np.array([0.8, 0.5]), Fv=np.array([0.3, 0.2]), Foff=np.array([0.05, -0.02]),
                     Ia=np.array([0.01, 0.005]))


def test_uniform_scaling_formula_is_exact(arm):
    traj = RestToRest(DOWN, UP, 0.5, profile="cubic")
    t = np.linspace(0, 0.5, 101)
    q, qd, qdd = traj.sample(t)
    tau_d, g = rd.inverse_dynamics(arm, q, qd, qdd), rd.gravity_torques(arm, q)
    for k in (2.0, 0.7):
        # De Luca's τ_s = (τ_d − g)/k² + g, with friction moved to the speed at which it acts
        f_d, f_s = rd.friction_torques(arm, qd), rd.friction_torques(arm, qd / k)
        tau_s = (tau_d - g - f_d) / k**2 + g + f_s
        scaled = RestToRest(DOWN, UP, 0.5 * k, profile="cubic")
        want = rd.inverse_dynamics(arm, *scaled.sample(k * t))
        np.testing.assert_allclose(tau_s, want, rtol=1e-12, atol=1e-12)


def test_time_scale_returns_smallest_k_with_the_limit_active(arm):
    traj = RestToRest(DOWN, UP, 0.5, profile="cubic")
    limits = np.array([25.0, 12.0])
    res = time_scale(arm, traj, limits, samples=301)
    assert res.k > 1                       # the 0.5 s motion violates the limits: slow down
    peak = np.max(np.abs(res.torques), axis=0)
    assert peak[res.active_joint] == pytest.approx(limits[res.active_joint], rel=1e-12)
    assert np.all(peak <= limits * (1 + 1e-12))
    # the scaled torques are the inverse dynamics of the scaled motion
    q, qd, qdd = res.trajectory.sample(res.t[1:-1])      # interior: Coulomb friction is discontinuous at rest
    np.testing.assert_allclose(res.torques[1:-1], rd.inverse_dynamics(arm, q, qd, qdd), rtol=1e-11, atol=1e-11)
    assert res.duration == pytest.approx(0.5 * res.k, rel=1e-15)
    # slightly faster than k violates the limit of the active joint
    faster = time_scale(arm, traj, limits * 1.01, samples=301)
    assert faster.k < res.k
    # a generous limit speeds the motion up (k < 1)
    assert time_scale(arm, traj, 500.0, samples=301).k < 1


def test_time_scale_without_friction_is_de_lucas_formula():
    r = rd.load("planar2r")
    traj = RestToRest(DOWN, UP, 0.5, profile="cubic")
    res = time_scale(r, traj, [40.0, 15.0], samples=201, friction=False)
    q = traj.sample(np.linspace(0, 0.5, 201))[0]
    g = rd.gravity_torques(r, q)
    np.testing.assert_allclose(res.torques, (res.original_torques - g) / res.k**2 + g, rtol=1e-13, atol=1e-13)


def test_time_scale_infeasible_names_joint(arm):
    traj = RestToRest(DOWN, UP, 0.5, profile="cubic")
    with pytest.raises(InfeasibleLimitsError, match=r"torque_limits\[1\]"):
        time_scale(arm, traj, [100.0, 3.0])       # gravity on link 2 needs ~4.9 N m at the end
    assert issubclass(InfeasibleLimitsError, RobodynError)
    with pytest.raises(InputError, match="torque_limits"):
        time_scale(arm, traj, [1.0, -1.0])
    with pytest.raises(InputError, match="Stribeck"):
        time_scale(arm.replace(Fst=np.array([1.0, 1.0])), traj, 50.0)


@pytest.fixture(scope="module")
def path():
    return Spline([0.0, 0.5, 1.0], [DOWN, [-1.0, 1.0], UP])


def test_time_optimal_is_bang_bang_and_within_limits(path):
    r = rd.load("planar2r")
    L = np.array([60.0, 30.0])
    res = time_optimal(r, path, L, grid=100, collocation=True)
    ratio = np.abs(res.torques) / L
    assert np.all(ratio <= 1 + 1e-9)
    # greedy optimality on the grid: away from the start (where the path tangent vanishes) either a joint is
    # saturated or the next state is on the boundary of its controllable set (a switching point)
    saturated = np.isclose(ratio.max(axis=1), 1.0, rtol=1e-9)
    on_boundary = np.isclose(res.sd[1:] ** 2, res.controllable[1:, 1], rtol=1e-9)
    assert np.all((saturated | on_boundary)[1:])
    assert saturated[1:].sum() >= 0.9 * (res.s.size - 2)
    # the motion follows the path: at the grid times it is at the grid points
    q = res.sample(res.t)[0]
    np.testing.assert_allclose(q, path.sample(res.s)[0], atol=1e-12)
    # non-uniform scaling beats the best uniform scaling of the same path under the same limits
    uniform = time_scale(r, path, L, t=res.s, friction=False)
    assert res.duration < uniform.duration


def test_time_optimal_no_slower_than_toppra(path):
    ta = pytest.importorskip("toppra")
    import toppra.algorithm as algo
    import toppra.constraint as constraint

    r = rd.load("planar2r")
    L = np.array([60.0, 30.0])
    grid = 100
    ours = time_optimal(r, path, L, grid=grid, collocation=True)   # toppra's scheme: limits at the grid points
    ta.setup_logging("WARNING")
    tpath = ta.SplineInterpolator(path.times, path.waypoints, bc_type="clamped")
    cons = constraint.JointTorqueConstraint(lambda q, qd, qdd: rd.inverse_dynamics(r, q, qd, qdd),
                                            np.column_stack([-L, L]), np.zeros(2))
    inst = algo.TOPPRA([cons], tpath, gridpoints=np.linspace(0, path.duration, grid + 1), solver_wrapper="seidel")
    theirs = inst.compute_trajectory(0, 0).duration
    assert ours.duration <= 1.01 * theirs
    assert ours.duration == pytest.approx(theirs, rel=1e-3)


def test_time_optimal_errors(path):
    r = rd.load("planar2r")
    with pytest.raises(InfeasibleLimitsError, match=r"torque_limits\[1\]"):
        time_optimal(r, path, [60.0, 2.0], grid=20)
    with pytest.raises(InputError, match="friction=False"):
        time_optimal(r.replace(Fv=np.array([0.1, 0.1])), path, 60.0, grid=20)
    with pytest.raises(InputError, match="n = 3"):
        time_optimal(r, Spline([0, 1], [[0, 0, 0], [1, 1, 1]]), 60.0, grid=20)


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), tree=st.booleans())
def test_time_scale_exact_on_random_robots(seed, tree):
    robot = random_robot(seed, nf=3, tree=tree, friction=True)
    rng = np.random.default_rng(seed)
    traj = RestToRest(rng.uniform(-1, 1, robot.n), rng.uniform(-1, 1, robot.n), 0.4, profile="quintic")
    t = np.linspace(0, 0.4, 41)
    g_peak = np.max(np.abs(rd.gravity_torques(robot, traj.sample(t)[0]) + robot.Foff[robot.joint_frames]), axis=0)
    limits = g_peak + robot.Fc[robot.joint_frames] + rng.uniform(1.0, 20.0, robot.n)
    res = time_scale(robot, traj, limits, t=t)
    peak = np.max(np.abs(res.torques), axis=0)
    assert peak[res.active_joint] == pytest.approx(limits[res.active_joint], rel=1e-10)
    assert np.all(peak <= limits * (1 + 1e-10))
    # interior samples: at the end points t/k·k may land 1 ulp inside the motion, where q̇ ~ 1e-31 switches the
    # Coulomb term sign(q̇) on
    q, qd, qdd = res.trajectory.sample(res.t[1:-1])
    np.testing.assert_allclose(res.torques[1:-1], rd.inverse_dynamics(robot, q, qd, qdd), rtol=1e-10,
                               atol=1e-10 * np.max(np.abs(res.torques)))


def test_time_optimal_torques_are_the_inverse_dynamics_of_the_motion(path):
    # with Coulomb friction and rotor inertia: τ = a s̈ + b ṡ² + c equals Γ(q, q̇, q̈) of the timed motion
    r = rd.load("planar2r").replace(Fc=np.array([1.0, 0.5]), Foff=np.array([0.1, 0.0]), Ia=np.array([0.02, 0.01]))
    res = time_optimal(r, path, [60.0, 30.0], grid=60)
    q, qd, qdd = res.sample(res.t[1:-1])           # at t_i the interval i starts: s̈ = u_i
    # where ṡ = 0 (the discrete solution may touch rest near the start, where q' → 0 on a clamped spline) the
    # Coulomb term is sign(0) = 0 in Γ but sign(q') in c(s): compare where the robot moves
    moving = res.sd[1:-1] > 0
    assert moving.sum() >= res.sdd.size - 3
    np.testing.assert_allclose(res.torques[1:][moving], rd.inverse_dynamics(r, q, qd, qdd)[moving], rtol=1e-10,
                               atol=1e-10)
    assert np.all(np.abs(res.torques) <= np.array([60.0, 30.0]) * (1 + 1e-9))


def test_plots_are_png_files(arm, path, tmp_path):
    res = time_scale(arm, RestToRest(DOWN, UP, 0.5, profile="cubic"), [25.0, 12.0], samples=51)
    res.plot(tmp_path / "scaling.png")
    time_optimal(rd.load("planar2r"), path, [60.0, 30.0], grid=20).plot(tmp_path / "topp.png")
    for name in ("scaling.png", "topp.png"):
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scaling.png", "topp.png"]   # no temporary left over


def test_controllable_sets_match_scipy_linprog(path):
    # the vertex enumeration of the 2-variable LPs against scipy's HiGHS on the same data
    from scipy.optimize import linprog

    from robodyn.simulation.time_scaling import _all_rows, _controllable_sets, path_dynamics

    r = rd.load("puma560")
    z = np.zeros(r.nf)
    r = r.replace(Fc=z, Fv=z, Foff=z, Fst=z)
    rng = np.random.default_rng(5)
    p6 = Spline([0.0, 0.5, 1.0], rng.uniform(-1, 1, (3, 6)))
    s = np.linspace(0, 1, 41)
    a, b, c = path_dynamics(r, p6, s)
    L = 1.5 * np.max(np.abs(c), axis=0) + 5.0
    delta = np.diff(s)
    rows = _all_rows(r, p6, s, np.zeros(s.size - 1, int), (L, None, None), np.ones(s.size - 1), True)  # the limits at the grid points
    lo, hi, failed = _controllable_sets(rows, delta, float(L.max()))
    assert failed == -1
    for i in range(s.size - 1):
        A_ub = np.vstack([np.column_stack([b[i], a[i]]), -np.column_stack([b[i], a[i]]),
                          [[1.0, 2 * delta[i]]], [[-1.0, -2 * delta[i]]]])
        b_ub = np.concatenate([L - c[i], L + c[i], [hi[i + 1]], [-lo[i + 1]]])
        top = linprog([-1.0, 0.0], A_ub=A_ub, b_ub=b_ub, bounds=[(0, None), (None, None)], method="highs")
        assert top.status == 0
        assert hi[i] == pytest.approx(-top.fun, rel=1e-7, abs=1e-9)


PANDA_LIMITS = np.array([87.0, 87.0, 87.0, 87.0, 12.0, 12.0, 12.0])   # Franka's τ max (docs/robots.md)


def test_time_optimal_limits_hold_on_the_executed_motion():
    """Panda, quintic rest-to-rest: with the limits at the grid points only (TOPP-RA's collocation) joint 2
    exceeds its limit several times over just after the start, where the path tangent vanishes; by default the
    executed motion, sampled 200 001 times and run through rd.inverse_dynamics, stays within the limits."""
    r = rd.load("panda")
    path = RestToRest([0, -0.5, 0, -2.0, 0, 1.5, 0.8], [1.0, 0.3, -0.5, -1.2, 0.6, 2.0, 0.0], 1.0, profile="quintic")
    loose = time_optimal(r, path, PANDA_LIMITS, grid=200, friction=False, collocation=True)
    res = time_optimal(r, path, PANDA_LIMITS, grid=200, friction=False)
    for run in (loose, res):
        t = np.linspace(0.0, run.duration, 200_001)
        tau = rd.inverse_dynamics(r, *run.sample(t))
        peak = np.max(np.abs(tau) / PANDA_LIMITS)
        assert peak <= run.peak_ratio * (1 + 1e-9)   # the verification points include the worst sampled one
    assert loose.peak_ratio > 3.0
    assert peak <= 1 + 1e-9 and res.peak_ratio <= 1 + 1e-9
    assert peak > 1 - 1e-6                            # and the limits are used (time-optimal)
    assert loose.duration < res.duration < 1.02 * loose.duration


class _Line:
    """q(s) = q0 + s Δ on s ∈ [0, 1]: constant tangent, q'' = 0."""

    def __init__(self, q0, delta):
        self.q0, self.delta, self.n, self.duration = np.asarray(q0, float), np.asarray(delta, float), len(q0), 1.0

    def sample(self, s):
        s = np.asarray(s, float)[..., None]
        return self.q0 + s * self.delta, np.broadcast_to(self.delta, s.shape[:-1] + (self.n,)), \
            np.zeros(s.shape[:-1] + (self.n,))


@pytest.mark.parametrize("cruise", [True, False])
def test_time_optimal_velocity_and_acceleration_limits_closed_form(cruise):
    """On a straight joint-space line with loose torque limits the fastest motion accelerates at the largest
    admissible s̈ = min A_j/|Δ_j|, cruises at ṡ = min V_j/|Δ_j| when it reaches it, and brakes: T = 1/v + v/a, or
    2/√a without cruise. On the grid the duration is at least that and converges as the grid is refined."""
    r = rd.load("planar2r")
    line = _Line([-1.5, 0.2], [1.0, -0.5])
    V, A = np.array([2.0, 2.0]), np.array([8.0, 4.0])
    v, acc = np.min(V / np.abs(line.delta)), np.min(A / np.abs(line.delta))   # 2, 8
    if not cruise:
        V = V * 10
        v = 10 * v
    exact = 1 / v + v / acc if v * v / acc < 1 else 2 / np.sqrt(acc)
    durations = []
    for grid in (100, 400):
        res = time_optimal(r, line, 1e4, grid=grid, velocity_limits=V, acceleration_limits=A)
        t = np.linspace(0, res.duration, 50_001)
        _, qd, qdd = res.sample(t)
        assert np.all(np.abs(qd) <= V * (1 + 1e-9)) and np.all(np.abs(qdd) <= A * (1 + 1e-9))
        assert res.peak_ratio <= 1 + 1e-9
        durations.append(res.duration)
    assert exact * (1 - 1e-12) <= durations[1] <= durations[0] * (1 + 1e-12) and durations[0] < exact * 1.05
    assert durations[1] - exact <= 0.5 * (durations[0] - exact) + 1e-12 * exact


def test_time_optimal_limit_arguments_are_checked(path):
    r = rd.load("planar2r")
    with pytest.raises(InputError, match="velocity_limits"):
        time_optimal(r, path, 60.0, grid=20, velocity_limits=[1.0, -1.0])
    with pytest.raises(InputError, match="acceleration_limits"):
        time_optimal(r, path, 60.0, grid=20, acceleration_limits=[1.0, 2.0, 3.0])
    with pytest.raises(InputError, match="checks"):
        time_optimal(r, path, 60.0, grid=20, checks=0)
