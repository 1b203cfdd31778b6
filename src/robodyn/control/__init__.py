"""Joint-space controllers for closed-loop simulation with :func:`robodyn.simulate` (De Luca; Slotine–Li)."""

from robodyn.control.controllers import ComputedTorque, PassivityBased, PDGravity
from robodyn.control.reference import QuinticReference

__all__ = ("ComputedTorque", "PassivityBased", "PDGravity", "QuinticReference")
