"""robodyn.native (generic compiled kernels, threaded) against robodyn's NumPy algorithms and Pinocchio."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

import robodyn as rd
from robodyn import native
from robodyn.errors import InputError, ModelError
from tests.support.random_robots import random_robot

pytestmark = pytest.mark.skipif(not native.available(), reason="no C compiler: robodyn.native unavailable")


def rel(a, b):
    return np.max(np.abs(np.asarray(a) - np.asarray(b)), initial=0.0) / max(1.0, np.max(np.abs(b), initial=0.0))


def states(robot, size, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1.5, 1.5, (3, size, robot.n))


@pytest.mark.parametrize("name", rd.list_robots())
def test_builtin_robots_equal_numpy(name):
    robot = rd.load(name)
    q, qd, qdd = states(robot, 40)
    W = np.random.default_rng(1).normal(size=(40, robot.nf, 6))
    tau = rd.inverse_dynamics(robot, q, qd, qdd, wrenches=W)
    assert rel(native.inverse_dynamics(robot, q, qd, qdd, wrenches=W), tau) < 1e-13
    assert rel(native.gravity_torques(robot, q), rd.gravity_torques(robot, q)) < 1e-13
    A = native.inertia_matrix(robot, q)
    assert rel(A, rd.inertia_matrix(robot, q)) < 1e-13
    # direct dynamics: backward error of the solution (its forward error is amplified by cond(A))
    qdd_n = native.forward_dynamics(robot, q, qd, tau, wrenches=W)
    residual = rd.inverse_dynamics(robot, q, qd, qdd_n, wrenches=W) - tau
    assert np.max(np.abs(residual)) / np.max(np.abs(tau)) < 1e-12
    assert rel(native.regressor(robot, q, qd, qdd), rd.regressor(robot, q, qd, qdd)) < 1e-13
    assert rel(native.regressor(robot, q, qd, qdd, friction=False), rd.regressor(robot, q, qd, qdd, friction=False)) < 1e-13


@given(seed=st.integers(0, 10_000), tree=st.booleans())
def test_random_robots_equal_numpy(seed, tree):
    """Trees, prismatic and fixed frames, rotor inertia, friction, per-state gravity and wrenches."""
    robot = random_robot(seed, tree=tree, fixed=True)
    q, qd, qdd = states(robot, 7, seed)
    rng = np.random.default_rng(seed)
    W, G = rng.normal(size=(7, robot.nf, 6)), rng.normal(size=(7, 3)) * 9.81
    tau = rd.inverse_dynamics(robot, q, qd, qdd, wrenches=W, gravity=G)
    assert rel(native.inverse_dynamics(robot, q, qd, qdd, wrenches=W, gravity=G), tau) < 1e-12
    assert rel(native.gravity_torques(robot, q, gravity=G), rd.gravity_torques(robot, q, gravity=G)) < 1e-12
    assert rel(native.inertia_matrix(robot, q), rd.inertia_matrix(robot, q)) < 1e-12
    qdd_n = native.forward_dynamics(robot, q, qd, tau, wrenches=W, gravity=G)
    A = rd.inertia_matrix(robot, q)
    bound = 1e-12 * np.linalg.cond(A).max()
    assert rel(qdd_n, qdd) < max(bound, 1e-12)
    assert rel(native.regressor(robot, q, qd, qdd, gravity=G), rd.regressor(robot, q, qd, qdd, gravity=G)) < 1e-12


def test_regressor_times_parameters_is_inverse_dynamics():
    robot = rd.load("wam7")
    q, qd, qdd = states(robot, 25)
    K = rd.standard_parameter_vector(robot)
    assert rel(native.regressor(robot, q, qd, qdd) @ K, rd.inverse_dynamics(robot, q, qd, qdd)) < 1e-13


def test_pinocchio_agrees_on_a_long_chain():
    pin_bridge = pytest.importorskip("tests.support.pin_bridge")
    robot = random_robot(3, nf=30, prismatic=False)
    p = pin_bridge.PinRobot(robot)
    q, qd, qdd = states(robot, 3)
    for i in range(3):
        assert rel(native.inverse_dynamics(robot, q[i], qd[i], qdd[i]) - rd.friction_torques(robot, qd[i]),
                   p.rnea(q[i], qd[i], qdd[i])) < 1e-12
        assert rel(native.inertia_matrix(robot, q[i]), p.crba(q[i])) < 1e-12


@pytest.mark.parametrize("threads", [1, 2, 3, 8])
def test_threads_give_identical_results(threads):
    """Any thread count gives the single-threaded numbers bit for bit, for batch sizes around the chunk size."""
    robot = rd.load("puma560")
    for size in (0, 1, 255, 256, 257, 1000):
        q, qd, qdd = states(robot, size)
        one = native.inverse_dynamics(robot, q, qd, qdd, threads=1)
        assert one.shape == (size, robot.n)
        np.testing.assert_array_equal(native.inverse_dynamics(robot, q, qd, qdd, threads=threads), one)
        np.testing.assert_array_equal(native.inertia_matrix(robot, q, threads=threads),
                                      native.inertia_matrix(robot, q, threads=1))
        # per-state gravity and wrenches are offset per chunk like the states
        rng = np.random.default_rng(size)
        g, W = rng.normal(size=(size, 3)), rng.normal(size=(size, robot.nf, 6))
        tau = native.inverse_dynamics(robot, q, qd, qdd, wrenches=W, gravity=g, threads=threads)
        np.testing.assert_allclose(tau, rd.dynamics.newton_euler.rnea(robot, q, qd, qdd, g, W)
                                   + rd.friction_torques(robot, qd), rtol=1e-13, atol=1e-12)
        acc = native.forward_dynamics(robot, q, qd, tau, wrenches=W, gravity=g, threads=threads)
        np.testing.assert_allclose(acc, qdd, rtol=1e-9, atol=1e-9)
        D = native.regressor(robot, q, qd, qdd, gravity=g, threads=threads)
        np.testing.assert_allclose(D @ rd.standard_parameter_vector(robot),
                                   native.inverse_dynamics(robot, q, qd, qdd, gravity=g), rtol=1e-12, atol=1e-11)


def test_batch_shapes_and_non_contiguous_inputs():
    robot = rd.load("rx90")
    q, qd, qdd = states(robot, 24)
    tau = native.inverse_dynamics(robot, q, qd, qdd)
    # one state, a (4, 6) batch, and strided views give the per-state numbers
    np.testing.assert_array_equal(native.inverse_dynamics(robot, q[5], qd[5], qdd[5]), tau[5])
    np.testing.assert_array_equal(native.inverse_dynamics(robot, q.reshape(4, 6, 6), qd.reshape(4, 6, 6),
                                                          qdd.reshape(4, 6, 6)), tau.reshape(4, 6, 6))
    np.testing.assert_array_equal(native.inverse_dynamics(robot, q[::3], qd[::3], qdd[::3]), tau[::3])
    qT = np.asfortranarray(q)
    np.testing.assert_array_equal(native.inertia_matrix(robot, qT), native.inertia_matrix(robot, q))
    # broadcasting: one velocity for every state
    np.testing.assert_allclose(native.inverse_dynamics(robot, q, qd[0], qdd),
                               rd.inverse_dynamics(robot, q, qd[0], qdd), rtol=0, atol=1e-12)


def test_bad_input_and_singular_model():
    robot = rd.load("rx90")
    with pytest.raises(InputError, match="'q'"):
        native.inverse_dynamics(robot, np.zeros(5), np.zeros(6), np.zeros(6))
    with pytest.raises(InputError, match="NaN"):
        native.gravity_torques(robot, np.full(6, np.nan))
    with pytest.raises(InputError, match="wrenches"):
        native.inverse_dynamics(robot, np.zeros(6), np.zeros(6), np.zeros(6), wrenches=np.zeros((5, 6)))
    with pytest.raises(InputError, match="threads"):
        native.inertia_matrix(robot, np.zeros(6), threads=0)
    # massless link 2 carrying nothing off joint 2's axis, no rotor inertia: A is singular
    point = rd.standard_from_com(mass=1.0, com=[0.0, 0.0, 0.3], inertia_com=np.zeros((3, 3)))
    link = rd.standard_from_com(mass=1.0, com=[0.2, 0.0, 0.0], inertia_com=np.diag([0.01, 0.02, 0.02]))
    singular = rd.Robot(name="singular", sigma=[0, 0], alpha=[0.0, np.pi / 2], params=[link, point])
    with pytest.raises(ModelError, match="singular"):
        native.forward_dynamics(singular, np.zeros(2), np.zeros(2), np.ones(2))


def test_cached_library_is_verified(tmp_path, monkeypatch):
    """A tampered cached library is rebuilt, never loaded; the loaded library lives in sys.modules only."""
    import sys

    monkeypatch.setenv("ROBODYN_CACHE", str(tmp_path))
    monkeypatch.delitem(sys.modules, native._MODULE_NAME)
    native._module()
    (lib,) = tmp_path.glob("rdgeneric_*.so")
    (digest,) = tmp_path.glob("rdgeneric_*.sha256")
    assert native._verified(lib, digest)
    lib.unlink()  # a new file, as a foreign or corrupt entry would arrive (the loaded one stays mapped)
    lib.write_bytes(b"not a library")
    assert not native._verified(lib, digest)
    del sys.modules[native._MODULE_NAME]
    module = native._module()
    assert native._verified(lib, digest) and sys.modules[native._MODULE_NAME] is module
    robot = rd.load("planar2r")
    assert rel(native.gravity_torques(robot, [0.3, 0.2]), rd.gravity_torques(robot, [0.3, 0.2])) < 1e-14


def test_compiled_model_threads_give_identical_results():
    """rd.compile's batched calls split states over threads; any count gives the single-threaded numbers."""
    robot = rd.load("planar3r")
    one, two = rd.compile(robot, "inverse_dynamics", threads=1), rd.compile(robot, "inverse_dynamics", threads=2)
    assert (one.threads, two.threads) == (1, 2)
    for size in (0, 1, 300, 1025):
        q, qd, qdd = states(robot, size)
        ref = one(q, qd, qdd)
        np.testing.assert_array_equal(two(q, qd, qdd), ref)
        np.testing.assert_allclose(ref, rd.inverse_dynamics(robot, q, qd, qdd), rtol=1e-12, atol=1e-12)
    g = np.random.default_rng(2).normal(size=(300, 3))
    q, qd, qdd = states(robot, 300)
    np.testing.assert_allclose(two(q, qd, qdd, gravity=g), rd.inverse_dynamics(robot, q, qd, qdd, gravity=g),
                               rtol=1e-12, atol=1e-12)
    bad = q.copy()
    bad[290, 1] = np.nan
    with pytest.raises(InputError, match="'q' contains NaN"):
        two(bad, qd, qdd)
    with pytest.raises(InputError, match="threads"):
        rd.compile(robot, "gravity", threads=0)


def test_compiled_single_state_with_gravity_and_wrenches():
    """One 1-D state with gravity= and wrenches= takes the compiled low-latency path and equals rd."""
    robot = rd.load("rx90")
    idm = rd.compile(robot, "inverse_dynamics")
    q, qd, qdd = states(robot, 1, 5)[:, 0]
    g = np.array([0.5, -1.0, -9.7])
    W = np.random.default_rng(5).normal(size=(robot.nf, 6))
    np.testing.assert_allclose(idm(q, qd, qdd, gravity=g), rd.inverse_dynamics(robot, q, qd, qdd, gravity=g),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(idm(q, qd, qdd, wrenches=W, gravity=g),
                               rd.inverse_dynamics(robot, q, qd, qdd, wrenches=W, gravity=g), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(idm(q, qd, qdd, wrenches=W), rd.inverse_dynamics(robot, q, qd, qdd, wrenches=W),
                               rtol=1e-12, atol=1e-12)
    assert idm._single_state((q, qd, qdd), g, W) is not None  # the fast path served these calls
    with pytest.raises(InputError, match="'gravity' contains NaN"):
        idm(q, qd, qdd, gravity=np.array([0.0, np.nan, -9.81]))
    gra = rd.compile(robot, "gravity")
    np.testing.assert_allclose(gra(q, gravity=g), rd.gravity_torques(robot, q, gravity=g), rtol=1e-12, atol=1e-12)


def test_kernel_source_compiles_without_warnings(tmp_path):
    """robodyn's generic kernels compile under -Wall -Wextra -Werror, with and without threads."""
    import shutil
    import subprocess
    import sysconfig
    from importlib import resources

    cc = shutil.which("cc") or shutil.which("gcc")
    src = tmp_path / "kernels.c"
    src.write_text(resources.files("robodyn.native").joinpath("kernels.c").read_text())
    for extra in ([], ["-DRD_THREADS", "-pthread"]):
        proc = subprocess.run([cc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", *extra,
                               "-I" + sysconfig.get_paths()["include"], str(src)],
                              capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
