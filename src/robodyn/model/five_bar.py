"""Five-bar linkages of De Luca's "Robots with closed kinematic chains" as closed-chain models
(:class:`~robodyn.model.closed_chain.ClosedChainRobot`): :func:`planar_five_bar` (MIT Direct Drive Mark IV
type: 2 active, 2 passive joints, cut at the revolute end effector) and :func:`spatial_five_bar` (University of
Minnesota direct-drive-arm type: 2 active, 3 passive joints, cut at the spherical end effector).  Dimensions and
masses are illustrative uniform rods; every one is an argument (docs/closed-chains.md).
"""

from __future__ import annotations

import numpy as np

from robodyn.arrays import finite_array
from robodyn.errors import InputError
from robodyn.model.closed_chain import ClosedChainRobot, closed_chain_from_text


def _numbers(name: str, value, size: int, what: str, positive: bool = True) -> list[float]:
    a = finite_array(name, value).reshape(-1)
    if a.size != size or (positive and np.any(a <= 0)):
        raise InputError(f"argument '{name}' = {value!r}; give {size} {'positive ' if positive else ''}{what}")
    return [float(v) for v in a]


def _rod(mass: float, length: float, radius: float = 0.02) -> str:
    """A uniform rod along x of its frame from O_j: centre of mass at length/2, inertia about it."""
    ixx = 0.5 * mass * radius**2
    iyy = mass * length**2 / 12 + 0.25 * mass * radius**2
    return f"{{mass: {mass!r}, com: [{length / 2!r}, 0, 0], inertia_com: [{ixx!r}, 0, 0, {iyy!r}, 0, {iyy!r}]}}"


def planar_five_bar(lengths=(0.3, 0.3, 0.45, 0.45), masses=(2.0, 2.0, 1.0, 1.0), base: float = 0.2,
                    gravity=(0.0, -9.81, 0.0)) -> ClosedChainRobot:
    """The planar five-bar (MIT Direct Drive Mark IV type), in the vertical plane x₀y₀ by default.

    Parameters
    ----------
    lengths : (l1, l2, l3, l4)
        Proximal links 1, 2 and distal links 3 (on link 1), 4 (on link 2), m.
    masses : (m1, m2, m3, m4)
        Link masses (kg), uniform rods.
    base : float
        Distance between the two motor axes along x₀ (m); 0 for coaxial motors.
    gravity : (3,)
        Gravity in R_0 (m/s²).

    Returns
    -------
    ClosedChainRobot
        Tree joints q1, q2 (active, absolute angles of links 1, 2), t3, t4 (passive, relative to links 1, 2).
    """
    l1, l2, l3, l4 = _numbers("lengths", lengths, 4, "link lengths (m)")
    m1, m2, m3, m4 = _numbers("masses", masses, 4, "link masses (kg)")
    g = _numbers("gravity", gravity, 3, "components of gravity in R_0 (m/s²)", positive=False)
    base = _numbers("base", base, 1, "distance between the motor axes (m)", positive=False)[0]
    text = f"""
name: planar_five_bar
gravity: {g}
joints:
  - {{name: q1, antecedent: 0}}
  - {{name: q2, antecedent: 0, d: {base!r}}}
  - {{name: t3, antecedent: 1, d: {l1!r}}}
  - {{name: t4, antecedent: 2, d: {l2!r}}}
links:
  - {_rod(m1, l1)}
  - {_rod(m2, l2)}
  - {_rod(m3, l3)}
  - {_rod(m4, l4)}
loops:
  - {{name: tip, frame: 3, point: [{l3!r}, 0, 0], to: 4, to_point: [{l4!r}, 0, 0], rows: [0, 1]}}
active: [q1, q2]
"""
    return closed_chain_from_text(text, "planar_five_bar")


def spatial_five_bar(lengths=(0.3, 0.3, 0.5, 0.5), masses=(2.0, 2.0, 1.0, 1.0), base: float = 0.15,
                     gravity=(0.0, 0.0, -9.81)) -> ClosedChainRobot:
    """A spatial five-bar (University of Minnesota direct-drive-arm type) closed by a spherical joint.

    Parameters
    ----------
    lengths : (l1, l2, l3, l4)
        Proximal links 1 (vertical motor axis), 2 (horizontal motor axis), distal links 3 (universal joint on
        link 1), 4 (revolute joint on link 2), m.
    masses : (m1, m2, m3, m4)
        Link masses (kg), uniform rods; the universal joint's cross is massless.
    base : float
        Offset of motor 2 from motor 1 along x₀ (m).
    gravity : (3,)
        Gravity in R_0 (m/s²); default along −z₀.

    Returns
    -------
    ClosedChainRobot
        Tree joints q1 (about z₀), q2 (about −y₀), u1, u2 (the universal joint), t5 (passive revolute on link 2);
        frames 1 q1, 2 q2, 3 u1 (the cross), 4 u2 (link 3), 5 t5 (link 4).
    """
    l1, l2, l3, l4 = _numbers("lengths", lengths, 4, "link lengths (m)")
    m1, m2, m3, m4 = _numbers("masses", masses, 4, "link masses (kg)")
    g = _numbers("gravity", gravity, 3, "components of gravity in R_0 (m/s²)", positive=False)
    base = _numbers("base", base, 1, "offset of motor 2 along x0 (m)", positive=False)[0]
    text = f"""
name: spatial_five_bar
gravity: {g}
joints:
  - {{name: q1, antecedent: 0}}
  - {{name: q2, antecedent: 0, alpha: pi/2, d: {base!r}}}
  - {{name: u1, antecedent: 1, alpha: pi/2, d: {l1!r}}}
  - {{name: u2, antecedent: 3, alpha: pi/2}}
  - {{name: t5, antecedent: 2, d: {l2!r}}}
links:
  - {_rod(m1, l1)}
  - {_rod(m2, l2)}
  - {{mass: 0.0, com: [0, 0, 0], inertia_com: [0, 0, 0, 0, 0, 0]}}
  - {_rod(m3, l3)}
  - {_rod(m4, l4)}
loops:
  - {{name: tip, frame: 4, point: [{l3!r}, 0, 0], to: 5, to_point: [{l4!r}, 0, 0], rows: [0, 1, 2]}}
active: [q1, q2]
"""
    return closed_chain_from_text(text, "spatial_five_bar")
