"""Per-robot derived data, real immutability and rd.with_parameters."""

import copy
import pickle

import numpy as np
import pytest

import robodyn as rd
from tests.support.random_robots import random_robot, random_state


def _public_arrays(robot):
    """Every ndarray reachable from the robot's public attributes and its derived data (nested tuples included)."""
    found = {}

    def walk(name, value):
        if isinstance(value, np.ndarray):
            found[name] = value
        elif isinstance(value, tuple):
            for k, v in enumerate(value):
                walk(f"{name}[{k}]", v)

    for name in dir(robot):
        if not name.startswith("_"):
            value = getattr(robot, name)
            if not callable(value):
                walk(name, value)
    for name in vars(robot.derived):
        walk(f"derived.{name}", getattr(robot.derived, name))
    return found


@pytest.mark.parametrize("robot", [rd.load("puma560"), random_robot(3, nf=5, tree=True, fixed=True)], ids=repr)
def test_no_public_array_of_a_robot_can_be_written_or_made_writeable(robot):
    arrays = _public_arrays(robot)
    expected = {"params", "sigma", "antecedent", "d", "alpha", "theta", "r", "gamma", "b", "Ia", "Fc", "Fv", "Foff",
                "Fst", "kst", "Bst", "qlim", "gravity", "J", "MS", "M", "joint_frames", "derived.J", "derived.Ia",
                "derived.joint_frames"}
    assert expected <= set(arrays)
    assert any(k.startswith("derived.transforms[") for k in arrays)
    for name, a in arrays.items():
        before = a.copy()
        with pytest.raises(ValueError, match="read-only"):
            a.flat[0] = 1.0 + before.flat[0]
        with pytest.raises(ValueError, match="WRITEABLE"):
            a.setflags(write=True)
        np.testing.assert_array_equal(a, before, err_msg=name)


def test_copies_and_pickles_are_rebuilt_read_only_and_equal():
    robot = rd.load("rx90")
    for other in (pickle.loads(pickle.dumps(robot)), copy.copy(robot), copy.deepcopy(robot)):
        assert other is not robot
        np.testing.assert_array_equal(other.params, robot.params)
        assert other.derived.parent == robot.derived.parent
        with pytest.raises(ValueError):
            other.params.setflags(write=True)


def test_derived_indices_follow_the_antecedent_array():
    robot = random_robot(11, nf=6, tree=True, fixed=True)
    d = robot.derived
    assert d.parent == tuple(int(a) - 1 for a in robot.antecedent)
    np.testing.assert_array_equal(d.joint_frames, np.flatnonzero(robot.sigma != 2))
    assert [d.joint_of[i] for i in d.joint_frames] == list(range(robot.n))
    assert all(d.joint_of[i] == -1 for i in range(robot.nf) if robot.sigma[i] == 2)
    for i, kids in enumerate(d.children):
        assert kids == tuple(k for k in range(robot.nf) if robot.antecedent[k] == i + 1)
    np.testing.assert_array_equal(d.Ia, robot.Ia[robot.sigma != 2])
    for i, (C, p0, z) in enumerate(d.frames):
        T = rd.forward_kinematics(robot.replace(antecedent=np.zeros(robot.nf), theta=np.zeros(robot.nf),
                                                r=np.zeros(robot.nf)), np.zeros(robot.n))[i]
        # with θ = r = 0 and the base as antecedent, ^0T_j = [C, p0] exactly as the derived constants say
        np.testing.assert_allclose(T[:3, :3], C, atol=1e-15)
        np.testing.assert_allclose(T[:3, 3], p0, atol=1e-15)
        np.testing.assert_allclose(z, T[:3, 2], atol=1e-15)


def test_with_parameters_builds_a_new_robot_that_every_formulation_sees():
    puma = rd.load("puma560")
    heavier = rd.with_parameters(puma, 3, M=2 * puma.M[2])
    assert heavier is not puma and puma.M[2] == heavier.M[2] / 2
    expected = np.array(puma.params)
    expected[2, 9] *= 2
    np.testing.assert_array_equal(heavier.params, expected)
    q, qd, qdd = random_state(puma, 5)
    taus = [rd.inverse_dynamics(heavier, q, qd, qdd, method=m) for m in ("newton_euler", "gibbs_appell", "spatial_operator")]
    for t in taus[1:]:
        np.testing.assert_allclose(t, taus[0], rtol=1e-10, atol=1e-10)
    assert abs(taus[0][1] - rd.inverse_dynamics(puma, q, qd, qdd)[1]) > 1e-3
    # whole arrays and joint quantities
    both = rd.with_parameters(puma, params=heavier.params, Fv=np.full(6, 0.5))
    np.testing.assert_array_equal(both.params, heavier.params)
    np.testing.assert_array_equal(both.Fv, np.full(6, 0.5))
    assert rd.with_parameters(puma, 3, Ia=0.25).Ia[2] == 0.25


@pytest.mark.parametrize(
    "kwargs, match",
    [({"link": 2, "mass": 1.0}, "unknown parameter 'mass'"), ({"link": 9, "M": 1.0}, "link = 9"),
     ({"M": [1.0, 2.0]}, "M = .* give 6 numbers"), ({"link": 2, "M": -1.0}, "link 2 .* M = -1.0 is negative")],
)
def test_with_parameters_rejects_bad_input(kwargs, match):
    with pytest.raises(rd.ModelError, match=match):
        rd.with_parameters(rd.load("puma560"), **kwargs)


def test_compile_is_not_exported_by_star_import():
    namespace = {}
    exec("from robodyn import *", namespace)
    assert "compile" not in namespace and "with_parameters" in namespace
    assert callable(rd.compile) and rd.compile is not compile


def test_no_module_level_caches_keyed_by_robots_in_the_sources():
    """What depends on a robot lives on the robot (robot.derived), never in a module-level cache."""
    import pathlib

    src = pathlib.Path(rd.__file__).parent
    offenders = [str(p.relative_to(src)) for p in src.rglob("*.py")
                 if any(word in p.read_text(encoding="utf-8") for word in ("WeakKeyDictionary", "lru_cache", "functools.cache"))]
    assert offenders == []
