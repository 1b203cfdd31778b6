"""Newton–Euler in Khalil & Dombre's customized form: ^jU_j [9.90], the Euler moment [9.89], the forward
recursion frame by frame, and the operation count of the model traced from it against the hand-written symbolic
customized model."""

import numpy as np
import pytest
from hypothesis import given

import robodyn as rd
from robodyn.kinematics import flat_columns, forward_components, forward_frames
from robodyn.spatial import euler_moment, u_matrix
from robodyn.symbolic.formulations import recorded_model
from tests.support.random_robots import random_state, robots
from tests.test_newton_euler import close


def skew(v):
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def test_u_matrix_and_euler_moment_are_their_definitions():
    """U = ω̂̇ + ω̂ω̂ [9.90] (so U v = ω̇ × v + ω × (ω × v)) and the five-product form = J ω̇ + ω × (J ω), on
    Python floats and on (B,) arrays, with zero inertia products (the skipped branch) too."""
    rng = np.random.default_rng(3)
    for trial in range(20):
        w, wd, v = rng.normal(size=(3, 3))
        A = rng.normal(size=(3, 3))
        J = A @ A.T
        if trial % 2:
            J[1, 2] = J[2, 1] = 0.0  # J_bc = 0: the difference DV_bb − DV_cc is skipped
        U, dv = u_matrix(tuple(w.tolist()), tuple(wd.tolist()))
        close(np.array(U), skew(wd) + skew(w) @ skew(w), 1e-14)
        close(np.array(dv), np.outer(w, w), 1e-14)
        close(np.array(U) @ v, np.cross(wd, v) + np.cross(w, np.cross(w, v)), 1e-14)
        rows = tuple(tuple(float(x) for x in r) for r in J)
        got = euler_moment(rows, tuple(wd.tolist()), dv, U)
        close(np.array(got), J @ wd + np.cross(w, J @ w), 1e-14)
    # batched components
    W, WD = rng.normal(size=(3, 50)), rng.normal(size=(3, 50))
    U, dv = u_matrix(tuple(W), tuple(WD))
    for b in range(50):
        close(np.array([[U[r][c][b] for c in range(3)] for r in range(3)]),
              skew(WD[:, b]) + skew(W[:, b]) @ skew(W[:, b]), 1e-14)


def batch_of(v, size):
    """Component tuple (floats or (B,) arrays) → (B, 3)."""
    return np.array([np.broadcast_to(np.asarray(x, dtype=float), (size,)) for x in v]).T


@given(robots)
def test_forward_frames_collects_to_forward_components(robot):
    """Trees, prismatic and fixed frames: every yielded U_j is ω̂̇_j + ω̂_jω̂_j of that frame, and
    forward_components collects the same states."""
    q, qd, qdd = random_state(robot, 1, (4,))
    cols = flat_columns(q, qd, qdd)
    g = tuple(float(x) for x in robot.gravity)
    frames = list(forward_frames(robot, *cols, g))
    _, w, wd, Vd = forward_components(robot, *cols, g)
    assert [f.i for f in frames] == list(range(robot.nf))
    for i, f in enumerate(frames):
        for a, b in ((f.w, w[i]), (f.wd, wd[i]), (f.Vd, Vd[i])):
            close(batch_of(a, 4), batch_of(b, 4), 0.0)
        wj, wdj = batch_of(f.w, 4), batch_of(f.wd, 4)
        Uj = np.stack([batch_of(row, 4) for row in f.U], axis=1)  # (B, 3, 3)
        for b in range(4):
            close(Uj[b], skew(wdj[b]) + skew(wj[b]) @ skew(wj[b]), 1e-13)


#: the traced Newton–Euler of robodyn (rigid, standard parameters) and the hand-written customized symbolic model
#: (robodyn.symbolic.newton_euler, ``customized_model(robot, "inverse_dynamics", friction=False)``) as counted
#: when this test was written: (mul, add) and (mul, add, sin + cos).
TRACED = {"puma560": (231, 191), "rx90": (214, 177), "stanford": (209, 172), "wam7": (361, 341),
          "panda": (361, 341)}
SYMBOLIC = {"puma560": (234, 191, 10), "rx90": (216, 177, 10), "stanford": (212, 172, 8), "wam7": (362, 341, 12),
            "panda": (362, 341, 12)}


@pytest.mark.parametrize("name", sorted(TRACED))
def test_traced_newton_euler_is_at_or_below_the_symbolic_customized_model(name):
    robot = rd.load(name).replace(Ia=None)
    prog = recorded_model(robot, "newton_euler")
    c = prog.count()
    assert (c["mul"], c["add"]) == TRACED[name]
    assert c["mul"] <= SYMBOLIC[name][0] and c["add"] <= SYMBOLIC[name][1]
    assert c["sin"] + c["cos"] <= SYMBOLIC[name][2]
    rigid = robot.replace(Fc=None, Fv=None, Foff=None, Fst=None)
    q, qd, qdd = random_state(robot, 5, (3,))
    close(prog.evaluate(q=q, qd=qd, qdd=qdd), rd.inverse_dynamics(rigid, q, qd, qdd))


@pytest.mark.parametrize("k", [1, 2, 3, -1])
def test_a_quarter_turn_joint_offset_costs_no_addition(k):
    """θ_j = k π/2 on a revolute joint: cos and sin of q_j + θ_j are ± those of q_j (no q_j + θ_j), so the count is
    that of θ_j = 0; the torques are those of the robot with θ_j = 0 at q_j + θ_j."""
    base = rd.load("puma560").replace(Ia=None, Fc=None, Fv=None)
    theta = base.theta.copy()
    theta[2] = k * np.pi / 2
    robot = base.replace(theta=theta)
    assert recorded_model(robot, "newton_euler").count() == recorded_model(base, "newton_euler").count()
    q, qd, qdd = random_state(robot, 7, (5,))
    shifted = q.copy()
    shifted[:, 2] += k * np.pi / 2
    close(rd.inverse_dynamics(robot, q, qd, qdd), rd.inverse_dynamics(base, shifted, qd, qdd), 1e-12)
