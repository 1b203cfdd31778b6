"""The convergence table of docs/task-space-and-motion.md §5 comes from scripts/optimal_motion_table.py: its
N = 10 and N = 20 rows are asserted here to the printed digits (N = 30, 40 take most of the script's minute)."""

import importlib.util
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("optimal_motion_table",
                                                  os.path.join(ROOT, "scripts", "optimal_motion_table.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("nodes, T, E", [(10, 0.5976, 103.08), (20, 0.5161, 99.43)])
def test_rows_of_the_table(script, nodes, T, E):
    n, T_min, kkt_time, E_min, kkt_energy = script.row(nodes)
    assert n == nodes
    assert T_min == pytest.approx(T, abs=5e-5) and E_min == pytest.approx(E, abs=5e-3)
    assert kkt_time < 1e-12 and kkt_energy < 1e-4
