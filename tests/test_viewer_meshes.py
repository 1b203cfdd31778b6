"""URDF meshes in the viewer (users issue §5): visuals on the frames that carry their links (checked against
yourdfpy's own forward kinematics), mesh names resolved only inside the URDF's folder and the package folders,
a missing or escaping mesh a warning and capsules, and the meshes drawn in a real browser."""

from __future__ import annotations

import os
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

import robodyn as rd
from robodyn.errors import InputError
from robodyn.model.urdf import urdf_visuals
from robodyn.viewer import resolve_mesh, view
from tests.support.checks import example_robot_data_path

pytest.importorskip("viser")
pytest.importorskip("trimesh")

UR5 = "ur_description/urdf/ur5_robot.urdf"
ARMS = [UR5, "panda_description/urdf/panda.urdf"]


def _share(urdf: str) -> Path:
    """The folder holding the package ``example-robot-data`` (its URDFs name package://example-robot-data/...)."""
    return Path(urdf).parents[3]


@pytest.mark.filterwarnings("ignore:.*dynamics damping friction:UserWarning")  # the Panda's friction note
@pytest.mark.parametrize("rel", ARMS, ids=lambda r: Path(r).stem)
def test_visuals_move_with_their_links_as_yourdfpy_places_them(rel):
    yourdfpy = pytest.importorskip("yourdfpy")
    path = example_robot_data_path(rel)
    robot = rd.from_urdf(path)
    visuals = urdf_visuals(path, robot)
    model = yourdfpy.URDF.load(path, build_scene_graph=True, load_meshes=False, build_collision_scene_graph=False,
                               load_collision_meshes=False)
    origin = {}
    for link in model.robot.links:
        for i, v in enumerate(link.visuals):
            origin[link.name, i] = np.eye(4) if v.origin is None else np.asarray(v.origin, float)
    assert len(visuals) == len(origin) and {v.geometry for v in visuals} == {"mesh"}
    coupling = rd.model.mimic_coupling(path, robot)  # the Panda's second finger follows the first (yourdfpy applies it)
    rng = np.random.default_rng(5)
    for qa in rng.uniform(-2, 2, size=(3, len(coupling.independent))):
        q = coupling.q(qa)
        T = np.concatenate([np.eye(4)[None], rd.forward_kinematics(robot, q)])
        model.update_cfg(dict(zip(robot.q_names, q)))
        seen: dict = {}
        for v in visuals:
            i = seen[v.link] = seen.get(v.link, -1) + 1
            expected = model.get_transform(v.link, model.base_link) @ origin[v.link, i]
            # 1e-10 m: the frame table snaps lengths below that to exact zeros (as test_urdf's Pinocchio check)
            np.testing.assert_allclose(T[v.frame] @ v.pose, expected, rtol=0, atol=1e-10)
    assert not visuals[0].pose.flags.writeable


def test_the_viewer_draws_the_ur5_meshes_instead_of_capsules():
    path = example_robot_data_path(UR5)
    robot = rd.from_urdf(path)
    with view(robot, urdf=path, package_dirs=[_share(path)]) as v:
        assert v.meshes == tuple(range(1, 8))
        scene = v._server.scene
        meshes = [scene.get_handle_by_name(f"/visuals/{k}/{k - 1}") for k in v.meshes]
        assert all(type(m).__name__ == "MeshHandle" for m in meshes)
        assert not any(link.visible for links in v._links for link in links)  # every frame has its mesh
        q = np.array([0.4, -1.0, 1.2, 0.3, -0.5, 0.8])
        v.show(q)
        T = rd.forward_kinematics(robot, q)
        node = scene.get_handle_by_name("/visuals/4")
        np.testing.assert_allclose(node.position, T[3, :3, 3], atol=1e-12)
    with view(robot, urdf=path, package_dirs=[_share(path)], meshes=False) as v:
        assert v.meshes == () and any(link.visible for links in v._links for link in links)


def _urdf(folder: Path, mesh: str, extra: str = "") -> Path:
    text = f"""<robot name="arm">
  <link name="base"/>
  <link name="l1"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/>
    </inertial><visual><geometry><mesh filename="{mesh}"/></geometry></visual></link>
  <link name="l2"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/>
    </inertial><visual><origin xyz="0 0 0.1"/><geometry><box size="0.1 0.2 0.3"/></geometry>
    <material name="red"><color rgba="1 0 0 1"/></material></visual>{extra}</link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><origin xyz="0 0 0.3"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/><origin xyz="0.5 0 0"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
</robot>"""
    path = folder / "arm.urdf"
    path.write_text(text)
    return path


def _stl(path: Path) -> Path:
    import trimesh

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(trimesh.creation.box(extents=(0.1, 0.1, 0.5)).export(file_type="stl"))
    return path


def test_mesh_names_never_lead_out_of_the_folders(tmp_path):
    robot_dir, pkg = tmp_path / "robot", tmp_path / "share" / "my_pkg"
    inside = _stl(robot_dir / "meshes" / "l1.stl")
    secret = _stl(tmp_path / "secret.stl")
    _stl(pkg / "meshes" / "l1.stl")
    assert resolve_mesh("meshes/l1.stl", robot_dir) == Path(os.path.realpath(inside))
    assert resolve_mesh("meshes/../meshes/l1.stl", robot_dir) == Path(os.path.realpath(inside))
    assert resolve_mesh(f"file://{inside}", robot_dir) == Path(os.path.realpath(inside))
    for dirs in ([tmp_path / "share"], [pkg]):  # a folder holding the package, or the package folder itself
        found = resolve_mesh("package://my_pkg/meshes/l1.stl", robot_dir, dirs)
        assert found.parent.parent == Path(os.path.realpath(pkg))
    (robot_dir / "meshes" / "link.stl").symlink_to(secret)
    refused = {
        "../secret.stl": "leads out",
        str(secret): "leads out",
        f"file://{secret}": "leads out",
        "meshes/link.stl": "leads out",  # a symbolic link out of the folder
        "package://my_pkg/../../secret.stl": "leads out",
        "package://other/l1.stl": "in none of the package folders",
        "http://example.com/l1.stl": "nothing is downloaded",
        "meshes/none.stl": "no such file",
    }
    for name, message in refused.items():
        with pytest.raises(InputError, match=message):
            resolve_mesh(name, robot_dir, [tmp_path / "share"])
    with pytest.raises(InputError, match="leads out"):
        resolve_mesh("meshes/l1.stl", None)  # a URDF given as text has no folder
    for args, name in (((None, robot_dir), "filename"), (("l1.stl", 3), "folder"),
                       (("l1.stl", robot_dir, 5), "package_dirs"), (("l1.stl", robot_dir, [None]), "package_dirs")):
        with pytest.raises(InputError, match=name):
            resolve_mesh(*args)


@pytest.mark.parametrize("mesh, drawn", [("meshes/l1.stl", (1, 2)), ("../secret.stl", (2,)),
                                         ("meshes/missing.stl", (2,)), ("meshes/bad.stl", (2,))])
def test_a_mesh_that_cannot_be_read_warns_and_keeps_capsules(tmp_path, mesh, drawn):
    robot_dir = tmp_path / "robot"
    _stl(robot_dir / "meshes" / "l1.stl")
    _stl(tmp_path / "secret.stl")
    (robot_dir / "meshes" / "bad.stl").write_bytes(b"solid nothing here\n")
    path = _urdf(robot_dir, mesh)
    robot = rd.from_urdf(path)
    kinds = [(v.frame, v.geometry, v.rgba) for v in urdf_visuals(path, robot)]
    assert kinds == [(1, "mesh", None), (2, "box", (1.0, 0.0, 0.0, 1.0))]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with view(robot, urdf=path) as v:
            assert v.meshes == drawn
            capsules = [any(link.visible for link in v._links[j]) for j in range(robot.nf)]
            assert capsules == [k not in drawn for k in (1, 2)]
    messages = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    assert len(messages) == (0 if 1 in drawn else 1)
    if messages:
        assert messages[0].startswith("link 'l1': mesh ") and "drawn as capsules" in messages[0]


@pytest.mark.parametrize("box", ["0.1 nan 0.3", "0.1 0.2", "0.1 -0.2 0.3"])
def test_a_malformed_primitive_warns_and_keeps_capsules(tmp_path, box):
    robot_dir = tmp_path / "robot"
    _stl(robot_dir / "meshes" / "l1.stl")
    path = _urdf(robot_dir, "meshes/l1.stl")
    path.write_text(path.read_text().replace('size="0.1 0.2 0.3"', f'size="{box}"').replace(
        'rgba="1 0 0 1"', 'rgba="1 nan 0 1"'))
    robot = rd.from_urdf(path)
    assert urdf_visuals(path, robot)[1].rgba is None  # a colour that is not four numbers is dropped
    with pytest.warns(UserWarning, match="link 'l2': box of size"):
        with view(robot, urdf=path) as v:
            assert v.meshes == (1,)


def test_cli_view_takes_package_folders(tmp_path):
    from typer.testing import CliRunner

    from robodyn.cli import app

    path = example_robot_data_path(UR5)
    runner = CliRunner()
    served = runner.invoke(app, ["view", path, "--package-dir", str(_share(path)), "--seconds", "0.1"])
    assert served.exit_code == 0, served.output
    assert "7 frames drawn with the URDF's meshes" in served.output and "warning" not in served.output
    plain = runner.invoke(app, ["view", path, "--seconds", "0.1"])
    # the seven missing meshes in one line: how many, which links, the first reason and its fix
    assert plain.exit_code == 0 and plain.output.count("warning: ") == 1, plain.output
    assert "warning: 7 meshes not drawn (links 'base_link', 'shoulder_link', 'upper_arm_link' and 4 more" in plain.output
    assert "package://example-robot-data/" in plain.output and "--package-dir" in plain.output
    bad = runner.invoke(app, ["view", path, "--package-dir", str(tmp_path / "none"), "--seconds", "0.1"])
    assert bad.exit_code == 2 and len(bad.output.strip().splitlines()) == 1, bad.output


@pytest.mark.slow
def test_meshes_in_a_real_browser():
    from tests.test_viewer import _chrome, _screenshot, _wait_for_canvas

    path = example_robot_data_path(UR5)
    robot = rd.from_urdf(path)
    browser = _chrome()
    shots = {}
    try:
        for meshes in (True, False):
            with view(robot, urdf=path, package_dirs=[_share(path)], meshes=meshes) as v:
                browser.get(v.url)
                _wait_for_canvas(browser)
                time.sleep(4)  # the scene (meshes included) arrives over the websocket
                shots[meshes] = _screenshot(browser)
                if meshes:
                    v.show(np.array([1.0, -1.5, 1.0, 0.3, 1.0, 0.0]))
                    time.sleep(3)
                    moved = np.abs(_screenshot(browser) - shots[True]).max(axis=-1) > 30
                    assert moved.sum() > 500, "a pose change moved no mesh pixels"
    finally:
        browser.quit()
    assert shots[True].std() > 5
    differ = np.abs(shots[True] - shots[False]).max(axis=-1) > 30
    assert differ.sum() > 500, "the meshes look like the capsules"


def test_the_animation_draws_the_urdf_meshes_as_hulls_on_their_frames(tmp_path, monkeypatch):
    """rd.animate(..., urdf=): one solid per visual, the convex hull of its mesh placed by the frame that carries it
    (T_0,k(q) · pose · v, as the viewer places it): taken back to the visual's frame, the hull's bounding box is the
    mesh file's own (read here with trimesh), to rounding; every vertex lies inside the axes."""
    import matplotlib.animation as manimation
    import trimesh
    from mpl_toolkits.mplot3d import art3d

    path = example_robot_data_path(UR5)
    robot = rd.load(path)
    figures, placed = [], []
    original, set_verts = manimation.FuncAnimation, art3d.Poly3DCollection.set_verts

    def recording(fig, func, *args, **kwargs):
        figures.append((fig, func))
        return original(fig, func, *args, **kwargs)

    def recording_verts(self, verts, *args, **kwargs):
        placed.append(np.asarray(verts))
        return set_verts(self, verts, *args, **kwargs)

    monkeypatch.setattr(manimation, "FuncAnimation", recording)
    monkeypatch.setattr(art3d.Poly3DCollection, "set_verts", recording_verts)
    t = np.linspace(0.0, 1.0, 3)
    q = np.outer(t, [0.3, -1.0, 1.0, 0.2, 0.3, 0.4])
    out = rd.animate(robot, t, q, tmp_path / "ur5.gif", fps=2, urdf=path, package_dirs=[_share(path)])
    assert out.stat().st_size > 0
    fig, draw = figures[0]
    visuals = urdf_visuals(path, robot)
    assert len(visuals) > 0 and all(v.geometry == "mesh" for v in visuals)
    placed.clear()
    draw(2)  # the last frame: t = 1, q = q[-1]
    assert len(placed) == len(visuals)
    T = np.concatenate([np.eye(4)[None], rd.forward_kinematics(robot, q[-1])])
    ax = fig.axes[0]
    limits = np.array([ax.get_xlim3d(), ax.get_ylim3d(), ax.get_zlim3d()])
    for verts, visual in zip(placed, visuals):
        points = verts.reshape(-1, 3)
        pose = T[visual.frame] @ visual.pose
        local = (points - pose[:3, 3]) @ pose[:3, :3]
        mesh = trimesh.load(resolve_mesh(visual.filename, Path(path).parent, [_share(path)]), force="mesh")
        box = mesh.vertices * visual.scale
        np.testing.assert_allclose(local.min(axis=0), box.min(axis=0), atol=1e-9)
        np.testing.assert_allclose(local.max(axis=0), box.max(axis=0), atol=1e-9)
        assert np.all(points >= limits[:, 0] - 1e-9) and np.all(points <= limits[:, 1] + 1e-9)


def test_com_hull_points_are_the_visuals_on_their_frames(tmp_path):
    """The box of l2 (0.1 × 0.2 × 0.3 m, 0.1 m above l2's origin at (0.5, 0, 0.3)) and the STL box of l1
    (0.1 × 0.1 × 0.5 m at l1's origin (0, 0, 0.3)): at q = 0 their points, placed by robodyn's frames, span the
    boxes the URDF describes; a mesh that does not load leaves its frame without a hull (a warning)."""
    from robodyn.viewer import com_hull_points

    robot_dir = tmp_path / "robot"
    _stl(robot_dir / "meshes" / "l1.stl")
    path = _urdf(robot_dir, "meshes/l1.stl")
    robot = rd.from_urdf(path)
    points = com_hull_points(robot, path)
    assert len(points) == robot.nf
    T = rd.forward_kinematics(robot, np.zeros(robot.n))
    expected = {1: [[-0.05, -0.05, 0.05], [0.05, 0.05, 0.55]], 2: [[0.45, -0.1, 0.25], [0.55, 0.1, 0.55]]}
    tol = {1: 1e-7, 2: 1e-12}  # an STL stores float32: 2⁻²⁴ × 0.55 m ≈ 3e-8 m of rounding
    for k, box in expected.items():
        p = points[k - 1] @ T[k - 1, :3, :3].T + T[k - 1, :3, 3]
        np.testing.assert_allclose([p.min(axis=0), p.max(axis=0)], box, rtol=0, atol=tol[k])
    rd.identification.consistent.check_bounds({"com_hull": points}, robot.nf)  # valid hulls
    (robot_dir / "meshes" / "l1.stl").write_bytes(b"not a mesh")
    with pytest.warns(UserWarning, match="link 'l1'.*no centre-of-mass hull"):
        assert com_hull_points(robot, path)[0] is None
