"""See the robot: a local 3-D web viewer (viser) and animations for reports (matplotlib).

Links are drawn along the Khalil–Kleinfinger geometry (:func:`link_segments`, Khalil & Dombre §9.5), or with a
URDF's visual geometry, each mesh name resolved only inside the folders the caller trusts (:func:`resolve_mesh`).
The viewer's page is served from the local machine, and only that page, holding the token of :attr:`Viewer.url`,
may open the scene's websocket.  docs/viewer.md describes both.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import io
import os
import re
import secrets
import socket
import tempfile
import threading
import time
import warnings
from pathlib import Path

import numpy as np

from robodyn.model.robot import check_robot
from robodyn.arrays import finite_array
from robodyn.files import read_file_bytes, write_atomically
from robodyn.sanitize import figure_text, printable
from robodyn.errors import InputError, RobodynError
from robodyn.kinematics import forward_kinematics

__all__ = ("Viewer", "animate", "com_hull_points", "link_segments", "resolve_mesh", "view")

#: Frames an animation may hold: past it, pass a shorter motion or a lower ``fps``.
MAX_FRAMES = 20_000
#: Fewest frames per second of rd.animate: a GIF frame lasts at most 655.35 s (its delay is 16 bits of 10 ms).
MIN_FPS = 0.01
#: Largest mesh file the viewer reads (bytes), and all mesh files of one robot together.
MAX_MESH_BYTES = 64 * 2**20
MAX_MESHES_BYTES = 512 * 2**20
#: Mesh formats the viewer reads (trimesh; DAE through pycollada).
MESH_SUFFIXES = (".stl", ".obj", ".dae")

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


#: a ROS package name: one path component (ROS allows lowercase letters, digits and _; robodyn accepts a little more)
_PACKAGE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,254}")


def resolve_mesh(filename: str, folder: str | os.PathLike | None, package_dirs=()) -> Path:
    """The file a URDF mesh name points to, found only inside the URDF's folder or a package folder.

    Parameters
    ----------
    filename : str
        The mesh name as the URDF writes it (untrusted): ``package://PKG/path`` (looked up in ``package_dirs``:
        a folder named PKG, or a folder holding PKG; PKG is one folder name of letters, digits, ``_``, ``-``,
        ``.``, never ``..``, and the path stays inside it), a path relative to ``folder``, or an absolute path /
        ``file://`` URL, which must lie inside ``folder`` or a package folder.
    folder : str or PathLike or None
        The URDF's folder (None: a URDF given as text, whose relative names resolve nowhere).
    package_dirs : sequence of str or PathLike
        The package folders the caller trusts.

    Returns
    -------
    pathlib.Path
        The file, with every symbolic link resolved, inside one of those folders.

    Raises
    ------
    InputError
        A name that leads out of the folders (``..``, a symbolic link, an absolute path elsewhere), a package
        in none of ``package_dirs``, another URL scheme, or no such file; one line naming the mesh.
    """
    if not isinstance(filename, str):
        raise InputError(f"argument 'filename' is {type(filename).__name__}; give the mesh name of the URDF (str)")
    if folder is not None and not isinstance(folder, (str, os.PathLike)):
        raise InputError(f"argument 'folder' is {type(folder).__name__}; give the URDF's folder (str or path) or None")
    dirs = _package_dirs(package_dirs)
    text = filename
    shown = repr(printable(text)[:200])
    if "\0" in text or not text:
        raise InputError(f"mesh {shown}: not a file name")
    if text.startswith("package://"):
        package, _, rel = text[len("package://"):].partition("/")
        if not _PACKAGE_NAME.fullmatch(package):
            raise InputError(f"mesh {shown}: package name {printable(package)[:80]!r} is not one folder name of "
                             "letters, digits, '_', '-' and '.' (not starting with '.'); it is not read")
        roots = [d for d in dirs if d.name == package] + [d / package for d in dirs if (d / package).is_dir()]
        if not roots:
            where = ", ".join(repr(printable(str(d))) for d in dirs) or "none given"
            raise InputError(f"mesh {shown}: package {printable(package)!r} is in none of the package folders "
                             f"({where}); pass the folder that holds it in package_dirs (--package-dir)")
        candidates = [(root, root / rel) for root in roots]
    else:
        if "://" in text and not text.startswith("file://"):
            raise InputError(f"mesh {shown}: only package:// and file:// names (or paths) are read; nothing is "
                             "downloaded")
        rel = Path(text[len("file://"):] if text.startswith("file://") else text)
        roots = ([Path(folder)] if folder is not None else []) + dirs
        if rel.is_absolute():
            candidates = [(root, rel) for root in roots]
        else:
            candidates = [] if folder is None else [(Path(folder), Path(folder) / rel)]
    missing = []
    for root, path in candidates:
        real, top = os.path.realpath(path), os.path.realpath(root)
        if os.path.commonpath([real, top]) != top:
            continue  # ``..`` or a symbolic link leading out of this folder
        if os.path.isfile(real):
            return Path(real)
        missing.append(repr(printable(str(root))))  # a package may be split over several folders: try the next
    if missing:
        raise InputError(f"mesh {shown}: no such file in {', '.join(missing)}")
    allowed = ", ".join(repr(printable(str(r))) for r in roots) or "no folder (a URDF given as text)"
    raise InputError(f"mesh {shown} leads out of the URDF's folder and the package folders ({allowed}); it is "
                     "not read")


def _package_dirs(package_dirs) -> list[Path]:
    if isinstance(package_dirs, (str, os.PathLike)):
        package_dirs = [package_dirs]
    try:
        dirs = list(package_dirs)
    except TypeError:
        raise InputError(f"argument 'package_dirs' is {type(package_dirs).__name__}; give a list of folders") from None
    bad = [d for d in dirs if not isinstance(d, (str, os.PathLike))]
    if bad:
        raise InputError(f"argument 'package_dirs' holds a {type(bad[0]).__name__}; give folders (str or path)")
    return [Path(d) for d in dirs]


def _load_geometry(visual, folder, package_dirs, budget: list):
    """A trimesh.Trimesh of one :class:`robodyn.model.urdf.LinkVisual`, in its own frame (scaled)."""
    import trimesh

    wanted = {"box": 3, "cylinder": 2, "sphere": 1, "mesh": 0}[visual.geometry]
    if len(visual.size) != wanted or not all(np.isfinite(x) and x > 0 for x in visual.size) \
            or not np.all(np.isfinite(visual.scale)):
        raise InputError(f"{visual.geometry} of size {visual.size} and scale {tuple(visual.scale)}: give {wanted} "
                         "positive lengths (m) and finite scale factors")
    if visual.geometry == "box":
        return trimesh.creation.box(extents=visual.size)
    if visual.geometry == "cylinder":
        return trimesh.creation.cylinder(radius=visual.size[0], height=visual.size[1])
    if visual.geometry == "sphere":
        return trimesh.creation.icosphere(subdivisions=2, radius=visual.size[0])
    path = resolve_mesh(visual.filename, folder, package_dirs)
    label = f"mesh {printable(visual.filename)[:200]!r}"
    suffix = path.suffix.lower()
    if suffix not in MESH_SUFFIXES:
        raise InputError(f"{label}: format {printable(suffix) or '(no suffix)'} is not read; give "
                         f"{', '.join(MESH_SUFFIXES)}")
    data = read_file_bytes(path, label, kind="mesh file", limit=min(MAX_MESH_BYTES, budget[0]), error=InputError)
    budget[0] -= len(data)
    lowered = data.lower() if suffix == ".dae" else b""
    if b"<!doctype" in lowered or b"<!entity" in lowered:
        # as for the URDF itself: no DTD, which could expand entities or read local files into the mesh
        raise InputError(f"{label}: a mesh file may not contain <!DOCTYPE> or <!ENTITY> declarations")
    try:
        # no resolver: textures and material files the mesh names are not opened (colours come from the URDF)
        mesh = trimesh.load(io.BytesIO(data), file_type=suffix[1:], force="mesh", resolver=None)
    except Exception as exc:  # trimesh and pycollada raise many types for damaged files
        raise InputError(f"{label}: not a readable {suffix[1:].upper()} mesh ({type(exc).__name__})") from None
    if not isinstance(mesh, trimesh.Trimesh) or len(mesh.faces) == 0:
        raise InputError(f"{label}: holds no triangles")
    if not np.all(np.isfinite(mesh.vertices)):
        raise InputError(f"{label}: has vertices that are not finite")
    scaled = mesh.copy()
    scaled.vertices = mesh.vertices * np.asarray(visual.scale)
    return scaled


def _urdf_meshes(robot, urdf, package_dirs, consequence: str = "its frame is drawn as capsules") -> tuple[list, set]:
    """The URDF's visuals that load, as [(LinkVisual, trimesh.Trimesh in the visual's frame)], and the frames where
    one did not (each warned about once: a UserWarning naming the link, why and ``consequence``)."""
    from robodyn.model.urdf import urdf_visuals

    dirs = _package_dirs(package_dirs)
    for d in dirs:
        if not d.is_dir():
            raise InputError(f"package folder {printable(str(d))!r} is not a folder")
    folder = Path(urdf).parent if isinstance(urdf, os.PathLike) or (
        isinstance(urdf, str) and "<" not in urdf and "\n" not in urdf) else None
    loaded, failed, budget = [], set(), [MAX_MESHES_BYTES]
    for visual in urdf_visuals(urdf, robot):
        try:
            loaded.append((visual, _load_geometry(visual, folder, dirs, budget)))
        except RobodynError as exc:
            warnings.warn(f"link {printable(visual.link)!r}: {exc}; {consequence}", UserWarning, stacklevel=4)
            failed.add(visual.frame)
    return loaded, failed


def com_hull_points(robot, urdf, package_dirs=()) -> tuple:
    """Per frame, the vertices of the URDF visuals that frame carries, for the bound ``com_hull`` of
    ``rd.identify(..., method="physical")`` (:class:`robodyn.identification.consistent.PhysicalBounds`).

    Parameters
    ----------
    robot : Robot — the model read from ``urdf`` (``rd.from_urdf``).
    urdf, package_dirs — as for :func:`view`.

    Returns
    -------
    tuple of nf entries — entry j: the vertices (m, 3) (m) in frame R_(j+1) of every visual placed on that frame,
    or None where the frame carries none or one did not load (a UserWarning names it: a partial hull would
    exclude the true centre of mass).
    """
    robot = check_robot(robot)
    loaded, failed = _urdf_meshes(robot, urdf, package_dirs, consequence="its frame gets no centre-of-mass hull")
    points: list = [[] for _ in range(robot.nf + 1)]
    for visual, mesh in loaded:
        v = np.asarray(mesh.vertices, dtype=float)
        points[visual.frame].append(v @ visual.pose[:3, :3].T + visual.pose[:3, 3])
    return tuple(None if k in failed or not points[k] else np.concatenate(points[k]) for k in range(1, robot.nf + 1))


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _page_origins(host: str, port: int) -> frozenset:
    """The Origin headers of the viewer's own page: the host it listens on, and the loopback names for it."""
    names = {_url_host(host).lower()}
    if host in ("127.0.0.1", "localhost", "::1", "0.0.0.0", "::"):
        names |= {"127.0.0.1", "localhost", "[::1]"}
    return frozenset(f"http://{name}:{port}" for name in names)


def _configuration(q, n: int) -> np.ndarray:
    """``q`` as a finite (n,) array (rad | m); InputError otherwise."""
    q = finite_array("q", q)
    if q.shape != (n,):
        raise InputError(f"argument 'q' has shape {q.shape}; expected ({n},), one entry per joint")
    return q


def _motion(t, q, n: int):
    """``t`` (N,) non-decreasing times (s) and ``q`` (N, n) positions, checked finite; InputError otherwise."""
    t, q = finite_array("t", t), finite_array("q", q)
    if t.ndim != 1 or t.size == 0 or np.any(np.diff(t) < 0):
        raise InputError("argument 't' must be a non-empty 1-D array of non-decreasing times (s)")
    if q.shape != (t.size, n):
        raise InputError(f"argument 'q' has shape {q.shape}; expected ({t.size}, {n})")
    return t, q


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
        The page to open, ``http://HOST:PORT/?websocket=ws://HOST:PORT/?token=TOKEN``: the websocket address
        of the scene carries a token of 256 random bits, new for every viewer; a connection without it, or
        opened by another web page (its Origin), is closed before any message is sent.
    q : ndarray (n,)
        The configuration shown (rad | m).
    meshes : tuple of int
        The frames drawn with the URDF's visual geometry (their capsules hidden); empty without a URDF.
    """

    def __init__(self, robot, q=None, *, host: str = "127.0.0.1", port: int | None = None,
                 radius: float | None = None, frame_size: float | None = None, urdf=None, package_dirs=(),
                 meshes: bool = True):
        try:
            import viser
        except ImportError as exc:  # pragma: no cover - depends on the installation
            raise InputError("the 3-D viewer needs the 'viser' package: pip install 'robodyn[viewer]'") from exc
        self.robot = check_robot(robot)
        q0 = _configuration(np.zeros(self.robot.n) if q is None else q, self.robot.n)
        port = _free_port(host) if port is None else int(port)
        with contextlib.redirect_stdout(io.StringIO()):  # viser prints a banner; the caller prints ``url``
            self._server = viser.ViserServer(host=host, port=port, label=f"robodyn: {self.robot.name}",
                                             verbose=False)
        self._token = secrets.token_urlsafe(32)
        self._origins = _page_origins(host, self._server.get_port())
        self._wildcard = host in ("0.0.0.0", "::", "")
        self._guard_websocket()
        page = f"http://{_url_host(host)}:{self._server.get_port()}"
        #: the page to open: viser's client opens its websocket at the address of ``?websocket=``, the token in it
        self.url = f"{page}/?websocket=ws://{_url_host(host)}:{self._server.get_port()}/?token={self._token}"
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
        self._visual_frames, failed = {}, set()
        if urdf is not None and meshes:
            self._visual_frames, failed = self._add_visuals(urdf, package_dirs)
        self.meshes = tuple(k for k in sorted(self._visual_frames) if k not in failed)
        # a fixed frame rides on its antecedent's body: drawn by that body's mesh (the UR5's tool0), no capsule
        self._meshed = set(self.meshes)
        for j in range(1, nf + 1):
            if self.robot.sigma[j - 1] == 2 and int(self.robot.antecedent[j - 1]) in self._meshed:
                self._meshed.add(j)
        self._lock = threading.Lock()
        self._playing = threading.Event()
        self._syncing = False  # True while show() moves the sliders, so that they do not call show() back
        self._sliders = self._add_sliders(q0)
        self._status = self._server.gui.add_markdown("")
        self.show(q0)

    def _guard_websocket(self) -> None:
        """Close every websocket that lacks the token or comes from another page, before a message is sent.

        viser runs the connect callbacks of its websocket server in order, before it starts sending the scene,
        and keeps the raw connection (headers, request path) of each client; the guard is the last callback. A
        client connected before the guard existed is closed too."""
        try:
            websock = self._server._websock_server  # viser's own server: no public hook sees the handshake
            loop, live = websock._background_event_loop, websock._live_connections
        except AttributeError:  # another viser than the one robodyn knows: serve nothing rather than unguarded
            self.close()
            raise RobodynError("this version of viser gives robodyn no hook to check its websocket's clients; "
                               "install viser 1.x: pip install 'robodyn[viewer]'") from None
        websock.on_client_connect(self._check_client)
        for connection in tuple(live.values()):
            asyncio.run_coroutine_threadsafe(connection.close(1008, "robodyn viewer: reconnect"), loop).result(5)

    def allowed(self, origin: str | None, path: str, host: str | None = None) -> bool:
        """True when a websocket handshake with ``Origin`` header ``origin`` (None: a client that is no browser),
        request target ``path`` and ``Host`` header ``host`` may see the scene: the token of :attr:`url` in the
        query, and the origin of the viewer's page (on a wildcard address, the host the page was opened on)."""
        from urllib.parse import parse_qs, urlsplit

        tokens = parse_qs(urlsplit(path).query).get("token", [])
        good = len(tokens) == 1 and hmac.compare_digest(tokens[0].encode(), self._token.encode())
        if not good or origin is None:
            return good
        origin = origin.lower().rstrip("/")
        return origin in self._origins or (self._wildcard and host is not None and origin == f"http://{host.lower()}")

    async def _check_client(self, client) -> None:
        connection = self._server._websock_server._live_connections.get(client.client_id)
        if connection is None:
            return
        request = connection.request
        headers = None if request is None else request.headers
        if headers is None or not self.allowed(headers.get("Origin"), request.path, headers.get("Host")):
            await connection.close(1008, "robodyn viewer: forbidden (open the URL the viewer printed)")

    def _add_visuals(self, urdf, package_dirs) -> tuple[dict, set]:
        """Scene nodes ``/visuals/k`` (one per frame k that carries URDF visuals, moved by :meth:`show`) holding
        the meshes: returns {k: node} and the frames where a visual failed to load (they keep their capsules)."""
        from viser import transforms

        loaded, failed = _urdf_meshes(self.robot, urdf, package_dirs)
        nodes = {}
        scene = self._server.scene
        for i, (visual, mesh) in enumerate(loaded):
            k = visual.frame
            if k not in nodes:
                nodes[k] = scene.add_frame(f"/visuals/{k}", show_axes=False)
            colour = _NEUTRAL if visual.rgba is None else tuple(int(round(255 * c)) for c in visual.rgba[:3])
            opacity = None if visual.rgba is None or visual.rgba[3] >= 1 else float(visual.rgba[3])
            scene.add_mesh_simple(f"/visuals/{k}/{i}", np.asarray(mesh.vertices, np.float32),
                                  np.asarray(mesh.faces, np.uint32), color=colour, opacity=opacity,
                                  position=visual.pose[:3, 3],
                                  wxyz=transforms.SO3.from_matrix(visual.pose[:3, :3]).wxyz)
        return nodes, failed

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
        q = _configuration(q, self.robot.n)
        from viser import transforms

        T = forward_kinematics(self.robot, q)
        centre, wxyz, length = _segment_poses(link_segments(self.robot, q))
        frame_wxyz = transforms.SO3.from_matrix(T[:, :3, :3]).wxyz
        with self._lock, self._server.atomic():
            for k, node in self._visual_frames.items():
                if k > 0:
                    node.wxyz, node.position = frame_wxyz[k - 1], T[k - 1, :3, 3]
            for j in range(self.robot.nf):
                self._frames[j + 1].wxyz, self._frames[j + 1].position = frame_wxyz[j], T[j, :3, 3]
                self._joints[j].position = T[j, :3, 3]
                meshed = (j + 1) in self._meshed
                self._joints[j].visible = not meshed
                for k, link in enumerate(self._links[j]):
                    link.visible = bool(length[j, k] > 1e-9) and not meshed
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
        t, q = _motion(t, q, self.robot.n)
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


def view(robot, q=None, *, host: str = "127.0.0.1", port: int | None = None, urdf=None, package_dirs=(),
         meshes: bool = True) -> Viewer:
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
    urdf : str or PathLike, optional
        The URDF file (or text) ``robot`` was loaded from: its visual meshes, boxes, cylinders and spheres are
        drawn on the frames that carry their links instead of capsules (:func:`robodyn.model.urdf.urdf_visuals`).
    package_dirs : sequence of str or PathLike
        Folders where ``package://PKG/...`` mesh names are looked up (a folder named PKG, or one holding it);
        mesh files are read only inside these and the URDF's folder (:func:`resolve_mesh`).  A mesh that is
        missing, unreadable or outside them gives a UserWarning and the capsules of its frame.
    meshes : bool
        False: capsules even with ``urdf``.

    Returns
    -------
    Viewer
        ``viewer.url`` is the page; ``viewer.show(q)`` draws a configuration, ``viewer.play(t, q, ...)`` plays a
        motion back, ``viewer.close()`` stops the server.  One slider per joint moves the robot by hand.
    """
    return Viewer(robot, q, host=host, port=port, urdf=urdf, package_dirs=package_dirs, meshes=meshes)


def animate(robot, t, q, path: str | os.PathLike, *, fps: float = 25.0, title: str | None = None, urdf=None,
            package_dirs=()):
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
        ``.gif`` or ``.mp4``; written atomically (an existing file is replaced only if it is a regular file).
    fps : float
        Frames per second, from 0.01 (a GIF frame lasts at most 655 s) to 1000.
    title : str, optional
        Figure title (the robot's name by default); shown as plain text.
    urdf, package_dirs
        As for :func:`view`: each visual is drawn as its convex hull (a few hundred faces, which matplotlib draws
        in software) on the frame that carries it, over the links' segments.

    Returns
    -------
    pathlib.Path
        The file written.
    """
    import matplotlib.animation as manimation
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection
    from matplotlib.figure import Figure

    robot = check_robot(robot)
    t, q = _motion(t, q, robot.n)
    if isinstance(fps, bool) or not isinstance(fps, (int, float, np.integer, np.floating)) \
            or not (MIN_FPS <= fps <= 1000):
        raise InputError(f"argument 'fps' = {fps!r}; give frames per second from {MIN_FPS:g} to 1000")
    path = Path(path)
    fmt = path.suffix.lower()
    if fmt not in (".gif", ".mp4"):
        raise InputError(f"animation file '{path.name}': give a .gif or .mp4 name")
    if fmt == ".mp4" and not manimation.writers.is_available("ffmpeg"):
        raise InputError("writing .mp4 needs ffmpeg on the PATH; write a .gif instead")
    with np.errstate(over="ignore"):
        frames = (float(t[-1]) - float(t[0])) * float(fps)  # inf for t = [0, 1e308]: refused below
    if not frames < MAX_FRAMES:
        raise InputError(f"the animation would hold {frames + 1:.3g} frames (> {MAX_FRAMES}); lower 'fps' or shorten "
                         "the motion")
    count = int(np.floor(frames)) + 1
    times = t[0] + np.arange(count) / fps
    qs = np.stack([np.interp(times, t, q[:, i]) for i in range(robot.n)], axis=-1) if t.size > 1 else q[:1]
    points = link_segments(robot, qs)  # (count, nf, 4, 3)
    lo, hi = points.reshape(-1, 3).min(axis=0), points.reshape(-1, 3).max(axis=0)
    hulls = []  # (frame k, vertices (V, 3) in R_k, faces (F, 3), colour)
    if urdf is not None:
        for visual, mesh in _urdf_meshes(robot, urdf, package_dirs)[0]:
            hull = mesh.convex_hull
            colour = np.array(_NEUTRAL) / 255 if visual.rgba is None else np.clip(visual.rgba[:3], 0, 1)
            hulls.append((visual.frame, hull.vertices @ visual.pose[:3, :3].T + visual.pose[:3, 3], hull.faces,
                          colour))
    if hulls:
        poses = np.concatenate([np.broadcast_to(np.eye(4), (count, 1, 4, 4)),
                                forward_kinematics(robot, qs)], axis=1)  # (count, 1 + nf, 4, 4): R_0 first
        for k, v, _, _ in hulls:  # every hull inside a ball about its frame's origin
            reach = float(np.max(np.linalg.norm(v, axis=1)))
            lo = np.minimum(lo, poses[:, k, :3, 3].min(axis=0) - reach)
            hi = np.maximum(hi, poses[:, k, :3, 3].max(axis=0) + reach)
    half = max(float(np.max(hi - lo)) / 2, 1e-3)
    centre = (lo + hi) / 2

    fig = Figure(figsize=(5, 5), dpi=100)
    ax = fig.add_subplot(projection="3d")
    for axis, c in zip("xyz", centre):
        getattr(ax, f"set_{axis}lim")(c - half, c + half)
        getattr(ax, f"set_{axis}label")(f"{axis}0 (m)")
    ax.set_box_aspect((1, 1, 1))  # a cube of equal limits drawn as a cube: equal scales (matplotlib's is 4:4:3)
    heading = robot.name if title is None else str(title)
    ax.set_title(figure_text(heading))  # a name is text, never matplotlib math
    lines = [ax.plot([], [], [], "-", lw=3, color="tab:blue", solid_capstyle="round")[0] for _ in range(robot.nf)]
    joints = ax.plot([], [], [], "o", color="0.3", ms=4)[0]
    clock = ax.text2D(0.02, 0.95, "", transform=ax.transAxes)
    solids = [ax.add_collection3d(Poly3DCollection([], facecolor=colour, edgecolor="none", alpha=0.85))
              for _, _, _, colour in hulls]

    def draw(k):
        for j, line in enumerate(lines):
            line.set_data_3d(points[k, j, :, 0], points[k, j, :, 1], points[k, j, :, 2])
        ends = points[k, :, 3]
        joints.set_data_3d(ends[:, 0], ends[:, 1], ends[:, 2])
        for solid, (frame, v, faces, _) in zip(solids, hulls):
            T = poses[k, frame]
            solid.set_verts((v @ T[:3, :3].T + T[:3, 3])[faces])
        clock.set_text(f"t = {times[k]:.2f} s")
        return [*lines, joints, *solids, clock]

    anim = manimation.FuncAnimation(fig, draw, frames=count, blit=False)
    writer = manimation.PillowWriter(fps=fps) if fmt == ".gif" else manimation.FFMpegWriter(fps=fps)
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp) / f"animation{fmt}"
        anim.save(scratch, writer=writer)
        data = scratch.read_bytes()
    write_atomically(path, lambda fh: fh.write(data), what="animation file", binary=True)
    return path
