"""Static balancing (De Luca, "Analysis of gravity term"): counter-masses and zero-free-length springs, checked
against closed-form designs (planar 2R, De Luca's parallelogram), against Pinocchio's gravity of the balanced
robot, and a central difference of the spring potential."""

import numpy as np
import pytest

import robodyn as rd
from robodyn.analysis.balancing import (
    Spring,
    counter_masses,
    model_gravity,
    spring_balance,
    spring_torques,
)
from robodyn.errors import InputError
from robodyn.model.closed_chain import closed_chain_from_text
from tests.test_closed_chain import G0, L1, L2, LC, M, PARALLELOGRAM

G = 9.81


def _poses(n, seed, size=40):
    return np.random.default_rng(seed).uniform(-np.pi, np.pi, (size, n))


def test_2r_counter_masses_closed_form():
    """Link 2: m_c2 c_2 = −m₂ l_c2; link 1: m_c1 c_1 = −(m₁ l_c1 + (m₂ + m_c2) l₁) along the link axes."""
    arm = rd.load("planar2r")                                   # l = 1 m, m = 1 kg, l_c = 0.5 m
    cm = counter_masses(arm, [1, 2], [2.0, 1.0])
    np.testing.assert_allclose(cm.positions, [[-(0.5 + 2.0) / 2.0, 0, 0], [-0.5, 0, 0]], rtol=0, atol=1e-14)
    q = _poses(2, 1)
    assert cm.residual < 1e-12 * cm.residual_before
    np.testing.assert_allclose(rd.gravity_torques(cm.robot, q), 0, atol=1e-12)
    # the counter-masses are point masses: the balanced links' mass, first moment and inertia about O_j
    np.testing.assert_allclose(cm.robot.M[:2], [3.0, 2.0])
    np.testing.assert_allclose(cm.robot.params[1, 5] - arm.params[1, 5], 1.0 * 0.5**2)   # ZZ₂ += m c²


@pytest.mark.parametrize("name", ["puma560", "rx90", "panda"])
def test_six_and_seven_joint_arms_balance_against_pinocchio(name):
    bridge = pytest.importorskip("tests.support.pin_bridge")
    robot = rd.load(name)
    frames = [j + 1 for j in robot.joint_frames[1:]]        # joint 1 turns about the vertical: nothing to balance
    cm = counter_masses(robot, frames, np.full(len(frames), 5.0), samples=100)
    pr = bridge.PinRobot(cm.robot)
    scale = cm.residual_before
    for qi in _poses(robot.n, 2, 10):
        np.testing.assert_allclose(pr.gravity(qi), 0, atol=1e-12 * scale)
    assert cm.residual < 1e-12 * scale


def test_prismatic_along_gravity_is_minimised_not_balanced():
    """The Stanford arm's prismatic joint lifts its links against gravity: masses cannot cancel that force; the
    design is the least-squares optimum over the workspace samples (any other positions do worse)."""
    robot = rd.load("stanford")
    frames = [j + 1 for j in robot.joint_frames[1:]]
    q = np.random.default_rng(7).uniform(-np.pi, np.pi, (100, 6))
    q[:, 2] = np.random.default_rng(8).uniform(0.2, 0.8, 100)
    cm = counter_masses(robot, frames, np.full(len(frames), 0.5), q=q)
    assert cm.residual > 1e-3 * cm.residual_before

    Y = rd.regressor(robot, q, np.zeros_like(q), np.zeros_like(q), friction=False)   # g is linear in MS, M

    def cost(positions):
        theta = rd.parameters.standard_parameter_vector(robot, friction=False).copy()
        for j, c in zip(frames, positions):
            theta[11 * (j - 1) + 6 : 11 * (j - 1) + 9] += 0.5 * c
            theta[11 * (j - 1) + 9] += 0.5
        return np.sum((Y @ theta) ** 2)

    np.testing.assert_allclose(Y @ rd.parameters.standard_parameter_vector(cm.robot, friction=False),
                               rd.gravity_torques(cm.robot, q), atol=1e-10)

    best = cost(cm.positions)
    rng = np.random.default_rng(9)
    for _ in range(5):                              # the inertia does not enter g: only first moments matter
        assert cost(cm.positions + 1e-3 * rng.normal(size=cm.positions.shape)) > best


def _parallelogram():
    return closed_chain_from_text(PARALLELOGRAM, "parallelogram.yaml")


def _closed(cc, seed, size=20):
    qa = np.random.default_rng(seed).uniform(-np.pi, np.pi, (size, 2))
    guess = np.stack([qa[:, 0] - qa[:, 1], qa[:, 1] - qa[:, 0]], -1)
    return rd.closed_chain.close_loops(cc, qa, q_passive=guess)


def test_parallelogram_gravity_and_counter_masses():
    """De Luca: g = (g₀(m₁l_c1 + m₃l_c3 + m₄l₁) c₁, g₀(m₂l_c2 + m₃l₂ − m₄l_c4) c₂); counter-masses on links 1 and 2
    (behind the base joint) cancel both coefficients ("further structural conditions lead to g(q) ≡ 0")."""
    cc = _parallelogram()
    q = _closed(cc, 3)
    a1 = M[0] * LC[0] + M[2] * LC[2] + M[3] * L1
    a2 = M[1] * LC[1] + M[2] * L2 - M[3] * LC[3]
    g = model_gravity(cc, q)
    np.testing.assert_allclose(g, G0 * np.stack([a1 * np.cos(q[:, 0]), a2 * np.cos(q[:, 1])], -1), atol=1e-12)
    cm = counter_masses(cc, [1, 2], [3.0, 1.0], q=q)
    np.testing.assert_allclose(cm.positions, [[-a1 / 3.0, 0, 0], [-a2 / 1.0, 0, 0]], rtol=0, atol=1e-13)
    q_new = _closed(cm.robot, 4)
    np.testing.assert_allclose(model_gravity(cm.robot, q_new), 0, atol=1e-12)
    with pytest.raises(InputError, match="close_loops"):
        counter_masses(cc, [1, 2], [3.0, 1.0])


# The 2R arm with three zero-free-length springs: base point A = (0, a) to link 1 at b₁ and to link 2 at b₂, and
# link 1 (at l₁ + c, beyond the elbow) to link 2 at d.  U_s = const − k₁ a b₁ s₁ + k₂ (l₁ b₂ c₂ − a l₁ s₁ − a b₂ s₁₂)
# − k₃ c d c₂ cancels U_g = g ((m₁ l_c1 + m₂ l₁) s₁ + m₂ l_c2 s₁₂) when k₂ a b₂ = g m₂ l_c2, k₃ c d = k₂ l₁ b₂ and
# k₁ a b₁ + k₂ a l₁ = g (m₁ l_c1 + m₂ l₁).
A_, B1, B2, C_, D_ = 0.2, 0.5, 0.5, 0.2, 0.3
SPRINGS = [Spring(0, (0, A_, 0), 1, (B1, 0, 0)), Spring(0, (0, A_, 0), 2, (B2, 0, 0)),
           Spring(1, (1.0 + C_, 0, 0), 2, (D_, 0, 0))]


def test_2r_spring_balance_closed_form():
    arm = rd.load("planar2r")
    sb = spring_balance(arm, SPRINGS)
    k2 = G * 0.5 / (A_ * B2)
    k3 = k2 * 1.0 * B2 / (C_ * D_)
    k1 = (G * (0.5 + 1.0) - k2 * A_ * 1.0) / (A_ * B1)
    np.testing.assert_allclose(sb.stiffness, [k1, k2, k3], rtol=1e-12)
    q = _poses(2, 5)
    np.testing.assert_allclose(rd.gravity_torques(arm, q) + spring_torques(arm, q, SPRINGS, sb.stiffness), 0,
                               atol=1e-12)
    assert sb.residual < 1e-12 * sb.residual_before


def test_spring_torques_are_the_gradient_of_the_spring_potential():
    robot = rd.load("puma560")
    springs = [Spring(0, (0.1, -0.2, 0.5), 3, (0.3, 0.05, -0.1)), Spring(2, (0.2, 0.1, 0.0), 5, (0.0, 0.02, 0.1))]
    k = np.array([120.0, 40.0])
    q = _poses(6, 6, 5)

    def energy(qq):
        T = rd.forward_kinematics(robot, qq)                  # (..., nf, 4, 4) base poses of the frames
        pa = np.asarray(springs[0].point_a)
        pb = T[..., 2, :3, :3] @ np.asarray(springs[0].point_b) + T[..., 2, :3, 3]
        pc = T[..., 1, :3, :3] @ np.asarray(springs[1].point_a) + T[..., 1, :3, 3]
        pd = T[..., 4, :3, :3] @ np.asarray(springs[1].point_b) + T[..., 4, :3, 3]
        return 0.5 * k[0] * np.sum((pa - pb) ** 2, -1) + 0.5 * k[1] * np.sum((pc - pd) ** 2, -1)

    h, weights = 1e-3, [(4 / 5, 1), (-1 / 5, 2), (4 / 105, 3), (-1 / 280, 4)]
    grad = np.zeros_like(q)
    for j in range(6):
        e = np.zeros(6)
        e[j] = h
        grad[:, j] = sum(w * (energy(q + i * e) - energy(q - i * e)) for w, i in weights) / h
    np.testing.assert_allclose(spring_torques(robot, q, springs, k), grad, rtol=0, atol=1e-10 * np.abs(grad).max())


def test_errors():
    arm = rd.load("planar2r")
    with pytest.raises(InputError, match="masses"):
        counter_masses(arm, [1, 2], [1.0])
    with pytest.raises(InputError, match="masses"):
        counter_masses(arm, [1, 2], [1.0, -1.0])
    with pytest.raises(InputError, match="frame"):
        counter_masses(arm, [1, 1], [1.0, 1.0])
    with pytest.raises(InputError, match="springs"):
        spring_balance(arm, [])
    with pytest.raises(InputError, match="stiffness"):
        spring_torques(arm, np.zeros(2), SPRINGS, [1.0])
    with pytest.raises(InputError, match="model"):
        counter_masses("planar2r", [1], [1.0])
