"""Published models that violate the triangle inequality load on purpose with strict=False (and --no-strict)."""

from __future__ import annotations

import numpy as np
import pytest
from typer.testing import CliRunner

import robodyn as rd
from robodyn.cli import app


def _from_toolbox(name, strict):
    rtb = pytest.importorskip("roboticstoolbox")
    arm = getattr(rtb.models.DH, name)()
    L = arm.links
    return rd.model.from_standard_dh(
        [l.a for l in L], [l.alpha for l in L], [l.d for l in L], [l.offset for l in L],
        sigma=[int(l.isprismatic) for l in L], masses=[l.m for l in L], coms=[l.r for l in L],
        inertias_com=[l.I for l in L], name=name, strict=strict,
    )


@pytest.mark.parametrize("name, link", [("Puma560", 3), ("Stanford", 5), ("UR10", 6)])
def test_published_toolbox_models_need_strict_false(name, link):
    with pytest.raises(rd.NonPhysicalInertiaError, match=rf"link {link} .*triangle inequality.*strict=False"):
        _from_toolbox(name, strict=True)
    with pytest.warns(UserWarning, match=rf"link {link} .*triangle inequality") as caught:
        robot = _from_toolbox(name, strict=False)
    assert len(caught) == 1 and robot.strict is False
    # the flag survives replace(), so algorithms that derive robots keep accepting it
    with pytest.warns(UserWarning):
        assert robot.replace(Fv=np.ones(robot.nf)).strict is False


@pytest.fixture
def corke_file(tmp_path):
    with pytest.warns(UserWarning):
        robot = _from_toolbox("Puma560", strict=False)
    return rd.save(robot, tmp_path / "puma_as_published.yaml")


def test_load_strict_false_warns_instead_of_raising(corke_file):
    with pytest.raises(rd.ModelFileError, match="link 3 .*triangle inequality.*strict=False"):
        rd.load(corke_file)
    with pytest.warns(UserWarning, match="link 3 .*triangle inequality"):
        robot = rd.load(corke_file, strict=False)
    assert robot.params[2, 3] > 0 and robot.n == 6


def test_psd_violations_still_raise_with_strict_false():
    bad = np.array([0, 0, 0, -1.0, 0, 1.0, 0, 0, 0, 1.0])
    with pytest.raises(rd.NonPhysicalInertiaError, match="not positive semi-definite"):
        rd.Robot(name="x", sigma=[0], params=[bad], strict=False)


def test_cli_no_strict_option(corke_file):
    runner = CliRunner()
    refused = runner.invoke(app, ["info", str(corke_file)])
    assert refused.exit_code == 2 and "triangle inequality" in refused.output and "strict=False" in refused.output
    accepted = runner.invoke(app, ["--no-strict", "info", str(corke_file)])
    assert accepted.exit_code == 0, accepted.output
    assert "warning:" in accepted.output and "link 3" in accepted.output
    again = runner.invoke(app, ["info", str(corke_file)])  # the setting does not leak into the next invocation
    assert again.exit_code == 2
