"""MuJoCo cross-check of robodyn's inverse dynamics and inertia matrix (a model written by ``rd.to_mujoco_xml``)."""

from __future__ import annotations

import numpy as np

import robodyn as rd
from tests.support.pin_compare import assert_rel


def assert_mujoco_dynamics(robot, model, q, qd, qdd, each=None):
    """MuJoCo's ``mj_inverse`` and ``mj_fullM`` on ``model`` (built from ``robot``, contacts off) give robodyn's Γ
    and A(q) at every state of the (S, n) arrays; ``each(s, data, adr)`` checks more on the state's MjData."""
    import mujoco

    data = mujoco.MjData(model)
    adr = np.array([model.joint(n).qposadr[0] for n in robot.q_names])
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
    A = rd.inertia_matrix(robot, q)
    for s in range(q.shape[0]):
        data.qpos[adr], data.qvel[adr], data.qacc[adr] = q[s], qd[s], qdd[s]
        mujoco.mj_inverse(model, data)
        assert_rel(tau[s], data.qfrc_inverse[adr])
        M = np.zeros((model.nv, model.nv))
        mujoco.mj_fullM(model, data, M)
        assert_rel(A[s], M[np.ix_(adr, adr)])
        if each is not None:
            each(s, data, adr)
    return adr
