"""See the robot: a local 3-D web viewer (viser) and animations for reports (matplotlib).

The links are drawn along the Khalil–Kleinfinger geometry: link j goes from the origin O_a(j) of its antecedent
along z_a(j) by b_j, then along the common normal x_j by d_j, then along z_j by r_j to O_j (the frame
transformation ^{a(j)}T_j = Rot(z, γ_j) Trans(z, b_j) Rot(x, α_j) Trans(x, d_j) Rot(z, θ_j) Trans(z, r_j), Khalil &
Dombre §9.5).  :func:`link_segments` returns those three segments per frame; the viewer draws them as capsules
(cylinders with spheres at the joints) and each frame R_j as axes (x red, y green, z blue).

``rd.view(robot)`` serves a page on ``http://127.0.0.1:PORT`` with one slider per joint, and plays back a motion
(``viewer.play(t, q)``) — a ``simulate`` result, a trajectory or an identification run, whose torque error per joint
(measured vs predicted) colours the links.  The page and its client code are served by the viser package from the
local machine: it makes no request beyond the host it was opened on.  ``rd.animate(...)`` writes a GIF or MP4 of a
motion for reports.
"""

from __future__ import annotations

import contextlib
import io
import os
import socket
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from robodyn.model.robot import check_robot
from robodyn.arrays import finite_array
from robodyn.model.arguments import frame_index
from robodyn.files import write_atomically
from robodyn.sanitize import figure_text
from robodyn.errors import InputError
from robodyn.kinematics import forward_kinematics

__all__ = ("Viewer", "animate", "link_segments", "view")

#: Frames an animation may hold: past it, pass a shorter motion or a lower ``fps``.
MAX_FRAMES = 20_000

#: Colours (RGB) of a link whose torque error is 0 and of one whose error is at or beyond ``error_scale``.
_GOOD, _BAD = np.array([60.0, 160.0, 90.0]), np.array([220.0, 50.0, 40.0])
_NEUTRAL = (150, 170, 200)


def link_segments(robot, q) -> np.ndarray:
    """The three straight pieces of every link along the Khalil–Kleinfinger geometry, in the base frame R_0.

    Parameters
    ----------
    robot : Robot
    q : array_like (..., n)
        Joint positions (rad | m).

    Returns
    -------
    ndarray (..., nf, 4, 3)
        For frame j (index j − 1): the points O_a(j), O_a(j) + b_j z_a(j), O_j − r_j z_j and O_j (m), where r_j
        includes q_j for a prismatic joint.  Consecutive points are joined by segments of lengths |b_j|, |d_j|
        and |r_j|.
    """
    robot = check_robot(robot)
    q = finite_array("q", q)
    if q.shape[-1:] != (robot.n,):
        raise InputError(f"argument 'q' has shape {q.shape}; expected (..., {robot.n}), one entry per joint")
    T = forward_kinematics(robot, q)
    batch = q.shape[:-1]
    Z, P = T[..., :3, 2], T[..., :3, 3]  # z_j and O_j in R_0
    r = np.broadcast_to(np.asarray(robot.r, float), batch + (robot.nf,)).copy()
    prismatic = np.flatnonzero(robot.sigma[robot.joint_frames] == 1)
    r[..., robot.joint_frames[prismatic]] += q[..., prismatic]
    parent = np.asarray(robot.antecedent) - 1
    origin_a = np.where((parent >= 0)[:, None], P[..., np.maximum(parent, 0), :], 0.0)
    z_a = np.where((parent >= 0)[:, None], Z[..., np.maximum(parent, 0), :], np.array([0.0, 0.0, 1.0]))
    points = np.empty(batch + (robot.nf, 4, 3))
    points[..., 0, :] = origin_a
    points[..., 1, :] = origin_a + np.asarray(robot.b, float)[:, None] * z_a
    points[..., 2, :] = P - r[..., None] * Z
    points[..., 3, :] = P
    return points


def _segment_poses(points: np.ndarray):
    """Centre (nf, 3, 3), orientation wxyz (nf, 3, 4) and length (nf, 3) of the cylinders joining the points."""
    from viser import transforms

    a, b = points[..., :-1, :], points[..., 1:, :]
    axis = b - a
    length = np.linalg.norm(axis, axis=-1)
    z = np.where(length[..., None] > 0, axis / np.where(length > 0, length, 1.0)[..., None], [0.0, 0.0, 1.0])
    # A rotation taking the cylinder's own z axis onto the segment: about z × u by the angle between them.
    cross = np.cross([0.0, 0.0, 1.0], z)
    s, c = np.linalg.norm(cross, axis=-1), z[..., 2]
    k = np.where(s[..., None] > 1e-12, cross / np.where(s > 1e-12, s, 1.0)[..., None], [1.0, 0.0, 0.0])
    wxyz = transforms.SO3.exp(k * np.arctan2(s, c)[..., None]).wxyz
    return (a + b) / 2, wxyz, length


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def _slider_range(robot) -> np.ndarray:
    """[min, max] per joint for the sliders: the joint limits, else ±π (revolute) or ±1 m (prismatic)."""
    lim = np.array(robot.qlim, float) if robot.qlim is not None else np.full((robot.n, 2), np.inf) * [-1, 1]
    default = np.where(robot.sigma[robot.joint_frames] == 1, 1.0, np.pi)
    return np.where(np.isfinite(lim), lim, default[:, None] * [-1.0, 1.0])


class Viewer:
    """A live 3-D view of one robot in the browser (see :func:`view`).

    Attributes
    ----------
    url : str
        The page to open, ``http://HOST:PORT``.
    q : ndarray (n,)
        The configuration shown (rad | m).
    """

    def __init__(self, robot, q=None, *, host: str = "127.0.0.1", port: int | None = None,
                 radius: float | None = None, frame_size: float | None = None):
        try:
            import viser
        except ImportError as exc:  # pragma: no cover - depends on the installation
            raise InputError("the 3-D viewer needs the 'viser' package: pip install 'robodyn[viewer]'") from exc
        self.robot = check_robot(robot)
        q0 = np.zeros(self.robot.n) if q is None else finite_array("q", q)
        if q0.shape != (self.robot.n,):
            raise InputError(f"argument 'q' has shape {q0.shape}; expected ({self.robot.n},), one entry per joint")
        port = _free_port(host) if port is None else int(port)
        with contextlib.redirect_stdout(io.StringIO()):  # viser prints a banner; the caller prints ``url``
            self._server = viser.ViserServer(host=host, port=port, label=f"robodyn: {self.robot.name}",
                                             verbose=False)
        self.url = f"http://{host}:{self._server.get_port()}"
        reach = float(np.max(np.linalg.norm(link_segments(self.robot, q0).reshape(-1, 3), axis=-1), initial=0.1))
        self._radius = radius if radius is not None else max(0.01, 0.04 * reach)
        size = frame_size if frame_size is not None else max(0.03, 0.12 * reach)
        scene = self._server.scene
        scene.set_up_direction("+z")
        self._server.initial_camera.position = (1.6 * reach, -1.6 * reach, 1.3 * reach)
        self._server.initial_camera.look_at = (0.0, 0.0, 0.4 * reach)
        scene.add_grid("/grid", width=4 * reach, height=4 * reach, cell_size=reach / 5)
        nf = self.robot.nf
        self._frames = [scene.add_frame(f"/frames/{j}", axes_length=size, axes_radius=size / 20) for j in range(nf + 1)]
        self._links = [[scene.add_cylinder(f"/links/{j}/{k}", radius=self._radius, height=1.0, color=_NEUTRAL)
                        for k in range(3)] for j in range(1, nf + 1)]
        self._joints = [scene.add_icosphere(f"/joints/{j}", radius=1.4 * self._radius, color=(90, 90, 110))
                        for j in range(1, nf + 1)]
        self._lock = threading.Lock()
        self._playing = threading.Event()
        self._syncing = False  # True while show() moves the sliders, so that they do not call show() back
        self._sliders = self._add_sliders(q0)
        self._status = self._server.gui.add_markdown("")
        self.show(q0)

    def _add_sliders(self, q0):
        names = self.robot.q_names
        lim = _slider_range(self.robot)
        sliders = []
        with self._server.gui.add_folder("joints (rad | m)"):
            for i in range(self.robot.n):
                lo, hi = float(lim[i, 0]), float(lim[i, 1])
                slider = self._server.gui.add_slider(str(names[i]), min=lo, max=hi, step=(hi - lo) / 1000,
                                                     initial_value=float(np.clip(q0[i], lo, hi)))
                slider.on_update(lambda _event: None if self._playing.is_set() or self._syncing else self.show(
                    np.array([s.value for s in self._sliders])))
                sliders.append(slider)
        return sliders

    def show(self, q, colours=None) -> None:
        """Draw the robot at ``q`` (n,) (rad | m); ``colours`` (nf, 3) RGB 0–255 per link, optional."""
        q = finite_array("q", q)
        if q.shape != (self.robot.n,):
            raise InputError(f"argument 'q' has shape {q.shape}; expected ({self.robot.n},), one entry per joint")
        from viser import transforms

        T = forward_kinematics(self.robot, q)
        centre, wxyz, length = _segment_poses(link_segments(self.robot, q))
        frame_wxyz = transforms.SO3.from_matrix(T[:, :3, :3]).wxyz
        with self._lock, self._server.atomic():
            for j in range(self.robot.nf):
                self._frames[j + 1].wxyz, self._frames[j + 1].position = frame_wxyz[j], T[j, :3, 3]
                self._joints[j].position = T[j, :3, 3]
                for k, link in enumerate(self._links[j]):
                    link.visible = bool(length[j, k] > 1e-9)
                    link.position, link.wxyz = centre[j, k], wxyz[j, k]
                    link.scale = (1.0, 1.0, max(float(length[j, k]), 1e-9))
                    if colours is not None:
                        link.color = tuple(int(c) for c in colours[j])
            self._syncing = True
            try:
                for slider, value in zip(self._sliders, q):
                    slider.value = float(np.clip(value, slider.min, slider.max))
            finally:
                self._syncing = False
        self.q = q

    def play(self, t, q, *, tau_measured=None, tau_predicted=None, speed: float = 1.0, loop: bool = False,
             block: bool = True) -> None:
        """Play a motion back: times ``t`` (N,) s, positions ``q`` (N, n) (rad | m), at ``speed`` × real time.

        With measured and predicted joint torques (N, n) (e.g. an identification run), every moving link is
        coloured by the relative error |τ_meas − τ_pred| / max|τ_meas| of its joint at that instant, green (0) to
        red (≥ 25 %), and the page shows the errors.  ``block=False`` plays in a background thread.
        """
        t = finite_array("t", t)
        q = finite_array("q", q)
        if t.ndim != 1 or t.size == 0 or np.any(np.diff(t) < 0):
            raise InputError("argument 't' must be a non-empty 1-D array of non-decreasing times (s)")
        if q.shape != (t.size, self.robot.n):
            raise InputError(f"argument 'q' has shape {q.shape}; expected ({t.size}, {self.robot.n})")
        if not np.isfinite(speed) or speed <= 0:
            raise InputError(f"argument 'speed' = {speed}; give a positive factor (1 = real time)")
        colours = self._error_colours(t, tau_measured, tau_predicted)

        def run():
            self._playing.set()
            try:
                while True:
                    start = time.perf_counter()
                    for k in range(t.size):
                        delay = (t[k] - t[0]) / speed - (time.perf_counter() - start)
                        if delay > 0:
                            time.sleep(delay)
                        self.show(q[k], None if colours is None else colours[k])
                        self._status.content = f"t = {t[k]:.3f} s"
                    if not loop:
                        break
            finally:
                self._playing.clear()

        if block:
            run()
        else:
            threading.Thread(target=run, daemon=True).start()

    def _error_colours(self, t, tau_measured, tau_predicted):
        if tau_measured is None and tau_predicted is None:
            return None
        if tau_measured is None or tau_predicted is None:
            raise InputError("give both 'tau_measured' and 'tau_predicted' (N, n) to colour the links by the error")
        meas, pred = finite_array("tau_measured", tau_measured), finite_array("tau_predicted", tau_predicted)
        for name, a in (("tau_measured", meas), ("tau_predicted", pred)):
            if a.shape != (t.size, self.robot.n):
                raise InputError(f"argument '{name}' has shape {a.shape}; expected ({t.size}, {self.robot.n})")
        scale = np.maximum(np.max(np.abs(meas), axis=0), 1e-12)
        err = np.clip(np.abs(meas - pred) / scale / 0.25, 0.0, 1.0)
        colours = np.tile(np.array(_NEUTRAL, float), (t.size, self.robot.nf, 1))
        colours[:, self.robot.joint_frames] = _GOOD + err[..., None] * (_BAD - _GOOD)
        return colours

    def close(self) -> None:
        """Stop the server (the page goes blank)."""
        with contextlib.redirect_stdout(io.StringIO()):
            self._server.stop()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def view(robot, q=None, *, host: str = "127.0.0.1", port: int | None = None) -> Viewer:
    """Open a live 3-D view of ``robot`` in the browser.

    Parameters
    ----------
    robot : Robot
    q : array_like (n,), optional
        Configuration to show first (rad | m); zeros by default.
    host : str
        Address the page is served on (default the loopback address, reachable from this machine only).
    port : int, optional
        TCP port; a free one by default.

    Returns
    -------
    Viewer
        ``viewer.url`` is the page; ``viewer.show(q)`` draws a configuration, ``viewer.play(t, q, ...)`` plays a
        motion back, ``viewer.close()`` stops the server.  One slider per joint moves the robot by hand.
    """
    return Viewer(robot, q, host=host, port=port)


def animate(robot, t, q, path: str | os.PathLike, *, fps: float = 25.0, title: str | None = None):
    """Write an animation of a motion for reports: GIF (Pillow) or MP4 (needs ffmpeg), by the suffix of ``path``.

    Parameters
    ----------
    robot : Robot
    t : array_like (N,)
        Times (s), non-decreasing.
    q : array_like (N, n)
        Joint positions (rad | m) at those times; the animation samples them at ``fps`` frames per second of
        motion time (linear interpolation).
    path : str or path
        ``.gif`` or ``.mp4``; written atomically (nothing is left behind on error, an existing file is replaced
        only if it is a regular file).
    fps : float
    title : str, optional
        Figure title (the robot's name by default); shown as plain text.

    Returns
    -------
    pathlib.Path
        The file written.
    """
    import matplotlib.animation as manimation
    from matplotlib.figure import Figure

    robot = check_robot(robot)
    t, q = finite_array("t", t), finite_array("q", q)
    if t.ndim != 1 or t.size == 0 or np.any(np.diff(t) < 0):
        raise InputError("argument 't' must be a non-empty 1-D array of non-decreasing times (s)")
    if q.shape != (t.size, robot.n):
        raise InputError(f"argument 'q' has shape {q.shape}; expected ({t.size}, {robot.n})")
    if not (np.isfinite(fps) and 0 < fps <= 1000):
        raise InputError(f"argument 'fps' = {fps}; give frames per second in (0, 1000]")
    path = Path(path)
    fmt = path.suffix.lower()
    if fmt not in (".gif", ".mp4"):
        raise InputError(f"animation file '{path.name}': give a .gif or .mp4 name")
    if fmt == ".mp4" and not manimation.writers.is_available("ffmpeg"):
        raise InputError("writing .mp4 needs ffmpeg on the PATH; write a .gif instead")
    count = int(np.floor((t[-1] - t[0]) * fps)) + 1
    if count > MAX_FRAMES:
        raise InputError(f"the animation would hold {count} frames (> {MAX_FRAMES}); lower 'fps' or shorten the motion")
    times = t[0] + np.arange(count) / fps
    qs = np.stack([np.interp(times, t, q[:, i]) for i in range(robot.n)], axis=-1) if t.size > 1 else q[:1]
    points = link_segments(robot, qs)  # (count, nf, 4, 3)
    lo, hi = points.reshape(-1, 3).min(axis=0), points.reshape(-1, 3).max(axis=0)
    half = max(float(np.max(hi - lo)) / 2, 1e-3)
    centre = (lo + hi) / 2

    fig = Figure(figsize=(5, 5), dpi=100)
    ax = fig.add_subplot(projection="3d")
    ax.set_xlim(centre[0] - half, centre[0] + half)
    ax.set_ylim(centre[1] - half, centre[1] + half)
    ax.set_zlim(centre[2] - half, centre[2] + half)
    ax.set_xlabel("x0 (m)")
    ax.set_ylabel("y0 (m)")
    ax.set_zlabel("z0 (m)")
    heading = robot.name if title is None else str(title)
    ax.set_title(figure_text(heading))  # a name is text, never matplotlib math
    lines = [ax.plot([], [], [], "-", lw=3, color="tab:blue", solid_capstyle="round")[0] for _ in range(robot.nf)]
    joints = ax.plot([], [], [], "o", color="0.3", ms=4)[0]
    clock = ax.text2D(0.02, 0.95, "", transform=ax.transAxes)

    def draw(k):
        for j, line in enumerate(lines):
            line.set_data_3d(points[k, j, :, 0], points[k, j, :, 1], points[k, j, :, 2])
        ends = points[k, :, 3]
        joints.set_data_3d(ends[:, 0], ends[:, 1], ends[:, 2])
        clock.set_text(f"t = {times[k]:.2f} s")
        return [*lines, joints, clock]

    anim = manimation.FuncAnimation(fig, draw, frames=count, blit=False)
    writer = manimation.PillowWriter(fps=fps) if fmt == ".gif" else manimation.FFMpegWriter(fps=fps)
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp) / f"animation{fmt}"
        anim.save(scratch, writer=writer)
        data = scratch.read_bytes()
    write_atomically(path, lambda fh: fh.write(data), what="animation file", binary=True)
    return path
