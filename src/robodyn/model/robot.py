"""The robot: a table of frames in Khalil–Kleinfinger notation plus per-link inertial parameters.

Frame j (j = 1..nf) is placed relative to its antecedent a(j) (0 is the fixed base) by

    ^{a(j)}T_j = Rot(z, γ_j) Trans(z, b_j) Rot(x, α_j) Trans(x, d_j) Rot(z, θ_j) Trans(z, r_j)

(Khalil & Dombre, ch. 3 and §9.5).  σ_j = 0: revolute, q adds to θ_j; σ_j = 1: prismatic, q adds to r_j;
σ_j = 2: fixed frame (no joint variable).  A serial robot has a(j) = j − 1 and γ = b = 0; any antecedent
array with a(j) < j describes a tree.  In the arrays of this class, index i = j − 1 holds frame j and
``antecedent`` holds a(j) with Khalil & Dombre's numbering (0 = base).
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass, field

import numpy as np

from robodyn.arrays import shown
from robodyn.errors import InputError, ModelError
from robodyn.model.derived import RobotData, derive, frozen
from robodyn.model.inertia import check_physical

#: Order of the standard inertial parameters of one link (Khalil & Dombre §9.4.1), then rotor inertia.
PARAMETER_NAMES: tuple[str, ...] = ("XX", "XY", "XZ", "YY", "YZ", "ZZ", "MX", "MY", "MZ", "M")

#: Largest magnitude accepted for a geometric, joint or gravity value: beyond it a model is a typo and overflows.
MAX_ABS_VALUE = 1e12

#: Kinds of base R_0: fixed (inertial), mobile (given motion), floating (free body).
BASE_KINDS: tuple[str, ...] = ("fixed", "mobile", "floating")

_GEOMETRY = ("gamma", "b", "alpha", "d", "theta", "r")
#: Per-frame joint quantities: rotor inertia, Coulomb, viscous, offset friction, Stribeck [9.26].
_JOINT_PARAMS = ("Ia", "Fc", "Fv", "Foff", "Fst", "kst", "Bst")
#: Symmetric per-joint limits: velocity |q̇| ≤ qdlim (rad/s | m/s), torque |Γ| ≤ taulim (N m | N).
_RATE_LIMITS = ("qdlim", "taulim")


@dataclass(frozen=True, eq=False)
class Robot:
    """A robot manipulator as plain, immutable data.

    Parameters
    ----------
    name : str
    antecedent : int array (nf,)
        a(j) for j = 1..nf; a(j) < j, 0 is the base.  Default: serial, a(j) = j − 1.
    sigma : int array (nf,)
        0 revolute, 1 prismatic, 2 fixed.
    gamma, b, alpha, d, theta, r : float arrays (nf,)
        Geometric parameters (rad, m).  θ_j (revolute) and r_j (prismatic) are offsets added to q_j.
    params : float array (nf, 10)
        Standard inertial parameters XX XY XZ YY YZ ZZ MX MY MZ M of link j in R_j about O_j (SI).
    Ia : float array (nf,)
        Rotor inertia reflected on the joint, Ia = N² J_m [9.29] (kg m² or kg).
    Fc, Fv, Foff : float arrays (nf,)
        Coulomb (N m | N), viscous (N m s/rad | N s/m) friction and a constant torque offset.
    Fst, kst, Bst : float arrays (nf,)
        Stribeck term (F_st − F_c) sign(q̇) exp(−k |q̇|^B) of [9.26]; inactive where Fst = 0.
    qlim : float array (n, 2)
        Joint limits [min, max] per joint variable (rad | m); ±inf where unlimited.
    gravity : float array (3,)
        Gravitational acceleration g in the base frame R_0 (m/s²).
    frame_names : tuple of str (nf,)
        Name of each frame (default ``j1..jnf``); a joint is named after its frame, so ``joint_names``
        (the n names of q's entries) is derived from it.
    link_names : tuple of str (nf,)
        Name of the body link whose frame *is* frame j (a URDF link, ``""`` where none): ``frame=`` arguments
        accept these names too (``frame="tool0"``).  Default: all ``""``.
    source : str
        Where the numbers come from.
    strict : bool
        False accepts published inertias that violate the triangle inequality, with a warning (default True).
    base : {"fixed", "mobile", "floating"}
        The base R_0: the inertial frame (default), moved by a given motion, or a free body whose motion the
        dynamics gives; the last two use Pinocchio's free-flyer conventions (docs/floating-base.md), with
        ``gravity`` in the world frame.
    base_params : float array (10,)
        Standard inertial parameters XX XY XZ YY YZ ZZ MX MY MZ M of the base body (link 0) in R_0 about O_0
        (default zeros).  Unused by a fixed base.
    qdlim : float array (n,)
        Joint velocity limits |q̇_k| ≤ qdlim_k per joint variable (rad/s | m/s), positive; inf where unknown
        (default).
    taulim : float array (n,)
        Joint torque (effort) limits |Γ_k| ≤ taulim_k per joint variable (N m | N), positive; inf where unknown
        (default).

    Notes
    -----
    Joint variables ``q`` have one entry per frame with σ ≠ 2, in frame order (``joint_frames``).  Every numeric
    argument is copied and made read-only; :meth:`replace` derives a modified robot.  Robots compare and hash by
    content: ``content_key`` is the SHA-256 digest of every field above (``qdlim`` and ``taulim`` left out while
    all inf), the key of :mod:`robodyn.model.workspace`.
    """

    name: str
    sigma: np.ndarray
    antecedent: np.ndarray | None = None
    gamma: np.ndarray | None = None
    b: np.ndarray | None = None
    alpha: np.ndarray | None = None
    d: np.ndarray | None = None
    theta: np.ndarray | None = None
    r: np.ndarray | None = None
    params: np.ndarray | None = None
    Ia: np.ndarray | None = None
    Fc: np.ndarray | None = None
    Fv: np.ndarray | None = None
    Foff: np.ndarray | None = None
    Fst: np.ndarray | None = None
    kst: np.ndarray | None = None
    Bst: np.ndarray | None = None
    qlim: np.ndarray | None = None
    gravity: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, -9.81]))
    frame_names: tuple[str, ...] | None = None
    link_names: tuple[str, ...] | None = None
    source: str = ""
    strict: bool = True
    base: str = "fixed"
    base_params: np.ndarray | None = None
    qdlim: np.ndarray | None = None
    taulim: np.ndarray | None = None

    def __post_init__(self) -> None:
        put = lambda k, v: object.__setattr__(self, k, v)  # noqa: E731  (frozen dataclass)
        sigma = self._numbers("sigma", self.sigma)
        if sigma.ndim != 1 or sigma.size == 0:
            raise ModelError(f"robot '{self.name}': sigma must be a non-empty 1-D array, one entry per frame")
        nf = sigma.size
        if not np.all(np.isin(sigma, (0, 1, 2))):
            j = int(np.flatnonzero(~np.isin(sigma, (0, 1, 2)))[0]) + 1
            raise ModelError(f"robot '{self.name}', frame {j}: sigma = {sigma[j - 1].item()!r}; use 0 (revolute), "
                             "1 (prismatic) or 2 (fixed)")
        put("sigma", _frozen(sigma.astype(np.int64)))
        ant = np.arange(nf) if self.antecedent is None else self._numbers("antecedent", self.antecedent)
        if ant.shape != (nf,) or not np.all(np.abs(ant) <= nf) or not np.all(ant == np.round(ant)):
            raise ModelError(f"robot '{self.name}': antecedent must hold {nf} integers, one per frame")
        ant = ant.astype(np.int64)
        for j in range(1, nf + 1):
            if not 0 <= ant[j - 1] < j:
                raise ModelError(f"robot '{self.name}', frame {j}: antecedent = {ant[j - 1]}; frames must be numbered "
                                 "so that 0 <= a(j) < j (0 is the base)")
        put("antecedent", _frozen(ant))
        for key in _GEOMETRY + _JOINT_PARAMS:
            put(key, self._vector(key, getattr(self, key), nf))
        params = np.zeros((nf, 10)) if self.params is None else self._floats("params", self.params)
        if params.shape != (nf, 10):
            raise ModelError(f"robot '{self.name}': params has shape {params.shape}; expected ({nf}, 10) = "
                             "XX XY XZ YY YZ ZZ MX MY MZ M per frame")
        self._not_subnormal("params", params, PARAMETER_NAMES)
        put("params", _frozen(params))
        g = self._floats("gravity", self.gravity)
        if g.shape != (3,) or not np.all(np.abs(g) <= MAX_ABS_VALUE):
            raise ModelError(f"robot '{self.name}': gravity must be 3 finite numbers (m/s^2, base frame), each within {MAX_ABS_VALUE:g}")
        put("gravity", _frozen(g))
        n = int(np.count_nonzero(sigma != 2))
        if n == 0:
            raise ModelError(f"robot '{self.name}': no joint, every frame has sigma = 2 (fixed); a robot needs at "
                             "least one revolute (sigma = 0) or prismatic (sigma = 1) joint")
        qlim = np.tile([-np.inf, np.inf], (n, 1)) if self.qlim is None else self._floats("qlim", self.qlim)
        if qlim.shape != (n, 2) or np.any(np.isnan(qlim)) or np.any(qlim[:, 0] > qlim[:, 1]):
            raise ModelError(f"robot '{self.name}': qlim must be ({n}, 2) rows [min, max] with min <= max")
        put("qlim", _frozen(qlim))
        default = tuple(f"j{j}" for j in range(1, nf + 1))
        put("frame_names", self._names("frame_names", default if self.frame_names is None else self.frame_names, nf))
        put("link_names", self._names("link_names", ("",) * nf if self.link_names is None else self.link_names, nf))
        for key in _RATE_LIMITS:
            put(key, self._positive_limits(key, getattr(self, key), n))
        if not isinstance(self.base, str) or self.base not in BASE_KINDS:
            raise ModelError(f"robot '{self.name}': base = {_short(self.base)}; use one of {', '.join(BASE_KINDS)}")
        base_params = np.zeros(10) if self.base_params is None else self._floats("base_params", self.base_params)
        if base_params.shape != (10,):
            raise ModelError(f"robot '{self.name}': base_params has shape {base_params.shape}; expected (10,) = "
                             "XX XY XZ YY YZ ZZ MX MY MZ M of the base body in R_0")
        check_physical(base_params, f"robot '{self.name}', base body (link 0)", strict=self.strict)
        put("base_params", _frozen(base_params))
        self._check_links()
        put("_derived", derive(self))
        put("content_key", _content_key(self))

    def _names(self, key: str, names, nf: int) -> tuple:
        if isinstance(names, str) or not isinstance(names, (tuple, list)) or not all(isinstance(x, str) for x in names):
            raise ModelError(f"robot '{self.name}': {key} must be a tuple of {nf} strings, got {_short(names)}")
        if len(names) != nf:
            raise ModelError(f"robot '{self.name}': {key} needs {nf} names (one per frame), got {len(names)}")
        return tuple(names)

    def _numbers(self, key: str, value) -> np.ndarray:
        """``value`` as a numeric array of its own dtype (integers stay integers, for the messages)."""
        try:
            a = np.asarray(value)
        except (TypeError, ValueError):
            a = np.asarray(None)
        if a.dtype.kind not in "biuf":
            raise ModelError(f"robot '{self.name}': field {key} must be an array of numbers, got {_short(value)}")
        return a

    def _floats(self, key: str, value) -> np.ndarray:
        try:
            if np.asarray(value).dtype.kind == "b":  # True/False is not a length or an angle
                raise TypeError(key)
            return np.array(value, dtype=float)
        except (TypeError, ValueError):
            raise ModelError(f"robot '{self.name}': field {key} must be an array of real numbers, got {_short(value)}") from None

    def _positive_limits(self, key: str, value, n: int) -> np.ndarray:
        """A symmetric per-joint limit (qdlim, taulim): n positive numbers, inf where unlimited."""
        v = np.full(n, np.inf) if value is None else self._floats(key, value)
        if v.shape != (n,):
            raise ModelError(f"robot '{self.name}': {key} has shape {v.shape}; expected ({n},), one per joint in "
                             "the order of q")
        bad = np.isnan(v) | ~(v > 0)
        if np.any(bad):
            k = int(np.flatnonzero(bad)[0])
            raise ModelError(f"robot '{self.name}', joint {k + 1} ({self.frame_names[np.flatnonzero(self.sigma != 2)[k]]}): field "
                             f"{key} = {v[k]:g}; a limit must be a positive number (inf where unlimited)")
        return _frozen(v)

    def _vector(self, key: str, value, nf: int) -> np.ndarray:
        v = np.zeros(nf) if value is None else self._floats(key, value)
        if v.shape != (nf,):
            raise ModelError(f"robot '{self.name}': {key} has shape {v.shape}; expected ({nf},), one per frame")
        if not np.all(np.isfinite(v)):
            j = int(np.flatnonzero(~np.isfinite(v))[0]) + 1
            raise ModelError(f"robot '{self.name}', frame {j}: field {key} is not finite; give a number")
        if np.any(np.abs(v) > MAX_ABS_VALUE):
            j = int(np.argmax(np.abs(v) > MAX_ABS_VALUE)) + 1
            raise ModelError(f"robot '{self.name}', frame {j}: field {key} = {v[j - 1]:g} exceeds {MAX_ABS_VALUE:g} in "
                             "magnitude; give SI units (m, rad, kg m^2, N m)")
        self._not_subnormal(key, v)
        return _frozen(v)

    def _not_subnormal(self, key: str, v: np.ndarray, columns=None) -> None:
        """Refuse subnormal values (nonzero, below 2.2e-308 in magnitude): they are underflow or typos, and their
        inverses (1/M in the generated models, the pivots of direct dynamics) are inf."""
        bad = (v != 0) & (np.abs(v) < np.finfo(np.float64).tiny)
        if np.any(bad):
            at = np.argwhere(bad)[0]
            field = key if columns is None else f"{key} ({columns[at[1]]})"
            raise ModelError(f"robot '{self.name}', frame {int(at[0]) + 1}: field {field} = {float(v[tuple(at)]):g} is "
                             "subnormal (nonzero below 2.2e-308); give 0 or a value of physical size (SI units)")

    def _check_links(self) -> None:
        for i in range(self.nf):
            frame, link = self.frame_names[i], self.link_names[i]
            named = frame if not link or link == frame else f"{link}, the link of frame {frame}"  # a URDF's link
            where = f"robot '{self.name}', link {i + 1} ({named})"
            check_physical(self.params[i], where, strict=self.strict)
            for key in ("Ia", "Fc", "Fv", "Fst", "kst", "Bst"):
                if getattr(self, key)[i] < 0:
                    raise ModelError(f"{where}: field {key} = {getattr(self, key)[i]} is negative; it must be >= 0")
            if self.sigma[i] == 2:
                for key in _JOINT_PARAMS:
                    if getattr(self, key)[i] != 0:
                        raise ModelError(f"{where}: field {key} = {getattr(self, key)[i]} on a fixed frame (sigma = "
                                         "2); joint quantities belong to frames with a joint, set it to 0")

    # ---- derived, read-only views -------------------------------------------------------------
    @property
    def nf(self) -> int:
        """Number of frames (links), fixed frames included."""
        return int(self.sigma.size)

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and other.content_key == self.content_key

    def __hash__(self) -> int:
        return hash(self.content_key)

    @property
    def derived(self) -> RobotData:
        """Constants every algorithm derives from this robot, computed once when it was built."""
        return self._derived

    @property
    def joint_frames(self) -> np.ndarray:
        """0-based indices of the frames with a joint (σ ≠ 2), in the order of q (read-only)."""
        return self._derived.joint_frames

    @property
    def n(self) -> int:
        """Number of joint variables (frames with σ ≠ 2)."""
        return int(self._derived.joint_frames.size)

    @property
    def floating(self) -> bool:
        """True for a free-floating base (``base == "floating"``)."""
        return self.base == "floating"

    @property
    def is_serial(self) -> bool:
        return bool(np.all(self.antecedent == np.arange(self.nf)))

    @property
    def J(self) -> np.ndarray:
        """Inertia tensors ^jJ_j about O_j, shape (nf, 3, 3) (read-only)."""
        return self._derived.J

    @property
    def MS(self) -> np.ndarray:
        """First moments ^jMS_j, shape (nf, 3)."""
        return self.params[:, 6:9]

    @property
    def M(self) -> np.ndarray:
        """Masses M_j, shape (nf,)."""
        return self.params[:, 9]

    @property
    def children(self) -> tuple[tuple[int, ...], ...]:
        """0-based child frame indices of each frame."""
        return self._derived.children

    # ---- names of frames and joint variables (URDF joint names are kept as frame names) ----
    @property
    def joint_names(self) -> tuple[str, ...]:
        """Names of the n joint variables, in the order of q (a joint is named after its frame; fixed frames,
        which have no entry in q, are left out: see ``frame_names``)."""
        return tuple(self.frame_names[i] for i in self.joint_frames)

    @property
    def q_names(self) -> tuple[str, ...]:
        """Same as ``joint_names``: the names of q's n entries."""
        return self.joint_names

    def frame_index(self, name: str) -> int:
        """Frame number j (1..nf, for ``frame=`` arguments) of the frame called ``name``: a frame name
        (``frame_names``) or the name of the link whose frame it is (``link_names``, e.g. a URDF link)."""
        i = named_frame(self, name)
        if i is None:
            raise ModelError(unknown_frame_message(self, name))
        return i + 1

    # ---- joints: the unit of every per-joint quantity a user reads or sets ----------------------------------
    def joint_number(self, joint) -> int:
        """Joint number k (1..n, the position in q) of ``joint``: a joint number, or the name of a joint's frame.

        Joints are numbered 1..n in the order of q; frames 1..nf in the order of the Khalil–Kleinfinger table.
        The two agree on a serial robot without fixed frames; ``joint(k).frame`` maps one to the other.
        """
        if isinstance(joint, str):
            if joint not in self.q_names:
                kind = "a fixed frame, not a joint" if joint in self.frame_names else "not a joint"
                raise ModelError(f"robot '{self.name}': {joint!r} is {kind}; joints: {', '.join(self.q_names)}")
            return self.q_names.index(joint) + 1
        if isinstance(joint, (bool, np.bool_)) or not (isinstance(joint, (int, np.integer)) and 1 <= joint <= self.n):
            raise ModelError(f"robot '{self.name}': joint = {joint!r}; give a joint number 1..{self.n} or a joint name")
        return int(joint)

    def joint(self, joint) -> "Joint":
        """The joint ``joint`` (number 1..n or name) with its frame, type, rotor inertia, friction and limits."""
        k = self.joint_number(joint)
        i = int(self.joint_frames[k - 1])
        return Joint(number=k, frame=i + 1, name=self.frame_names[i], sigma=int(self.sigma[i]),
                     **{key: float(getattr(self, key)[i]) for key in _JOINT_PARAMS},
                     qmin=float(self.qlim[k - 1, 0]), qmax=float(self.qlim[k - 1, 1]),
                     qdmax=float(self.qdlim[k - 1]), taumax=float(self.taulim[k - 1]))

    @property
    def joints(self) -> tuple["Joint", ...]:
        """Every joint, in the order of q (see :meth:`joint`)."""
        return tuple(self.joint(k) for k in range(1, self.n + 1))

    def joint_values(self, key: str) -> np.ndarray:
        """A per-joint quantity (Ia, Fc, Fv, Foff, Fst, kst, Bst) as an (n,) array in the order of q (copy)."""
        if key not in _JOINT_PARAMS:
            raise ModelError(f"joint_values: unknown quantity {key!r}; use one of {', '.join(_JOINT_PARAMS)}")
        return np.array(getattr(self, key)[self.joint_frames])

    def with_joint_parameters(self, **values) -> "Robot":
        """A new robot with per-joint quantities set from arrays of n values, one per joint in the order of q.

        ``values``: any of Ia Fc Fv Foff Fst kst Bst [9.26], [9.29] as (n,) arrays (or scalars for every joint),
        ``qlim`` as (n, 2), and the velocity and torque limits ``qdlim``, ``taulim`` as (n,).  Fixed frames keep their zeros: users never count them.

        Examples
        --------
        >>> robot.with_joint_parameters(Fc=[1.0, 0.8, 0.5], Fv=0.1)
        """
        unknown = sorted(set(values) - set(_JOINT_PARAMS) - {"qlim", *_RATE_LIMITS})
        if unknown:
            raise ModelError(f"with_joint_parameters: unknown quantity {unknown[0]!r}; use one of "
                             f"{', '.join(_JOINT_PARAMS)}, qlim, qdlim or taulim")
        changes = {}
        for key, value in values.items():
            shape = (self.n, 2) if key == "qlim" else (self.n,)
            try:
                per_joint = np.broadcast_to(np.asarray(value, dtype=float), shape)
            except (TypeError, ValueError):
                raise ModelError(f"with_joint_parameters: {key} = {_short(value)}; give {self.n} numbers, one per "
                                 "joint in the order of q" + (" ([min, max] each)" if key == "qlim" else "")) from None
            if key in ("qlim", *_RATE_LIMITS):
                changes[key] = per_joint
            else:
                column = np.array(getattr(self, key))
                column[self.joint_frames] = per_joint
                changes[key] = column
        return self.replace(**changes)

    def replace(self, **changes) -> "Robot":
        """A copy with some fields changed (validated again).  ``joint_names=`` (n names, in the order of q)
        renames the joints' frames and keeps the names of the fixed frames."""
        if "joint_names" in changes:
            names = changes.pop("joint_names")
            if isinstance(names, str) or not isinstance(names, (tuple, list)) or len(names) != self.n:
                raise ModelError(f"robot '{self.name}': joint_names needs {self.n} names (one per joint, in the order "
                                 f"of q), got {_short(names)}; frame_names= names all {self.nf} frames")
            frames = list(changes.get("frame_names", self.frame_names))
            for i, x in zip(self.joint_frames, names):
                frames[i] = x
            changes["frame_names"] = tuple(frames)
        return dataclasses.replace(self, **changes)

    def __reduce__(self):
        # Rebuilt through the constructor, so that an unpickled or copied robot is validated and read-only again.
        return (_rebuild, ({f.name: getattr(self, f.name) for f in dataclasses.fields(self)},))

    def __repr__(self) -> str:
        kinds = "".join("RP-"[s] for s in self.sigma)
        base = "" if self.base == "fixed" else f", base={self.base}"
        return f"Robot({self.name!r}, {kinds}, n={self.n}, nf={self.nf}{'' if self.is_serial else ', tree'}{base})"


@dataclass(frozen=True)
class Joint:
    """One joint of a robot, as users count them (see :meth:`Robot.joint`).

    Attributes
    ----------
    number : int        k, 1..n: its position in q
    frame : int         j, 1..nf: its frame in the Khalil–Kleinfinger table (``frame=`` arguments)
    name : str          the frame's name (the URDF joint name for a URDF robot)
    sigma : int         0 revolute, 1 prismatic
    Ia, Fc, Fv, Foff, Fst, kst, Bst : float   the joint's entries of the :class:`Robot` fields [9.26], [9.29]
    qmin, qmax, qdmax, taumax : float         its ``qlim`` row, ``qdlim`` and ``taulim`` (±inf where unlimited)
    """

    number: int
    frame: int
    name: str
    sigma: int
    Ia: float
    Fc: float
    Fv: float
    Foff: float
    Fst: float
    kst: float
    Bst: float
    qmin: float
    qmax: float
    qdmax: float = float("inf")
    taumax: float = float("inf")


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _content_key(robot: Robot) -> bytes:
    h = hashlib.sha256()
    for f in dataclasses.fields(robot):
        value = getattr(robot, f.name)
        if f.name in _RATE_LIMITS and np.all(np.isinf(value)):
            continue  # a robot without rate limits keeps the key it had before these fields existed
        h.update(f.name.encode() + b"\0")
        if isinstance(value, np.ndarray):
            h.update(f"{value.dtype.str}{value.shape}".encode() + np.ascontiguousarray(value).tobytes())
        else:
            h.update(repr(value).encode("utf-8", "surrogatepass"))
        h.update(b"\0")
    return h.digest()


def _frozen(a: np.ndarray) -> np.ndarray:
    return frozen(np.array(a))


def _rebuild(fields: dict) -> Robot:
    return Robot(**fields)


def with_parameters(robot: Robot, link: int | None = None, **values) -> Robot:
    """A new robot with some inertial, rotor or friction parameters changed (``robot`` itself cannot change).

    Parameters
    ----------
    robot : Robot
    link : int, optional
        Frame number j (1..nf) whose parameters change; the values are then scalars.  Without it, each value is a
        whole per-frame array (``params`` (nf, 10), or a named column such as ``M`` (nf,)).
    **values
        Standard inertial parameters by name (XX XY XZ YY YZ ZZ MX MY MZ M, Khalil & Dombre §9.4.1), ``params``,
        or joint quantities Ia Fc Fv Foff Fst kst Bst [9.26], [9.29].

    Returns
    -------
    Robot
        Validated again, like any robot.

    Examples
    --------
    >>> heavier = with_parameters(robot, 2, M=2 * robot.M[1])   # doubles the mass of link 2
    """
    check_robot(robot)
    unknown = sorted(set(values) - set(PARAMETER_NAMES) - set(_JOINT_PARAMS) - {"params"})
    if unknown:
        raise ModelError(f"with_parameters: unknown parameter {unknown[0]!r}; use one of "
                         f"{', '.join(PARAMETER_NAMES + _JOINT_PARAMS)} or params")
    if link is not None and not (isinstance(link, (int, np.integer)) and 1 <= link <= robot.nf):
        raise ModelError(f"with_parameters: link = {link!r}; give a frame number from 1 to {robot.nf}")
    params = np.array(robot.params)
    changes = {}
    for key, value in values.items():
        try:
            _set_values(params, changes, robot, key, value, link)
        except (ValueError, TypeError) as exc:
            shape = "a number" if link is not None else ("an (nf, 10) array" if key == "params" else f"{robot.nf} numbers")
            raise ModelError(f"with_parameters: {key} = {value!r} does not fit ({exc}); give {shape}") from None
    return robot.replace(params=params, **changes)


def _set_values(params: np.ndarray, changes: dict, robot: Robot, key: str, value, link: int | None) -> None:
    rows = slice(None) if link is None else link - 1
    if key == "params":
        params[rows] = np.asarray(value, dtype=float)
    elif key in PARAMETER_NAMES:
        params[rows, PARAMETER_NAMES.index(key)] = value
    else:
        column = np.array(changes.get(key, getattr(robot, key)))
        column[rows] = value
        changes[key] = column


def named_frame(robot: Robot, name: str) -> int | None:
    """0-based index of the frame called ``name`` (frame names first, then link names), or None."""
    if name in robot.frame_names:
        return robot.frame_names.index(name)
    if name and name in robot.link_names:
        return robot.link_names.index(name)
    return None


def unknown_frame_message(robot: Robot, name: str) -> str:
    """The message for a frame name that :func:`named_frame` does not find: the names it accepts."""
    links = [x for x in robot.link_names if x]
    shown = ", ".join(list(robot.frame_names) + links)
    hint = ("; a URDF link whose frame differs from the frame of its joint has a frame of its own with "
            "rd.from_urdf(..., link_frames=True)" if links else "")
    return f"frame {name!r} is not a frame of robot '{robot.name}'; frame and link names: {shown}{hint}"


def check_robot(robot, name: str = "robot"):
    """Raise :class:`InputError` unless ``robot`` is a :class:`~robodyn.Robot`."""
    if not isinstance(robot, Robot):
        raise InputError(f"argument '{name}' is {shown(robot)}; give a Robot, e.g. rd.load('rx90') or rd.Robot(...)")
    return robot

