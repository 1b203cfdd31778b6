"""Analyses built on the dynamic models (numerical accuracy, operation counts, ...)."""
