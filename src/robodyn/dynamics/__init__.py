"""Numeric dynamic algorithms, one module per formulation."""
