"""Joint-space controllers for closed-loop simulation with :func:`robodyn.simulate` (De Luca; Slotine–Li), and a
sampled PID for ``simulate(..., sample_time=T_s)``."""

from robodyn.control.controllers import ComputedTorque, PassivityBased, PDGravity, SampledPID
from robodyn.control.reference import QuinticReference

__all__ = ("ComputedTorque", "PassivityBased", "PDGravity", "QuinticReference", "SampledPID")
