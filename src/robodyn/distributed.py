"""Batches, identification and simulation sweeps beyond one machine's memory, on Dask (docs/scaling.md).

The calls run on Dask's local threaded scheduler, or on the cluster of ``distributed.Client(address)``
(``pip install 'robodyn[dask]'``; ``import robodyn`` does not import Dask).  Each block runs robodyn's in-memory
function of the same name; the robot is one task of the graph, shipped once per worker.  ``inverse_dynamics``,
``forward_dynamics``, ``inertia_matrix``, ``gravity_torques``, ``bias_torques`` and ``regressor`` here are
deprecated aliases: robodyn's own functions take Dask arrays.
"""

from __future__ import annotations

import os
import sys
import warnings
from dataclasses import dataclass, replace
from types import MappingProxyType

import numpy as np

from robodyn.errors import InputError, RobodynError
from robodyn.identification.factors import RANK_TOL  # noqa: F401 (public here too)
from robodyn.identification.fleet import fleet_values  # noqa: F401 (public here too)
from robodyn.identification.results import Identification
from robodyn.identification.solvers import IRLS_ITERATIONS
from robodyn.identification.dynamic import IdentificationOptions
from robodyn.identification.dynamic import identify as run_identify
from robodyn.identification.reduction import (CHUNK, GATHER, PIVOTS, Samples, aligned, chunk_size,  # noqa: F401
                                              dask_modules, median, robot_names, sample_arrays)
from robodyn.model.robot import Robot
from robodyn.progress import progress_enabled

#: what ``rd.distributed`` offers users (its in-memory aliases such as ``inverse_dynamics`` are deprecated)
__all__ = ("SimulationSweep", "Samples", "identify", "read_samples", "simulate_many", "fleet_values", "median",
           "RANK_TOL")

#: The batched functions: name → (module, attribute) of the in-memory function each block runs.
_FUNCTIONS = MappingProxyType({
    "jacobian": ("robodyn.kinematics", "jacobian"),
    "inverse_dynamics_derivatives": ("robodyn.dynamics.derivatives", "inverse_dynamics_derivatives"),
    "forward_dynamics_derivatives": ("robodyn.dynamics.derivatives", "forward_dynamics_derivatives"),
})


def _check_robot(robot) -> None:
    if not isinstance(robot, Robot):
        raise InputError(f"robot must be a robodyn Robot (rd.load(...)), got {type(robot).__name__}")


def _shipped(value):
    """``value`` as one task of the graph (the same key for equal values): sent once to each worker that needs it."""
    dask, _ = dask_modules()
    return dask.delayed(value, pure=True, traverse=False)


# ---------------------------------------------------------------- batched dynamics

def _run(name: str, robot, *arrays, stack: int = 0, **kwargs):
    """The in-memory function ``name`` on one block; tuples of results stacked on a new axis −3 (``stack`` > 0)."""
    from importlib import import_module

    module, attr = _FUNCTIONS[name]
    arrays = aligned(*arrays)
    out = getattr(import_module(module), attr)(robot, *arrays, **kwargs)
    return np.stack(out, axis=-3) if stack else out


def _joint_inputs(robot, names, values, chunk):
    """The arrays as dask arrays of one common shape (..., n), the joint axis in one chunk."""
    _, da = dask_modules()
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
    _, da = dask_modules()
    arrays = _checked_inputs(robot, names, values, chunk)
    core = ((outputs,),) if outputs else ()
    chunks = arrays[0].chunks[:-1] + core + tuple((t,) for t in ((robot.n,) if tail is None else tail))
    return da.map_blocks(_run, name, _shipped(robot), *arrays, dtype=float, chunks=chunks,
                         new_axis=list(range(arrays[0].ndim - 1, len(chunks) - 1)), stack=outputs, **kwargs)


def _deprecated(name: str, robot, names, values, chunk: int) -> list:
    """The arguments of a deprecated alias as Dask arrays (NumPy ones split into ``chunk`` states per block), after
    a DeprecationWarning naming its replacement: robodyn's own function, which takes Dask arrays lazily."""
    warnings.warn(f"robodyn.distributed.{name} is deprecated; give Dask arrays to robodyn.{name} "
                  f"(e.g. dask.array.from_array(q, chunks=({chunk}, n))), which returns a lazy Dask array",
                  DeprecationWarning, stacklevel=3)
    return _checked_inputs(robot, names, values, chunk)


def _checked_inputs(robot, names, values, chunk) -> list:
    """:func:`_joint_inputs` after checking the robot and ``chunk``."""
    _check_robot(robot)
    return _joint_inputs(robot, names, values, chunk_size(chunk, "states"))


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


def _stacked(parts, sizes, n: int, sources, labels=None, robots=()) -> Samples:
    """Samples from delayed (4, rows, n) blocks of known (or NaN) row counts, and delayed (rows,) robot indices."""
    _, da = dask_modules()
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
    dask, _ = dask_modules()
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
    names = robot_names(dict.fromkeys(per_log), "from " + ("the log file names" if robots == "stem" else "robots"))
    index = {name: k for k, name in enumerate(names)}
    labels = [dask.delayed(_log_labels, pure=True)(p, index[r]) for p, r in zip(parts, per_log)]
    return _stacked(parts, sizes, n, sources, labels, names)


def _read_hdf5(path, n: int, chunk: int) -> Samples:
    from robodyn.logs import hdf5_dataset, reader_module

    h5py = reader_module("hdf5")
    dask, _ = dask_modules()
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
    _, da = dask_modules()
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

    dask, _ = dask_modules()
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
    robots = robot_names(sorted(seen), f"column 'robot' of {str(path)!r}")
    labels = [dask.delayed(_parquet_labels, pure=True)(str(path), g, robots) for g in groups]
    return _stacked(parts, sizes, n, [str(path)], labels, robots)


# ---------------------------------------------------------------- identification

def identify(robot, q, qd=None, qdd=None, tau=None, method: str = "physical", friction: bool = True, base=None,
             robust: str = "huber", max_iterations: int = IRLS_ITERATIONS, rank_tol: float = RANK_TOL,
             reduction: str = "gram", chunk: int = CHUNK, regularization: float | None = None,
             min_mass: float = 0.0, per_robot=None, position_terms="auto", options=None,
             **more) -> Identification:
    """:func:`robodyn.identify` on the cluster path: NumPy arrays are split into ``chunk`` rows per Dask task
    first, Dask arrays and :class:`Samples` go as they are; the keywords, ``more`` (transmission, min_velocity,
    weights, bounds) and ``options`` are :func:`robodyn.identify`'s own.  ``rd.identify`` given Dask arrays or
    Samples does the same; the result equals the in-memory one to rounding.  A fleet (``per_robot``): see
    docs/scaling.md and :func:`fleet_values`.

    Returns
    -------
    Identification
    """
    _check_robot(robot)
    if options is not None and options.chunk is not None:
        chunk = options.chunk
    if not isinstance(q, Samples) and not (qd is None or qdd is None or tau is None):
        q, qd, qdd, tau = sample_arrays((q, qd, qdd, tau), robot.n, chunk_size(chunk))
    keywords = dict(friction=friction, base=base, robust=robust, max_iterations=max_iterations, rank_tol=rank_tol,
                    regularization=regularization, min_mass=min_mass, position_terms=position_terms, **more)
    cluster = dict(reduction=reduction, chunk=chunk, per_robot=per_robot)
    if options is None:
        keywords |= cluster
    else:  # the record's own values of these three, or else the keywords (this function's defaults differ)
        default = IdentificationOptions()
        options = replace(options, **{k: v for k, v in cluster.items() if getattr(options, k) == getattr(default, k)})
    return run_identify(robot, q, qd, qdd, tau, method=method, options=options, **keywords)


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


_SWEEP_FIELDS = tuple(SimulationSweep.__dataclass_fields__)


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
    dask, _ = dask_modules()
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
    dask, _ = dask_modules()
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
