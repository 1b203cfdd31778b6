"""Fixed-base robots in rigid contact: rd.dynamics.constrained_forward_dynamics against the closed-chain dynamics of the same
mechanism (projection on the active joint, an independent formulation) and the static closed form of a tool
pushing on a surface."""

import numpy as np
import pytest

import robodyn as rd
from robodyn.model.closed_chain import closed_chain_from_text

PINNED = """
name: pinned3r
gravity: [0, -9.81, 0]
joints:
  - {name: j1, sigma: 0, alpha: 0, d: 0, theta: 0, r: 0}
  - {name: j2, sigma: 0, alpha: 0, d: 1.0, theta: 0, r: 0}
  - {name: j3, sigma: 0, alpha: 0, d: 1.0, theta: 0, r: 0}
links:
  - {mass: 1.0, com: [0.5, 0, 0], inertia_com: [0.001, 0, 0, 0.0833, 0, 0.0833]}
  - {mass: 1.5, com: [0.4, 0.05, 0], inertia_com: [0.002, 0, 0, 0.09, 0, 0.09]}
  - {mass: 0.7, com: [0.5, 0, 0], inertia_com: [0.001, 0, 0, 0.06, 0, 0.06]}
loops:
  - {name: pin, frame: 3, point: [0.8, 0, 0], to: 0, to_point: [1.6, 0.7, 0], rows: [0, 1]}
active: [j1]
"""


def test_pinned_tip_moves_as_the_closed_chain():
    """A planar 3R arm whose tip point is pinned to the base (a four-bar linkage driven at joint 1): q̈ of the KKT
    system equals the closed-chain forward dynamics (Khalil & Dombre's projection (Wᵀ A W) q̈_a = Γ_a − Wᵀ(H + A w₀)),
    the constraint holds at the acceleration level, and the contact force balances the joint equation."""
    cc = closed_chain_from_text(PINNED, "pinned3r.yaml")
    qa = np.array([[0.9], [1.1], [1.3]])
    q = rd.closed_chain.close_loops(cc, qa, q_passive=np.tile([-1.2, -1.4], (3, 1)))
    qda, tau_a = np.array([[0.5], [-0.8], [1.2]]), np.array([[3.0], [-2.0], [0.5]])
    ref = rd.closed_chain.closed_chain_forward_dynamics(cc, q, qda, tau_a)
    tree = cc.tree
    tau = np.concatenate([tau_a, np.zeros((3, 2))], -1)
    res = rd.dynamics.constrained_forward_dynamics(tree, q, ref.qd, tau, frames=[3], points=[[0.8, 0.0, 0.0]], rows=[0, 1])
    np.testing.assert_allclose(res.qdd, ref.qdd, rtol=1e-10, atol=1e-10)
    J = rd.jacobian(tree, q, 3, [0.8, 0.0, 0.0])[..., :2, :]
    acc = np.einsum("...ij,...j->...i", J, res.qdd) + rd.jacobian_dot_qd(tree, q, ref.qd, 3, [0.8, 0.0, 0.0])[..., :2]
    np.testing.assert_allclose(acc, 0.0, atol=1e-10)
    lhs = rd.inverse_dynamics(tree, q, ref.qd, res.qdd)
    np.testing.assert_allclose(lhs, tau + np.einsum("...ji,...j->...i", J, res.forces[..., 0, :]), atol=1e-10)
    one = rd.dynamics.constrained_forward_dynamics(tree, q[1], ref.qd[1], tau[1], frames=[3], points=[[0.8, 0, 0]], rows=[0, 1])
    np.testing.assert_allclose(one.qdd, res.qdd[1], rtol=1e-13, atol=1e-13)


def test_tool_pushing_on_a_surface_at_rest():
    """Static closed form: at rest, with Γ = Q(q) + Jᵀ F (the joints make the tool push F on the surface,
    robodyn's convention for the wrenches a link exerts), q̈ = 0 and the surface pushes back with λ = −F."""
    robot = rd.load("puma560")
    q = np.array([0.3, -0.6, 0.4, 0.2, 0.5, -0.1])
    F = np.array([6.0, -3.0, -40.0])                      # pushing down on a table, 40 N, and along it
    J = rd.jacobian(robot, q)[:3]
    tau = rd.gravity_torques(robot, q) + J.T @ F
    res = rd.dynamics.constrained_forward_dynamics(robot, q, np.zeros(6), tau, frames=[6], friction=False)
    np.testing.assert_allclose(res.qdd, 0.0, atol=1e-10)
    np.testing.assert_allclose(res.forces[0], -F, rtol=0, atol=1e-10 * 40.0)
    # a frictionless table (the normal z_0 constrained only) cannot hold the push along it: the tool slides along
    # x, y but does not leave the surface
    normal = rd.dynamics.constrained_forward_dynamics(robot, q, np.zeros(6), tau, frames=[6], rows=[2], friction=False)
    assert normal.forces.shape == (1, 1) and normal.forces[0, 0] > 0
    acc = J @ normal.qdd + rd.jacobian_dot_qd(robot, q, np.zeros(6))[:3]
    assert abs(acc[2]) < 1e-9 and np.abs(acc[:2]).max() > 1e-2


def test_constrained_forward_dynamics_errors():
    robot = rd.load("planar2r")
    z = np.zeros(2)
    with pytest.raises(rd.ModelError, match="redundant"):
        rd.dynamics.constrained_forward_dynamics(robot, z, z, z, frames=[2], rows=[0, 1, 2])   # z never moves in the plane
    with pytest.raises(rd.InputError, match="rows"):
        rd.dynamics.constrained_forward_dynamics(robot, z, z, z, frames=[2], rows=[6])
    with pytest.raises(rd.InputError, match="points"):
        rd.dynamics.constrained_forward_dynamics(robot, z, z, z, frames=[2], points=[[0, 0]])
    with pytest.raises(rd.InputError):
        rd.dynamics.constrained_forward_dynamics(robot, z, z, z, frames=[7])
