"""The C that `robodyn generate` writes compiles without a warning under -std=c99 -Wall -Wextra -Werror (issue 21:
rx90's models declared an unused Q1, UR5's Q2, Q6, Q7): every built-in robot, every model, GCC and Clang where
installed, and the UR arms of example-robot-data."""

import shutil
import subprocess
from pathlib import Path

import numpy as np
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
        # -DRD_ARCH: as rd.compile builds it on an x86-64-v3 or v4 machine (its AVX2 function without clones)
        for src, arch in [(src, arch) for src in sources + [main] for arch in ([], ["-DRD_ARCH=3"])]:
            res = subprocess.run([cc, *FLAGS, *arch, f"-I{folder}", str(src), "-o", str(tmp_path / "x.o")],
                                 capture_output=True, text=True, timeout=600)
            # -Werror: a warning fails the compile; GCC's "note: the ABI for passing parameters ... changed" is not one
            assert res.returncode == 0 and "warning" not in res.stderr, \
                f"{cc} {arch} {src.name}:\n{res.stderr[:2000]}"


def _generate(robot: str, out: Path) -> None:
    res = CliRunner().invoke(app, ["generate", robot, "--models", MODELS, "--lang", "c", "--out", str(out)])
    assert res.exit_code == 0, res.output


#: the robots whose C issue 21 found warnings in (and the smallest) run everywhere; the others are slow cases
#: (tens of seconds each, the same third-party calls)
EVERYWHERE = ("rx90", "planar2r")


@pytest.mark.parametrize("name", [name if name in EVERYWHERE else pytest.param(name, marks=pytest.mark.slow)
                                  for name in rd.list_robots()])
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


@pytest.mark.parametrize("kind", ["inverse_dynamics_derivatives", "forward_dynamics_derivatives"])
def test_generated_derivatives_with_parameters_input(kind, tmp_path):
    """robodyn generate --parameters-input for didm and dddm: C that compiles without a warning, whose params are
    rd.compile(..., parameters_input=True)'s (names and order) and whose results equal rd.compile's (1e-12) and the
    analytic derivatives (1e-11) for a robot whose links, rotors and friction are scaled."""
    import ctypes
    import re

    robot = rd.load("planar3r")  # frames 1..3 the joints, 4 the end frame
    robot = robot.replace(Ia=np.array([0.02, 0.01, 0.005, 0]), Fc=np.array([0.3, 0.2, 0.1, 0]),
                          Fv=np.array([0.5, 0.4, 0.3, 0]), Foff=np.array([0.05, -0.02, 0.01, 0]))
    short = {"inverse_dynamics_derivatives": "didm", "forward_dynamics_derivatives": "dddm"}[kind]
    out = tmp_path / "out"
    res = CliRunner().invoke(app, ["generate", str(rd.save(robot, tmp_path / "arm.yaml")), "--models", short,
                                   "--lang", "c", "--parameters-input", "--out", str(out)])
    assert res.exit_code == 0, res.output
    _compile_all(out, tmp_path, count=1)
    f = rd.compile(robot, kind, parameters_input=True)
    header = (out / f"planar3r_{short}.h").read_text()  # the files are named by the robot's name
    listed = re.search(r"/\* params: (.*) \*/", header).group(1).split(", ")
    assert listed == [f"{k} {name}" for k, name in enumerate(f.parameter_names)]
    assert {"FS1", "FO1", "IA1", "FV1"} <= set(f.parameter_names)  # also those whose derivative vanishes
    library = tmp_path / "arm.so"
    subprocess.run([COMPILERS[0], "-std=c99", "-O1", "-shared", "-fPIC", str(out / f"planar3r_{short}.c"), "-lm", "-o",
                    str(library)], check=True, capture_output=True, timeout=600)
    batch = ctypes.CDLL(str(library))[f"planar3r_{short}_batch"]
    link = np.array([0.7, 0.9, 1.2, 1.0])
    factor = {"IA": 1.1, "FS": 1.2, "FV": 1.3, "FO": 1.4}
    scale = np.array([link[int(j) - 1] if p in rd.PARAMETER_NAMES else factor[p]
                      for p, j in (re.fullmatch(r"([A-Z]+)(\d+)", name).groups() for name in f.parameter_names)])
    scaled = robot.replace(params=robot.params * link[:, None], Ia=robot.Ia * 1.1, Fc=robot.Fc * 1.2,
                           Fv=robot.Fv * 1.3, Foff=robot.Foff * 1.4)
    rng = np.random.default_rng(21)
    q, qd, x = (rng.uniform(-1.5, 1.5, (4, robot.n)) for _ in range(3))
    params = f.nominal_parameters * scale
    got = np.empty((4, len(getattr(rd, kind)(robot, q[0], qd[0], x[0])) * robot.n, robot.n))
    pointer = ctypes.POINTER(ctypes.c_double)

    def p(a):
        return np.ascontiguousarray(a).ctypes.data_as(pointer)

    batch.argtypes = [ctypes.c_long] + [pointer, ctypes.c_long] * 4 + [pointer]
    assert batch(4, p(q), robot.n, p(qd), robot.n, p(x), robot.n, p(params), 0, got.ctypes.data_as(pointer)) == 0
    expected = f(q, qd, x, params=params)
    parts = [got[:, k * robot.n:(k + 1) * robot.n] for k in range(len(expected))]
    for part, want, exact in zip(parts, expected, getattr(rd, kind)(scaled, q, qd, x)):
        scale_of = max(1.0, float(np.abs(want).max()))
        assert np.abs(part - want).max() <= 1e-12 * scale_of
        assert np.abs(part - exact).max() <= 1e-11 * scale_of
