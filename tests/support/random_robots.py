"""Random robots for property-based tests: modified-DH tables with revolute, prismatic and fixed frames,
serial or tree-structured, with physically consistent inertias, rotor inertias and friction."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from robodyn import Robot, standard_from_com
from robodyn.spatial import rot_x, rot_z


def random_inertia(rng: np.random.Generator) -> np.ndarray:
    """Standard parameters (10,) of a random rigid body: principal moments (a+b, b+c, a+c) obey the triangle inequality."""
    mass = rng.uniform(0.2, 5.0)
    com = rng.uniform(-0.3, 0.3, 3)
    a, b, c = rng.uniform(0.01, 0.5, 3)
    R = rot_z(rng.uniform(-np.pi, np.pi)) @ rot_x(rng.uniform(-np.pi, np.pi)) @ rot_z(rng.uniform(-np.pi, np.pi))
    IG = R @ np.diag([a + b, b + c, a + c]) @ R.T
    return standard_from_com(mass, com, IG)


def random_robot(
    seed: int,
    nf: int | None = None,
    tree: bool = False,
    prismatic: bool = True,
    fixed: bool = False,
    friction: bool = True,
    special_angles: bool = True,
) -> Robot:
    """A random robot; ``special_angles`` draws α, θ from multiples of π/2 half the time (parallel/perpendicular axes)."""
    rng = np.random.default_rng(seed)
    nf = int(rng.integers(1, 8)) if nf is None else nf
    choices = [0, 1] if prismatic else [0]
    sigma = rng.choice(choices, nf)
    if fixed and nf > 1:
        sigma[rng.integers(1, nf)] = 2
    if tree:
        ant = np.array([rng.integers(0, j) if j > 0 else 0 for j in range(nf)])
        gamma, b = rng.uniform(-np.pi, np.pi, nf), rng.uniform(-0.5, 0.5, nf)
    else:
        ant, gamma, b = np.arange(nf), np.zeros(nf), np.zeros(nf)

    def angle():
        if special_angles and rng.random() < 0.5:
            return rng.choice([0.0, np.pi / 2, -np.pi / 2, np.pi])
        return rng.uniform(-np.pi, np.pi)

    alpha = np.array([angle() for _ in range(nf)])
    theta = np.array([angle() for _ in range(nf)])
    d = rng.uniform(-0.6, 0.6, nf) * (rng.random(nf) < 0.7)
    r = rng.uniform(-0.6, 0.6, nf) * (rng.random(nf) < 0.7)
    params = np.array([random_inertia(rng) for _ in range(nf)])
    moving = sigma != 2
    Ia = rng.uniform(0, 0.5, nf) * moving * (rng.random(nf) < 0.7)
    Fc = rng.uniform(0, 2, nf) * moving * friction
    Fv = rng.uniform(0, 2, nf) * moving * friction
    g = rng.normal(size=3)
    g = 9.81 * g / np.linalg.norm(g)
    return Robot(
        name=f"random{seed}", sigma=sigma, antecedent=ant, gamma=gamma, b=b, alpha=alpha, d=d, theta=theta, r=r,
        params=params, Ia=Ia, Fc=Fc, Fv=Fv, gravity=g,
    )


def random_state(robot: Robot, seed: int, batch: tuple[int, ...] = ()):
    rng = np.random.default_rng(seed + 12345)
    n = robot.n
    return tuple(rng.uniform(-2, 2, batch + (n,)) for _ in range(3))


#: Hypothesis strategy: (robot, seed) for serial and tree robots with revolute, prismatic and fixed frames.
robots = st.builds(
    random_robot,
    seed=st.integers(0, 2**31 - 1),
    tree=st.booleans(),
    fixed=st.booleans(),
)
