"""Batches, identification and simulation sweeps beyond one machine's memory, on Dask.

Dask (``dask.array``, ``dask.distributed``) is the engine: with nothing configured the functions here run on
Dask's local threaded scheduler; after ``distributed.Client(address)`` (a laptop's ``LocalCluster``, a SLURM/PBS
cluster through dask-jobqueue, Kubernetes, a cloud) the same calls run on that cluster. Install with the ``dask``
extra: ``pip install 'robodyn[dask]'``; ``import robodyn`` does not import Dask.

- Batched dynamics: :func:`robodyn.inverse_dynamics`, :func:`robodyn.forward_dynamics`,
  :func:`robodyn.inertia_matrix`, :func:`robodyn.gravity_torques`, :func:`robodyn.bias_torques` and
  :func:`robodyn.regressor` take ``dask.array`` arrays themselves and return lazy ones (this module's functions of
  those names are deprecated aliases).  :func:`jacobian`, :func:`inverse_dynamics_derivatives` and
  :func:`forward_dynamics_derivatives` here take ``dask.array`` (or NumPy) arrays of shape (..., n), chunked along
  the batch axes, and return ``dask.array`` results lazily: each block is computed by robodyn's own function of the
  same name (``map_blocks``), so results equal the in-memory functions to rounding. The robot is one task of the
  graph (plain frozen data): a worker receives it once, whatever the number of blocks, and builds the compiled
  kernels (:mod:`robodyn.native`) once per process.
- :func:`identify`: the identification of :func:`robodyn.identify` ("ols", "wls", "irls", "physical"; its
  position terms, the rows of clipped torques left out) on samples that need not fit in memory, read chunk-wise
  with :func:`read_samples` (Parquet, HDF5, Zarr, or a folder of joint logs).
- A fleet of robots of one model (``identify(..., per_robot=("friction", "offsets"))``): shared inertial base
  parameters, each robot's own friction and torque offsets, without forming the block regressor (see
  :func:`identify`).
- :func:`simulate_many`: a sweep of :func:`robodyn.simulate` runs as Dask tasks, gathered into one NumPy structure.

**Reduction of the identification.** Each chunk of samples gives, for every joint j, the Gram matrix
[W_j y_j]ᵀ [W_j y_j] ((b + 1) × (b + 1)) of its regressor rows W_j and torques y_j — the reduction
:func:`robodyn.identify` uses in memory — and only these n small matrices leave the worker. They are added in a
tree with compensated (TwoSum) addition, so the merge adds no rounding error whatever the number of chunks; the
sum is factored once (an eigendecomposition of G_j with its columns scaled to unit norm gives R_j with
R_jᵀ R_j = G_j, then a QR of the stacked R_j). The estimate equals the in-memory one to rounding; its relative
accuracy is ε cond(W_s)² (W_s: W with unit columns) — 1e-10 for the cond(W_s) ≲ 10³ of an excitation
trajectory, far below measurement noise — and residual norms carry ε (‖y‖ / ‖y − W θ‖)². ``reduction="tsqr"`` replaces the Gram matrices by a communication-avoiding tall-skinny QR
(Demmel et al. 2012: a Householder R factor of [W_j y_j] per chunk, merged by QR of stacked pairs): accuracy
ε cond(W_s), for ill-conditioned data, at about 6 times the reduction's cost (a QR of a chunk against a matrix
product). Neither ever forms W: the standard deviations and cond(W) come from the (b + 1) × (b + 1) factor.
``method="physical"`` solves its semidefinite program on that factor alone
(:func:`robodyn.identification.dynamic.physical_fit`): its size does not grow with the samples.
"""

from __future__ import annotations

import os
import re
import sys
import warnings
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from robodyn.errors import InputError, RobodynError
from robodyn.identification.dynamic import (BLOCK, RANK_TOL, Identification, IdentificationError, check_rank,
                                           check_position_terms, fit_factors, fit_failure, joint_residuals,
                                           merge_options, noise_floor, position_columns, position_names,
                                           position_shares, robust_weights, selected_position_joints, solve_factor,
                                           stack_factors, standard_to_base)
from robodyn.model.robot import Robot
from robodyn.progress import progress_enabled

#: Default rows (states) per Dask chunk when NumPy arrays are given.
CHUNK = 1 << 17
#: Factors merged per task of the reduction tree.
FAN_IN = 8
#: The batched functions: name → (module, attribute) of the in-memory function each block runs.
_FUNCTIONS = MappingProxyType({
    "jacobian": ("robodyn.kinematics", "jacobian"),
    "inverse_dynamics_derivatives": ("robodyn.dynamics.derivatives", "inverse_dynamics_derivatives"),
    "forward_dynamics_derivatives": ("robodyn.dynamics.derivatives", "forward_dynamics_derivatives"),
})


def _dask():
    """dask.array, or RobodynError naming the extra to install."""
    try:
        import dask
        import dask.array as da
    except ImportError:
        raise RobodynError("robodyn.distributed needs Dask; install it with: pip install 'robodyn[dask]'") from None
    return dask, da


def _check_robot(robot) -> None:
    if not isinstance(robot, Robot):
        raise InputError(f"robot must be a robodyn Robot (rd.load(...)), got {type(robot).__name__}")


def _shipped(value):
    """``value`` as one task of the graph (the same key for equal values): sent once to each worker that needs it."""
    dask, _ = _dask()
    return dask.delayed(value, pure=True, traverse=False)


# ---------------------------------------------------------------- batched dynamics

def _aligned(*arrays) -> list:
    """The blocks, each copied when its data is not aligned.

    A block received from another worker can lie at an address that is not a multiple of 8 (a slice of a network
    frame); NumPy exports such a buffer with the format "=d", which robodyn.native's buffer check refuses.
    """
    return [a if not isinstance(a, np.ndarray) or a.flags.aligned else a.copy() for a in arrays]


def _run(name: str, robot, *arrays, stack: int = 0, **kwargs):
    """The in-memory function ``name`` on one block; tuples of results stacked on a new axis −3 (``stack`` > 0)."""
    from importlib import import_module

    module, attr = _FUNCTIONS[name]
    arrays = _aligned(*arrays)
    out = getattr(import_module(module), attr)(robot, *arrays, **kwargs)
    return np.stack(out, axis=-3) if stack else out


def _joint_inputs(robot, names, values, chunk):
    """The arrays as dask arrays of one common shape (..., n), the joint axis in one chunk."""
    _, da = _dask()
    n = robot.n
    arrays = []
    for name, x in zip(names, values):
        if not isinstance(x, da.Array):
            x = np.asarray(x)
            if x.dtype.kind not in "biuf":
                raise InputError(f"{name} has dtype {x.dtype}; give real numbers")
            x = da.from_array(x, chunks=(chunk,) * (x.ndim - 1) + (-1,) if x.ndim else ())
        if x.ndim == 0 or x.shape[-1] != n:
            raise InputError(f"{name} has shape {x.shape}; the last axis must be the n = {n} joints of robot "
                             f"'{robot.name}'")
        arrays.append(x)
    try:
        arrays = da.broadcast_arrays(*arrays)
    except ValueError:
        raise InputError(f"{', '.join(names)} have shapes {', '.join(str(a.shape) for a in arrays)}, which do not "
                         "broadcast") from None
    first = arrays[0].rechunk({arrays[0].ndim - 1: -1})
    return [first] + [a.rechunk(first.chunks) for a in arrays[1:]]


def _batched(name: str, robot, names, values, tail=None, outputs: int = 0, chunk: int = CHUNK, **kwargs):
    """A lazy dask array: the in-memory function ``name`` on each block of the batch axes.

    ``tail``: the core shape of one result ((n,) when None); ``outputs``: the number of stacked results of a
    function returning a tuple (0: one array).
    """
    _check_robot(robot)
    _, da = _dask()
    if isinstance(chunk, bool) or not isinstance(chunk, (int, np.integer)) or chunk < 1:
        raise InputError(f"chunk = {chunk!r}; give a positive number of states per chunk")
    arrays = _joint_inputs(robot, names, values, int(chunk))
    batch = arrays[0].chunks[:-1]
    tail = (robot.n,) if tail is None else tuple(tail)
    core = ((outputs,),) if outputs else ()
    chunks = batch + core + tuple((t,) for t in tail)
    ndim_in = arrays[0].ndim
    extra = len(chunks) - ndim_in
    return da.map_blocks(_run, name, _shipped(robot), *arrays, dtype=float, chunks=chunks,
                         new_axis=list(range(ndim_in - 1, ndim_in - 1 + extra)), stack=outputs, **kwargs)


def _deprecated(name: str, robot, names, values, chunk: int) -> list:
    """The arguments of a deprecated alias as Dask arrays (NumPy ones split into ``chunk`` states per block), after
    a DeprecationWarning naming its replacement: robodyn's own function, which takes Dask arrays lazily."""
    warnings.warn(f"robodyn.distributed.{name} is deprecated; give Dask arrays to robodyn.{name} "
                  f"(e.g. dask.array.from_array(q, chunks=({chunk}, n))), which returns a lazy Dask array",
                  DeprecationWarning, stacklevel=3)
    _check_robot(robot)
    if isinstance(chunk, bool) or not isinstance(chunk, (int, np.integer)) or chunk < 1:
        raise InputError(f"chunk = {chunk!r}; give a positive number of states per chunk")
    return _joint_inputs(robot, names, values, int(chunk))


def inverse_dynamics(robot, q, qd, qdd, wrenches=None, gravity=None, method: str = "newton_euler",
                     chunk: int = CHUNK):
    """Deprecated: :func:`robodyn.inverse_dynamics` takes Dask arrays and returns a lazy Dask array.

    NumPy arguments are split into ``chunk`` states per block first; the rest as :func:`robodyn.inverse_dynamics`.
    """
    from robodyn.dynamics.api import inverse_dynamics as run

    arrays = _deprecated("inverse_dynamics", robot, ("q", "qd", "qdd"), (q, qd, qdd), chunk)
    return run(robot, *arrays, wrenches=wrenches, gravity=gravity, method=method)


def forward_dynamics(robot, q, qd, tau, wrenches=None, gravity=None, method: str = "recursive", chunk: int = CHUNK):
    """Deprecated: :func:`robodyn.forward_dynamics` takes Dask arrays (as :func:`inverse_dynamics`)."""
    from robodyn.dynamics.api import forward_dynamics as run

    arrays = _deprecated("forward_dynamics", robot, ("q", "qd", "tau"), (q, qd, tau), chunk)
    return run(robot, *arrays, wrenches=wrenches, gravity=gravity, method=method)


def inertia_matrix(robot, q, method: str = "composite", chunk: int = CHUNK):
    """Deprecated: :func:`robodyn.inertia_matrix` takes Dask arrays (as :func:`inverse_dynamics`)."""
    from robodyn.dynamics.api import inertia_matrix as run

    return run(robot, *_deprecated("inertia_matrix", robot, ("q",), (q,), chunk), method=method)


def gravity_torques(robot, q, gravity=None, chunk: int = CHUNK):
    """Deprecated: :func:`robodyn.gravity_torques` takes Dask arrays (as :func:`inverse_dynamics`)."""
    from robodyn.dynamics.newton_euler import gravity_torques as run

    return run(robot, *_deprecated("gravity_torques", robot, ("q",), (q,), chunk), gravity=gravity)


def bias_torques(robot, q, qd, wrenches=None, gravity=None, chunk: int = CHUNK):
    """Deprecated: :func:`robodyn.bias_torques` takes Dask arrays (as :func:`inverse_dynamics`)."""
    from robodyn.dynamics.newton_euler import bias_torques as run

    return run(robot, *_deprecated("bias_torques", robot, ("q", "qd"), (q, qd), chunk), wrenches=wrenches,
               gravity=gravity)


def regressor(robot, q, qd, qdd, friction: bool = True, gravity=None, chunk: int = CHUNK):
    """Deprecated: :func:`robodyn.regressor` takes Dask arrays (as :func:`inverse_dynamics`)."""
    from robodyn.parameters.regressor import regressor as run

    arrays = _deprecated("regressor", robot, ("q", "qd", "qdd"), (q, qd, qdd), chunk)
    return run(robot, *arrays, friction=friction, gravity=gravity)


def jacobian(robot, q, frame=None, point=None, chunk: int = CHUNK):
    """:func:`robodyn.jacobian` lazily on Dask blocks: J (..., 6, n) of ``frame`` in R_0."""
    _check_robot(robot)
    return _batched("jacobian", robot, ("q",), (q,), tail=(6, robot.n), chunk=chunk, frame=frame, point=point)


def inverse_dynamics_derivatives(robot, q, qd, qdd, wrenches=None, gravity=None, friction=None, chunk: int = CHUNK):
    """:func:`robodyn.inverse_dynamics_derivatives` lazily on Dask blocks: (∂Γ/∂q, ∂Γ/∂q̇), each (..., n, n)."""
    _check_robot(robot)
    both = _batched("inverse_dynamics_derivatives", robot, ("q", "qd", "qdd"), (q, qd, qdd),
                    tail=(robot.n, robot.n), outputs=2, chunk=chunk, wrenches=wrenches, gravity=gravity,
                    friction=friction)
    return both[..., 0, :, :], both[..., 1, :, :]


def forward_dynamics_derivatives(robot, q, qd, tau, wrenches=None, gravity=None, friction=None, chunk: int = CHUNK):
    """:func:`robodyn.forward_dynamics_derivatives` lazily on Dask blocks: (∂q̈/∂q, ∂q̈/∂q̇, ∂q̈/∂Γ), each
    (..., n, n)."""
    _check_robot(robot)
    three = _batched("forward_dynamics_derivatives", robot, ("q", "qd", "tau"), (q, qd, tau),
                     tail=(robot.n, robot.n), outputs=3, chunk=chunk, wrenches=wrenches, gravity=gravity,
                     friction=friction)
    return three[..., 0, :, :], three[..., 1, :, :], three[..., 2, :, :]


# ---------------------------------------------------------------- samples read chunk-wise

@dataclass(frozen=True, eq=False)
class Samples:
    """Identification samples as dask arrays, one row per sample, chunked along the rows.

    Attributes
    ----------
    q, qd, qdd, tau : dask.array (N, n) — positions, velocities, accelerations, torques (SI units); N may be
        unknown (NaN) until computed when the rows come from log files.
    sources : tuple of str — the files read.
    robot : dask.array or array (N,) of int, or None — for a fleet: the robot of each row, an index into
        ``robots``; None: every row is of one robot.
    robots : tuple of str — the fleet's robot names (plain names: :func:`robodyn.sanitize.identifier` leaves
        them unchanged), in the order of the indices.
    """

    q: object
    qd: object
    qdd: object
    tau: object
    sources: tuple = ()
    robot: object = None
    robots: tuple = ()


def _hdf5_rows(path: str, start: int, stop: int) -> np.ndarray:
    import h5py

    from robodyn.logs import hdf5_dataset

    with h5py.File(path, "r") as f:  # checked again: the file may have changed since the graph was built
        return np.stack([np.asarray(hdf5_dataset(f, k, str(path))[start:stop], dtype=float)
                         for k in ("q", "qd", "qdd", "tau")])


def _parquet_rows(path: str, group: int, n: int) -> np.ndarray:
    import pyarrow.parquet as pq

    try:
        table = pq.ParquetFile(path).read_row_group(group)
    except MemoryError:
        raise InputError(f"source {path!r}: row group {group} does not fit in memory") from None
    return np.stack([np.column_stack([table.column(f"{p}{k}").to_numpy().astype(float) for k in range(1, n + 1)])
                     for p in ("q", "qd", "qdd", "tau")])


def _log_rows(path: str, robot, topic: str, cutoff, decimate, lifted: bool = False) -> np.ndarray:
    from robodyn.files import set_allow_large

    if lifted:  # the limits lifted where the graph was built hold in this worker thread too
        import contextvars

        def lifted_rows():
            set_allow_large(True)
            return _log_rows(path, robot, topic, cutoff, decimate)

        return contextvars.copy_context().run(lifted_rows)
    from robodyn.identification.data import prepare_identification_data
    from robodyn.logs import read_joint_log

    log = read_joint_log(path, topic=topic, robot=robot)
    if log.qd is not None and log.qdd is not None and log.tau is not None and cutoff is None and decimate is None:
        return np.stack([log.q, log.qd, log.qdd, log.tau])
    if log.tau is None:
        raise InputError(f"log {path!r} has no efforts (torques); identification needs them")
    d = prepare_identification_data(log.t, log.q, log.tau, cutoff=cutoff, decimate=decimate)
    return np.stack([d.q, d.qd, d.qdd, d.tau])


def _log_labels(part: np.ndarray, index: int) -> np.ndarray:
    return np.full(part.shape[1], index, dtype=np.int64)


def _parquet_labels(path: str, group: int, names: tuple) -> np.ndarray:
    import pyarrow.parquet as pq

    labels = pq.ParquetFile(path).read_row_group(group, columns=["robot"]).column("robot").to_pylist()
    index = {name: k for k, name in enumerate(names)}
    return np.array([index[str(x)] for x in labels], dtype=np.int64)


def _finite_block(x: np.ndarray, what: str) -> np.ndarray:
    bad = ~np.isfinite(x)
    if bad.any():
        raise InputError(f"{what} holds values that are not finite (NaN or inf; {int(bad.sum())} in one chunk of "
                         f"{x.shape[0]} rows); repair or remove those samples")
    return x


def sample_arrays(given, n: int, chunk: int) -> list:
    """q, qd, qdd, tau for identification: (N, n) float dask arrays of one row count N, refused when not real
    numbers (text, booleans), not of shape (N, n), of different row counts, or holding NaN or inf (checked
    chunk by chunk as the rows are read: the error is raised by the computation, naming the array)."""
    _, da = _dask()
    out = []
    for name, x in zip(("q", "qd", "qdd", "tau"), given):
        if not isinstance(x, da.Array):
            try:
                x = np.asarray(x)
            except (TypeError, ValueError):
                raise InputError(f"{name} is not an array of numbers; give an (N, {n}) array") from None
        if x.dtype.kind not in "iuf":
            raise InputError(f"{name} holds {x.dtype} values; give real numbers (N, {n})")
        if x.ndim != 2 or x.shape[1] != n:
            raise InputError(f"{name} has shape {x.shape}; give an (N, {n}) array (N samples, n = {n} joints)")
        if not isinstance(x, da.Array):
            x = da.from_array(x.astype(float), chunks=(chunk, -1))
        out.append(x.astype(float).map_blocks(_finite_block, what=name, dtype=float))
    rows = [a.shape[0] for a in out]
    if len({r for r in rows if r == r}) > 1:  # NaN: a count known once the rows are read
        raise InputError(f"q, qd, qdd, tau have {', '.join(str(r) for r in rows)} rows; give the same N samples "
                         "in each")
    return out


def _robot_names(names, where: str) -> tuple:
    """The fleet's robot names, each checked to be a plain name (untrusted text: file names, a data column)."""
    from robodyn.sanitize import identifier, printable

    out = tuple(str(x) for x in names)
    for text in out:
        if identifier(text) != text:
            raise InputError(f"robot name '{printable(text)}' ({where}) is not a plain name; give names of ASCII "
                             f"letters, digits and _ that start with a letter and are no keyword, e.g. "
                             f"'{identifier(text)}'")
    if len(set(out)) != len(out):
        raise InputError(f"robot names ({where}) repeat a name; give each robot one name")
    return out


def _stacked(parts, sizes, n: int, sources, labels=None, robots=()) -> Samples:
    """Samples from delayed (4, rows, n) blocks of known (or NaN) row counts, and delayed (rows,) robot indices."""
    _, da = _dask()
    blocks = [da.from_delayed(p, shape=(4, s, n), dtype=float) for p, s in zip(parts, sizes)]
    whole = da.concatenate(blocks, axis=1)
    robot = None if labels is None else da.concatenate(
        [da.from_delayed(x, shape=(s,), dtype=np.int64) for x, s in zip(labels, sizes)])
    return Samples(*(whole[k] for k in range(4)), sources=tuple(sources), robot=robot, robots=tuple(robots))


def read_samples(source, robot, chunk: int = CHUNK, topic: str = "/joint_states", cutoff=None,
                 decimate=None, robots=None) -> Samples:
    """Identification samples from files, as dask arrays read chunk-wise (nothing is read until computed).

    Parameters
    ----------
    source : str, PathLike or a sequence of them
        - ``*.h5`` / ``*.hdf5``: datasets ``q``, ``qd``, ``qdd``, ``tau`` (N, n), read ``chunk`` rows per task;
        - ``*.zarr``: a Zarr group with the same arrays (needs ``zarr``);
        - ``*.parquet`` / ``*.pq``: columns ``q1..qn, qd1..qdn, qdd1..qddn, tau1..taun``, one task per row group;
        - a folder holding none of these suffixes, or a sequence of paths: joint logs read by
          :func:`robodyn.read_joint_log` (ROS 1/2 bags, CSV, HDF5, Parquet), one task per log, one robot or a
          fleet of the same model. A log with positions and efforts only is filtered and differentiated by
          :func:`robodyn.identification.prepare_identification_data` (``cutoff``, ``decimate``), in its task.
    robot : Robot — the model (its n, and its joint names for the logs).
    chunk : int — rows per task for HDF5 and Zarr.
    topic, cutoff, decimate : for joint logs.
    robots : None, "stem", "column" or a sequence of str — a fleet of robots of the same model, for
        ``identify(..., per_robot=...)``. None: all rows are of one robot. Joint logs: ``"stem"`` makes each log
        one robot named after its file name without suffix (``arm_a.csv`` → ``arm_a``); a sequence gives one name
        per log, in the order of ``Samples.sources`` (sorted file names for a folder), logs of one name pooled.
        Parquet: ``"column"`` reads each row's robot name from a column ``robot`` (names collected from the file
        once, row group by row group). Names must be plain (letters, digits, _; see
        :func:`robodyn.sanitize.identifier`): another name raises InputError.

    Returns
    -------
    Samples
    """
    from pathlib import Path

    _check_robot(robot)
    dask, _ = _dask()
    n = robot.n
    if isinstance(robots, str) and robots not in ("stem", "column") or isinstance(robots, bytes) or not (
            robots is None or isinstance(robots, str) or hasattr(robots, "__len__")):
        raise InputError(f"robots = {robots!r}; give None, 'stem', 'column' or a sequence of robot names")
    if robots is not None and not isinstance(robots, str):
        robots = [str(x) for x in robots]
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        suffix = path.suffix.lower()
        fleet = suffix in (".parquet", ".pq") and robots is not None
        if robots is not None and robots != "column" and suffix in (".h5", ".hdf5", ".zarr", ".parquet", ".pq"):
            raise InputError(f"robots = {robots!r} is for joint logs; a Parquet file takes robots='column'")
        if robots is not None and suffix in (".h5", ".hdf5", ".zarr"):
            raise InputError("robots: a fleet is read from Parquet (robots='column') or joint logs, not HDF5/Zarr")
        if suffix in (".h5", ".hdf5"):
            return _read_hdf5(path, n, int(chunk))
        if suffix == ".zarr":
            return _read_zarr(path, n, int(chunk))
        if suffix in (".parquet", ".pq"):
            return _read_parquet(path, n, fleet)
        if not path.is_dir():
            raise InputError(f"source {str(path)!r}: give an HDF5 (.h5), Zarr (.zarr) or Parquet file, a folder of "
                             "joint logs or a list of log files")
        from robodyn.logs import FORMATS

        if (path / "metadata.yaml").exists():
            paths = [path]
        else:
            paths = sorted(p for p in path.iterdir() if p.suffix.lower() in FORMATS or (p / "metadata.yaml").exists())
        if not paths:
            raise InputError(f"folder {str(path)!r} holds no joint logs ({', '.join(FORMATS)} or ROS 2 bag folders)")
    else:
        paths = [Path(p) for p in source]
        if not paths:
            raise InputError("source is an empty list; give log files")
    robot_d = _shipped(robot)
    from robodyn.files import allow_large

    parts = [dask.delayed(_log_rows, pure=True)(str(p), robot_d, topic, cutoff, decimate, allow_large())
             for p in paths]
    sizes, sources = [np.nan] * len(parts), [str(p) for p in paths]
    if robots is None:
        return _stacked(parts, sizes, n, sources)
    if robots == "column":
        raise InputError("robots='column' is for a Parquet file; name the robots of joint logs with 'stem' or a list")
    per_log = [p.name if p.is_dir() else p.stem for p in paths] if robots == "stem" else [str(x) for x in robots]
    if len(per_log) != len(paths):
        raise InputError(f"robots: {len(per_log)} names for {len(paths)} logs; give one name per log "
                         f"(in this order: {', '.join(p.name for p in paths[:8])})")
    names = _robot_names(dict.fromkeys(per_log), "from " + ("the log file names" if robots == "stem" else "robots"))
    index = {name: k for k, name in enumerate(names)}
    labels = [dask.delayed(_log_labels, pure=True)(p, index[r]) for p, r in zip(parts, per_log)]
    return _stacked(parts, sizes, n, sources, labels, names)


def _read_hdf5(path, n: int, chunk: int) -> Samples:
    from robodyn.logs import hdf5_dataset, reader_module

    h5py = reader_module("hdf5")
    dask, _ = _dask()
    try:
        with h5py.File(path, "r") as f:
            sets = {k: hdf5_dataset(f, k, str(path)) for k in ("q", "qd", "qdd", "tau")}
            shapes = {k: None if d is None else d.shape for k, d in sets.items()}
    except InputError:
        raise
    except Exception as exc:  # h5py raises OSError/KeyError/TypeError for damaged or foreign files
        raise InputError(f"source {str(path)!r}: not a readable HDF5 file ({exc})") from None
    N = _common_rows(path, shapes, n)
    starts = range(0, N, chunk)
    parts = [dask.delayed(_hdf5_rows, pure=True)(str(path), s, min(s + chunk, N)) for s in starts]
    return _stacked(parts, [min(s + chunk, N) - s for s in starts], n, [str(path)])


def _common_rows(path, shapes: dict, n: int) -> int:
    """N, the common row count of the arrays q, qd, qdd, tau of declared ``shapes``; their declared size (and so
    the number of tasks) checked against :func:`robodyn.files.decoded_limit` before any task is built."""
    from robodyn.files import check_decoded

    missing = [k for k, s in shapes.items() if s is None]
    if missing:
        raise InputError(f"source {str(path)!r}: no array {', '.join(missing)}; give q, qd, qdd, tau (N, {n})")
    bad = {k: s for k, s in shapes.items() if len(s) != 2 or s[1] != n or s[0] != shapes["q"][0]}
    if bad:
        raise InputError(f"source {str(path)!r}: arrays of shapes {bad}; give q, qd, qdd, tau of one shape (N, {n})")
    check_decoded(f"source {str(path)!r}", f"q, qd, qdd, tau of declared shape {shapes['q']}",
                  4 * 8.0 * float(shapes["q"][0]) * n)
    return int(shapes["q"][0])


def _zarr_entries(path) -> None:
    """Refuse a Zarr folder holding anything but regular files and folders: a symbolic link would read a file
    outside it, a FIFO would block the reader."""
    import stat

    for folder, dirs, files in os.walk(path):
        for name in dirs + files:
            mode = os.lstat(os.path.join(folder, name)).st_mode
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                raise InputError(f"source {str(path)!r}: {os.path.join(folder, name)!r} is a symbolic link or a "
                                 "special file; a Zarr group must hold its own files only")


def _read_zarr(path, n: int, chunk: int) -> Samples:
    _, da = _dask()
    try:
        import zarr
    except ImportError:
        raise RobodynError("reading Zarr needs the package zarr; install it with: pip install 'robodyn[zarr]'") from None
    from robodyn.files import check_decoded

    if os.path.islink(path) or not os.path.isdir(path):
        raise InputError(f"source {str(path)!r}: give the folder of a Zarr group")
    _zarr_entries(path)
    try:
        group = zarr.open_group(str(path), mode="r")
        arrays = {k: group.get(k) for k in ("q", "qd", "qdd", "tau")}
    except Exception as exc:  # zarr raises its own error types for foreign folders
        raise InputError(f"source {str(path)!r}: not a readable Zarr group ({exc})") from None
    for k, a in arrays.items():
        if a is None:
            continue
        if not isinstance(a, zarr.Array):
            raise InputError(f"source {str(path)!r}: {k} is a group, not an array; give q, qd, qdd, tau (N, {n})")
        if a.dtype.kind not in "iuf":
            raise InputError(f"source {str(path)!r}: array {k} holds {a.dtype}, not numbers; give real numbers")
        check_decoded(f"source {str(path)!r}", f"a chunk of array {k} (declared shape {a.chunks})",
                      float(a.dtype.itemsize) * float(np.prod(a.chunks, dtype=float)))
    _common_rows(path, {k: None if a is None else a.shape for k, a in arrays.items()}, n)
    arrays = [da.from_zarr(str(path), component=k).rechunk((chunk, -1)).astype(float) for k in ("q", "qd", "qdd", "tau")]
    return Samples(*arrays, sources=(str(path),))


def _read_parquet(path, n: int, fleet: bool = False) -> Samples:
    from robodyn.logs import parquet_file

    dask, _ = _dask()
    need = [f"{p}{k}" for p in ("q", "qd", "qdd", "tau") for k in range(1, n + 1)]
    pf = parquet_file(path, str(path), need)
    meta, names = pf.metadata, set(pf.schema_arrow.names)
    missing = [c for c in need if c not in names]
    if missing:
        raise InputError(f"source {str(path)!r}: missing column(s) {', '.join(missing[:8])}; give q1..q{n}, "
                         f"qd1..qd{n}, qdd1..qdd{n}, tau1..tau{n}")
    groups = range(meta.num_row_groups)
    parts = [dask.delayed(_parquet_rows, pure=True)(str(path), g, n) for g in groups]
    sizes = [meta.row_group(g).num_rows for g in groups]
    if not fleet:
        return _stacked(parts, sizes, n, [str(path)])
    if "robot" not in names:
        raise InputError(f"source {str(path)!r}: no column 'robot'; robots='column' reads each row's robot name "
                         "from it")
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    seen = {}
    for g in groups:  # one column of one row group at a time: the names, not the rows, are kept
        col = pq.ParquetFile(path).read_row_group(g, columns=["robot"]).column("robot")
        seen.update(dict.fromkeys(str(x) for x in pc.unique(col).to_pylist()))
    robots = _robot_names(sorted(seen), f"column 'robot' of {str(path)!r}")
    labels = [dask.delayed(_parquet_labels, pure=True)(str(path), g, robots) for g in groups]
    return _stacked(parts, sizes, n, [str(path)], labels, robots)


# ---------------------------------------------------------------- identification

def _regressor_block(bp, q, qd, qdd, blk, position=()) -> np.ndarray:
    """The base regressor of the rows ``blk``, after the position-term columns of the joints ``position``."""
    W = bp.regressor(q[blk], qd[blk], qdd[blk])
    return np.concatenate([position_columns(q[blk], position), W], axis=2) if position else W


def _clipped_block(tau: np.ndarray, clip) -> np.ndarray:
    """(rows, n) bool: the clipped torques of a chunk, ``clip`` from :func:`_clipping`."""
    top, bottom, at_top, at_bottom = clip
    return ((tau == top) & at_top) | ((tau == bottom) & at_bottom)


def _extreme_runs(tau: np.ndarray):
    """One chunk of τ for :func:`_clipping`: its rows, per joint its largest and smallest value (2, n), and for
    each the run of samples at it that starts the chunk, the one that ends it and the longest ((2, 3, n)); None
    for a chunk without rows."""
    from robodyn.identification.data import runs

    t = np.asarray(tau)
    rows, n = t.shape
    if rows == 0:
        return None
    ext = np.stack([t.max(axis=0), t.min(axis=0)])
    extent = np.zeros((2, 3, n), dtype=np.int64)
    for e in range(2):
        for j in range(n):
            starts, lengths = runs(t[:, j] == ext[e, j])
            extent[e, :, j] = (lengths[0] if starts[0] == 0 else 0,
                               lengths[-1] if starts[-1] + lengths[-1] == rows else 0, lengths.max())
    return rows, ext, extent


def _clipping(tau):
    """The clipped torques of the (N, n) dask array τ, as :func:`robodyn.identification.data.saturated` finds them
    in memory (a joint's largest or smallest value held for ``SATURATED_RUN`` samples or more; every sample at
    that value counts then): (largest (n,), smallest (n,), whether each is clipped (n,) × 2), or None when no
    torque is.  One pass over τ; a run may span chunks."""
    from robodyn.identification.data import SATURATED_RUN

    dask, _ = _dask()
    blocks = tau.rechunk({1: -1}).to_delayed().ravel().tolist()
    parts = [p for p in _compute(*[dask.delayed(_extreme_runs)(b) for b in blocks]) if p is not None]
    if not parts:
        return None
    ext = np.stack([np.max([p[1][0] for p in parts], axis=0), np.min([p[1][1] for p in parts], axis=0)])
    flags = np.zeros(ext.shape, dtype=bool)
    for e, j in np.ndindex(*ext.shape):
        carry = best = 0  # the run at the extreme that reaches the end of the chunks seen, the longest
        for rows, part, runs in parts:
            if part[e, j] != ext[e, j]:
                carry = 0
                continue
            lead, trail, longest = runs[e, :, j]
            best = max(best, longest, carry + lead)
            carry = carry + rows if lead == rows else trail
        flags[e, j] = best >= SATURATED_RUN
    return (ext[0], ext[1], flags[0], flags[1]) if flags.any() else None


def _block_reduce(bp, q, qd, qdd, tau, reduction: str, theta=None, scale=None, robust=None, labels=None,
                  position=(), clip=None):
    """One chunk: per-joint Gram matrices or R factors of [√w W_j  √w y_j], the rows, the rows used (w > 0) per
    joint.

    The Gram partial sums are returned as (sum, compensation) pairs for :func:`_merge`. With ``labels`` (rows,)
    (a fleet), a dict: robot index → the same triple for that robot's rows; ``theta`` is then (robots, b).
    ``position``: the joints whose position-term columns come first in W; ``clip`` (:func:`_clipping`): the rows
    of clipped torques get weight 0 in their joint's equations.
    """
    if labels is not None:
        labels = np.asarray(labels)
        return {int(r): _block_reduce(bp, q[labels == r], qd[labels == r], qdd[labels == r], tau[labels == r],
                                      reduction, None if theta is None else theta[r], scale, robust)
                for r in np.unique(labels)}
    q, qd, qdd, tau = _aligned(q, qd, qdd, tau)
    N, n = q.shape
    m = bp.count + 2 * len(position) + 1
    acc = np.zeros((2, n, m, m))
    used = np.zeros(n)
    for s in range(0, N, BLOCK):
        blk = slice(s, s + BLOCK)
        W = _regressor_block(bp, q, qd, qdd, blk, position)
        A = np.empty((n, W.shape[0], m))
        A[..., :-1] = W.transpose(1, 0, 2)
        A[..., -1] = tau[blk].T
        keep = np.ones(tau[blk].shape) if clip is None else ~_clipped_block(tau[blk], clip)
        if theta is not None:
            r = tau[blk] - W @ theta
            keep = robust_weights(r, scale, robust) * keep
        used += np.sum(keep > 0, axis=0)
        if theta is not None or clip is not None:
            A *= np.sqrt(keep.T)[..., None]
        if reduction == "gram":
            part = np.zeros((2, n, m, m))
            part[0] = np.swapaxes(A, -1, -2) @ A
            acc = _merge_gram(acc, part)
        else:
            acc[0] = _qr_stack([acc[0], A], m)
    return acc, N, used


def _two_sum(a: np.ndarray, b: np.ndarray):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _merge_gram(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    s, err = _two_sum(x[0], y[0])
    return np.stack([s, x[1] + y[1] + err])


def _qr_stack(factors, m: int) -> np.ndarray:
    """Per joint: the R factor (m × m) of the rows of all ``factors`` stacked (n, rows, m each)."""
    import scipy.linalg

    rows = np.concatenate(factors, axis=1)
    out = np.zeros((rows.shape[0], m, m))
    for j in range(rows.shape[0]):
        R = scipy.linalg.qr(rows[j], mode="r", check_finite=False)[0]
        out[j, : min(R.shape[0], m)] = R[:m]
    return out


def _merge(reduction: str, *parts):
    """Merge chunk results of :func:`_block_reduce` (one node of the reduction tree)."""
    if isinstance(parts[0], dict):
        out = dict(parts[0])
        for other in parts[1:]:
            for r, part in other.items():
                out[r] = _merge(reduction, out[r], part) if r in out else part
        return out
    acc, N, used = parts[0]
    m = acc.shape[-1]
    for other in parts[1:]:
        acc = _merge_gram(acc, other[0]) if reduction == "gram" else np.stack(
            [_qr_stack([acc[0], other[0][0]], m), acc[1]])
        N, used = N + other[1], used + other[2]
    return acc, N, used


def _tree(reduction: str, tasks):
    dask, _ = _dask()
    merge = dask.delayed(_merge, pure=True)
    while len(tasks) > 1:
        tasks = [merge(reduction, *tasks[k:k + FAN_IN]) for k in range(0, len(tasks), FAN_IN)]
    return tasks[0]


def _aligned_blocks(samples, labels=None):
    """The four (N, n) dask arrays in common row chunks, joint axis whole, and the (N,) robot indices of a fleet:
    lists of delayed blocks."""
    arrays = [a.rechunk({1: -1}) for a in samples]
    if not any(np.isnan(c) for c in arrays[0].chunks[0]):
        arrays = [arrays[0]] + [a.rechunk(arrays[0].chunks) for a in arrays[1:]]
        if labels is not None:
            labels = labels.rechunk(arrays[0].chunks[:1])
    blocks = [a.to_delayed().ravel().tolist() for a in arrays + ([] if labels is None else [labels])]
    if len({len(b) for b in blocks}) != 1:
        raise InputError("q, qd, qdd, tau (and robot) have different row chunks; give arrays of one chunking")
    return list(zip(*blocks))


def _reduce(bp_d, blocks, reduction, theta=None, scale=None, robust=None, position=(), clip=None):
    dask, _ = _dask()
    task = dask.delayed(_block_reduce, pure=True)
    return _tree(reduction, [task(bp_d, *b[:4], reduction, theta, scale, robust, labels=b[4] if len(b) > 4 else None,
                                  position=position, clip=clip) for b in blocks])


def _factor(acc: np.ndarray, reduction: str):
    """Per-joint square-root factors R_j ((n, m, m), R_jᵀ R_j = G_j) of the merged chunk results, and the column
    norms of each [W_j y_j] ((n, m)), exact: from the Gram diagonal, or the columns of the Householder factor
    (those of the eigendecomposition's factor carry its rounding, about √ε of the largest, not the zeros of
    columns that do not appear in a joint's equations)."""
    if reduction == "tsqr":
        return acc[0], np.linalg.norm(acc[0], axis=1)
    G = acc[0] + acc[1]
    norms = np.sqrt(np.maximum(np.diagonal(G, axis1=-2, axis2=-1), 0.0))
    d = np.where(norms > 0, norms, 1.0)
    Gs = G / d[..., :, None] / d[..., None, :]  # unit columns: the factor's rounding is relative to each column
    lam, V = np.linalg.eigh(0.5 * (Gs + np.swapaxes(Gs, -1, -2)))
    return np.sqrt(np.maximum(lam, 0.0))[..., :, None] * np.swapaxes(V, -1, -2) * d[..., None, :], norms


def _solve(Rg: np.ndarray, names, tol: float):
    """θ, (Wᵀ W)⁻¹ and ‖y − W θ‖ from the stacked factor (columns scaled to unit norm); rank test first (a column
    below ``tol`` of the largest counts as zero)."""
    check_rank(Rg, names, tol, zero=tol)
    return solve_factor(Rg, len(names))


def _compute(*tasks):
    dask, _ = _dask()
    return dask.compute(*tasks)


def identify(robot, q, qd=None, qdd=None, tau=None, method: str = "ols", friction: bool = True, base=None,
             robust: str = "huber", max_iterations: int = 50, rank_tol: float = RANK_TOL,
             reduction: str = "gram", chunk: int = CHUNK, regularization: float | None = None,
             min_mass: float = 0.0, per_robot=None, position_terms="auto", options=None) -> Identification:
    """:func:`robodyn.identify` on out-of-core samples: the regressor is computed and reduced chunk by chunk.

    Parameters
    ----------
    robot : Robot
    q : dask.array or array (N, n), or :class:`Samples` (then qd, qdd, tau are not given)
    qd, qdd, tau : dask.array or array (N, n)
    method : {"ols", "wls", "irls", "physical"} — as :func:`robodyn.identify`. "irls" reads the samples twice
        per iteration (residuals, then the weighted reduction); its per-joint median absolute deviations are
        exact (:func:`median`).  "physical" solves the semidefinite program on the stacked (b + 1) × (b + 1)
        factor (:func:`robodyn.identification.dynamic.physical_fit`), as the in-memory method does.
    friction, base, robust, max_iterations, rank_tol, regularization, min_mass : as :func:`robodyn.identify`.
    position_terms : "auto", tuple of int or None — as :func:`robodyn.identify`: the position term
        k_j sin q_j + c_j cos q_j in joint j's equation.  "auto" reduces the columns sin q_j, cos q_j of every
        joint beside the base regressor in the same pass (2n more columns per chunk), selects the joints from
        the reduced factors as in memory, and fits the selected columns from the same reduction.
    options : IdentificationOptions or None — those eight as one record (its other fields must keep their
        defaults), as :func:`robodyn.identify`.
    reduction : {"gram", "tsqr"} — see the module documentation (normal equations with compensated sums, the
        in-memory reduction; or a communication-avoiding QR, accuracy ε cond(W) for ill-conditioned data).
    chunk : int — rows per task when NumPy arrays are given.
    per_robot : None, or a tuple of "friction" and/or "offsets" — a fleet of robots of one model (``q``: Samples
        with ``robot`` and ``robots``, e.g. ``read_samples(folder, robot, robots="stem")``): the inertial base
        parameters are shared, while each robot r has its own Coulomb and viscous friction Fc_j, Fv_j
        ("friction") and/or torque offsets Foff_j ("offsets") of every joint j, named ``Fc3[r]``. The regressor
        is block-angular, [W_s  0 … W_f,r … 0] on robot r's rows; see :func:`fleet_values`. None: the fleet's
        rows are identified as one robot (as without labels). "physical" minimises the same fleet residual over
        consistent links shared by the fleet (pseudo-inertias ⪰ 0, as :func:`physical_fit`) with every robot's
        Fc, Fv ≥ 0 (offsets free), on the per-robot (b + 1) × (b + 1) factors alone. The block matrix is
        never formed: each chunk reduces the rows of every robot it holds to that robot's per-joint (b + 1)²
        matrices of [W y] (the one-robot base regressor; its friction columns are the robot's own), merged per
        robot — memory 2 n (b + 1)² numbers per robot per task (0.33 MB for a 6-joint arm, b = 58), linear in
        the fleet, where the Gram matrix of the dense fleet columns would grow as R². The block-angular least
        squares (Björck 1996, §6.3) then eliminates each robot's k own parameters from its factor and solves the
        shared ones from the stacked remainders; the result's covariance is P × P.

    As :func:`robodyn.identify`, the rows where joint j's torque is clipped (it holds exactly its largest or
    smallest value for ``SATURATED_RUN`` samples or more, :func:`robodyn.identification.data.saturated`) are left
    out of joint j's equations: one more pass over τ finds them (a run may span chunks); ``equations`` counts the
    rows used.  A fleet (``per_robot``) fits no position terms ("auto" selects none there, a tuple is refused)
    and keeps every row.

    Returns
    -------
    Identification — equal to that of :func:`robodyn.identify` on the same samples, to rounding. With
    ``per_robot``: ``names``, ``values``, ``std`` (P,) and ``covariance`` (P, P) hold the b_s shared parameters
    (base order) then the k parameters of each robot (P = b_s + k R); ``base`` is the one-robot base, so
    ``predict`` is not available: predict robot r with ``base.regressor(q, qd, qdd) @ fleet_values(result, r)``.
    "physical" with ``per_robot``: ``solver`` reports as for one robot; ``std`` and ``covariance`` are those of
    the least-squares fleet fit; ``robot`` and ``standard`` are None (each robot has its own friction).

    Raises
    ------
    IdentificationError, InputError — as :func:`robodyn.identify`.
    """
    _check_robot(robot)
    _, da = _dask()
    from robodyn.parameters.base import base_parameters

    if options is not None:
        shared = ("friction", "base", "robust", "max_iterations", "rank_tol", "regularization", "min_mass",
                  "position_terms")
        rest = [k for k in ("transmission", "min_velocity", "weights", "parallel", "bounds")
                if getattr(options, k, None) is not None]
        if rest:
            raise InputError(f"options: {', '.join(rest)} are not available out of core; use robodyn.identify")
        o = merge_options(options, dict(friction=friction, base=base, robust=robust, max_iterations=max_iterations,
                                        rank_tol=rank_tol, regularization=regularization, min_mass=min_mass,
                                        position_terms=position_terms), shared)
        friction, base, robust, max_iterations = o["friction"], o["base"], o["robust"], o["max_iterations"]
        rank_tol, regularization, min_mass, position_terms = (o["rank_tol"], o["regularization"], o["min_mass"],
                                                              o["position_terms"])
    terms = check_position_terms(position_terms, robot)

    if method not in ("ols", "wls", "irls", "physical"):
        raise InputError(f"method = {method!r}; choose 'ols', 'wls', 'irls' or 'physical'")
    if robust not in ("huber", "bisquare"):
        raise InputError(f"robust = {robust!r}; choose 'huber' or 'bisquare'")
    if reduction not in ("gram", "tsqr"):
        raise InputError(f"reduction = {reduction!r}; choose 'gram' or 'tsqr'")
    if method == "irls" and (isinstance(max_iterations, bool) or int(max_iterations) != max_iterations
                             or max_iterations < 1):
        raise InputError(f"max_iterations = {max_iterations!r}; give an integer >= 1")
    options = _per_robot_option(per_robot)
    if options and not friction:
        raise InputError("per_robot: friction=False identifies no friction or offsets; give friction=True")
    samples = q if isinstance(q, Samples) else None
    if options and samples is None:
        raise InputError("per_robot needs Samples with the robot of each row: read_samples(..., robots=...) or "
                         "Samples(q, qd, qdd, tau, robot=indices, robots=names)")
    if isinstance(q, Samples):
        if not (qd is None and qdd is None and tau is None):
            raise InputError("give either Samples or the arrays q, qd, qdd, tau")
        given = (q.q, q.qd, q.qdd, q.tau)
    else:
        if qd is None or qdd is None or tau is None:
            raise InputError("give q, qd, qdd and tau (N, n), or Samples from read_samples")
        given = (q, qd, qdd, tau)
    n = robot.n
    arrays = sample_arrays(given, n, chunk)
    if base is None:
        base = base_parameters(robot, friction=friction)
        if not base.minimal:
            base = base_parameters(robot, method="numeric", friction=friction)
    elif base.robot is not robot or base.friction != friction:
        raise InputError("base: give the BaseParameters of this robot with the same friction setting")
    if options:
        if terms not in ("auto", ()):
            raise InputError(f"position_terms = {position_terms!r}: a fleet (per_robot) is fitted without position "
                             "terms; give position_terms=None")
        return _identify_fleet(robot, base, samples, arrays, options, method, reduction, rank_tol, robust,
                               int(max_iterations), int(chunk),
                               1e-6 if regularization is None else float(regularization), float(min_mass))
    names = tuple(base.names)
    b = base.count
    bp_d = _shipped(base)
    cand = tuple(range(n)) if terms == "auto" else terms  # the joints whose position columns are reduced
    clip = _clipping(arrays[3])
    folds = None
    if method == "physical" and regularization is None:
        acc, N, counts, folds = _fold_reduce(bp_d, arrays, reduction, cand, clip)
    blocks = _aligned_blocks(arrays)
    if folds is None:
        acc, N, counts = _compute(_reduce(bp_d, blocks, reduction, position=cand, clip=clip))[0]
    clipped = np.asarray(N - counts if clip is not None else np.zeros(n), dtype=int)
    if np.any(counts == 0):
        raise IdentificationError(f"every sample of joint {int(np.flatnonzero(counts == 0)[0]) + 1} is clipped; "
                                  "give data where its torque is not saturated")
    neq = int(counts.sum())
    if neq <= b:
        raise IdentificationError(f"{N} samples of {n} joints give {neq} equations for {b} parameters; "
                                  f"give more than {b // n + 1} samples")
    k = 2 * len(cand)

    def columns(joints):  # of the reduced [E W y] that the fit with the terms of ``joints`` uses
        return [2 * cand.index(j) + i for j in joints for i in (0, 1)] + list(range(k, k + b + 1))

    def factor(joints):
        S = columns(joints)
        if len(S) == acc.shape[-1]:
            return _factor(acc, reduction)
        if reduction == "gram":
            return _factor(acc[:, :, S][:, :, :, S], reduction)
        return _factor(_qr_stack([acc[0][:, :, S]], len(S))[None], reduction)  # R[:, S]ᵀ R[:, S] = G[S, S]

    shares = None
    if terms == "auto":
        G = acc[0] + acc[1] if reduction == "gram" else np.swapaxes(acc[0], -1, -2) @ acc[0]
        E = [slice(2 * j, 2 * j + 2) for j in range(n)]
        shares = position_shares(factor(())[0], np.stack([G[j, E[j], E[j]] for j in range(n)]),
                                 np.stack([G[j, E[j], k:] for j in range(n)]))
        terms = selected_position_joints(robot, shares)
    R, norms = factor(terms)
    if folds is not None:
        S = columns(terms)
        folds = folds[:, :, S][:, :, :, S].sum(axis=1)

    def irls(theta):
        def residuals(th):
            return da.map_blocks(_residual_block, bp_d, *[a.rechunk({1: -1}) for a in arrays], th, dtype=float,
                                 chunks=arrays[0].rechunk({1: -1}).chunks, position=terms, clip=clip)

        def reweigh(th, scale):
            acc, _, used = _compute(_reduce(bp_d, blocks, reduction, th, scale, robust, terms, clip))[0]
            return _factor(acc, reduction)[0], used

        def weighted_fit(Rw):
            return _solve(stack_factors(Rw), position_names(terms) + names, 0.0)[:2]

        def ssr(Rw, th):
            return float(np.sum(joint_residuals(Rw, th) ** 2))

        return _irls(residuals, reweigh, weighted_fit, ssr, R, counts.astype(float), theta, int(max_iterations),
                     b + 2 * len(terms))

    try:
        fit = fit_factors(robot, base, R, counts, method, rank_tol=rank_tol, zero=rank_tol, norms=norms,
                          regularization=regularization, min_mass=float(min_mass), folds=folds, irls=irls,
                          free=position_names(terms))
    except IdentificationError as exc:
        raise fit_failure(exc, terms, clipped, int(N)) from None
    return Identification(model=robot, method=method, friction=friction, base=base, names=names, samples=int(N),
                          equations=counts.astype(int), position_shares=shares, **fit)


def _fold_reduce(bp_d, arrays, reduction: str, position=(), clip=None):
    """The reduction of the samples in ``FOLDS`` contiguous groups of row chunks (the time blocks of the
    cross-validated regularization), merged: (merged result, N, rows used per joint, per-joint Gram matrices
    (k, n, m, m) of the groups)."""
    from robodyn.identification.consistent import FOLDS

    rows = arrays[0].shape[0]
    if len(arrays[0].chunks[0]) < FOLDS and not np.isnan(rows):
        arrays = [a.rechunk({0: max(-(-int(rows) // FOLDS), 1)}) for a in arrays]
    blocks = _aligned_blocks(arrays)
    groups = [g for g in np.array_split(np.arange(len(blocks)), min(FOLDS, len(blocks))) if g.size]
    parts = _compute(*[_reduce(bp_d, [blocks[i] for i in g], reduction, position=position, clip=clip)
                       for g in groups])
    merged = _merge(reduction, *parts)
    grams = [acc[0] + acc[1] if reduction == "gram" else np.swapaxes(acc[0], -1, -2) @ acc[0] for acc, _, _ in parts]
    return merged[0], merged[1], merged[2], np.stack(grams)


def _residual_block(bp, q, qd, qdd, tau, theta, labels=None, position=(), clip=None) -> np.ndarray:
    """τ − W θ of one chunk (rows, n); with ``labels`` (rows,) of a fleet, θ is (robots, b): row i uses
    θ[labels[i]].  ``position``: the joints whose position-term columns come first in W (and θ); ``clip``
    (:func:`_clipping`): the clipped torques' residuals are NaN (left out of the medians)."""
    q, qd, qdd, tau = _aligned(q, qd, qdd, tau)
    out = np.empty_like(tau)
    for s in range(0, q.shape[0], BLOCK):
        blk = slice(s, s + BLOCK)
        W = _regressor_block(bp, q, qd, qdd, blk, position)
        out[blk] = tau[blk] - (W @ theta if labels is None else np.einsum("snb,sb->sn", W, theta[labels[blk]]))
    if clip is not None:
        out[_clipped_block(tau, clip)] = np.nan
    return out


def _irls(residuals, reweigh, fit, ssr, state, used, theta, max_iterations: int, count: int):
    """Iteratively re-weighted least squares as :func:`robodyn.identify` (per-joint MAD scale, exact medians).

    ``residuals(θ)``: the (N, n) dask array τ − W θ; ``reweigh(θ, scale)``: the factors of the robustly weighted
    problem and #(w > 0) per joint; ``fit(factors)``: θ and (Wᵀ W)⁻¹ of the weighted problem; ``ssr(factors, θ)``:
    its weighted residual sum of squares; ``state``, ``used``: the unit-weight factors and row counts (all MADs 0:
    the exact OLS fit); ``count``: the number of parameters.
    """
    converged, it = False, 0
    for it in range(1, max_iterations + 1):
        r = residuals(theta).persist()
        med = median(r)
        mad = 1.4826 * median(abs(r - med))
        if not np.any(mad > 0):
            converged = True
            break
        top = mad.max(initial=0.0)
        state, used = reweigh(theta, np.maximum(mad, 1e-12 * top))
        new, _ = fit(state)
        step = np.linalg.norm(new - theta)
        theta = new
        if step <= 1e-10 * (1.0 + np.linalg.norm(theta)):
            converged = True
            break
    _, inv = fit(state)
    s2 = ssr(state, theta) / max(float(np.sum(used)) - count, 1)
    message = "" if converged else f"iteration limit {max_iterations} reached; the robust weights may still change"
    return theta, s2 * inv, it, converged, message


# ---------------------------------------------------------------- a fleet: shared inertia, per-robot friction

#: ``per_robot`` options → the base parameters each makes per robot.
_PER_ROBOT = MappingProxyType({"friction": re.compile(r"^F[cv]\d+$"), "offsets": re.compile(r"^Foff\d+$")})


def _per_robot_option(per_robot) -> tuple:
    if per_robot is None:
        return ()
    items = (per_robot,) if isinstance(per_robot, str) else per_robot
    try:
        items = tuple(items)
    except TypeError:
        items = (per_robot,)
    if not items or any(not isinstance(x, str) or x not in _PER_ROBOT for x in items):
        raise InputError(f"per_robot = {per_robot!r}; give None or a tuple of 'friction' (Fc, Fv of every joint) "
                         "and 'offsets' (Foff of every joint)")
    return tuple(dict.fromkeys(items))


def _fleet_fit(Rs, own, shared, names, robots, weights, tol: float):
    """Least squares of the block-angular fleet problem from each robot's per-joint factors (Björck 1996, §6.3).

    Robot r's rows of [W_f,r  W_s  y] (its own columns first) are reduced to one triangular factor
    [[T_ff  T_fs  z_f], [0  S_r  z_r]]; the S_r blocks of all robots are stacked and factored into the shared
    problem, solved for θ_s; then θ_f,r = T_ff⁻¹ (z_f − T_fs θ_s). (Wᵀ W)⁻¹ follows from the same blocks:
    C_ss = (Sᵀ S)⁻¹, C_fs,r = −H_r C_ss, C_ff,rr' = δ_rr' T_ff⁻¹ T_ff⁻ᵀ + H_r C_ss H_r'ᵀ with H_r = T_ff⁻¹ T_fs.

    Parameters
    ----------
    Rs : list of (n, m, m) — each robot's per-joint factors of [W_j y_j] (m = b + 1, base column order).
    own, shared : int arrays (k,), (b_s,) — the base columns that are per robot and shared.
    names, robots : base parameter names, robot names (for errors).
    weights : (n,) or None — per-joint weights.
    tol : float — rank tolerance (0: no test).

    Returns
    -------
    θ (P,), (Wᵀ W)⁻¹ (P, P), ‖y − W θ‖, and the full triangular factor (P, P) whose singular values are W's; the
    order is the b_s shared parameters, then the k of each robot.
    """
    import scipy.linalg

    k, bs, R = len(own), len(shared), len(Rs)
    b = k + bs
    order = np.concatenate([own, shared, [b]])
    P = bs + R * k
    tops, lowers = [], []
    for r, Rr in enumerate(Rs):
        T = stack_factors(Rr[:, :, order], weights)
        cn = np.linalg.norm(T[:, :k], axis=0)
        top = np.linalg.norm(T[:, :b], axis=0).max(initial=0.0)
        bad = np.flatnonzero((cn <= tol * top) | (np.abs(np.diag(T[:k, :k])) <= tol * cn))
        if bad.size:
            unexcited = ", ".join(f"{names[own[i]]}[{robots[r]}]" for i in bad)
            raise IdentificationError(
                f"the data of robot '{robots[r]}' do not excite {unexcited} "
                "(their regressor columns are zero or combinations of the others: a joint that does not move); "
                "give that robot an exciting trajectory or identify its friction with the fleet (per_robot=None)")
        tops.append(T[:k])
        lowers.append(T[k:, k:])
    Rg = _qr_stack([np.concatenate(lowers)[None]], bs + 1)[0]
    theta_s, Cs, rnorm = _solve(Rg, [names[i] for i in shared], tol)
    theta = np.empty(P)
    theta[:bs] = theta_s
    L = np.zeros((P, bs))
    L[:bs] = np.eye(bs)
    D = np.zeros((P, P))
    F = np.zeros((P, P))
    F[R * k:, :bs] = Rg[:bs, :bs]
    for r, T in enumerate(tops):
        cols = slice(bs + r * k, bs + (r + 1) * k)
        Tinv = scipy.linalg.solve_triangular(T[:, :k], np.eye(k))
        H = Tinv @ T[:, k:b]
        theta[cols] = Tinv @ T[:, b] - H @ theta_s
        L[cols] = -H
        D[cols, cols] = Tinv @ Tinv.T
        F[r * k:(r + 1) * k, cols] = T[:, :k]
        F[r * k:(r + 1) * k, :bs] = T[:, k:b]
    return theta, L @ Cs @ L.T + D, rnorm, F


def _per_robot_thetas(theta: np.ndarray, own, shared, R: int) -> np.ndarray:
    """(R, b): each robot's base-parameter vector (shared values and its own) from the fleet's θ (P,)."""
    bs, k = len(shared), len(own)
    out = np.empty((R, k + bs))
    out[:, shared] = theta[:bs]
    out[:, own] = theta[bs:].reshape(R, k)
    return out


def _fleet_residuals(Rs, thetas) -> np.ndarray:
    """‖y_j − W_j θ‖ of every joint (n,), over the whole fleet."""
    return np.sqrt(sum(joint_residuals(Rr, th) ** 2 for Rr, th in zip(Rs, thetas)))


def _fleet_labels(samples: Samples, arrays, chunk: int):
    """The (N,) robot indices as a dask array, and the checked robot names."""
    _, da = _dask()
    robots = _robot_names(samples.robots, "Samples.robots")
    if not robots or samples.robot is None:
        raise InputError("per_robot: the Samples name no robots; read them with read_samples(..., robots=...) or "
                         "give Samples(q, qd, qdd, tau, robot=indices, robots=names)")
    labels = samples.robot
    if not isinstance(labels, da.Array):
        labels = np.asarray(labels)
        if labels.dtype.kind not in "iu":
            raise InputError(f"Samples.robot has dtype {labels.dtype}; give integer indices into Samples.robots")
        labels = da.from_array(labels.astype(np.int64), chunks=(chunk,))
    N = arrays[0].shape[0]
    if labels.ndim != 1 or not (np.isnan(N) or np.isnan(labels.shape[0]) or labels.shape[0] == N):
        raise InputError(f"Samples.robot has shape {labels.shape}; give one robot index per sample ({N},)")
    return labels, robots


def _identify_fleet(robot, base, samples, arrays, options, method, reduction, rank_tol, robust, max_iterations,
                    chunk, regularization, min_mass) -> Identification:
    """:func:`identify` with per-robot parameters (``per_robot``): shared inertia, each robot's friction/offsets."""
    dask, da = _dask()
    names = tuple(base.names)
    b, n = base.count, robot.n
    own = np.array([i for i, nm in enumerate(names) if any(_PER_ROBOT[o].match(nm) for o in options)], dtype=int)
    if not own.size:
        raise InputError(f"per_robot = {options}: the base parameters hold none of them (they are grouped with "
                         "others); identify the fleet as one robot (per_robot=None)")
    shared = np.array([i for i in range(b) if i not in set(own.tolist())], dtype=int)
    labels, robots = _fleet_labels(samples, arrays, chunk)
    R, k = len(robots), own.size
    bp_d = _shipped(base)
    blocks = _aligned_blocks(arrays, labels)
    parts = _compute(_reduce(bp_d, blocks, reduction))[0]
    stray = sorted(set(parts) - set(range(R)))
    if stray:
        raise InputError(f"Samples.robot holds the indices {stray[:5]} outside 0…{R - 1}; give indices into "
                         f"Samples.robots ({R} names)")
    empty = [robots[r] for r in range(R) if r not in parts]
    if empty:
        raise IdentificationError(f"robot(s) {', '.join(repr(x) for x in empty)} have no samples; give their data "
                                  "or leave them out of the fleet")
    N = int(sum(parts[r][1] for r in range(R)))
    P = len(shared) + R * k
    if N * n <= P:
        raise IdentificationError(f"{N} samples of {n} joints give {N * n} equations for {P} parameters (shared "
                                  f"and {k} per robot); give more samples")
    factors = [_factor(parts[r][0], reduction) for r in range(R)]
    Rs = [f[0] for f in factors]
    out_names = tuple(names[i] for i in shared) + tuple(f"{names[i]}[{r}]" for r in robots for i in own)
    theta, C, rnorm, F = _fleet_fit(Rs, own, shared, names, robots, None, rank_tol)
    cov = rnorm ** 2 / max(N * n - P, 1) * C
    norms = np.stack([f[1][:, :b] for f in factors])  # (R, n, b)
    joint_shared = np.sqrt(np.sum(norms[:, :, shared] ** 2, axis=0))  # (n, b_s)
    joint_own = np.moveaxis(norms[:, :, own], 0, 1).reshape(n, -1)  # (n, R k)
    present = np.concatenate([joint_shared, joint_own], axis=1)
    cols = (present > 1e-12 * present.max(axis=1, keepdims=True)).sum(axis=1)  # parameters in joint j's equations
    res = _fleet_residuals(Rs, _per_robot_thetas(theta, own, shared, R))
    noise = res / np.sqrt(np.maximum(N - cols, 1))
    cond = float(np.linalg.cond(F))
    iterations, converged, message, report = 1, True, "", None
    if method == "physical":
        theta, report = _fleet_physical(robot, base, Rs, own, shared, options, regularization, min_mass)
        converged = report["certified"]
        if not converged:
            message = (f"the physically consistent fleet fit is not certified: {report['accuracy']}; give a larger "
                       "regularization or check the data")
    elif method == "wls":
        theta, cov, _, _ = _fleet_fit(Rs, own, shared, names, robots, 1.0 / noise_floor(noise), 0.0)
    elif method == "irls":
        known = not np.isnan(arrays[0].shape[0]) and not any(np.isnan(c) for c in arrays[0].chunks[0])
        sizes = arrays[0].rechunk({1: -1}).chunks[0] if known else [np.nan] * len(blocks)
        task = dask.delayed(_residual_block, pure=True)

        def residuals(th):
            thetas = _per_robot_thetas(th, own, shared, R)
            return da.concatenate([da.from_delayed(task(bp_d, *blk[:4], thetas, blk[4]), shape=(s, n), dtype=float)
                                   for blk, s in zip(blocks, sizes)])

        def reweigh(th, scale):
            acc = _compute(_reduce(bp_d, blocks, reduction, _per_robot_thetas(th, own, shared, R), scale, robust))[0]
            return ([_factor(acc[r][0], reduction)[0] for r in range(R)],
                    np.sum([acc[r][2] for r in range(R)], axis=0))

        def weighted_fit(factors_w):
            return _fleet_fit(factors_w, own, shared, names, robots, None, 0.0)[:2]

        def ssr(factors_w, th):
            return float(np.sum(_fleet_residuals(factors_w, _per_robot_thetas(th, own, shared, R)) ** 2))

        theta, cov, iterations, converged, message = _irls(residuals, reweigh, weighted_fit, ssr, Rs,
                                                           np.full(n, float(N)), theta, max_iterations, P)
    res = _fleet_residuals(Rs, _per_robot_thetas(theta, own, shared, R))
    return Identification(
        model=robot, method=method, friction=True, base=base, names=out_names, values=theta,
        std=np.sqrt(np.maximum(np.diag(cov), 0.0)), covariance=cov, condition_number=cond,
        residual_rms=res / np.sqrt(N), noise=noise, samples=N, iterations=iterations, converged=converged,
        message=message, solver=report)


def _fleet_physical(robot, base, Rs, own, shared, options, regularization: float, min_mass: float):
    """The physically consistent fleet fit: θ (P,) in the fleet order, and the solver report.

    Minimises the fleet's residual Σ_r ‖W_r Ψ K_r − y_r‖² = Σ_r ‖T_r Ψ K_r − z_r‖² + ρ_r² (T_r, z_r, ρ_r: robot
    r's stacked (b + 1) × (b + 1) factor, whatever its number of samples) over the standard parameters K_r =
    [links, friction of r, motors]: the links (pseudo-inertias ⪰ 0, rotor inertias ≥ 0) and motors shared, each
    robot's Fc, Fv ≥ 0 and Foff free where ``per_robot`` makes them its own (a friction coefficient grouped into a
    shared base parameter stays shared), plus the pull towards the model's parameters — the program of
    :func:`robodyn.identification.dynamic.physical_fit` (:func:`robodyn.identification.consistent.fleet_program`),
    scaled, solved and certified the same way: an uncertified point comes back with ``solver["certified"]``
    False, never unchecked.
    """
    from robodyn.identification import consistent
    from robodyn.parameters.regressor import standard_parameter_vector

    n, nf, R = robot.n, robot.nf, len(Rs)
    psi = standard_to_base(robot, base)
    prior = standard_parameter_vector(robot, True, base.transmission)
    off = 11 * nf
    kinds = {"friction": (0, 1), "offsets": (2,)}
    chosen = [off + 3 * j + c for j in range(n) for o in options for c in kinds[o]]
    # a standard column is a robot's own only where it reaches no shared base parameter
    mine = sorted(c for c in chosen if not np.any(psi[shared, c]))
    limits = consistent.check_bounds(consistent.PhysicalBounds(min_mass=min_mass), nf)
    program, cols = consistent.fleet_program(robot, base, psi, prior, [stack_factors(Rr) for Rr in Rs], mine,
                                          regularization, limits)
    solved = consistent.solve(program, limits, nf)
    if solved is None:
        raise IdentificationError("the physically consistent fleet identification failed: the conic solver "
                                  "returned no point; check the data and the model's units, or use method='ols'")
    K, report = solved
    report.update(regularization=float(regularization), regularization_rule="given")
    thetas = K[cols] @ psi.T  # (R, b): each robot's base parameters
    theta = np.concatenate([thetas[0, shared], thetas[:, own].ravel()])
    return theta, report


def fleet_values(result: Identification, name: str) -> np.ndarray:
    """Robot ``name``'s base-parameter vector (b,) from a fleet identification (``identify(..., per_robot=...)``):
    the shared values and that robot's own, in the order of ``result.base.names``, so that
    ``result.base.regressor(q, qd, qdd) @ fleet_values(result, name)`` predicts its torques.

    Raises
    ------
    InputError
        ``name`` is not a robot of ``result``.
    """
    if not isinstance(result, Identification):
        raise InputError(f"result must be an Identification (identify(..., per_robot=...)), got "
                         f"{type(result).__name__}")
    index = dict(zip(result.names, result.values))
    if not isinstance(name, str) or not any(k.endswith(f"[{name}]") for k in index):
        from robodyn.sanitize import printable

        raise InputError(f"robot '{printable(str(name))}' is not in this identification; give one of the names in "
                         "brackets of result.names")
    return np.array([index.get(f"{k}[{name}]", index.get(k, np.nan)) for k in result.base.names])


# ---------------------------------------------------------------- exact quantiles of a chunked array

#: Values per joint gathered to the client once the quantile is bracketed.
GATHER = 1 << 16
#: Pivots per bracketing pass.
PIVOTS = 256


def _counts(x: np.ndarray, pivots: np.ndarray) -> np.ndarray:
    """#(x[:, j] ≤ pivots[:, j]) of one block, (P, n)."""
    xs = np.sort(x, axis=0)
    return np.stack([np.searchsorted(xs[:, j], pivots[:, j], side="right") for j in range(x.shape[1])], -1)


def _inside(x: np.ndarray, lo: np.ndarray, hi: np.ndarray, j: int) -> np.ndarray:
    col = x[:, j]
    return col[(col > lo[j]) & (col <= hi[j])]


def _ulps_below(h: float, count: int) -> np.ndarray:
    """The ``count`` floating-point numbers just below ``h``, ascending."""
    out = np.empty(count)
    v = h
    for i in range(count - 1, -1, -1):
        v = np.nextafter(v, -np.inf)
        out[i] = v
    return out


def _stats(x: np.ndarray) -> np.ndarray:
    """(2, n): the minimum and maximum of each column of a block, NaN left out."""
    return np.array([np.fmin.reduce(x, axis=0, initial=np.inf), np.fmax.reduce(x, axis=0, initial=-np.inf)])


def _kth(x, ks) -> np.ndarray:
    """The k-th smallest values (0-based ranks ``ks``, each an int or one per column (n,)) of every column of a
    persisted (N, n) dask array (N > GATHER), NaN left out (sorted last), exactly: (len(ks), n).

    Bisection by counts: each pass counts, block by block, the values below ``PIVOTS`` pivots spread over the
    bracket (lo, hi] of each column that holds the answer, and narrows the bracket; once it holds at most
    ``GATHER`` values they are gathered and the answer selected. A bracket that stops narrowing spans fewer than
    ``PIVOTS`` floating-point numbers (ties): the next pass counts at each of them, which decides exactly.
    """
    dask, _ = _dask()
    blocks = x.to_delayed().ravel().tolist()
    parts = dask.compute(*[dask.delayed(_stats)(blk) for blk in blocks])
    return np.stack([_kth_bisect(x, blocks, k, np.min([p[0] for p in parts], axis=0),
                                 np.max([p[1] for p in parts], axis=0)) for k in ks])


def _kth_bisect(x, blocks, k, xmin: np.ndarray, xmax: np.ndarray) -> np.ndarray:
    dask, _ = _dask()
    n = x.shape[1]
    k = np.broadcast_to(np.asarray(k, dtype=np.int64), (n,))
    lo = np.nextafter(xmin, -np.inf)  # #(x ≤ lo) = 0 ≤ k
    hi = xmax.copy()  # #(x ≤ hi) = N > k
    below = np.zeros(n, dtype=np.int64)  # #(x ≤ lo)
    exact = np.zeros(n, bool)
    out = np.empty(n)
    active = np.ones(n, bool)
    while active.any():
        # the bracket's interior, and hi, 0 with the numbers just below them: a value repeated more than GATHER
        # times at one of these (zeros, the bracket's top) is found in this pass
        piv = np.concatenate([np.linspace(lo, hi, PIVOTS + 1)[1:-1], [hi, np.nextafter(hi, -np.inf)],
                              np.zeros((1, n)), np.full((1, n), -np.nextafter(0.0, 1.0))])
        for j in np.flatnonzero(exact):
            piv[: PIVOTS - 1, j] = _ulps_below(hi[j], PIVOTS - 1)
        c = np.sum(dask.compute(*[dask.delayed(_counts)(blk, piv) for blk in blocks]), axis=0)
        for j in np.flatnonzero(active):
            order = np.argsort(piv[:, j], kind="stable")
            pj, cj = piv[order, j], c[order, j]
            over, under = np.flatnonzero(cj > k[j]), np.flatnonzero(cj <= k[j])
            first = pj[over[0]]  # the smallest pivot with more than k values at or below it
            if exact[j] or (under.size and pj[under[-1]] == np.nextafter(first, -np.inf)):
                out[j], active[j] = first, False
                continue
            if under.size and pj[under[-1]] > lo[j]:
                new_lo, new_below = pj[under[-1]], int(cj[under[-1]])
            else:
                new_lo, new_below = lo[j], below[j]
            exact[j] = new_lo == lo[j] and first == hi[j]
            lo[j], hi[j], below[j] = new_lo, first, new_below
            if int(cj[over[0]]) - below[j] <= GATHER:
                vals = np.concatenate(dask.compute(*[dask.delayed(_inside)(blk, lo, hi, j) for blk in blocks]))
                out[j], active[j] = np.partition(vals, k[j] - below[j])[k[j] - below[j]], False
    return out


def median(x) -> np.ndarray:
    """The exact median of every column of a chunked (N, n) dask array, as ``numpy.nanmedian(x, axis=0)`` gives
    it (NaN left out; the mean of the two middle values for an even count; NaN for a column of NaN only), without
    gathering the columns when N > ``GATHER``: bisection by counts over the persisted blocks (a few passes).

    Returns
    -------
    ndarray (n,)
    """
    _, da = _dask()
    if not isinstance(x, da.Array) or x.ndim != 2:
        raise InputError("median: give a 2-D dask array (N, n)")
    x = x.persist()
    if np.isnan(x.shape[0]):
        x.compute_chunk_sizes()
    N = int(x.shape[0])
    if N == 0:
        raise InputError("median: the array has no rows")
    if N <= GATHER:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a column of NaN only: NaN, as documented
            return np.nanmedian(x.compute(), axis=0)
    valid = N - np.asarray(da.isnan(x).sum(axis=0).compute())
    out = np.full(x.shape[1], np.nan)
    some = valid > 0
    if some.any():
        cols = x[:, np.flatnonzero(some)] if not some.all() else x
        v = valid[some]
        a = _kth(cols, [(v - 1) // 2, v // 2])
        out[some] = 0.5 * (a[0] + a[1])
    return out


# ---------------------------------------------------------------- simulation sweeps

@dataclass(frozen=True, eq=False)
class SimulationSweep:
    """Result of :func:`simulate_many`: the cases' :class:`robodyn.simulation.Simulation` arrays stacked.

    Attributes
    ----------
    t : ndarray (C, N) — output times of each case (s).
    q, qd, qdd, tau, tau_friction : ndarray (C, N, n) — as :class:`robodyn.simulation.Simulation`.
    kinetic, potential : ndarray (C, N) — energies (J).
    nfev : ndarray (C,) — right-hand-side evaluations of each case.
    seconds : ndarray (C,) — wall-clock time of each integration (s).
    """

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray
    tau_friction: np.ndarray
    kinetic: np.ndarray
    potential: np.ndarray
    nfev: np.ndarray
    seconds: np.ndarray


_SWEEP_FIELDS = ("t", "q", "qd", "qdd", "tau", "tau_friction", "kinetic", "potential", "nfev", "seconds")


def _simulate_case(index: int, robot, case: dict) -> dict:
    from robodyn.simulation.integrate import simulate

    case = dict(case)
    model = case.pop("robot", robot)
    try:
        sim = simulate(model, **case)
    except RobodynError as exc:
        raise type(exc)(f"case {index}: {exc}") from None
    return {k: np.asarray(getattr(sim, k)) for k in _SWEEP_FIELDS}


def _client():
    """The active dask.distributed client, or None (no client, or another scheduler chosen by dask.config)."""
    dask, _ = _dask()
    if dask.config.get("scheduler", None) not in (None, "dask.distributed", "distributed"):
        return None
    try:
        from distributed import default_client
    except ImportError:
        return None
    try:
        return default_client()
    except ValueError:
        return None


def simulate_many(robot, cases, progress: bool | None = None, **common) -> SimulationSweep:
    """Run :func:`robodyn.simulate` for every case as a Dask task and stack the results.

    Parameters
    ----------
    robot : Robot — the model of every case without its own ``"robot"``.
    cases : sequence of dict — keyword arguments of :func:`robodyn.simulate` for each case (``torque``, ``q0``,
        ``qd0``, ``t_eval``, ...), optionally ``"robot"`` (e.g. a payload or parameter sample). Callables (torque
        laws, controllers) must be picklable by cloudpickle when a distributed cluster runs the sweep.
    progress : bool or None — draw Dask's progress bar (``dask.diagnostics.ProgressBar``, or
        ``distributed.progress`` under a client); None: when standard error is a terminal and
        ``ROBODYN_PROGRESS`` is not 0.
    **common : keyword arguments shared by every case (a case's own value wins).

    Returns
    -------
    SimulationSweep — arrays with a leading case axis (C, ...). Every case must give the same number of times.

    Raises
    ------
    InputError — no cases, a case that is not a dict, cases of different lengths; the errors of
        :func:`robodyn.simulate`, prefixed with the case number.
    """
    _check_robot(robot)
    dask, _ = _dask()
    if isinstance(cases, (dict, str, bytes)) or not hasattr(cases, "__iter__"):
        raise InputError(f"cases is a {type(cases).__name__}; give a sequence of dicts of rd.simulate arguments")
    cases = list(cases)
    if not cases:
        raise InputError("cases: give a non-empty sequence of dicts of rd.simulate arguments")
    for i, case in enumerate(cases):
        if not isinstance(case, dict):
            raise InputError(f"case {i} is a {type(case).__name__}; give a dict of rd.simulate arguments")
        if "robot" in case and not isinstance(case["robot"], Robot):
            raise InputError(f"case {i}: 'robot' must be a Robot")
    robot_d = _shipped(robot)
    tasks = [dask.delayed(_simulate_case, pure=True)(i, robot_d, {**common, **case}) for i, case in enumerate(cases)]
    show = progress_enabled() if progress is None else bool(progress)
    client = _client()
    if client is not None:
        futures = client.compute(tasks)
        if show:
            from distributed import progress as distributed_progress

            distributed_progress(futures)
        results = client.gather(futures)
    elif show:
        from dask.diagnostics import ProgressBar

        with ProgressBar(out=sys.stderr):
            results = dask.compute(*tasks)
    else:
        results = dask.compute(*tasks)
    lengths = {len(r["t"]) for r in results}
    if len(lengths) != 1:
        raise InputError(f"the cases give different numbers of times ({sorted(lengths)}); give every case a t_eval "
                         "of the same length")
    return SimulationSweep(**{k: np.stack([r[k] for r in results]) for k in _SWEEP_FIELDS})
