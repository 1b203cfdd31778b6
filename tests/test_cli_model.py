"""CLI: robodyn model / fd / properties, numbers checked against the library."""

import json
import os
import tempfile

import numpy as np
from typer.testing import CliRunner

import robodyn as rd
from robodyn.analysis import dynamic_bounds
from robodyn.cli import app

runner = CliRunner()


def run(*args):
    return runner.invoke(app, list(args))


def test_model_json_numbers():
    r = rd.load("planar2r")
    q, qd = np.array([0.3, 0.5]), np.array([1.0, -1.0])
    res = run("model", "planar2r", "--q", "0.3,0.5", "--qd", "1 -1", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    np.testing.assert_allclose(out["A"], rd.inertia_matrix(r, q), rtol=1e-14)
    np.testing.assert_allclose(out["C"], rd.coriolis_matrix(r, q, qd), rtol=1e-14)
    np.testing.assert_allclose(out["Q"], rd.gravity_torques(r, q), rtol=1e-14)
    np.testing.assert_allclose(out["H"], rd.bias_torques(r, q, qd), rtol=1e-14)
    np.testing.assert_allclose(np.array(out["Cqd"]) + out["Q"], out["H"], rtol=1e-12)  # C q̇ + Q = H, no friction
    # A11 = 5/3 + cos q2 for the planar 2R of planar2r.yaml
    assert abs(out["A"][0][0] - (5 / 3 + np.cos(0.5))) < 1e-14


def test_model_tables():
    res = run("model", "planar2r", "--q", "0.3,0.5", "--qd", "1,-1")
    assert res.exit_code == 0
    assert "inertia matrix A(q)" in res.stdout and "Q (gravity)" in res.stdout
    # matrices with the decimals of 4 significant digits on their largest entry (they keep 80 columns)
    assert f" {5 / 3 + np.cos(0.5):.3f} " in res.stdout  # A11 = 2.544
    assert f"{rd.gravity_torques(rd.load('planar2r'), [0.3, 0.5])[0]:.6g}" in res.stdout


def test_fd_every_method():
    r = rd.load("planar2r").replace(Ia=[0.1, 0.05], Fv=[0.2, 0.1])
    q, qd, tau = np.array([0.3, -0.2]), np.array([0.5, 1.0]), np.array([1.0, 2.0])
    expected = rd.forward_dynamics(r, q, qd, tau)
    np.testing.assert_allclose(rd.inverse_dynamics(r, q, qd, expected), tau, rtol=1e-12)
    # a robot file given by path
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "r.yaml")
        rd.save(r, path)
        for method in ("recursive", "cholesky", "gibbs_appell", "spatial_operator"):
            res = run("fd", path, "--q", "0.3,-0.2", "--qd", "0.5,1", "--tau", "1,2", "--method", method, "--json")
            assert res.exit_code == 0, res.output
            out = json.loads(res.stdout)
            assert out["method"] == method
            np.testing.assert_allclose(out["qdd"], expected, rtol=1e-12)
        res = run("fd", path, "--q", "0.3,-0.2", "--tau", "1,2")
        assert res.exit_code == 0 and f"{rd.forward_dynamics(r, q, 0 * qd, tau)[0]:.6g}" in res.stdout


def test_fd_and_model_errors():
    res = run("fd", "planar2r", "--method", "gauss")
    assert res.exit_code == 2 and "'gauss'" in res.output and "recursive, aba, cholesky, gibbs_appell, spatial_operator" in res.output
    res = run("model", "planar2r", "--q", "1")
    assert res.exit_code == 2 and "give 2" in res.output
    res = run("model", "no_such_robot")
    assert res.exit_code == 2 and "error" in res.output


def test_properties_json_and_tables():
    res = run("properties", "planar2r", "--samples", "100", "--seed", "3", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["inertia"] == [["m11(q2)", "m12(q2)"], ["m21(q2)", "m22 const"]]
    assert out["gravity"] == ["g1(q1, q2)", "g2(q1, q2)"]
    assert all(out["checks"].values()) and out["samples"] == 100
    b = dynamic_bounds(rd.load("planar2r"), samples=100, seed=3)
    for key, value in out["bounds"].items():
        assert value == getattr(b, key)
    res = run("properties", "planar2r", "--samples", "100", "--seed", "3")
    assert res.exit_code == 0
    for text in ("A(q) = [m_ij]", "m11(q2)", "m22 const", "A positive definite", f"{b.alpha:.6g}", f"{b.gamma:.6g}", "100 samples"):
        assert text in res.stdout


def test_properties_prismatic_range():
    r = rd.Robot(name="PR", sigma=[1, 0], alpha=[0, -np.pi / 2], gravity=[-9.81, 0, 0],
                 params=[rd.standard_from_com(5, [0, 0, 0], np.eye(3) * 0.05), rd.standard_from_com(2, [0.5, 0, 0], np.diag([0.001, 0.2, 0.2]))])
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "pr.yaml")
        rd.save(r, path)
        res = run("properties", path, "--samples", "20")
        assert res.exit_code == 0, res.output
        for text in ("m11 const", "m12(q2)", "A positive definite", "couplings and property checks sampled on (-1, 1) m",
                     "bounds skipped: prismatic joint(s) q1 have no finite limits", "--prismatic-range lo,hi"):
            assert text in res.stdout
        assert "bounds on dynamic terms" not in res.stdout
        res = run("properties", path, "--samples", "20", "--json")
        out = json.loads(res.stdout)
        assert out["bounds"] is None and out["samples"] is None and out["ranges"][0] == [-1.0, 1.0]
        assert out["inertia"] == [["m11 const", "m12(q2)"], ["m21(q2)", "m22 const"]] and all(out["checks"].values())
        assert "bounds skipped" in out["notes"][1]
        res = run("properties", path, "--samples", "20", "--prismatic-range", "-0.5,0.5", "--json")
        assert res.exit_code == 0, res.output
        out = json.loads(res.stdout)
        assert out["inertia"] == [["m11 const", "m12(q2)"], ["m21(q2)", "m22 const"]]
        assert out["ranges"][0] == [-0.5, 0.5] and out["notes"] == [] and out["bounds"]["alpha"] > 0
