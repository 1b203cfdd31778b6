"""Valid float64 arrays of every memory layout give the plain array's results (issue 25, item 9).

Unaligned arrays (``np.frombuffer`` with an offset, memory maps of logs), non-contiguous and Fortran-ordered
views, big-endian and read-only arrays are valid input: every batched public function accepts them, for one
state, a small batch and a batch large enough for the compiled generic kernels (robodyn.native), and returns the
plain array's numbers (bit for bit on the batched paths; to 1e-13 relative for single states, where a layout the
compiled single-state entry does not read goes to the straight-line Python kernel of the same recursion).
"""

from __future__ import annotations

import numpy as np
import pytest

import robodyn as rd
from robodyn import native
from robodyn.dynamics import executor
from tests.support.checks import assert_close
from tests.support.kernels import needs_kernels
from tests.support.random_robots import random_robot

ROBOT = random_robot(50, nf=6, tree=True, prismatic=True, fixed=True)
N = ROBOT.n


def _unaligned(a):
    buf = np.zeros(a.nbytes + 1, np.uint8)
    u = np.frombuffer(buf, np.float64, count=a.size, offset=1).reshape(a.shape)
    u[...] = a
    assert not u.flags.aligned
    return u


def _strided(a):
    big = np.zeros(a.shape[:-1] + (2 * a.shape[-1],))
    big[..., ::2] = a
    return big[..., ::2]


def _read_only(a):
    c = np.array(a)
    c.setflags(write=False)
    return c


def _memmap(a, path):
    """A read-only memory map of a log file whose float64 data start one byte in: unaligned."""
    path.write_bytes(b"#" + np.ascontiguousarray(a, dtype="<f8").tobytes())
    view = np.memmap(path, dtype="<f8", mode="r", offset=1, shape=a.shape)
    assert not view.flags.writeable and not view.flags.aligned
    return view


LAYOUTS = {
    "unaligned": lambda a, path: _unaligned(a),
    "strided": lambda a, path: _strided(a),
    "fortran": lambda a, path: np.asfortranarray(a),
    "big_endian": lambda a, path: a.astype(">f8"),
    # float64 with an explicit byte order (as pyarrow's and h5py's arrays carry): equal to np.float64, exported to C
    # through the buffer protocol as "<d", not "d"
    "explicit_little": lambda a, path: a.astype(np.dtype("<f8").newbyteorder("<")),
    # both at once: what scipy.io.loadmat returns for a MATLAB log (column-major, "<f8")
    "fortran_explicit_little": lambda a, path: np.asfortranarray(a).astype(np.dtype("<f8").newbyteorder("<"),
                                                                        order="F"),
    "read_only": lambda a, path: _read_only(a),
    "memmap": _memmap,
}

#: name -> (function, joint arguments)
FUNCTIONS = {
    **{f"inverse_dynamics[{m}]": (lambda r, q, qd, qdd, m=m: rd.inverse_dynamics(r, q, qd, qdd, method=m), 3)
       for m in ("newton_euler", "gibbs_appell", "spatial_operator")},
    **{f"inertia_matrix[{m}]": (lambda r, q, m=m: rd.inertia_matrix(r, q, method=m), 1)
       for m in ("composite", "walker_orin", "gibbs_appell")},
    **{f"forward_dynamics[{m}]": (lambda r, q, qd, tau, m=m: rd.forward_dynamics(r, q, qd, tau, method=m), 3)
       for m in ("recursive", "cholesky", "gibbs_appell", "spatial_operator")},
    "gravity_torques": (rd.gravity_torques, 1),
    "bias_torques": (rd.bias_torques, 2),
    "friction_torques": (lambda r, qd: rd.friction_torques(r, qd), 1),
    "regressor": (rd.regressor, 3),
    "forward_kinematics": (rd.forward_kinematics, 1),
    "jacobian": (rd.jacobian, 1),
    "kinetic_energy": (rd.kinetic_energy, 2),
    "coriolis_matrix": (rd.coriolis_matrix, 2),
}


def _states(batch, count, seed=1):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1.0, 1.0, batch + (N,)) for _ in range(count)]


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("batch", [(), (3,), (executor.MIN_BATCH + 5,)], ids=["single", "small", "large"])
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_every_layout_gives_the_plain_result(name, batch, layout, tmp_path):
    f, count = FUNCTIONS[name]
    plain = _states(batch, count)
    args = [LAYOUTS[layout](a, tmp_path / f"a{k}.bin") for k, a in enumerate(plain)]
    expected = f(ROBOT, *plain)
    got = f(ROBOT, *args)
    if batch == ():
        assert_close(got, expected, rtol=1e-13)
    else:
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_gravity_and_wrenches_of_every_layout(layout, tmp_path):
    q, qd, qdd = _states((executor.MIN_BATCH + 1,), 3, seed=2)
    g = np.array([0.3, -1.0, -9.7])
    W = np.random.default_rng(3).normal(size=(executor.MIN_BATCH + 1, ROBOT.nf, 6))
    expected = rd.inverse_dynamics(ROBOT, q, qd, qdd, wrenches=W, gravity=g)
    got = rd.inverse_dynamics(ROBOT, q, qd, qdd, wrenches=LAYOUTS[layout](W, tmp_path / "w.bin"),
                              gravity=LAYOUTS[layout](g, tmp_path / "g.bin"))
    np.testing.assert_array_equal(got, expected)
    for f, args in ((rd.inverse_dynamics, (q, qd, qdd)), (rd.gravity_torques, (q,)), (rd.bias_torques, (q, qd))):
        np.testing.assert_array_equal(f(ROBOT, *args, gravity=LAYOUTS[layout](g, tmp_path / "g1.bin")),
                                      f(ROBOT, *args, gravity=g))
    expected = rd.forward_dynamics(ROBOT, q, qd, qdd, gravity=np.broadcast_to(g, q.shape[:-1] + (3,)).copy())
    got = rd.forward_dynamics(ROBOT, q, qd, qdd,
                              gravity=LAYOUTS[layout](np.broadcast_to(g, q.shape[:-1] + (3,)).copy(), tmp_path / "G"))
    np.testing.assert_array_equal(got, expected)


@needs_kernels
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_the_generic_kernels_take_every_layout(layout, tmp_path):
    q, qd, qdd = _states((40,), 3, seed=4)
    for fn, args in ((native.inverse_dynamics, (q, qd, qdd)), (native.gravity_torques, (q,)),
                     (native.inertia_matrix, (q,)), (native.forward_dynamics, (q, qd, qdd)),
                     (native.regressor, (q, qd, qdd))):
        laid = [LAYOUTS[layout](a, tmp_path / f"n{k}.bin") for k, a in enumerate(args)]
        np.testing.assert_array_equal(fn(ROBOT, *laid), fn(ROBOT, *args))


def test_a_kernel_failure_is_a_robodyn_error():
    assert issubclass(native.KernelError, rd.RobodynError)
