"""robodyn.native (generic compiled kernels, threaded) against robodyn's NumPy algorithms and Pinocchio."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import robodyn as rd
from robodyn import native
from robodyn.native import build
from robodyn.dynamics import executor
from robodyn.dynamics.floating import augmented_robot
from robodyn.errors import InputError, ModelError
from tests.support.kernels import needs_kernels, numpy_path
from tests.support.random_robots import random_robot

pytestmark = needs_kernels


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
    tau = numpy_path(rd.inverse_dynamics, robot, q, qd, qdd, wrenches=W)
    assert rel(native.inverse_dynamics(robot, q, qd, qdd, wrenches=W), tau) < 1e-13
    assert rel(native.gravity_torques(robot, q), numpy_path(rd.gravity_torques, robot, q)) < 1e-13
    A = native.inertia_matrix(robot, q)
    assert rel(A, numpy_path(rd.inertia_matrix, robot, q)) < 1e-13
    # direct dynamics: backward error of the solution (its forward error is amplified by cond(A))
    qdd_n = native.forward_dynamics(robot, q, qd, tau, wrenches=W)
    residual = numpy_path(rd.inverse_dynamics, robot, q, qd, qdd_n, wrenches=W) - tau
    assert np.max(np.abs(residual)) / np.max(np.abs(tau)) < 1e-12
    assert rel(native.regressor(robot, q, qd, qdd), numpy_path(rd.regressor, robot, q, qd, qdd)) < 1e-13
    assert rel(native.regressor(robot, q, qd, qdd, friction=False),
               numpy_path(rd.regressor, robot, q, qd, qdd, friction=False)) < 1e-13


@given(seed=st.integers(0, 10_000), tree=st.booleans())
def test_random_robots_equal_numpy(seed, tree):
    """Trees, prismatic and fixed frames, rotor inertia, friction, per-state gravity and wrenches."""
    robot = random_robot(seed, tree=tree, fixed=True)
    q, qd, qdd = states(robot, 7, seed)
    rng = np.random.default_rng(seed)
    W, G = rng.normal(size=(7, robot.nf, 6)), rng.normal(size=(7, 3)) * 9.81
    tau = numpy_path(rd.inverse_dynamics, robot, q, qd, qdd, wrenches=W, gravity=G)
    assert rel(native.inverse_dynamics(robot, q, qd, qdd, wrenches=W, gravity=G), tau) < 1e-12
    assert rel(native.gravity_torques(robot, q, gravity=G), numpy_path(rd.gravity_torques, robot, q, gravity=G)) < 1e-12
    A = numpy_path(rd.inertia_matrix, robot, q)
    assert rel(native.inertia_matrix(robot, q), A) < 1e-12
    qdd_n = native.forward_dynamics(robot, q, qd, tau, wrenches=W, gravity=G)
    bound = 1e-12 * np.linalg.cond(A).max()
    assert rel(qdd_n, qdd) < max(bound, 1e-12)
    assert rel(native.regressor(robot, q, qd, qdd, gravity=G),
               numpy_path(rd.regressor, robot, q, qd, qdd, gravity=G)) < 1e-12


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), nf=st.integers(8, 14))
def test_long_chain_inertia_matrix_rows(seed, nf):
    """Serial chains of 8 joints and more, whose A the kernel writes row by row without a buffer of lanes: prismatic
    and fixed frames, 7 states (a partial last block of 3), one state; exactly symmetric (one product per pair);
    A⁻¹ of the direct-dynamics derivatives (which computes A into its work rows) times A is 1."""
    robot = random_robot(seed, nf=nf, fixed=True)
    q, qd, tau = states(robot, 7, seed)
    A = native.inertia_matrix(robot, q)
    ref = numpy_path(rd.inertia_matrix, robot, q)
    assert rel(A, ref) < 1e-12
    np.testing.assert_array_equal(A, np.swapaxes(A, -1, -2))
    np.testing.assert_array_equal(native.inertia_matrix(robot, q[4]), A[4])
    np.testing.assert_array_equal(native.inertia_matrix(robot, q[:5]), A[:5])
    inv = native.forward_dynamics_derivatives(robot, q, qd, tau, friction=False)[:, 2]
    np.testing.assert_allclose(inv @ ref, np.broadcast_to(np.eye(robot.n), ref.shape),
                               atol=1e-12 * np.linalg.cond(ref).max())


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10_000), tree=st.booleans(), nf=st.sampled_from([9, 27, 31]),
       trig=st.sampled_from(["exact", "fast"]))
def test_one_state_is_its_row_of_the_batch(seed, tree, nf, trig):
    """One state (the single-state entry) computes its frames' sines and cosines before its block, four angles to a
    vector operation, and writes the inertia matrix's ancestor pairs straight into its result, where a batch's
    blocks compute four states' angles at once and write whole rows (chains from 8 joints, trees from 26): each
    state alone is its row of the batch bit for bit, every kind, both trigonometries, prismatic and fixed frames."""
    robot = random_robot(seed, nf=nf, tree=tree, fixed=True, friction=True)
    q, qd, qdd = states(robot, 6, seed)
    calls = {"inverse_dynamics": lambda *x: rd.inverse_dynamics(robot, *x, trig=trig),
             "gravity_torques": lambda *x: rd.gravity_torques(robot, x[0], trig=trig),
             "inertia_matrix": lambda *x: rd.inertia_matrix(robot, x[0], trig=trig),
             "forward_dynamics": lambda *x: rd.forward_dynamics(robot, *x, trig=trig),
             "inverse_dynamics_derivatives": lambda *x: rd.inverse_dynamics_derivatives(robot, *x),
             "forward_dynamics_derivatives": lambda *x: rd.forward_dynamics_derivatives(robot, *x)}
    for name, f in calls.items():
        full = np.stack(f(q, qd, qdd), -3) if name.endswith("derivatives") else f(q, qd, qdd)  # (6, 2 or 3, n, n)
        for k in (0, 5):
            one = f(q[k], qd[k], qdd[k])
            np.testing.assert_array_equal(np.stack(one) if name.endswith("derivatives") else one, full[k],
                                          err_msg=name)


def test_one_free_flyer_state_is_its_row_of_the_batch():
    """A humanoid-sized free flyer (a tree of 30 frames, 36 velocities: the rows path of the batch) one state at a
    time through the free-flyer entry: its batch rows bit for bit."""
    from robodyn.dynamics import floating as fl
    from tests.support.floating import random_floating, random_free_state

    robot = random_floating(7, tree=True, nf=30)
    q, v, a = random_free_state(robot.n, 7, batch=(5,))
    tau = fl.floating_inverse_dynamics(robot, q, v, a)
    full = (fl.floating_inertia_matrix(robot, q), tau, fl.floating_forward_dynamics(robot, q, v, tau))
    for k in (0, 4):
        np.testing.assert_array_equal(fl.floating_inertia_matrix(robot, q[k]), full[0][k])
        np.testing.assert_array_equal(fl.floating_inverse_dynamics(robot, q[k], v[k], a[k]), full[1][k])
        np.testing.assert_array_equal(fl.floating_forward_dynamics(robot, q[k], v[k], tau[k]), full[2][k])


@pytest.mark.parametrize("nf, tree, floating, derivatives", [(30, False, False, False), (30, True, False, False),
                                                             (14, True, False, False), (12, True, True, False),
                                                             (14, False, False, True)])
def test_results_written_to_memory_are_the_numbers_of_small_batches(nf, tree, floating, derivatives):
    """A call whose results reach 8 MB writes its full blocks with non-temporal stores (kernels.c, RD_STREAM): the
    same numbers bit for bit as batches of a few states (ordinary stores), into an array 8 bytes off a 16-byte
    boundary too (the stores' first entry alone), on 1 and 2 threads, the partial last block included.  A chain
    and a tree written row by row, a tree of 14 frames through its buffer of lanes, a free flyer's augmented robot
    (its virtual frames), the direct-dynamics derivatives of 13 joints (their buffer of lanes)."""
    robot = random_robot(nf, nf=nf, tree=tree, fixed=True)
    if floating:
        robot = augmented_robot(robot)
    n = robot.n
    size = (8 << 20) // (8 * n * n * (3 if derivatives else 1)) + 3
    q, qd, tau = states(robot, size, nf)
    if derivatives:
        small = np.concatenate([native.forward_dynamics_derivatives(robot, q[k:k + 9], qd[k:k + 9], tau[k:k + 9])
                                for k in range(0, size, 9)])
        for threads in (1, 2):
            np.testing.assert_array_equal(native.forward_dynamics_derivatives(robot, q, qd, tau, threads=threads),
                                          small)
        return
    if floating:
        q[:, :6] = 0.0  # the virtual joints at zero, as robodyn.dynamics.floating sets them
    small = np.concatenate([native.inertia_matrix(robot, q[k:k + 9]) for k in range(0, size, 9)])
    for threads in (1, 2):
        np.testing.assert_array_equal(native.inertia_matrix(robot, q, threads=threads), small)
    raw = np.empty(size * n * n + 1)
    out = raw[1:].reshape(size, n, n) if raw.ctypes.data % 16 == 0 else raw[:-1].reshape(size, n, n)
    assert out.ctypes.data % 16 == 8
    assert rd.inertia_matrix(robot, q, out=out) is out
    np.testing.assert_array_equal(out, small)


def test_results_2kb_apart_are_the_numbers_of_small_batches():
    """States whose inertia matrices or regressors lie a multiple of 2 kB apart (16 joints: 256 and 2816 doubles a
    state) keep ordinary stores where their results reach 8 MB (kernels.c, RD_ALIAS): the same numbers bit for bit
    as batches of a few states, on 1 and 2 threads, the partial last block included."""
    robot = random_robot(16, nf=16, prismatic=False)
    assert robot.n == 16
    for fn, floats in ((lambda q, qd, qdd, **kw: native.inertia_matrix(robot, q, **kw), 256),
                       (lambda q, qd, qdd, **kw: native.regressor(robot, q, qd, qdd, friction=False, **kw), 2816)):
        size = (8 << 20) // (8 * floats) + 3
        q, qd, qdd = states(robot, size, 16)
        small = np.concatenate([fn(q[k:k + 9], qd[k:k + 9], qdd[k:k + 9]) for k in range(0, size, 9)])
        assert small[0].size == floats
        for threads in (1, 2):
            np.testing.assert_array_equal(fn(q, qd, qdd, threads=threads), small)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), tree=st.booleans(), nf=st.integers(2, 12))
def test_inertia_matrix_with_massless_links(seed, tree, nf):
    """Links without inertia (a free flyer's virtual frames, bare joints), whose composite links the kernel sums
    without moving them: chains and trees with prismatic and fixed frames against robodyn's NumPy recursion, each
    state alone bit for bit its row of the batch (the one-state branch against the lanes)."""
    robot = random_robot(seed, nf=nf, tree=tree, fixed=True)
    params = robot.params.copy()
    params[np.random.default_rng(seed).random(robot.nf) < 0.5] = 0.0
    robot = robot.replace(params=params)
    q = states(robot, 7, seed)[0]
    A = native.inertia_matrix(robot, q)
    assert rel(A, numpy_path(rd.inertia_matrix, robot, q)) < 1e-12
    for k in (0, 3, 6):
        np.testing.assert_array_equal(native.inertia_matrix(robot, q[k]), A[k])


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), nf=st.integers(1, 12))
def test_inertia_matrix_of_a_free_flyers_augmented_robot(seed, nf):
    """A free flyer's augmented robot (6 virtual joints): where the virtual joints are zero in a block's every lane
    the kernel reads A_vk = w_k[v] and skips the virtual frames; a block with one of them non-zero takes the general
    recursion.  Both against robodyn's NumPy recursion, each state alone bit for bit its row of the batch."""
    from robodyn.dynamics.floating import augmented_robot
    from tests.support.floating import random_floating

    robot = random_robot(seed, nf=nf, tree=True, fixed=True).replace(
        base="floating", base_params=random_floating(seed).base_params)
    aug = augmented_robot(robot)
    q = states(aug, 7, seed)[0]
    q[:6, :6] = 0.0          # the first block: the free flyer's virtual state; the second: a virtual joint moved
    q[6, 2] = 0.3
    A = native.inertia_matrix(aug, q)
    assert rel(A, numpy_path(rd.inertia_matrix, aug, q)) < 1e-12
    for k in (0, 3, 5, 6):
        np.testing.assert_array_equal(native.inertia_matrix(aug, q[k]), A[k])


def test_regressor_times_parameters_is_inverse_dynamics():
    robot = rd.load("wam7")
    q, qd, qdd = states(robot, 25)
    K = rd.parameters.standard_parameter_vector(robot)
    assert rel(native.regressor(robot, q, qd, qdd) @ K, numpy_path(rd.inverse_dynamics, robot, q, qd, qdd)) < 1e-13


def test_pinocchio_agrees_on_a_long_chain():
    pin_bridge = pytest.importorskip("tests.support.pin_bridge")
    robot = random_robot(3, nf=30, prismatic=False)
    p = pin_bridge.PinRobot(robot)
    q, qd, qdd = states(robot, 3)
    for i in range(3):
        assert rel(native.inverse_dynamics(robot, q[i], qd[i], qdd[i]) - rd.friction_torques(robot, qd[i]),
                   p.rnea(q[i], qd[i], qdd[i])) < 1e-12
        assert rel(native.inertia_matrix(robot, q[i]), p.crba(q[i])) < 1e-12


def _all_kinds(robot, q, qd, qdd, tau, W, g, threads):
    return [native.inverse_dynamics(robot, q, qd, qdd, wrenches=W, gravity=g, threads=threads),
            native.gravity_torques(robot, q, gravity=g, threads=threads),
            native.inertia_matrix(robot, q, threads=threads),
            native.forward_dynamics(robot, q, qd, tau, wrenches=W, gravity=g, threads=threads),
            native.regressor(robot, q, qd, qdd, gravity=g, threads=threads)]


@pytest.mark.parametrize("size", [0, 1, 127, 128, 1000])
def test_threads_give_identical_results(size):
    """Any thread count gives the single-threaded numbers bit for bit, every kind, batch sizes around the four
    lanes and the threading threshold; a tree with prismatic and fixed frames, wrenches and per-state gravity."""
    robot = random_robot(21, nf=9, tree=True, fixed=True)
    assert set(robot.sigma) == {0, 1, 2} and np.any(robot.antecedent[1:] != np.arange(1, robot.nf))
    q, qd, qdd = states(robot, size)
    rng = np.random.default_rng(size)
    W, g = rng.normal(size=(size, robot.nf, 6)), rng.normal(size=(size, 3)) * 9.81
    tau = rd.inverse_dynamics(robot, q, qd, qdd, wrenches=W, gravity=g)
    one = _all_kinds(robot, q, qd, qdd, tau, W, g, 1)
    for threads in (2, 3, 7, 10**9):  # beyond a C int: as many threads as are useful
        for a, b in zip(_all_kinds(robot, q, qd, qdd, tau, W, g, threads), one):
            np.testing.assert_array_equal(a, b)
    n, p = robot.n, 11 * robot.nf + 3 * robot.n
    assert [a.shape for a in one] == [(size, n), (size, n), (size, n, n), (size, n), (size, n, p)]
    if size:  # against the NumPy algorithms, state by state for the first few
        for k in range(min(size, 3)):
            assert rel(one[0][k], rd.dynamics.newton_euler.rnea(robot, q[k], qd[k], qdd[k], g[k], W[k])
                       + rd.friction_torques(robot, qd[k])) < 1e-13
            assert rel(one[2][k], numpy_path(rd.inertia_matrix, robot, q[k])) < 1e-13
            assert rel(one[4][k], numpy_path(rd.regressor, robot, q[k], qd[k], qdd[k], gravity=g[k])) < 1e-13
        residual = numpy_path(rd.inverse_dynamics, robot, q, qd, one[3], wrenches=W, gravity=g) - tau
        assert np.max(np.abs(residual)) / np.max(np.abs(tau)) < 1e-11


def test_default_functions_use_the_kernels_from_min_batch():
    """rd.* hand float64 batches of MIN_BATCH states and more to the kernels: equal to them bit for bit, and to
    the NumPy path (ROBODYN_NATIVE=0) to rounding; smaller batches and float32 stay on NumPy."""
    robot = random_robot(5, nf=6, tree=True, fixed=True)
    q, qd, qdd = states(robot, executor.MIN_BATCH)
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
    np.testing.assert_array_equal(tau, native.inverse_dynamics(robot, q, qd, qdd))
    np.testing.assert_array_equal(rd.gravity_torques(robot, q), native.gravity_torques(robot, q))
    np.testing.assert_array_equal(rd.inertia_matrix(robot, q), native.inertia_matrix(robot, q))
    np.testing.assert_array_equal(rd.forward_dynamics(robot, q, qd, tau), native.forward_dynamics(robot, q, qd, tau))
    np.testing.assert_array_equal(rd.regressor(robot, q, qd, qdd, friction=False),
                                  native.regressor(robot, q, qd, qdd, friction=False))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ROBODYN_NATIVE", "0")
        assert rel(rd.inverse_dynamics(robot, q, qd, qdd), tau) < 1e-13
        assert rel(rd.regressor(robot, q, qd, qdd, friction=False), native.regressor(robot, q, qd, qdd, friction=False)) < 1e-13
    assert not executor.takes_batch(np.float64, (executor.MIN_BATCH - 1,)) and not executor.takes_batch(np.float32, (10**4,))
    assert executor.takes_batch(np.float64, (executor.MIN_BATCH,))


def test_stribeck_friction_and_overflow():
    """The C friction law is robodyn.model.friction.friction_law, Stribeck term included (batches and single
    states, exponents B_st of 1, 0.5 and 1.5, joints at rest); an overflowing result raises."""
    robot = rd.load("rx90")
    jf = robot.joint_frames
    Fst = np.zeros(robot.nf)
    Fst[jf] = 1.5 * robot.Fc[jf] + 0.3
    Fst[jf[1]] = 0.0  # a joint without the Stribeck term
    Bst = np.full(robot.nf, 1.0)
    Bst[jf[2]], Bst[jf[3]] = 0.5, 1.5
    stribeck = robot.replace(Fst=Fst, kst=np.full(robot.nf, 2.0), Bst=Bst, Foff=np.full(robot.nf, 0.1))
    q, qd, qdd = states(robot, 200)
    qd[::7, 2] = 0.0
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ROBODYN_NATIVE", "0")
        tau = rd.inverse_dynamics(stribeck, q, qd, qdd)
        one = rd.inverse_dynamics(stribeck, q[0], qd[0], qdd[0])
        friction = rd.friction_torques(stribeck, qd)
    assert rel(native.inverse_dynamics(stribeck, q, qd, qdd), tau) < 1e-13
    assert rel(rd.inverse_dynamics(stribeck, q[0], qd[0], qdd[0]), one) < 1e-13  # the single-state entry
    assert rel(native.forward_dynamics(stribeck, q, qd, tau), qdd) < 1e-10
    rigid = native.inverse_dynamics(stribeck.replace(Fc=None, Fv=None, Foff=None, Fst=None), q, qd, qdd)
    in_c = native.inverse_dynamics(stribeck, q, qd, qdd) - rigid
    np.testing.assert_allclose(in_c, friction, rtol=0, atol=1e-12 * np.abs(tau).max())
    with pytest.raises(rd.NumericOverflowError, match="inverse_dynamics"):
        native.inverse_dynamics(robot, q, np.full_like(qd, 1e160), qdd)


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
    # broadcasting: one velocity for every state, one gravity for every state, a strided gravity per state
    np.testing.assert_array_equal(native.inverse_dynamics(robot, q, qd[0], qdd),
                                  native.inverse_dynamics(robot, q, np.tile(qd[0], (24, 1)), qdd))
    g = np.array([0.3, -0.2, -9.7])
    G = np.zeros((24, 6))
    G[:, ::2] = g
    G = G[:, ::2]
    assert not G.flags.c_contiguous
    np.testing.assert_array_equal(native.gravity_torques(robot, q, gravity=g), native.gravity_torques(robot, q, gravity=G))
    np.testing.assert_array_equal(native.regressor(robot, q[::2], qd[::2], qdd[::2], gravity=G[::2]),
                                  native.regressor(robot, q, qd, qdd, gravity=g)[::2])




def test_a_batch_of_one_state_is_its_row_of_a_batch():
    """A (1, n) or (1, 1, n) batch takes the single-state entry (a batch's fixed cost, 16 µs, is three times the
    entry's): the row of a larger batch bit for bit, into out= too; NaN still names its argument, a singular state
    its joint."""
    robot = rd.load("rx90")
    q, qd, qdd = states(robot, 6)
    calls = {"inverse_dynamics": lambda *x: rd.inverse_dynamics(robot, *x), "bias_torques": lambda *x:
             rd.bias_torques(robot, *x[:2]), "gravity_torques": lambda *x: rd.gravity_torques(robot, x[0]),
             "inertia_matrix": lambda *x: rd.inertia_matrix(robot, x[0]),
             "forward_dynamics": lambda *x: rd.forward_dynamics(robot, *x)}
    for name, f in calls.items():
        full = f(q, qd, qdd)
        for k in (0, 5):
            np.testing.assert_array_equal(f(q[k:k + 1], qd[k:k + 1], qdd[k:k + 1]), full[k:k + 1])
            np.testing.assert_array_equal(f(*(x[k][None, None] for x in (q, qd, qdd))), full[k][None, None])
    out = np.empty((1, robot.n))
    assert rd.inverse_dynamics(robot, q[:1], qd[:1], qdd[:1], out=out) is out
    np.testing.assert_array_equal(out, rd.inverse_dynamics(robot, q, qd, qdd)[:1])
    bad = qd[:1].copy()
    bad[0, 2] = np.nan
    with pytest.raises(InputError, match="'qd' contains NaN"):
        rd.inverse_dynamics(robot, q[:1], bad, qdd[:1])
    point = rd.standard_from_com(mass=1.0, com=[0.0, 0.0, 0.3], inertia_com=np.zeros((3, 3)))
    link = rd.standard_from_com(mass=1.0, com=[0.2, 0.0, 0.0], inertia_com=np.diag([0.01, 0.02, 0.02]))
    singular = rd.Robot(name="singular", sigma=[0, 0], alpha=[0.0, np.pi / 2], params=[link, point])
    with pytest.raises(ModelError, match="joint j2: .*singular"):
        rd.forward_dynamics(singular, np.zeros((1, 2)), np.zeros((1, 2)), np.ones((1, 2)))

@pytest.mark.parametrize("where", ["q", "qd", "x", "g", "wrench"])
def test_the_batch_entry_refuses_nan_and_inf_in_its_inputs(where):
    """kernels.c's batch entry checks its inputs before it computes anything: NaN or inf in q, q̇, x (q̈ or τ), a
    per-state gravity or the wrenches answers RD_INPUT (-4) and leaves out as it was; the default functions' small
    batches (the executor's bound runner, which leaves that check to C) then take the general path, whose error names
    the argument."""
    robot = rd.load("rx90")
    module = native._module()
    cap = native._new_capsule(robot, module)
    q, qd, qdd = states(robot, 5)
    args = {"q": q.copy(), "qd": qd.copy(), "x": qdd.copy(), "g": np.tile([0.0, 0.0, -9.81], (5, 1)),
            "wrench": np.zeros((5, robot.nf, 6))}
    args[where].reshape(-1)[7 % args[where].size] = np.inf if where == "g" else np.nan
    out = np.full((5, robot.n), 7.0)
    assert module.batch(cap, 0, 1, True, args["q"], args["qd"], args["x"], args["g"], args["wrench"], out,
                        False) == native.RD_INPUT
    assert np.all(out == 7.0)
    if where in ("q", "qd", "x"):
        name = {"q": "'q'", "qd": "'qd'", "x": "'qdd'"}[where]
        with pytest.raises(InputError, match=f"{name} contains NaN"):
            rd.inverse_dynamics(robot, args["q"][:2], args["qd"][:2], args["x"][:2])

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
    with pytest.raises(ModelError, match="joint j2: .*singular"):
        native.forward_dynamics(singular, np.zeros(2), np.zeros(2), np.ones(2))
    with pytest.raises(ModelError, match="joint j2: .*singular"):
        rd.forward_dynamics(singular, np.zeros((300, 2)), np.zeros((300, 2)), np.ones((300, 2)))


def test_cached_library_is_verified(tmp_path, monkeypatch):
    """A tampered cached library is rebuilt, never loaded; the loaded library is kept in the process's workspace
    (a fresh workspace: a new process).  The cache starts with this process's verified library and the rebuild's
    compiler writes that library's bytes: the cache's checks are under test, not the compiler (every other test
    here runs what it compiled), and nothing is compiled twice."""
    import hashlib
    import shutil
    from pathlib import Path

    from robodyn.model.workspace import Workspace

    def verified(lib, sidecar):  # robodyn's build cache: the sidecar records the key and the library's SHA-256
        return sidecar.read_text().split()[1] == hashlib.sha256(lib.read_bytes()).hexdigest()

    built = Path(native._module().__file__)
    for path in (built, built.with_suffix(".sha256")):
        shutil.copy2(path, tmp_path / path.name)
    compiled = []

    def compiler(argv, cwd, timeout=None, description=""):
        compiled.append(argv)
        shutil.copyfile(built, cwd / argv[argv.index("-o") + 1])
        return ""

    monkeypatch.setattr(build, "run_compiler", compiler)
    monkeypatch.setenv("ROBODYN_CACHE", str(tmp_path))
    monkeypatch.setattr(native, "WORKSPACE", Workspace())
    native._module()
    (lib,) = tmp_path.glob("rdgeneric_*.so")
    (digest,) = tmp_path.glob("rdgeneric_*.sha256")
    assert verified(lib, digest) and compiled == []  # the verified copy loaded as it is
    lib.unlink()  # a new file, as a foreign or corrupt entry would arrive (the loaded one stays mapped)
    lib.write_bytes(b"not a library")
    assert not verified(lib, digest)
    monkeypatch.setattr(native, "WORKSPACE", Workspace())
    module = native._module()
    assert len(compiled) == 1  # rebuilt
    assert verified(lib, digest) and native._module() is module and Path(module.__file__) == lib
    robot = rd.load("planar2r")
    assert rel(native.gravity_torques(robot, [0.3, 0.2]), rd.gravity_torques(robot, [0.3, 0.2])) < 1e-14


def test_calls_while_switched_off_bind_nothing_and_the_kernels_serve_once_on(monkeypatch):
    """Calls with ROBODYN_NATIVE=0 bind nothing to the robot (and build nothing): once the variable is unset, the
    next call of the same robot runs on the kernels (single states, kinematics and free-flyer states alike), with
    the NumPy path's numbers to rounding."""
    import uuid

    from robodyn.dynamics import floating
    from robodyn.kinematics import forward_kinematics
    from robodyn.model.workspace import WORKSPACE
    from tests.support.floating import random_floating, random_free_state

    robot = random_robot(41, nf=5, tree=True).replace(name=f"random41-{uuid.uuid4().hex}")  # nothing bound yet
    free = random_floating(42).replace(name=f"random42-{uuid.uuid4().hex}")
    q = np.random.default_rng(41).uniform(-1, 1, robot.n)
    qf, vf, af = random_free_state(free.n, 42)
    bound = ((robot, native.RUNNERS["inertia_matrix"]), (robot, native.kinematics_key("frame_poses")),
             (free, floating._native_key("inverse_dynamics")))

    def calls():
        return (rd.inertia_matrix(robot, q), forward_kinematics(robot, q),
                rd.floating.floating_inverse_dynamics(free, qf, vf, af))

    monkeypatch.setenv("ROBODYN_NATIVE", "0")
    off = calls()
    assert all(WORKSPACE.get(r, key) is None for r, key in bound)
    monkeypatch.delenv("ROBODYN_NATIVE")
    on = calls()
    assert all(WORKSPACE.get(r, key) for r, key in bound)
    for a, b in zip(on, off):
        assert rel(a, b) < 1e-13


def test_compiled_model_threads_give_identical_results():
    """rd.compile's batched calls split states over threads in C; any count gives the single-threaded numbers
    (batch sizes around the 4 lanes and 256 states per thread; a strided view; gravity per state)."""
    robot = rd.load("planar3r")
    models = {t: rd.compile(robot, "inverse_dynamics", threads=t) for t in (1, 2, 3, 7, 10**9)}
    assert [f.threads for f in models.values()] == [1, 2, 3, 7, 10**9]
    one = models[1]
    for size in (0, 1, 127, 128, 1000, 2051):
        q, qd, qdd = states(robot, size)
        ref = one(q, qd, qdd)
        assert ref.shape == (size, robot.n)
        for f in models.values():
            np.testing.assert_array_equal(f(q, qd, qdd), ref)
        np.testing.assert_allclose(ref, rd.inverse_dynamics(robot, q, qd, qdd), rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(models[7](q[::2], qd[::2], qdd[::2]), ref[::2])
    two = models[2]
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
    """robodyn's generic kernels compile under -Wall -Wextra -Werror, with and without threads and NumPy's C API."""
    import shutil
    import subprocess
    import sysconfig

    cc = shutil.which("cc") or shutil.which("gcc")
    src = tmp_path / "kernels.c"
    src.write_text(native._source())  # the text the build compiles: kernels.c with parallel.h written in
    numpy_api = build.numpy_flags()
    for extra in ([], ["-DRD_THREADS", "-pthread"], numpy_api, ["-DRD_THREADS", "-pthread", *numpy_api]):
        proc = subprocess.run([cc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", *extra,
                               "-I" + sysconfig.get_paths()["include"], str(src)],
                              capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr


def test_compiled_lanes_equal_the_one_sample_function():
    """The 4-lane body (vector sin/cos) gives the one-sample function's numbers bit for bit, in every quadrant."""
    robot = rd.load("puma560")
    f = rd.compile(robot, "inverse_dynamics", threads=2)
    rng = np.random.default_rng(9)
    q = rng.uniform(-60, 60, (600, robot.n))
    q[:8] = np.pi / 2 * np.arange(-4, 4)[:, None]  # the quadrant boundaries themselves
    qd, qdd = rng.normal(size=(2, 600, robot.n))
    batch = f(q, qd, qdd)
    for k in range(0, 600, 37):
        np.testing.assert_array_equal(batch[k], f(q[k], qd[k], qdd[k]))
    assert rel(batch, rd.inverse_dynamics(robot, q, qd, qdd)) < 1e-12


@pytest.mark.parametrize("part", [slice(0, 3), slice(3, 6)], ids=["force", "moment"])
def test_wrench_rows_are_force_then_moment(part):
    """The wrench rows reach the kernels as robodyn's [f; m] (the layout of every 6-vector in kernels.c): a
    force-only or moment-only wrench on one link of a branched robot with prismatic and fixed frames (state s:
    link s) adds Jᵀ [0R_j f; 0R_j m] (Jacobian of O_j, rd.jacobian) to the inverse dynamics, and the direct
    dynamics and both derivative kernels equal the NumPy path (ROBODYN_NATIVE=0)."""
    robot = random_robot(21, nf=9, tree=True, fixed=True)
    assert set(robot.sigma) == {0, 1, 2} and np.any(robot.antecedent[1:] != np.arange(1, robot.nf))
    nf = robot.nf
    q, qd, qdd = states(robot, nf, 7)
    g = np.array([0.3, -0.8, -9.81])
    W = np.zeros((nf, nf, 6))
    W[np.arange(nf), np.arange(nf), part] = np.random.default_rng(7).normal(size=(nf, 3))
    added = native.inverse_dynamics(robot, q, qd, qdd, wrenches=W, gravity=g) - native.inverse_dynamics(
        robot, q, qd, qdd, gravity=g)
    T = rd.forward_kinematics(robot, q)
    for s in range(nf):
        R = T[s, s, :3, :3]
        expected = rd.jacobian(robot, q[s], frame=s + 1).T @ np.concatenate([R @ W[s, s, :3], R @ W[s, s, 3:]])
        assert rel(added[s], expected) < 1e-12
    assert np.max(np.abs(added)) > 1e-3  # the wrenches do reach the joints
    tau = native.inverse_dynamics(robot, q, qd, qdd, wrenches=W, gravity=g)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ROBODYN_NATIVE", "0")
        ref_fd = rd.forward_dynamics(robot, q, qd, tau, wrenches=W, gravity=g)
        ref_id = np.stack(rd.inverse_dynamics_derivatives(robot, q, qd, qdd, wrenches=W, gravity=g, friction=True), -3)
        ref_fdd = np.stack(rd.forward_dynamics_derivatives(robot, q, qd, tau, wrenches=W, gravity=g), -3)
    bound = max(1e-12 * np.linalg.cond(rd.inertia_matrix(robot, q)).max(), 1e-12)
    assert rel(native.forward_dynamics(robot, q, qd, tau, wrenches=W, gravity=g), ref_fd) < bound
    assert rel(ref_fd, qdd) < bound
    assert rel(native.inverse_dynamics_derivatives(robot, q, qd, qdd, wrenches=W, gravity=g, friction=True),
               ref_id) < 1e-12
    assert rel(native.forward_dynamics_derivatives(robot, q, qd, tau, wrenches=W, gravity=g), ref_fdd) < bound


def test_single_state_entries_read_numpy_arrays_and_other_buffers_alike():
    """The single-state entries read a NumPy array's data directly and anything else through the buffer protocol
    (an ndarray subclass, a memoryview of doubles): same numbers; a buffer of another type goes to the general path."""
    robot = rd.load("puma560")
    q, qd, qdd = np.random.default_rng(3).uniform(-1, 1, (3, robot.n))
    want = rd.inverse_dynamics(robot, q, qd, qdd)

    class Tagged(np.ndarray):
        pass

    got = native.single_state(robot, "inverse_dynamics", q.view(Tagged), memoryview(qd), qdd)
    np.testing.assert_array_equal(got, want)
    assert native.single_state(robot, "inverse_dynamics", memoryview(q.astype(np.float32)), qd, qdd) is None
    assert native.single_state(robot, "inverse_dynamics", q[::1].reshape(2, 3), qd, qdd) is None


def test_a_model_that_runs_out_of_memory_is_a_kernel_error_naming_memory(monkeypatch):
    """A MemoryError of the kernels' model(), when the robot is copied into them, reaches the caller as a
    KernelError (a RobodynError) naming memory and the way round it, not a raw exception."""
    import uuid

    robot = rd.load("puma560").replace(name=f"puma560-{uuid.uuid4().hex}")  # nothing bound to it yet

    def out_of_memory(ints, doubles):
        raise MemoryError

    monkeypatch.setattr(native._module(), "model", out_of_memory)
    q = np.zeros(robot.n)
    for run in (lambda: rd.inverse_dynamics(robot, q, q, q), lambda: native.inverse_dynamics(robot, q[None], q, q)):
        with pytest.raises(native.KernelError, match=rf"robot '{robot.name}': .* ran out of memory while copying the "
                                                     r"model \(6 frames\); free some memory, or set .*ROBODYN_NATIVE=0"):
            run()


_FAILING_ALLOCATIONS = """
import sys
import _testcapi
import robodyn as rd
from robodyn import native
from tests.support.random_robots import random_robot

robot = random_robot(5, nf=30, tree=True, fixed=False)
assert robot.n >= 26 and any(robot.antecedent[i] != i for i in range(robot.nf))  # a tree: its rows packed too
module = native._module()
ints, doubles = native.packed(robot)
module.model(ints, doubles)  # NumPy's buffer descriptions of the two arrays are made before any allocation fails
outcomes = []
for k in range(40):  # fail the k-th allocation alone
    _testcapi.set_nomemory(k, k + 1)
    try:
        module.model(ints, doubles)
        outcome = "ok"
    except MemoryError:
        outcome = "memory"
    except Exception as exc:
        outcome = type(exc).__name__
    finally:
        _testcapi.remove_mem_hooks()
    outcomes.append(outcome)
try:
    module.model(ints[:-1], doubles)
except ValueError as exc:
    outcomes.append(str(exc))
print(" ".join(outcomes))
"""


def test_the_kernels_model_says_out_of_memory_when_an_allocation_fails():
    """kernels.c's model(ints, doubles) checks the buffers' sizes before it allocates anything: each of its
    allocations made to fail in turn (CPython's _testcapi.set_nomemory, in a process of its own) is a MemoryError,
    never "inconsistent buffers", which stays the answer to buffers of the wrong size."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    pytest.importorskip("_testcapi")
    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(root / "src"), str(root)]))
    proc = subprocess.run([sys.executable, "-c", _FAILING_ALLOCATIONS], capture_output=True, text=True, env=env,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    *failed, wrong_size = proc.stdout.split(" ", 40)
    assert wrong_size.strip() == "model(): inconsistent buffers"
    # 8 of them the model's: rd_packed, ints, doubles, sc, the tree's frame, kind and rows, the capsule
    assert failed.count("memory") >= 8 and set(failed) == {"memory", "ok"}
    assert failed[-1] == "ok"  # past the last allocation
