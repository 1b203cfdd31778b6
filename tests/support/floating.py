"""Floating-base test data: example-robot-data's URDFs, random free-flyer states, random floating trees, and
solo12 standing on its four feet."""

from __future__ import annotations

import importlib.metadata
import warnings

import numpy as np
import pytest

import robodyn as rd
from tests.support.random_robots import random_inertia, random_robot


def _example_robot_data() -> dict:
    """URDF file name -> path in the installed example-robot-data package (empty when it is not installed)."""
    try:
        dist = importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        return {}
    return {str(f).split("/")[-1]: str(dist.locate_file(f)) for f in dist.files or () if str(f).endswith(".urdf")}


URDFS = _example_robot_data()
#: solo12's four feet, the contact frames of the base-only identification tests.
SOLO12_FEET = ("FL_ANKLE", "FR_ANKLE", "HL_ANKLE", "HR_ANKLE")


def legged_robot(name: str) -> rd.Robot:
    """example-robot-data's URDF ``name`` on a floating base, its UserWarnings (URDF damping and friction kept as
    Fv, Fc; links without inertia) silenced; the test is skipped where the installed package does not have it."""
    if name not in URDFS:
        pytest.skip(f"{name} is not in the installed example-robot-data")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return rd.load(URDFS[name], floating=True, strict=False)


def random_free_state(n: int, seed: int, batch=()):
    """Free-flyer (q (..., n + 7), v, a (..., n + 6)): random position, unit quaternion, joints in [-2, 2]."""
    rng = np.random.default_rng(seed)
    quat = rng.normal(size=batch + (4,))
    quat /= np.linalg.norm(quat, axis=-1, keepdims=True)
    q = np.concatenate([rng.normal(size=batch + (3,)), quat, rng.uniform(-2, 2, batch + (n,))], -1)
    return q, rng.normal(size=batch + (n + 6,)), rng.normal(size=batch + (n + 6,))


def random_floating(seed: int, tree: bool = True, base: str = "floating", nf=None):
    """A random robot (fixed frames, no friction) on a floating or mobile base with a random base body."""
    robot = random_robot(seed, nf=nf, tree=tree, fixed=True, friction=False)
    return robot.replace(base=base, base_params=random_inertia(np.random.default_rng(seed + 1)))


def solo12_on_feet(samples: int = 30, seed: int = 111):
    """solo12 (floating) on its four feet under random joint torques, no base wrench: (robot, feet, q, v, motion)
    with motion = rd's contact_forward_dynamics (physically consistent data, zero base wrench)."""
    from robodyn.dynamics import floating as fl

    robot = rd.load(URDFS["solo12.urdf"], floating=True)
    q, v, _ = random_free_state(robot.n, seed, (samples,))
    tau = np.concatenate([np.zeros((samples, 6)), np.random.default_rng(seed).normal(size=(samples, robot.n))], -1)
    return robot, list(SOLO12_FEET), q, v, fl.contact_forward_dynamics(robot, q, v, tau, list(SOLO12_FEET))
