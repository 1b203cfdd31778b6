"""The Robot data class: derived views, immutability, replace(), repr, validation messages."""

import dataclasses

import numpy as np
import pytest

import robodyn as rd
from tests.support.random_robots import random_inertia, random_robot


def tree_robot():
    rng = np.random.default_rng(0)
    return rd.Robot(
        name="tree",
        sigma=[0, 1, 2, 0],
        antecedent=[0, 1, 1, 3],
        d=[0, 0.3, 0.1, 0.2],
        params=np.array([random_inertia(rng) for _ in range(4)]),
        Ia=[0.1, 0.2, 0, 0.3],
        frame_names=("a", "b", "tool", "c"),
        qlim=[[-1, 1], [0, 0.5], [-2, 2]],
    )


def test_derived_views():
    r = tree_robot()
    assert (r.nf, r.n) == (4, 3)
    assert r.joint_frames.tolist() == [0, 1, 3]
    assert r.children == ((1, 2), (), (3,), ())
    assert not r.is_serial
    assert random_robot(1, nf=3).is_serial
    p = r.params
    np.testing.assert_array_equal(r.MS, p[:, 6:9])
    np.testing.assert_array_equal(r.M, p[:, 9])
    np.testing.assert_array_equal(r.J[2], [[p[2, 0], p[2, 1], p[2, 2]], [p[2, 1], p[2, 3], p[2, 4]], [p[2, 2], p[2, 4], p[2, 5]]])
    assert r.antecedent.dtype == np.int64 and r.sigma.dtype == np.int64


def test_defaults_are_serial_zero_and_earth_gravity():
    r = rd.Robot(name="r", sigma=[0, 1])
    assert r.antecedent.tolist() == [0, 1]
    assert r.joint_names == ("j1", "j2")
    for key in ("gamma", "b", "alpha", "d", "theta", "r", "Ia", "Fc", "Fv", "Foff", "Fst", "kst", "Bst"):
        np.testing.assert_array_equal(getattr(r, key), [0.0, 0.0])
    np.testing.assert_array_equal(r.params, np.zeros((2, 10)))
    np.testing.assert_array_equal(r.gravity, [0, 0, -9.81])
    np.testing.assert_array_equal(r.qlim, [[-np.inf, np.inf]] * 2)


def test_robot_is_immutable_and_copies_its_inputs():
    params = np.array([random_inertia(np.random.default_rng(1))])
    d = np.array([0.5])
    r = rd.Robot(name="r", sigma=[0], params=params, d=d)
    params[0, 9] = 99.0
    d[0] = 7.0
    assert r.params[0, 9] != 99.0 and r.d[0] == 0.5
    for key in ("sigma", "antecedent", "d", "params", "Ia", "gravity", "qlim"):
        with pytest.raises(ValueError, match="read-only"):
            getattr(r, key)[0] = 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.name = "other"
    assert r.J[0, 0, 0] == r.params[0, 0]


def test_algorithms_do_not_mutate_the_robot_or_their_arguments():
    r = random_robot(3, nf=4, tree=True)
    before = {k: getattr(r, k).copy() for k in ("params", "d", "alpha", "Ia", "gravity")}
    q = np.ones(r.n)
    q0 = q.copy()
    rd.inverse_dynamics(r, q, q, q, wrenches=np.ones((r.nf, 6)))
    rd.jacobian(r, q)
    np.testing.assert_array_equal(q, q0)
    for k, v in before.items():
        np.testing.assert_array_equal(getattr(r, k), v)


def test_replace_returns_a_validated_copy():
    r = tree_robot()
    r2 = r.replace(name="tree2", d=[0, 0.5, 0.1, 0.2])
    assert r2.name == "tree2" and r2.d[1] == 0.5 and r.d[1] == 0.3
    assert not r2.d.flags.writeable
    with pytest.raises(rd.ModelError, match=r"robot 'tree', link 1 \(a\): field M = -1.0 is negative"):
        p = r.params.copy()
        p[0, 9] = -1.0
        r.replace(params=p)


def test_repr():
    assert repr(tree_robot()) == "Robot('tree', RP-R, n=3, nf=4, tree)"
    assert repr(rd.Robot(name="pr", sigma=[1, 0])) == "Robot('pr', PR, n=2, nf=2)"


def test_model_errors_name_frame_and_field():
    P = np.array([random_inertia(np.random.default_rng(2)) for _ in range(2)])
    with pytest.raises(rd.ModelError, match=r"robot 'x', frame 2: antecedent = 2; frames must be numbered so that 0 <= a\(j\) < j"):
        rd.Robot(name="x", sigma=[0, 0], antecedent=[0, 2], params=P)
    with pytest.raises(rd.ModelError, match=r"robot 'x', frame 1: antecedent = -1"):
        rd.Robot(name="x", sigma=[0, 0], antecedent=[-1, 0], params=P)
    with pytest.raises(rd.ModelError, match=r"robot 'x': antecedent must hold 2 integers"):
        rd.Robot(name="x", sigma=[0, 0], antecedent=[0, 0.5], params=P)
    with pytest.raises(rd.ModelError, match=r"robot 'x', frame 2: sigma = 3; use 0 \(revolute\), 1 \(prismatic\) or 2 \(fixed\)"):
        rd.Robot(name="x", sigma=[0, 3], params=P)
    with pytest.raises(rd.ModelError, match=r"sigma must be a non-empty 1-D array"):
        rd.Robot(name="x", sigma=[])
    with pytest.raises(rd.ModelError, match=r"robot 'x': params has shape \(2, 9\); expected \(2, 10\)"):
        rd.Robot(name="x", sigma=[0, 0], params=P[:, :9])
    with pytest.raises(rd.ModelError, match=r"robot 'x': alpha has shape \(3,\); expected \(2,\), one per frame"):
        rd.Robot(name="x", sigma=[0, 0], params=P, alpha=[0, 0, 0])
    with pytest.raises(rd.ModelError, match=r"robot 'x', frame 2: field d is not finite"):
        rd.Robot(name="x", sigma=[0, 0], params=P, d=[0, np.nan])
    with pytest.raises(rd.ModelError, match=r"robot 'x': gravity must be 3 finite numbers"):
        rd.Robot(name="x", sigma=[0, 0], params=P, gravity=[0, 0])
    with pytest.raises(rd.ModelError, match=r"robot 'x': qlim must be \(2, 2\) rows \[min, max\] with min <= max"):
        rd.Robot(name="x", sigma=[0, 0], params=P, qlim=[[1, 0], [0, 1]])
    with pytest.raises(rd.ModelError, match=r"robot 'x': frame_names needs 2 names \(one per frame\), got 1"):
        rd.Robot(name="x", sigma=[0, 0], params=P, frame_names=("a",))
    with pytest.raises(TypeError, match="joint_names"):  # derived from frame_names: not a constructor argument
        rd.Robot(name="x", sigma=[0, 0], params=P, joint_names=("a", "b"))
    with pytest.raises(rd.ModelError, match=r"robot 'x', link 2 \(j2\): field Fv = -0.5 is negative; it must be >= 0"):
        rd.Robot(name="x", sigma=[0, 0], params=P, Fv=[0, -0.5])
    with pytest.raises(rd.ModelError, match=r"robot 'x', link 2 \(j2\): field Fc = 1.0 on a fixed frame \(sigma = 2\)"):
        rd.Robot(name="x", sigma=[0, 2], params=P, Fc=[0, 1.0])
    with pytest.raises(rd.ModelError, match=r"robot 'x', link 2 \(j2\): field Ia = 0.2 on a fixed frame"):
        rd.Robot(name="x", sigma=[0, 2], params=P, Ia=[0, 0.2])


def test_nonphysical_links_are_rejected_on_construction():
    P = np.array([random_inertia(np.random.default_rng(3)) for _ in range(2)])
    bad = P.copy()
    bad[1, 9] = -2.0
    with pytest.raises(rd.NonPhysicalInertiaError, match=r"robot 'x', link 2 \(j2\): field M = -2.0 is negative"):
        rd.Robot(name="x", sigma=[0, 0], params=bad)
    # a thin rod about its centre with XX > YY + ZZ: triangle inequality violated
    rod = rd.standard_from_com(1.0, [0, 0, 0], np.diag([0.5, 0.1, 0.1]))
    with pytest.raises(rd.NonPhysicalInertiaError, match=r"robot 'x', link 1 \(j1\): principal moments .* triangle inequality"):
        rd.Robot(name="x", sigma=[0], params=[rod])
    nonpsd = rd.standard_from_com(1.0, [0, 0, 0], np.diag([-0.1, 0.1, 0.1]))
    with pytest.raises(rd.NonPhysicalInertiaError, match=r"link 1 \(j1\): inertia about the centre of mass .* not positive semi-definite"):
        rd.Robot(name="x", sigma=[0], params=[nonpsd])
    assert issubclass(rd.NonPhysicalInertiaError, rd.ModelError)
