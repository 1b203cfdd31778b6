"""The robot model: plain, immutable data in Khalil–Kleinfinger notation, its files and converters."""

from robodyn.model.robot import PARAMETER_NAMES, Robot
from robodyn.model.inertia import (
    standard_from_com,
    com_from_standard,
    check_physical,
)

__all__ = ("PARAMETER_NAMES", "Robot", "standard_from_com", "com_from_standard", "check_physical")
