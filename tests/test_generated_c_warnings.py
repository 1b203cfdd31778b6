"""The C that `robodyn generate` writes compiles without a warning under -std=c99 -Wall -Wextra -Werror (issue 21:
rx90's models declared an unused Q1, UR5's Q2, Q6, Q7): every built-in robot, every model, GCC and Clang where
installed, and the UR arms of example-robot-data."""

import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

import robodyn as rd
from robodyn.cli import app
from tests.support.checks import example_robot_data_path

COMPILERS = [c for c in ("gcc", "clang") if shutil.which(c)]
FLAGS = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-c"]
MODELS = "idm,inm,ddm,gra,ccg,dim"

pytestmark = pytest.mark.skipif(not COMPILERS, reason="no C compiler (gcc, clang)")


def _compile_all(folder: Path, tmp_path: Path, count: int = len(MODELS.split(","))) -> None:
    sources = sorted(folder.glob("*.c"))
    assert len(sources) == count
    main = tmp_path / "main.c"  # a program including every header
    main.write_text("".join(f'#include "{h.name}"\n' for h in sorted(folder.glob("*.h"))) + "int main(void) { return 0; }\n")
    for cc in COMPILERS:
        for src in sources + [main]:
            res = subprocess.run([cc, *FLAGS, f"-I{folder}", str(src), "-o", str(tmp_path / "x.o")],
                                 capture_output=True, text=True, timeout=600)
            # -Werror: a warning fails the compile; GCC's "note: the ABI for passing parameters ... changed" is not one
            assert res.returncode == 0 and "warning" not in res.stderr, f"{cc} {src.name}:\n{res.stderr[:2000]}"


def _generate(robot: str, out: Path) -> None:
    res = CliRunner().invoke(app, ["generate", robot, "--models", MODELS, "--lang", "c", "--out", str(out)])
    assert res.exit_code == 0, res.output


@pytest.mark.parametrize("name", rd.list_robots())
def test_generated_c_of_every_built_in_robot_compiles_clean(name, tmp_path):
    _generate(name, tmp_path / "out")
    _compile_all(tmp_path / "out", tmp_path)


@pytest.mark.parametrize("rel", ["ur_description/urdf/ur5_robot.urdf", "ur_description/urdf/ur3_robot.urdf"])
def test_generated_c_of_example_robot_data_arms_compiles_clean(rel, tmp_path):
    path = example_robot_data_path(rel)
    try:
        rd.load(path)
    except rd.RobodynError as exc:  # the URDF loader's own limits (e.g. a tree) are tested elsewhere
        pytest.skip(f"{rel} does not load: {exc}")
    _generate(path, tmp_path / "out")
    _compile_all(tmp_path / "out", tmp_path)


@pytest.mark.parametrize("name", ["puma560", "stanford", "cartesian3p", "panda"])
def test_generated_derivatives_and_kinematics_compile_clean(name, tmp_path):
    """The derivative models and the frame kinematics (didm, dddm, jac, jdq) of robots with revolute, prismatic and
    seven joints: C that compiles without a warning, headers included together."""
    out = tmp_path / "out"
    res = CliRunner().invoke(app, ["generate", name, "--models", "didm,dddm,jac,jdq", "--lang", "c", "--out", str(out)])
    assert res.exit_code == 0, res.output
    _compile_all(out, tmp_path, count=4)
