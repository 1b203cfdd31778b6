"""One vocabulary (issue 20): a computation has one name across the public functions, the kinds of rd.compile and
customized_model, robodyn generate and the operation counts; the older names stay accepted as aliases."""

import re

import pytest
from typer.testing import CliRunner

import robodyn as rd
from robodyn.analysis.opcount import COUNTED_KINDS, count_operations, counted_kind, counting_robot
from robodyn.cli import app
from robodyn.symbolic import KINDS
from robodyn.symbolic.models import ALIASES, SHORT, canonical_kind


def _compile_kinds() -> list[str]:
    """The kinds rd.compile accepts, as its error message lists them."""
    with pytest.raises(rd.InputError) as info:
        rd.compile(rd.load("planar2r"), "?", backend="numpy")
    return re.search(r"choose one of ([\w, ]+) \(aliases", str(info.value)).group(1).split(", ")


def test_every_kind_is_a_public_function_and_every_alias_a_kind():
    public = set(rd.__all__)
    COMPILE_KINDS = _compile_kinds()
    for kind in (*KINDS, *COMPILE_KINDS, *COUNTED_KINDS):
        assert kind in public and callable(getattr(rd, kind)), kind
    from robodyn.symbolic.derivative_model import DERIVATIVE_KINDS
    from robodyn.symbolic.kinematics_model import KINEMATICS_KINDS

    # rd.compile also compiles the derivatives and the kinematics of a frame, which are not customized_model kinds
    assert set(COMPILE_KINDS) == set(KINDS) | set(DERIVATIVE_KINDS) | set(KINEMATICS_KINDS)
    assert set(SHORT) <= set(ALIASES) and set(ALIASES.values()) <= set(KINDS)
    assert set(SHORT.values()) == set(KINDS)  # every kind has its SYMORO short name (file names)
    for alias, kind in ALIASES.items():
        assert canonical_kind(alias) == kind and canonical_kind(kind) == kind
    for kind, short in COUNTED_KINDS.items():
        assert counted_kind(kind) == counted_kind(short) == short


def test_unknown_kinds_list_the_canonical_names():
    with pytest.raises(rd.InputError, match=r"kind = 'gravities'; choose one of inverse_dynamics, inertia_matrix, "
                                            r"gravity_torques, bias_torques, regressor, forward_dynamics \(aliases: "
                                            r"idm = inverse_dynamics"):
        rd.customized_model(rd.load("planar2r"), "gravities")
    with pytest.raises(rd.InputError, match="choose one of inverse_dynamics, bias_torques, gravity_torques"):
        rd.compile(rd.load("planar2r"), "gravities", backend="numpy")
    with pytest.raises(rd.InputError, match="choose one of inverse_dynamics, inertia_matrix, forward_dynamics"):
        counted_kind("gravity_torques")


def test_aliases_make_the_same_model():
    robot = rd.load("planar2r")
    for kind in ("gravity_torques", "bias_torques"):
        models = [rd.customized_model(robot, name) for name in ALIASES if ALIASES[name] == kind] + \
            [rd.customized_model(robot, kind)]
        assert {m.kind for m in models} == {kind}
        assert len({str(m) for m in models}) == 1
    f = rd.compile(robot, "gra", backend="numpy")
    assert f.kind == "gravity_torques" and rd.compile(robot, "gravity", backend="numpy").kind == "gravity_torques"


def test_operation_counts_take_the_function_names():
    robot = counting_robot(2)
    assert count_operations(robot, "forward_dynamics", "recursive")[0] == count_operations(robot, "forward",
                                                                                         "recursive")[0]
    report = rd.analysis.opcount_report(2, kinds=("inverse_dynamics",), methods=["newton_euler"])
    assert [(c.kind, c.method) for c in report.counts] == [("inverse", "newton_euler")]


def test_generate_takes_kinds_and_names_files_by_short_name(tmp_path):
    runner = CliRunner()
    res = runner.invoke(app, ["generate", "planar2r", "--models", "gravity_torques,gra", "--lang", "python",
                              "--out", str(tmp_path / "m")])
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in (tmp_path / "m").glob("planar2r_*")) == ["planar2r_gra.py", "planar2r_gra.txt"]
    assert "| gra | gravity_torques |" in (tmp_path / "m" / "README.md").read_text()
    res = runner.invoke(app, ["generate", "planar2r", "--models", "gravities", "--out", str(tmp_path / "n")])
    assert res.exit_code == 2 and "choose from inverse_dynamics, inertia_matrix, gravity_torques" in res.output
