"""Physically consistent identification of floating-base robots (method="physical" of identify_from_base and
identify_floating): the semidefinite program of rd.identification.physical_fit on the augmented robot, virtual frames massless."""

from __future__ import annotations

import numpy as np
import pytest

import robodyn as rd
import robodyn.dynamics.floating as fl
from robodyn.identification.floating import identify_floating, identify_from_base, inertial_parameter_vector
from tests.support.pin_compare import assert_rel
from tests.support.random_robots import random_inertia
from tests.support.floating import URDFS, random_floating, random_free_state, solo12_on_feet


def _bodies(robot):
    """Pseudo-inertias (nf + 1, 4, 4) of the base body and every frame."""
    return rd.identification.pseudo_inertia(np.vstack([robot.base_params, robot.params]))


def _consistent(robot):
    assert np.linalg.eigvalsh(_bodies(robot)).min() >= -1e-9
    assert np.all(robot.Ia >= 0) and np.all(robot.Fv >= 0) and np.all(robot.Fc >= 0)


def _with_joint_terms(robot, Ia=0.01):
    moving = robot.sigma != 2
    return robot.replace(Ia=Ia * moving, Fv=0.05 * moving, Fc=0.02 * moving, Foff=-0.01 * moving)


@pytest.mark.parametrize("seed", [31, 32])
def test_noise_free_physical_recovers_the_torques_and_is_consistent(seed):
    robot = _with_joint_terms(random_floating(seed, tree=True, nf=5))
    q, v, a = random_free_state(robot.n, seed, (40,))
    tau = fl.floating_inverse_dynamics(robot, q, v, a)
    ls = identify_floating(robot, q, v, a, tau)
    ph = identify_floating(robot, q, v, a, tau, method="physical")
    assert ph.method == "physical" and ph.solver["status"] == "optimal" and ph.robot.floating
    assert ph.names == ls.names
    assert_rel(ph.values, ls.values, 1e-8)
    assert_rel(ph.values, ph.base_values(ph.standard), 1e-12)
    assert_rel(fl.floating_inverse_dynamics(ph.robot, q, v, a), tau, 1e-8)
    _consistent(ph.robot)
    # base rows alone (Ayusawa et al.), the base wrench given as a mobile base's drive
    base = identify_from_base(robot, q, v, a, base_wrench=tau[:, :6], method="physical")
    assert_rel(base.values, base.base_values(inertial_parameter_vector(robot)), 1e-8)
    assert_rel(fl.floating_inverse_dynamics(base.robot, q, v, a)[:, :6], tau[:, :6], 1e-8)
    _consistent(base.robot)


def test_noise_free_physical_from_a_wrong_prior():
    """A prior with other (consistent) masses and inertias: without regularization the fit still reproduces the
    data to 1e-8; with the default 1e-6 the pull towards the prior costs a residual of the order of 1e-6 relative."""
    robot = _with_joint_terms(random_floating(33, tree=True, nf=4))
    q, v, a = random_free_state(robot.n, 33, (40,))
    tau = fl.floating_inverse_dynamics(robot, q, v, a)
    rng = np.random.default_rng(5)
    prior = robot.replace(params=np.array([random_inertia(rng) for _ in range(robot.nf)]),
                          base_params=random_inertia(rng), Ia=0.02 * (robot.sigma != 2))
    ph = identify_floating(prior, q, v, a, tau, method="physical", regularization=0.0)
    assert_rel(fl.floating_inverse_dynamics(ph.robot, q, v, a), tau, 1e-8)
    _consistent(ph.robot)
    reg = identify_floating(prior, q, v, a, tau, method="physical")
    assert reg.residual <= 1e-5 * np.sqrt(np.mean(tau ** 2))
    _consistent(reg.robot)


def test_quadruped_base_only_physical_identification():
    """solo12 on its four feet, contact wrenches measured, no joint torque: the consistent estimate reproduces the
    zero base wrench to 1e-8 and gives the base parameters of the least-squares one."""
    if "solo12.urdf" not in URDFS:
        pytest.skip("solo12 is not in the installed example-robot-data")
    robot, feet, q, v, motion = solo12_on_feet()
    S = len(q)
    ph = identify_from_base(robot, q, v, motion.acceleration, feet, motion.forces, method="physical")
    truth = ph.base_values(inertial_parameter_vector(robot))
    assert_rel(ph.values, truth, 1e-8)
    W = fl.wrenches_at_frames(ph.robot, q, feet, motion.forces)
    assert_rel(fl.floating_inverse_dynamics(ph.robot, q, v, motion.acceleration, wrenches=W)[:, :6],
               np.zeros((S, 6)), 1e-8)
    _consistent(ph.robot)


def test_noisy_physical_estimate_is_consistent_where_least_squares_is_not():
    """True rotor inertias 0: with noise on the joint torques least squares estimates some Ia < 0, which no motor
    has. The physical estimate is consistent, its fit worse than least squares (the constraint is active) but by
    less than the χ²_b spread of the noise: rss_ls < rss_phys ≤ rss_ls + (b + 5 √(2b)) σ²."""
    robot = _with_joint_terms(random_floating(31, tree=True, nf=5), Ia=0.0)
    S, sigma = 40, 0.3
    q, v, a = random_free_state(robot.n, 3, (S,))
    tau = fl.floating_inverse_dynamics(robot, q, v, a)
    tau[:, 6:] += np.random.default_rng(0).normal(0, sigma, (S, robot.n))
    ls = identify_floating(robot, q, v, a, tau)
    ph = identify_floating(robot, q, v, a, tau, method="physical")
    ia = [k for k, name in enumerate(ls.names) if name.startswith("Ia")]
    assert ls.values[ia].min() < 0 <= ph.values[ia].min() + 1e-9
    _consistent(ph.robot)
    rows, b = tau.size, len(ls.names)
    rss_ls, rss_ph = rows * ls.residual ** 2, rows * ph.residual ** 2
    assert rss_ls < rss_ph <= rss_ls + (b + 5 * np.sqrt(2 * b)) * sigma ** 2
    # the identified robot is a Robot like any other: its dynamics are the identified model
    assert np.sqrt(np.mean((fl.floating_inverse_dynamics(ph.robot, q, v, a) - tau) ** 2)) == pytest.approx(
        ph.residual, rel=1e-6)


def test_physical_bad_options():
    robot = random_floating(34, tree=False, nf=2)
    q, v, a = random_free_state(robot.n, 34, (10,))
    tau = fl.floating_inverse_dynamics(robot, q, v, a)
    with pytest.raises(rd.InputError, match="method = 'sdp'"):
        identify_floating(robot, q, v, a, tau, method="sdp")
    with pytest.raises(rd.InputError, match="regularization"):
        identify_from_base(robot, q, v, a, base_wrench=tau[:, :6], method="physical", regularization=-1.0)
    with pytest.raises(rd.InputError, match="min_mass"):
        identify_from_base(robot, q, v, a, base_wrench=tau[:, :6], method="physical", min_mass=float("nan"))
