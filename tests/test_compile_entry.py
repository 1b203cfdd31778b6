"""rd.compile's call of one state: the model's C entry evaluates a 1-D float64 state itself and hands every
other call, unchanged, to the general path (same results, same errors)."""

import dataclasses
import gc
import re
import weakref

import numpy as np
import pytest

import robodyn as rd
from robodyn.native import build
from robodyn.symbolic.compile import CompiledModel
from tests.support.kernels import needs_compiler
from tests.support.random_robots import random_robot, random_state

pytestmark = needs_compiler


def close(a, b, tol=1e-12):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype == np.float64
    np.testing.assert_allclose(a, b, rtol=0, atol=tol * max(1.0, np.abs(b).max()))


def numeric(robot, kind, parameters, args, wrenches=None, gravity=None):
    """The numeric function a compiled ``kind`` equals, on the same arguments."""
    if kind == "inverse_dynamics":
        return rd.inverse_dynamics(robot, *args, wrenches=wrenches, gravity=gravity)
    if kind == "bias":
        return rd.bias_torques(robot, *args, wrenches=wrenches, gravity=gravity)
    if kind == "gravity":
        return rd.gravity_torques(robot, *args, gravity=gravity)
    if kind == "inertia_matrix":
        return rd.inertia_matrix(robot, *args)
    if kind == "forward_dynamics":
        return rd.forward_dynamics(robot, *args, wrenches=wrenches, gravity=gravity)
    if parameters == "standard":
        return rd.regressor(robot, *args, gravity=gravity)
    return rd.base_parameters(robot, friction=False).regressor(*args, gravity=gravity)


def accelerations_close(robot, q, qd, tau, got, want, tol=1e-12, **kw):
    """Direct dynamics checked as tests/support/checks.py does, with wrenches/gravity: the inverse dynamics of
    ``got`` gives back τ (backward error), and |got − want| ≤ tol · cond(A) · max(1, |want|)."""
    A = rd.inertia_matrix(robot, q)
    scale = max(1.0, float(np.abs(tau).max()), float(np.abs(A @ got).max()))
    assert np.abs(rd.inverse_dynamics(robot, q, qd, got, **kw) - tau).max() <= tol * scale
    assert np.abs(got - want).max() <= tol * np.linalg.cond(A) * max(1.0, float(np.abs(want).max()))


JOINTS = {"inverse_dynamics": 3, "bias": 2, "gravity": 1, "inertia_matrix": 1, "forward_dynamics": 3, "regressor": 3}


@pytest.mark.parametrize("parameters", ["standard", pytest.param("base", marks=pytest.mark.slow)])
def test_single_state_of_every_kind_equals_batch_and_numeric(parameters):
    """planar3r (a fixed tip frame: nf = 4 wrench rows for n = 3 joints): for every kind, one 1-D state is
    served by the C entry and equals row k of the batched call and the numeric function, with and without
    gravity= and (kinds that take them) wrenches=."""
    robot = rd.load("planar3r")
    q, qd, qdd = random_state(robot, 11, (3,))
    tau = rd.inverse_dynamics(robot, q, qd, qdd)
    g = np.array([0.4, -2.0, -9.6])
    W = np.random.default_rng(4).normal(size=(3, robot.nf, 6))
    for kind, joints in JOINTS.items():
        f = rd.compile(robot, kind, parameters=parameters)
        args = ((q, qd, tau) if kind == "forward_dynamics" else (q, qd, qdd))[:joints]
        gravities = [None, g] if kind != "inertia_matrix" else [None]
        wrenches = [None, W] if kind in ("inverse_dynamics", "bias", "forward_dynamics") else [None]
        for grav in gravities:
            for wr in wrenches:
                kw = {k: v for k, v in (("gravity", grav), ("wrenches", wr)) if v is not None}
                batch = f(*args, **kw)
                want = numeric(robot, kind, parameters, args, wr, grav)
                for k in range(3):
                    one = [a[k] for a in args]
                    kw1 = dict(kw, **({"wrenches": wr[k]} if wr is not None else {}))
                    fast = f._single_state(one, grav, kw1.get("wrenches"))
                    assert fast is not None, (kind, grav is not None, wr is not None)  # served by the C entry
                    single = f(*one, **kw1)
                    close(single, batch[k])
                    np.testing.assert_array_equal(fast, single)
                    if kind == "forward_dynamics":
                        accelerations_close(robot, q[k], qd[k], tau[k], single, want[k], wrenches=kw1.get("wrenches"),
                                            gravity=grav)
                    else:
                        close(single, want[k])


def outcome(fn, *args, **kwargs):
    """("ok", result) or ("error", exception type, message) of ``fn(*args, **kwargs)``."""
    try:
        return ("ok", fn(*args, **kwargs))
    except Exception as exc:  # noqa: BLE001 - the outcome is compared whatever it is
        return ("error", type(exc), str(exc))


def same_outcome(a, b):
    assert a[0] == b[0], (a, b)
    if a[0] == "error":
        assert a[1:] == b[1:]
    else:
        assert type(a[1]) is type(b[1]) and a[1].shape == b[1].shape and a[1].dtype == b[1].dtype
        np.testing.assert_array_equal(a[1], b[1])


def _bad_calls(robot):
    n, nf = robot.n, robot.nf
    q, qd, qdd = random_state(robot, 2)
    W = np.random.default_rng(1).normal(size=(nf, 6))
    nan, swapped = q.copy(), q.astype(">f8")
    nan[1] = np.nan
    inf = qdd.copy()
    inf[0] = -np.inf
    strided = np.repeat(q, 2)[::2]
    return {  # name: (args, kwargs, expected: regex of the InputError or the result's (shape, dtype))
        "q too long": ((np.zeros(n + 1), qd, qdd), {}, rf"argument 'q' has shape \({n + 1},\)"),
        "int q": ((np.arange(n), qd, qdd), {}, ((n,), np.float64)),
        "float32": ((q.astype(np.float32), qd.astype(np.float32), qdd.astype(np.float32)), {}, ((n,), np.float32)),
        "non-contiguous q": ((strided, qd, qdd), {}, ((n,), np.float64)),
        "byte-swapped q": ((swapped, qd, qdd), {}, ((n,), np.float64)),
        "list q": ((list(q), qd, qdd), {}, ((n,), np.float64)),
        "NaN in q": ((nan, qd, qdd), {}, "argument 'q' contains NaN or inf"),
        "inf in qdd": ((q, qd, inf), {}, "argument 'qdd' contains NaN or inf"),
        "0-d q": ((np.float64(0.5), qd, qdd), {}, r"argument 'q' has shape \(\)"),
        "2-D single row": ((q[None], qd[None], qdd[None]), {}, ((1, n), np.float64)),
        "one row and 1-D": ((q[None], qd, qdd), {}, ((1, n), np.float64)),
        "unknown keyword": ((q, qd, qdd), {"torque": 1}, r"called as f\(q, qd, qdd, wrenches=None, gravity=None, \*, out=None\)"),
        "joint as keyword too": ((q, qd, qdd), {"q": q}, "multiple values for argument 'q'"),
        "too few": ((q, qd), {}, "missing a required argument: 'qdd'"),
        "too many": ((q, qd, qdd, None, None, 1), {}, "too many positional arguments"),
        "keywords only": ((), {"q": q, "qd": qd, "qdd": qdd}, ((n,), np.float64)),
        "wrenches positional": ((q, qd, qdd, W), {}, ((n,), np.float64)),
        "gravity (2,)": ((q, qd, qdd), {"gravity": np.zeros(2)}, r"argument 'gravity' has shape \(2,\)"),
        "gravity NaN": ((q, qd, qdd), {"gravity": np.array([0.0, np.nan, -9.8])}, "'gravity' contains NaN"),
        "gravity list": ((q, qd, qdd), {"gravity": [0.0, 1.0, -9.8]}, ((n,), np.float64)),
        "gravity int": ((q, qd, qdd), {"gravity": np.array([0, 0, -10])}, ((n,), np.float64)),
        "gravity batch of one": ((q, qd, qdd), {"gravity": np.array([[0.0, 1.0, -9.8]])}, ((1, n), np.float64)),
        "wrenches flat": ((q, qd, qdd), {"wrenches": W.reshape(-1)}, rf"argument 'wrenches' has shape \({nf * 6},\)"),
        "wrenches batch of one": ((q, qd, qdd), {"wrenches": W[None]}, ((1, n), np.float64)),
        "wrenches transposed": ((q, qd, qdd), {"wrenches": np.ascontiguousarray(W.T).T}, ((n,), np.float64)),
        "wrenches NaN": ((q, qd, qdd), {"wrenches": np.full((nf, 6), np.nan)}, "'wrenches' contains NaN"),
        "wrenches text": ((q, qd, qdd), {"wrenches": "none"}, "argument 'wrenches' has dtype"),
        "object q": ((np.array([None] * n), qd, qdd), {}, "argument 'q' has dtype object"),
    }


BAD = list(_bad_calls(rd.load("planar3r")))


@pytest.mark.parametrize("case", BAD)
def test_every_other_call_takes_the_general_path(case):
    """Each call that is not one plain 1-D float64 state is declined by the C entry (``fast`` gives None) and
    gives exactly the general path's result or error, which is what every call gave before the entry."""
    robot = rd.load("planar3r")
    f = rd.compile(robot, "inverse_dynamics")
    f(*random_state(robot, 0), wrenches=np.zeros((robot.nf, 6)))  # both variants built: they could serve
    args, kwargs, expected = _bad_calls(robot)[case]
    assert f._entry.fast(*args, **kwargs) is None
    got = outcome(f, *args, **kwargs)
    same_outcome(got, outcome(CompiledModel._general, f, *args, **kwargs))
    if isinstance(expected, str):
        assert got[0] == "error" and got[1] is rd.InputError, got
        assert re.search(expected, got[2]), got[2]
    else:
        assert got[0] == "ok", got
        assert (got[1].shape, got[1].dtype) == expected
        rows = [np.broadcast_to(np.asarray(a, dtype=float), got[1].shape) for a in
                (args if args else (kwargs["q"], kwargs["qd"], kwargs["qdd"]))[:3]]
        extra = {k: np.asarray(v, dtype=float) for k, v in kwargs.items() if k in ("gravity", "wrenches")}
        if len(args) == 4:
            extra["wrenches"] = args[3]
        close(np.asarray(got[1], dtype=np.float64), rd.inverse_dynamics(robot, *rows, **extra), 1e-6 if
              got[1].dtype == np.float32 else 1e-12)


def test_accepted_forms_of_one_state():
    """Read-only arrays, contiguous views into larger arrays and ndarray subclasses are 1-D float64 states
    too: served in C, with the general path's numbers."""
    robot = rd.load("planar3r")
    f = rd.compile(robot, "inverse_dynamics")
    q, qd, qdd = random_state(robot, 5)
    big = np.concatenate([q, qd, qdd])
    frozen = q.copy()
    frozen.flags.writeable = False

    class Tagged(np.ndarray):
        pass

    for args in [(frozen, qd, qdd), (big[:3], big[3:6], big[6:]), (q.view(Tagged), qd, qdd)]:
        fast = f._entry.fast(*args)
        assert type(fast) is np.ndarray
        np.testing.assert_array_equal(fast, CompiledModel._general(f, *args))
        close(f(*args), rd.inverse_dynamics(robot, q, qd, qdd))


def test_kinds_without_gravity_or_wrenches_refuse_them():
    robot = rd.load("planar3r")
    q = random_state(robot, 1)[0]
    inm, gra = rd.compile(robot, "inertia_matrix"), rd.compile(robot, "gravity")
    with pytest.raises(rd.InputError, match=r"called as f\(q, \*, out=None\): got an unexpected keyword argument 'gravity'"):
        inm(q, gravity=np.array([0.0, 0.0, -9.81]))
    with pytest.raises(rd.InputError, match=r"called as f\(q, gravity=None, \*, out=None\): got an unexpected keyword argument "
                                            "'wrenches'"):
        gra(q, wrenches=None)
    close(gra(q, gravity=None), rd.gravity_torques(robot, q))


def test_same_robot_content_two_names_are_independent():
    """Two robots that differ by name share one compiled library, but each CompiledModel has its own entry:
    errors name its own robot, the wrench variant one builds is not the other's, and deleting one leaves
    the other working (the entry's reference to its model is collected with it)."""
    robot = rd.load("planar2r")
    twin = dataclasses.replace(robot, name="twin")
    a, b = rd.compile(robot, "idm"), rd.compile(twin, "idm")
    assert type(a) is not type(b) and isinstance(a, CompiledModel) and isinstance(b, CompiledModel)
    assert type(a._entry) is type(b._entry) and a._entry is not b._entry  # one library, two entries
    q, qd, qdd = random_state(robot, 3)
    with pytest.raises(rd.InputError, match="robot 'planar2r' has n = 2"):
        a(np.zeros(3), qd, qdd)
    with pytest.raises(rd.InputError, match="robot 'twin' has n = 2"):
        b(np.zeros(3), qd, qdd)
    W = np.random.default_rng(0).normal(size=(robot.nf, 6))
    assert a._single_state((q, qd, qdd), wrenches=W) is None  # the wrench variant is built on first use
    close(a(q, qd, qdd, wrenches=W), rd.inverse_dynamics(robot, q, qd, qdd, wrenches=W))
    assert a._single_state((q, qd, qdd), wrenches=W) is not None
    assert b._single_state((q, qd, qdd), wrenches=W) is None
    close(b(q, qd, qdd, wrenches=W), rd.inverse_dynamics(robot, q, qd, qdd, wrenches=W))
    gone = weakref.ref(a)
    del a
    gc.collect()
    assert gone() is None
    with pytest.raises(rd.InputError, match="robot 'twin' has n = 2"):
        b(q, np.ones(1), qdd)
    close(b(q, qd, qdd), rd.inverse_dynamics(robot, q, qd, qdd))


def test_parameters_input_single_state():
    """params= is a keyword of the entry too; inverse dynamics is linear in the parameters (Khalil & Dombre
    [9.110]), so scaling every one of them (friction and rotor inertia included) scales the torques."""
    robot = rd.load("planar2r")
    f = rd.compile(robot, "idm", parameters_input=True)
    q, qd, qdd = random_state(robot, 6)
    p = 1.3 * f.nominal_parameters
    assert f._entry.fast(q, qd, qdd, params=p) is not None
    close(f(q, qd, qdd), rd.inverse_dynamics(robot, q, qd, qdd))
    close(f(q, qd, qdd, params=p), 1.3 * rd.inverse_dynamics(robot, q, qd, qdd))
    close(f(q, qd, qdd, params=p), f(q[None], qd[None], qdd[None], params=p)[0])
    W = np.random.default_rng(2).normal(size=(robot.nf, 6))
    with_w = f(q, qd, qdd, wrenches=W, params=p)  # builds the wrench variant; its params come from the keyword too
    assert f._entry.fast(q, qd, qdd, wrenches=W, params=p) is not None
    close(with_w, f(q[None], qd[None], qdd[None], wrenches=W[None], params=p[None])[0])
    close(f(q, qd, qdd, wrenches=W) - f(q, qd, qdd), rd.inverse_dynamics(robot, q, qd, qdd, wrenches=W)
          - rd.inverse_dynamics(robot, q, qd, qdd))
    with pytest.raises(rd.InputError, match=r"argument 'params' has shape \(3,\)"):
        f(q, qd, qdd, params=np.ones(3))


def test_threads_still_split_batches():
    robot = rd.load("planar3r")
    f, one = rd.compile(robot, "idm", threads=2), rd.compile(robot, "idm", threads=1)
    assert (f.threads, one.threads) == (2, 1)
    q, qd, qdd = random_state(robot, 8, (300,))
    batch = f(q, qd, qdd)
    np.testing.assert_array_equal(batch, one(q, qd, qdd))
    np.testing.assert_array_equal(np.array([f(*s) for s in zip(q, qd, qdd)]), batch)


@pytest.mark.parametrize("missing", ["python", "numpy"])
def test_without_python_or_numpy_headers_the_cffi_path_serves_single_states(missing, monkeypatch, tmp_path):
    """No Python.h (or no NumPy headers): the library has no CPython module, the model is a plain
    CompiledModel, and one state goes through the general (cffi) path with the same numbers and errors."""
    monkeypatch.setenv("ROBODYN_CACHE", str(tmp_path))
    monkeypatch.setattr(build, "python_flags" if missing == "python" else "numpy_flags", lambda: [])
    robot = rd.load("planar2r")
    f = rd.compile(robot, "gravity")
    assert type(f) is CompiledModel and f._entry is None and f._single_state((np.zeros(2),)) is None
    q = random_state(robot, 9)[0]
    g = np.array([1.0, 0.0, -9.0])
    close(f(q), rd.gravity_torques(robot, q))
    close(f(q, gravity=g), rd.gravity_torques(robot, q, gravity=g))
    with pytest.raises(rd.InputError, match="'q' contains NaN"):
        f(np.array([0.0, np.nan]))
    assert len(list(tmp_path.glob("rd_*.so"))) == 1


def test_numpy_backend_has_no_entry():
    robot = rd.load("planar2r")
    f = rd.compile(robot, "gravity", backend="numpy")
    q = random_state(robot, 4)[0]
    assert type(f) is CompiledModel and f._entry is None
    close(f(q), rd.gravity_torques(robot, q))


@pytest.mark.parametrize("seed", [0, 1])
def test_random_robots_single_state_with_wrenches_and_gravity(seed):
    """Random robots (a tree with a fixed frame for seed 0, a serial chain with a fixed frame for seed 1; the
    models test_codegen_c compiles): one state with wrenches= (nf, 6) and gravity= equals the batch row and
    rd.inverse_dynamics."""
    robot = random_robot(seed, tree=seed % 2 == 0, fixed=True)
    q, qd, qdd = random_state(robot, seed, (2,))
    rng = np.random.default_rng(seed)
    W, g = rng.normal(size=(2, robot.nf, 6)), rng.normal(size=3)
    f = rd.compile(robot, "idm")
    batch = f(q, qd, qdd, wrenches=W, gravity=g)
    for k in range(2):
        single = f(q[k], qd[k], qdd[k], wrenches=W[k], gravity=g)
        np.testing.assert_array_equal(f._single_state((q[k], qd[k], qdd[k]), g, W[k]), single)
        close(single, batch[k])
        close(single, rd.inverse_dynamics(robot, q[k], qd[k], qdd[k], wrenches=W[k], gravity=g))
