"""Model files: the YAML schema, round trips, the built-in library, error messages, atomic save."""

import os
import textwrap

import numpy as np
import pytest
import yaml
from hypothesis import given

import robodyn as rd
from robodyn.model import io as rdio
from tests.support.random_robots import robots

FIELDS = ("antecedent", "sigma", "gamma", "b", "alpha", "d", "theta", "r", "params", "Ia", "Fc", "Fv", "Foff",
          "Fst", "kst", "Bst", "qlim", "gravity")


def same_robot(a, b):
    assert (a.name, a.source, a.joint_names) == (b.name, b.source, b.joint_names)
    for key in FIELDS:
        np.testing.assert_array_equal(getattr(a, key), getattr(b, key), err_msg=key)


@given(robots)
def test_dumps_loads_roundtrip_is_exact(robot):
    robot = robot.replace(source="test: 'quoted' text", qlim=np.tile([-1.5, 2.5], (robot.n, 1)))
    same_robot(rd.loads(rd.dumps(robot)), robot)


def test_save_load_roundtrip(tmp_path):
    robot = rd.Robot(
        name="tree", sigma=[0, 1, 2], antecedent=[0, 1, 1], gamma=[0, 0.3, -0.2], b=[0, 0.1, 0.2], alpha=[0, np.pi / 2, 0],
        params=[rd.standard_from_com(1.0, [0.1, 0, 0], np.diag([0.1, 0.1, 0.1]))] * 3,
        Ia=[0.1, 0.2, 0], Fc=[1, 2, 0], Fv=[0.5, 0, 0], Fst=[1.5, 0, 0], kst=[3, 0, 0], Bst=[1, 0, 0],
        qlim=[[-1, 1], [0, np.inf]], gravity=[0, -9.81, 0], frame_names=("a", "b", "tool"), source="unit test",
    )
    path = rd.save(robot, tmp_path / "tree.yaml")
    assert path == tmp_path / "tree.yaml"
    same_robot(rd.load(path), robot)
    same_robot(rd.load(str(path)), robot)
    assert os.listdir(tmp_path) == ["tree.yaml"]
    doc = yaml.safe_load(path.read_text())
    assert list(doc) == ["name", "source", "gravity", "joints", "links"]
    assert doc["joints"][0] == {"name": "a", "antecedent": 0, "sigma": 0, "gamma": 0.0, "b": 0.0, "alpha": 0.0,
                                "d": 0.0, "theta": 0.0, "r": 0.0, "qmin": -1.0, "qmax": 1.0}
    assert "qmax" not in doc["joints"][1] and "qmin" not in doc["joints"][2]


SCHEMA_EXAMPLE = """\
name: demo
source: "written by hand"
gravity: [0, 0, -9.81]
joints:
  - {name: j1, sigma: 0, alpha: 0, d: 0, theta: pi/2, qmin: -pi, qmax: pi}
  - {name: j2, sigma: 1, alpha: -pi/2, d: 0.25, r: 0.1}
  - {name: tool, antecedent: 2, sigma: 2, r: 0.05}
links:
  - {XX: 0.7, YY: 0.7, ZZ: 1.2, M: 10, Ia: 0.5, Fc: 1.0, Fv: 0.2}
  - {mass: 2.0, com: [0, 0, 0.1], inertia_com: [[0.02, 0, 0], [0, 0.02, 0], [0, 0, 0.01]], Fv: 3}
  - {}
"""


def test_schema_example():
    r = rd.loads(SCHEMA_EXAMPLE, "demo.yaml")
    assert (r.name, r.source, r.nf, r.n) == ("demo", "written by hand", 3, 2)
    np.testing.assert_array_equal(r.sigma, [0, 1, 2])
    np.testing.assert_array_equal(r.antecedent, [0, 1, 2])
    np.testing.assert_allclose(r.theta, [np.pi / 2, 0, 0], rtol=1e-16)
    np.testing.assert_allclose(r.alpha, [0, -np.pi / 2, 0], rtol=1e-16)
    np.testing.assert_allclose(r.qlim, [[-np.pi, np.pi], [-np.inf, np.inf]])
    np.testing.assert_array_equal(r.params[0], [0.7, 0, 0, 0.7, 0, 1.2, 0, 0, 0, 10])
    # com form → standard parameters [9.12]: XX = I_Gxx + m z², MZ = m z
    np.testing.assert_allclose(r.params[1], [0.02 + 2 * 0.01, 0, 0, 0.02 + 2 * 0.01, 0, 0.01, 0, 0, 0.2, 2.0], rtol=1e-14)
    np.testing.assert_array_equal(r.Ia, [0.5, 0, 0])
    np.testing.assert_array_equal(r.Fv, [0.2, 3, 0])
    np.testing.assert_array_equal(r.params[2], np.zeros(10))


def test_builtin_library():
    names = rd.list_robots()
    assert "planar2r" in names and names == sorted(names)
    for name in names:
        r = rd.load(name)
        assert r.source.strip(), f"built-in robot {name} must cite its source"
    p = rd.load("planar2r")
    assert (p.n, p.nf) == (2, 2)
    np.testing.assert_allclose(p.params[0], [0.001, 0, 0, 1 / 12 + 0.25, 0, 1 / 12 + 0.25, 0.5, 0, 0, 1.0], rtol=1e-14)
    with pytest.raises(rd.UnknownRobotError, match=r"unknown robot 'puma9000' \(did you mean 'puma560'\?\); built-in robots are .*planar2r.*, or give a path to a \.yaml, \.urdf or MJCF \.xml file"):
        rd.load("puma9000")
    assert issubclass(rd.UnknownRobotError, LookupError)


def bad(text, match, tmp_path=None, name="bad.yaml"):
    with pytest.raises(rd.ModelFileError, match=match):
        if tmp_path is None:
            rd.loads(textwrap.dedent(text), name)
        else:
            path = tmp_path / name
            path.write_text(textwrap.dedent(text))
            rd.load(path)


J1 = "joints: [{sigma: 0}]\n"
L1 = "links: [{M: 1, XX: 0.1, YY: 0.1, ZZ: 0.1}]\n"


def test_malformed_files_name_file_row_and_field(tmp_path):
    bad("joints: [\n", r"bad\.yaml, line \d+, column \d+: not valid YAML \(while parsing a flow node", tmp_path)
    bad("- 1\n- 2\n", r"bad\.yaml: expected a mapping with keys name, source, gravity, joints, links")
    bad("nme: x\n" + J1 + L1, r"bad\.yaml: unknown top-level key\(s\) \['nme'\]; allowed: name, source, gravity, joints, links")
    bad(J1, r"bad\.yaml: 'links' must be a non-empty list, one row per frame")
    bad("joints: []\n" + L1, r"bad\.yaml: 'joints' must be a non-empty list")
    bad("joints: [{sigma: 0}, {sigma: 0}]\n" + L1, r"bad\.yaml: 2 rows in 'joints' but 1 in 'links'; give one of each per frame")
    bad("joints: [{sigma: 0, alhpa: 1}]\n" + L1, r"bad\.yaml, joints row 1: unknown field 'alhpa'; allowed fields: name, antecedent, sigma")
    bad(J1 + "links: [{M: 1, Mx: 0}]\n", r"bad\.yaml, links row 1: unknown field 'Mx'")
    bad("joints: [{sigma: 0}, {sigma: 0, d: abc}]\nlinks: [{}, {}]\n",
        r"bad\.yaml, joints row 2: field d = 'abc' is not a number \(unknown name 'abc', the only name allowed is pi\); give a number or an expression", tmp_path)
    bad("joints: [{sigma: 0, d: __import__('os')}]\n" + L1, r"joints row 1: field d = .* is not a number")
    bad("joints: [{sigma: 0, alpha: true}]\n" + L1, r"joints row 1: field alpha = True is not a number")
    bad("joints: [{sigma: 0.5}]\n" + L1, r"joints row 1: field sigma = 0.5 must be an integer")
    bad(J1 + "links: [{M: [1]}]\n", r"links row 1: field M = \[1\] is not a number")
    bad("joints: [{sigma: 0}]\nlinks: [[1, 2]]\n", r"links row 1: expected a mapping like \{XX: \.\.\.\}")
    bad(J1 + "links: [{mass: 1, com: [0, 0, 0]}]\n", r"links row 1: field 'inertia_com' missing; mass, com and inertia_com go together")
    bad(J1 + "links: [{mass: 1, com: [0, 0], inertia_com: [1, 0, 0, 1, 0, 1]}]\n", r"links row 1: field com must be \[x, y, z\]")
    bad(J1 + "links: [{mass: 1, com: [0, 0, 0], inertia_com: [1, 0, 0]}]\n", r"links row 1: field inertia_com must be a 3x3 matrix or \[XX, XY, XZ, YY, YZ, ZZ\]")
    bad(J1 + "links: [{mass: 1, com: [0, 0, 0], inertia_com: [[1, 0.1, 0], [0, 1, 0], [0, 0, 1]]}]\n", r"links row 1: field inertia_com is not symmetric")
    bad(J1 + "links: [{mass: 1, M: 1, com: [0, 0, 0], inertia_com: [1, 0, 0, 1, 0, 1]}]\n", r"links row 1: give either standard parameters \(XX\.\.M\) or mass/com/inertia_com, not both")
    bad("gravity: [0, 0]\n" + J1 + L1, r"bad\.yaml: field gravity must be a list of 3 numbers")
    bad("joints: [{sigma: 2, qmin: 0}]\nlinks: [{}]\n", r"joints row 1: field qmin/qmax on a fixed frame \(sigma: 2\); remove it")


def test_model_errors_in_files_name_the_file(tmp_path):
    bad("joints: [{sigma: 0}, {sigma: 0, antecedent: 2}]\nlinks: [{}, {}]\n",
        r"bad\.yaml: robot 'bad', frame 2: antecedent = 2; frames must be numbered so that 0 <= a\(j\) < j", tmp_path)
    bad("joints: [{sigma: 0}]\nlinks: [{M: -1}]\n", r"bad\.yaml: robot 'bad', link 1 \(j1\): field M = -1.0 is negative", tmp_path)
    bad("joints: [{sigma: 0}]\nlinks: [{M: 1, XX: 1, YY: 0.1, ZZ: 0.1}]\n", r"bad\.yaml: robot 'bad', link 1 \(j1\): principal moments .* triangle inequality")
    bad("joints: [{sigma: 0}, {sigma: 2}]\nlinks: [{}, {Fc: 1}]\n", r"robot 'bad', link 2 \(j2\): field Fc = 1.0 on a fixed frame")
    bad("joints: [{sigma: 7}]\nlinks: [{}]\n", r"bad\.yaml: robot 'bad', frame 1: sigma = 7; use 0 \(revolute\)")
    with pytest.raises(rd.ModelFileError, match=r"missing\.yaml: no such model file"):
        rd.load(tmp_path / "missing.yaml")
    assert issubclass(rd.ModelFileError, rd.ModelError)


def test_save_never_leaves_a_partial_file(tmp_path, monkeypatch):
    robot = rd.load("planar2r")
    target = tmp_path / "robot.yaml"
    target.write_text("old contents\n")

    def failing_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(rdio.os, "replace", failing_replace)
    with pytest.raises(OSError, match="disk full"):
        rd.save(robot, target)
    assert target.read_text() == "old contents\n"
    assert os.listdir(tmp_path) == ["robot.yaml"]
    monkeypatch.undo()

    class Boom(Exception):
        pass

    def failing_write(self, text):
        raise Boom("write failed half way")

    fresh = tmp_path / "fresh.yaml"
    monkeypatch.setattr(rdio.os, "fdopen", lambda fd, *a, **k: _HalfWriter(fd, Boom))
    with pytest.raises(Boom):
        rd.save(robot, fresh)
    assert not fresh.exists()
    assert os.listdir(tmp_path) == ["robot.yaml"]


class _HalfWriter:
    """A file object that writes a few bytes and then fails, like a full disk."""

    def __init__(self, fd, exc):
        self.fd, self.exc = fd, exc

    def __enter__(self):
        return self

    def __exit__(self, *args):
        os.close(self.fd)

    def write(self, text):
        os.write(self.fd, text[:10].encode())
        raise self.exc("write failed half way")
