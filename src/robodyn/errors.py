"""Exceptions raised by robodyn.

Every error names the offending field (link, joint, argument, file row) and says how to fix it.
All derive from :class:`RobodynError`, so ``except robodyn.RobodynError`` catches everything we raise.
"""

from __future__ import annotations

__all__ = ("RobodynError", "ModelError", "NonPhysicalInertiaError", "ModelFileError", "UnknownRobotError", "InputError",
           "NumericOverflowError")


class RobodynError(Exception):
    """Base class of every robodyn exception."""


class ModelError(RobodynError, ValueError):
    """A robot description is malformed (geometry table, sizes, topology)."""


class NonPhysicalInertiaError(ModelError):
    """Inertial parameters that no rigid body can have (negative mass, triangle inequality...)."""


class ModelFileError(ModelError):
    """A model file cannot be read; the message names the file, the row and the field."""


class UnknownRobotError(RobodynError, LookupError):
    """A built-in robot name that does not exist."""


class InputError(RobodynError, ValueError):
    """A numeric argument of an algorithm has the wrong shape or contains NaN/inf."""


class NumericOverflowError(InputError, ArithmeticError):
    """Finite inputs whose result overflows floating point (NaN/inf): the inputs are too large."""
