"""The kernels' pool of result blocks (robodyn.native.result_array): a large batch result freed by the user is kept
and handed to the next result of the same size, bounded in blocks and bytes, and the results are those of a fresh
array bit for bit."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from numpy._core.multiarray import get_handler_name

import robodyn as rd
from robodyn import native
from tests.support.floating import random_floating
from tests.support.kernels import needs_kernels
from tests.support.random_robots import random_robot

pytestmark = needs_kernels

MIB = 1 << 20
BLOCKS, BYTES = 4, 512 * MIB  # RD_POOL_BLOCKS, RD_POOL_BYTES of kernels.c


def address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def owner(a: np.ndarray) -> np.ndarray:
    """The array that owns ``a``'s memory."""
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def kept() -> tuple[int, int]:
    return native._module().pool(False)


@pytest.fixture(autouse=True)
def empty_pool():
    native.release_memory()
    yield
    native.release_memory()


def test_a_freed_result_is_handed_to_the_next_of_its_size():
    a = native.result_array((1000, 25, 25))  # 5 MB
    assert a.shape == (1000, 25, 25) and a.dtype == np.float64
    assert a.flags.c_contiguous and a.flags.owndata and a.flags.writeable
    assert get_handler_name(a) == "robodyn_result_pool"
    where = address(a)
    del a
    assert kept() == (1, 5_000_000)
    b = native.result_array((5000, 125))  # the same bytes, another shape
    assert address(b) == where and kept() == (0, 0)
    del b
    assert native.release_memory() == (1, 5_000_000) and kept() == (0, 0)


def test_release_memory_builds_nothing(monkeypatch):
    """Where the kernels are not loaded in this process there is no pool to empty: nothing is built to find out."""
    monkeypatch.setattr(native, "_MODULE_NAME", "robodyn.native._not_loaded_here")
    monkeypatch.setattr(native, "_load", lambda: pytest.fail("release_memory built the kernels"))
    assert native.release_memory() == (0, 0)


def test_small_results_are_plain_numpy_arrays():
    a = native.result_array((100, 6))
    assert get_handler_name(a) == get_handler_name(np.empty(3))
    del a
    assert kept() == (0, 0)


def test_the_pool_is_bounded_in_blocks_and_bytes():
    arrays = [native.result_array((s * MIB // 8,)) for s in (5, 6, 7, 8, 9, 10)]
    while arrays:  # freed in the order made
        del arrays[0]
    blocks, size = kept()
    assert blocks == BLOCKS and size == (7 + 8 + 9 + 10) * MIB  # the oldest evicted first
    big = [native.result_array((200 * MIB // 8,)) for _ in range(3)]  # never touched: no memory used
    del big
    assert kept() == (2, 400 * MIB)  # 3 x 200 MiB would pass 512 MiB: 2 kept, the rest returned
    over = native.result_array((BYTES // 8 + 1,))
    del over
    assert kept() == (2, 400 * MIB)  # a block larger than the whole pool is never kept


def test_batched_results_from_the_pool_equal_fresh_ones():
    robot = random_robot(3, nf=25)
    q = np.random.default_rng(4).uniform(-2, 2, (1200, robot.n))  # 1200 x 25 x 25 doubles: 6 MB
    first = rd.inertia_matrix(robot, q)
    assert get_handler_name(first.base) == "robodyn_result_pool"  # first: a (1200, 25, 25) view of the block
    reference = first.copy()
    where = address(first)
    first[...] = np.nan  # a stale block must be overwritten entirely
    del first
    again = rd.inertia_matrix(robot, q)
    assert address(again) == where
    assert np.array_equal(again, reference)
    np.testing.assert_array_equal(reference, rd.inertia_matrix(robot, q, out=np.empty_like(reference)))


def _tree():
    robot = random_robot(5, nf=20, tree=True, fixed=True)
    return robot.replace(Ia=np.where(robot.sigma == 2, 0.0, 0.05))


CALLS = {  # each result of a call is at least 4.6 MB on the tree above (n <= 20 joints)
    "inverse_dynamics": lambda r, q: rd.inverse_dynamics(r, q, q, q),
    "inertia_matrix": lambda r, q: rd.inertia_matrix(r, q),
    "forward_dynamics": lambda r, q: rd.forward_dynamics(r, q, q, q),
    "inverse_dynamics_derivatives": lambda r, q: rd.inverse_dynamics_derivatives(r, q, q, q),
    "forward_dynamics_derivatives": lambda r, q: rd.forward_dynamics_derivatives(r, q, q, q),
    "jacobian": lambda r, q: rd.kinematics.jacobian(r, q),
    # 11 nf (+ 3 n) columns: 2000 states make 90 MB
    "regressor": lambda r, q: rd.regressor(r, q[:2000], q[:2000], q[:2000]),
    # from 24 joints, A⁻¹ applied by the articulated-body recursion, its results gathered a part at a time
    "forward_dynamics_derivatives, 34 joints": lambda r, q: rd.forward_dynamics_derivatives(r, *(q[:800],) * 3),
}


@pytest.mark.parametrize("name", sorted(CALLS) + ["floating_inertia_matrix"])
def test_every_entry_overwrites_a_stale_block(name):
    """A block handed back by the pool holds the last result's numbers (here NaN): every kernel that takes its
    results from the pool writes every entry, the zeros of a tree's unrelated joints included."""
    robot = _tree() if "34 joints" not in name else random_robot(7, nf=34, tree=True)
    if name == "floating_inertia_matrix":
        robot = robot.replace(base="floating", base_params=random_floating(5).base_params)
        rng = np.random.default_rng(6)
        quat = rng.normal(size=(2000, 4))
        q = np.concatenate([rng.normal(size=(2000, 3)), quat / np.linalg.norm(quat, axis=1, keepdims=True),
                            rng.uniform(-2, 2, (2000, robot.n))], axis=1)
        call = rd.floating.floating_inertia_matrix
    else:
        q = np.random.default_rng(6).uniform(-2, 2, (30000, robot.n))
        call = CALLS[name]
    first = call(robot, q)
    parts = first if isinstance(first, tuple) else (first,)  # the derivatives: views of one (count, k, n, n) block
    block = owner(parts[0])
    assert block.nbytes >= 4 * MIB and get_handler_name(block) == "robodyn_result_pool"
    reference, where = [p.copy() for p in parts], address(block)
    block[...] = np.nan
    del first, parts, block  # nothing else holds the block: it goes back to the pool
    again = call(robot, q)
    again = again if isinstance(again, tuple) else (again,)
    assert address(owner(again[0])) == where
    for p, want in zip(again, reference):
        np.testing.assert_array_equal(p, want)


def test_threads_freeing_and_taking_blocks():
    """Results made and dropped on several threads at once: every one has its own memory while it lives, and the
    pool stays within its bounds."""
    errors = []

    def work(seed):
        try:
            for k in range(40):
                a = native.result_array((MIB // 8 * (4 + (seed + k) % 3),))
                a[::512] = seed
                if not np.all(a[::512] == seed):
                    errors.append(seed)
                del a
        except Exception as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    blocks, size = kept()
    assert blocks <= BLOCKS and size <= BYTES
