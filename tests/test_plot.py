"""rd.plot: figure contents (line data, labels, ellipsoid axes), atomic saving, no global backend change."""

from __future__ import annotations

from types import SimpleNamespace

import matplotlib
import numpy as np
import pytest
from matplotlib.figure import Figure

import robodyn as rd

T = np.linspace(0, 1, 11)


def test_torques_lines_and_labels():
    tau = np.stack([np.sin(T), 2 * T, -T], -1)
    backend = matplotlib.get_backend()
    fig = rd.plot.torques(T, tau, names=["a", "b", "c"])
    assert isinstance(fig, Figure) and matplotlib.get_backend() == backend
    (ax,) = fig.axes
    assert [line.get_label() for line in ax.lines] == ["a", "b", "c"]
    for k, line in enumerate(ax.lines):
        np.testing.assert_array_equal(line.get_xdata(), T)
        np.testing.assert_array_equal(line.get_ydata(), tau[:, k])
    assert ax.get_xlabel() == "time (s)" and "N m" in ax.get_ylabel()


def test_trajectory_and_simulation_panels():
    q = np.stack([T, T**2], -1)
    fig = rd.plot.trajectory(T, q, qd=2 * q)
    assert len(fig.axes) == 2 and fig.axes[0].get_ylabel().startswith("position")
    np.testing.assert_array_equal(fig.axes[1].lines[1].get_ydata(), 2 * T**2)
    assert fig.axes[0].lines[0].get_label() == "joint 1"
    result = SimpleNamespace(t=T, q=q, qd=-q, tau=3 * q)
    fig = rd.plot.simulation(result, names=["x", "y"])
    assert [a.get_ylabel().split()[0] for a in fig.axes] == ["position", "velocity", "torque"]
    np.testing.assert_array_equal(fig.axes[2].lines[0].get_ydata(), 3 * T)
    with pytest.raises(rd.InputError, match="'result' needs attributes t"):
        rd.plot.simulation(object())
    with pytest.raises(rd.InputError, match="'q' has shape"):
        rd.plot.trajectory(T, q[:5])


def test_identification_panels_show_rms_residual():
    meas = np.stack([T, -T], -1)
    pred = meas + np.array([0.1, 0.0])
    fig = rd.plot.identification(T, meas, pred)
    assert len(fig.axes) == 2
    assert fig.axes[0].get_title() == "joint 1: RMS residual 0.1 (all 11 rows)"
    assert fig.axes[1].get_title() == "joint 2: RMS residual 0 (all 11 rows)"
    np.testing.assert_array_equal(fig.axes[0].lines[1].get_ydata(), pred[:, 0])
    with pytest.raises(rd.InputError, match="'tau_predicted' has shape"):
        rd.plot.identification(T, meas, pred[:, :1])


def test_identification_draws_runs_apart():
    """Two runs one after the other: each run's lines end at its last sample (no line joins the runs), a dotted
    line marks the boundary, the residual covers both, and the abscissa is labelled as given."""
    meas = np.stack([T, -T], -1)
    fig = rd.plot.identification(np.arange(11.0), meas, meas + 0.1, runs=[4, 7], xlabel="sample")
    ax = fig.axes[0]
    drawn = [line for line in ax.lines if line.get_linestyle() != ":"]
    assert [len(line.get_xdata()) for line in drawn] == [4, 4, 7, 7]
    assert [line.get_xdata()[0] for line in ax.lines if line.get_linestyle() == ":"] == [4.0]
    assert ax.get_title() == "joint 1: RMS residual 0.1 (all 11 rows)"
    assert fig.axes[-1].get_xlabel() == "sample"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["measured", "predicted"]
    with pytest.raises(rd.InputError, match="'runs' gives"):
        rd.plot.identification(T, meas, meas, runs=[4, 6])


@pytest.mark.parametrize("kind", ["manipulability", "inertia"])
def test_ellipsoid_axes_are_the_eigen_decomposition(kind):
    robot = rd.load("planar3r")
    q = np.array([[0.3, -0.5, 0.9], [1.0, 0.2, -0.4]])
    fig = rd.plot.ellipsoids(robot, q, kind=kind, frame=3, scale=0.5)
    ax = fig.axes[0]
    axis_lines = [line for line in ax.lines if line.get_gid() == "semi-axis"]
    assert len(axis_lines) == 6
    for s in range(2):
        Jv = rd.jacobian(robot, q[s], frame=3)[:3]
        E = Jv @ Jv.T if kind == "manipulability" else Jv @ np.linalg.solve(rd.inertia_matrix(robot, q[s]), Jv.T)
        # each drawn semi-axis w satisfies E w = λ w with |w| = 0.5 √λ: together they rebuild E
        ends = [np.array(line.get_data_3d()) for line in axis_lines[3 * s : 3 * s + 3]]
        W = [e[:, 1] - e[:, 0] for e in ends]
        np.testing.assert_allclose(4 * sum(np.outer(w, w) for w in W), E, atol=1e-12)
        centre = np.array(axis_lines[3 * s].get_data_3d())[:, 0]
        np.testing.assert_allclose(centre, rd.forward_kinematics(robot, q[s])[2, :3, 3], atol=1e-14)
    with pytest.raises(rd.InputError, match="kind = 'energy'"):
        rd.plot.ellipsoids(robot, q, kind="energy")


def test_workspace_scatter_stays_within_reach():
    robot = rd.load("planar2r")
    fig = rd.plot.workspace(robot, samples=300, seed=1)
    xs, ys, zs = fig.axes[0].collections[0]._offsets3d
    r = np.hypot(np.asarray(xs), np.asarray(ys))
    assert r.size == 300 and r.max() <= 2.0 + 1e-12 and np.ptp(np.asarray(zs)) < 1e-12


def test_path_saves_atomically(tmp_path):
    fig = rd.plot.torques(T, T, path=tmp_path / "tau.png")
    assert (tmp_path / "tau.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and isinstance(fig, Figure)
    with pytest.raises(rd.InputError, match="does not exist"):
        rd.plot.torques(T, T, path=tmp_path / "missing" / "tau.png")
    assert not (tmp_path / "missing").exists()
