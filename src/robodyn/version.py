"""robodyn's version (one place: the package, the compile cache keys)."""

__version__ = "0.1.0"
