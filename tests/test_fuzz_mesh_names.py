"""Mesh names of a URDF are untrusted: resolve_mesh finds a file only inside the URDF's folder or a package folder.

``package://PKG/...`` names one package: PKG is a single folder name (never ``..``, ``.``, empty or a path), and the
file stays inside that package's folder. A fuzz of names built from path pieces (``..``, separators, schemes,
encodings) checks that no name reaches a file outside, whatever it is made of.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from robodyn.errors import InputError
from robodyn.viewer import resolve_mesh


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    """share/my_pkg/meshes/l1.stl (the package), robot/meshes/l1.stl (the URDF's folder), secret files beside."""
    root = tmp_path_factory.mktemp("meshes")
    for rel in ("share/my_pkg/meshes/l1.stl", "robot/meshes/l1.stl", "secret.stl", "share/secret.stl",
                "share/other_pkg/secret.stl", "robot/my_pkg/meshes/l1.stl"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(b"solid x\nendsolid x\n")
    return root


@pytest.mark.parametrize("name", ["package://../secret.stl", "package://../share/secret.stl",
                                  "package://..//secret.stl", "package://./secret.stl", "package:///secret.stl",
                                  "package://.hidden/x.stl", "package://my_pkg\\..\\secret.stl/x",
                                  "package://" + "a" * 300 + "/x.stl", "package://my pkg/x.stl"])
def test_a_package_name_is_one_plain_folder_name(tree, name):
    with pytest.raises(InputError, match="package name .* is not one folder name"):
        resolve_mesh(name, tree / "robot", [tree / "share"])


@pytest.mark.parametrize("dirs", ["share", "share/my_pkg"])
def test_package_paths_stay_inside_the_package(tree, dirs):
    for name in ("package://my_pkg/../secret.stl", "package://my_pkg/../other_pkg/secret.stl",
                 "package://my_pkg/meshes/../../secret.stl"):
        with pytest.raises(InputError, match="leads out|no such file"):
            resolve_mesh(name, tree / "robot", [tree / dirs])
    found = resolve_mesh("package://my_pkg/meshes/l1.stl", tree / "robot", [tree / dirs])
    assert found == Path(os.path.realpath(tree / "share/my_pkg/meshes/l1.stl"))


_PIECES = ["..", ".", "/", "//", "\\", "my_pkg", "other_pkg", "share", "robot", "meshes", "l1.stl", "secret.stl",
           "package://", "file://", "%2e%2e", "~", "\0", " ", "http://", str(Path("/").resolve())]


@settings(max_examples=300, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(_PIECES), min_size=1, max_size=8).map("".join),
       st.sampled_from(["share", "share/my_pkg"]))
def test_fuzzed_names_never_leave_the_folders(tree, name, dirs):
    allowed = [os.path.realpath(tree / "robot"), os.path.realpath(tree / "share/my_pkg")]
    try:
        found = resolve_mesh(name, tree / "robot", [tree / dirs])
    except InputError:
        return
    real = os.path.realpath(found)
    assert any(os.path.commonpath([real, top]) == top for top in allowed), (name, real)
    assert "secret" not in Path(real).name
