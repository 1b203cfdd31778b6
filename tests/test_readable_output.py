"""Plots and tables people read (users issue §6): the reference and the tracking error of a closed-loop simulation,
the time-optimal profile not squashed by the unbounded controllable set at rest, units on every axis, and CLI
tables that keep names and numbers whole on a narrow or piped terminal."""

from __future__ import annotations

import numpy as np
import pytest
from rich import box
from rich.console import Console

import robodyn as rd
from robodyn.cli._common import Table
from robodyn.control import ComputedTorque, QuinticReference


def test_simulation_keeps_and_draws_the_reference():
    robot = rd.load("planar2r")
    ref = QuinticReference(np.zeros(2), np.array([0.5, -0.4]), 0.5)
    t = np.linspace(0.0, 0.6, 31)
    sim = rd.simulate(robot, ComputedTorque(robot, 100.0, 20.0, ref), np.zeros(2), np.zeros(2), t)
    np.testing.assert_array_equal(sim.q_reference, ref.sample(sim.t)[0])
    fig = rd.plot.simulation(sim)
    labels = [ax.get_ylabel() for ax in fig.axes]
    assert labels == ["position (rad | m)", "tracking error (rad | m)", "velocity (rad/s | m/s)",
                      "torque / force (N m | N)"]
    line = fig.axes[1].get_lines()[0]
    np.testing.assert_allclose(line.get_ydata(), sim.q[:, 0] - sim.q_reference[:, 0], rtol=0, atol=0)
    open_loop = rd.simulate(robot, lambda tt: np.zeros(2), np.zeros(2), np.zeros(2), t)
    assert open_loop.q_reference is None
    with pytest.raises(rd.InputError, match="reference"):
        rd.simulate(robot, lambda tt: np.zeros(2), np.zeros(2), np.zeros(2), t, reference=object())


def test_simulation_plot_has_the_tracking_panel(tmp_path, monkeypatch):
    import robodyn.files as files

    figures = []
    monkeypatch.setattr(files, "save_figure", lambda fig, path: figures.append(fig))
    robot = rd.load("planar2r")
    ref = QuinticReference(np.zeros(2), np.array([0.5, -0.4]), 0.5)
    sim = rd.simulate(robot, ComputedTorque(robot, 100.0, 20.0, ref), np.zeros(2), np.zeros(2),
                      np.linspace(0.0, 0.6, 31))
    sim.plot(tmp_path / "sim.png")
    labels = [ax.get_ylabel() for ax in figures[0].axes]
    assert labels == ["q (rad | m)", "q − q_r (rad | m)", "q̇ (rad/s | m/s)", "Γ (N m | N)", "energy (J)"]


def test_time_optimal_plot_is_not_squashed_and_has_units(tmp_path, monkeypatch):
    import robodyn.simulation.time_scaling as ts

    figures = []
    monkeypatch.setattr(ts, "save_figure", lambda fig, path: figures.append(fig))
    robot = rd.load("planar2r")
    path = rd.simulation.RestToRest(np.zeros(2), np.array([1.0, 0.5]), 1.0)
    res = rd.simulation.time_optimal(robot, path, [60.0, 20.0], grid=60)
    res.plot(tmp_path / "topp.png")
    ax1, ax2 = figures[0].axes
    assert ax1.get_ylim()[1] == pytest.approx(1.5 * res.sd.max())
    for ax in (ax1, ax2):
        assert "(" in ax.get_xlabel() and "(" in ax.get_ylabel()


def _render(table, width):
    console = Console(width=width, record=True, file=open("/dev/null", "w"))
    console.print(table)
    return console.export_text()


def _geometry_table():
    table = Table("j", "name", "qmin", "qmax", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_row("1", "shoulder_pan_joint", "-2.8973", "2.8973")
    table.add_row("2", "j2", "-0.0698", "1.7628")
    return table


def test_cli_table_keeps_words_whole_when_narrow():
    text = _render(_geometry_table(), 42)  # exactly the width the longest words need
    for word in ("shoulder_pan_joint", "-2.8973", "2.8973", "-0.0698", "1.7628"):
        assert word in text.split(), text


def test_cli_table_too_wide_folds_without_losing_text():
    text = _render(_geometry_table(), 24)
    squeezed = "".join(text.split())
    for word in ("shoulder_pan_joint", "-2.8973", "-0.0698", "1.7628"):
        assert all(ch in squeezed for ch in word)
    assert squeezed.count("8973") + squeezed.count("897") >= 1
