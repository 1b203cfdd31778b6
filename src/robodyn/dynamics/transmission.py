"""Motors, transmissions and end-effector wrenches: Khalil & Dombre §9.3.5–9.3.7 [9.29]–[9.33], De Luca.

A transmission is a constant linear map dq = J_qm dq_m [9.31] (J_qm = diag(1/N) for gears, De Luca's coupling
matrix otherwise), with motor torques τ_m = J_qmᵀ Γ [9.32]–[9.33]; keeping the rotors' spinning energy only,
the motor-side model is (J_qmᵀ A J_qm + J_m) q̈_m + J_qmᵀ H + F_vm q̇_m + F_cm sign(q̇_m) = τ_m
(docs/extended-models.md, "Motors and transmissions").
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from robodyn.arrays import as_real_array, check_array, check_type, finite_result, working_dtype
from robodyn.model.arguments import frame_index, joint_arrays
from robodyn.model.robot import check_robot
from robodyn.dynamics import api
from robodyn.dynamics.lagrange import cholesky_solve
from robodyn.dynamics.newton_euler import bias_torques, inverse_dynamics
from robodyn.errors import InputError, ModelError
from robodyn.kinematics import forward_kinematics, jacobian
from robodyn.model.derived import frozen as _frozen
from robodyn.model.robot import Robot
from robodyn.spatial import mv


@dataclass(frozen=True, eq=False)
class Transmission:
    """Motors and transmissions of n joints, as immutable data.

    Parameters
    ----------
    J_qm : array_like (n, n)
        ∂q/∂q_m [9.31], invertible.  Use :meth:`gears` for diagonal gear ratios and :meth:`from_motor_matrix`
        for a joint-to-motor matrix (q_m = J_mq q, e.g. libbarrett's ``j2mp``).
    J_m : array_like (n,), optional
        Rotor (and transmission) inertias on the motor side (kg m²), ≥ 0 (default 0: unknown, e.g. the
        parameters that :func:`robodyn.identify` estimates with ``transmission=``).
    Fv_m, Fc_m : array_like (n,), optional
        Motor-side viscous (N m s/rad) and Coulomb (N m) friction, ≥ 0 (default 0).
    gains : array_like (n,), optional
        Drive gains k_i > 0: the motor torque is τ_mi = k_i u_i for a drive command u_i (a current, A → N m/A);
        default 1 (the data are motor torques).  Used by :func:`joint_torques_from_motor`.

    Attributes
    ----------
    J_mq : ndarray (n, n)
        q_m = J_mq q, the inverse of J_qm (exactly the matrix given to :meth:`from_motor_matrix` or ``diag(N)`` of
        :meth:`gears`).
    """

    J_qm: np.ndarray
    J_m: np.ndarray | None = None
    Fv_m: np.ndarray | None = None
    Fc_m: np.ndarray | None = None
    gains: np.ndarray | None = None
    J_mq: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        put = lambda k, v: object.__setattr__(self, k, v)  # noqa: E731  (frozen dataclass)
        J = as_real_array("J_qm", self.J_qm).astype(float)
        if J.ndim != 2 or J.shape[0] != J.shape[1] or J.shape[0] == 0 or not np.all(np.isfinite(J)):
            raise ModelError(f"Transmission: J_qm has shape {J.shape}; give a finite square (n, n) matrix dq/dq_m")
        n = J.shape[0]
        if np.linalg.matrix_rank(J) < n:
            raise ModelError("Transmission: J_qm is singular; every joint must be driven, give an invertible dq/dq_m")
        put("J_qm", _frozen(J))
        put("J_mq", _frozen(np.linalg.inv(J)))
        for key in ("J_m", "Fv_m", "Fc_m"):
            put(key, motor_vector("Transmission", key, getattr(self, key), n, positive=False))
        put("gains", motor_vector("Transmission", "gains", np.ones(n) if self.gains is None else self.gains, n,
                                  positive=True))

    @property
    def n(self) -> int:
        return int(self.J_qm.shape[0])

    @property
    def coupled(self) -> np.ndarray:
        """bool (n,): motor i drives more than one joint (row i of J_mq has more than one nonzero entry)."""
        return np.count_nonzero(self.J_mq, axis=1) > 1

    @classmethod
    def gears(cls, N, J_m=None, Fv_m=None, Fc_m=None, gains=None) -> "Transmission":
        """Independent gears with ratios N_j = q̇_mj / q̇_j (nonzero; sign gives the rotation sense)."""
        if _holds_bool(N):
            raise InputError(f"argument 'N' = {N!r} holds a boolean; give one finite nonzero ratio per joint")
        N = as_real_array("N", N).astype(float)
        if N.ndim != 1 or np.any(N == 0) or not np.all(np.isfinite(N)):
            raise ModelError(f"Transmission.gears: N = {N.tolist()}; give one finite nonzero ratio per joint")
        return _with_motor_matrix(cls(np.diag(1.0 / N), J_m, Fv_m, Fc_m, gains), np.diag(N))

    @classmethod
    def from_motor_matrix(cls, J_mq, J_m=None, Fv_m=None, Fc_m=None, gains=None) -> "Transmission":
        """From the joint-to-motor matrix q_m = J_mq q (libbarrett's ``j2mp``): J_qm = J_mq⁻¹.

        The motor constants are optional (default 0): they are what identification with ``transmission=``
        estimates.  A singular or ill-conditioned J_mq (cond > 1e12) is refused.
        """
        J_mq = as_real_array("J_mq", J_mq).astype(float)
        if J_mq.ndim != 2 or J_mq.shape[0] != J_mq.shape[1] or J_mq.shape[0] == 0 or not np.all(np.isfinite(J_mq)):
            raise ModelError(f"Transmission.from_motor_matrix: J_mq has shape {J_mq.shape}; give a finite square "
                             "(n, n) matrix, q_m = J_mq q")
        if np.linalg.matrix_rank(J_mq) < J_mq.shape[0] or np.linalg.cond(J_mq) > 1e12:
            raise ModelError("Transmission.from_motor_matrix: J_mq is singular (a motor is a combination of the "
                             "others, or a joint is driven by no motor); give an invertible joint-to-motor matrix")
        return _with_motor_matrix(cls(np.linalg.inv(J_mq), J_m, Fv_m, Fc_m, gains), J_mq)

    @property
    def reflected_inertia(self) -> np.ndarray:
        """Rotor inertia seen from the joints, J_qm⁻ᵀ J_m J_qm⁻¹ (n, n); diag(N² J_m) = Ia for gears [9.29]."""
        return self.J_mq.T @ np.diag(self.J_m) @ self.J_mq

    def replace(self, **changes) -> "Transmission":
        """A copy with some of J_m, Fv_m, Fc_m, gains changed (the coupling matrix is kept exactly)."""
        unknown = set(changes) - {"J_m", "Fv_m", "Fc_m", "gains"}
        if unknown:
            raise InputError(f"Transmission.replace: unknown field(s) {', '.join(sorted(unknown))}; "
                             "give J_m, Fv_m, Fc_m or gains")
        values = {k: getattr(self, k) for k in ("J_m", "Fv_m", "Fc_m", "gains")} | changes
        return _with_motor_matrix(Transmission(self.J_qm, **values), self.J_mq)


def _with_motor_matrix(tr: Transmission, J_mq: np.ndarray) -> Transmission:
    """``tr`` holding the joint-to-motor matrix exactly as given (not the round-off of inv(inv(J_mq)))."""
    object.__setattr__(tr, "J_mq", _frozen(np.array(J_mq, dtype=float)))
    return tr


def joint_from_motor(tr: Transmission, qm) -> np.ndarray:
    """Joint positions q = J_qm q_m [9.31] (..., n) (rad | m) of motor positions ``qm`` (..., n) (rad); also maps
    velocities and accelerations (J_qm is constant).  float32 if ``qm`` is."""
    a = _vec(tr, "qm", qm)
    return finite_result("joint_from_motor", a @ tr.J_qm.T.astype(a.dtype))


def motor_from_joint(tr: Transmission, q) -> np.ndarray:
    """Motor positions q_m = J_qm⁻¹ q (..., n) (rad) of joint positions ``q`` (..., n) (rad | m), or their rates:
    the inverse of :func:`joint_from_motor` [9.31].  float32 if ``q`` is."""
    a = _vec(tr, "q", q)
    return finite_result("motor_from_joint", a @ tr.J_mq.T.astype(a.dtype))


def actuator_torques(tr: Transmission, tau) -> np.ndarray:
    """Motor torques τ_m = J_qmᵀ Γ (..., n) (N m) that produce the joint torques ``tau`` Γ (..., n) (N m | N),
    [9.32]–[9.33].  float32 if ``tau`` is."""
    a = _vec(tr, "tau", tau)
    return finite_result("actuator_torques", a @ tr.J_qm.astype(a.dtype))


def joint_torques_from_motor(tr: Transmission, tau_m) -> np.ndarray:
    """Joint torques Γ = J_mqᵀ (k ⊙ τ_m) (..., n) (N m | N), the inverse of :func:`actuator_torques` [9.32]–[9.33].

    ``tau_m`` (..., n): motor torques (N m), or drive commands u (e.g. currents, A) when ``tr.gains`` holds the
    drive gains k (N m per unit of u): τ_m = k ⊙ u.  float32 if ``tau_m`` is.
    """
    a = _vec(tr, "tau_m", tau_m)
    return finite_result("joint_torques_from_motor", (a * tr.gains.astype(a.dtype)) @ tr.J_mq.astype(a.dtype))


def transmission_torques(tr: Transmission, qd, qdd) -> np.ndarray:
    """Joint-side torques of the rotors and motor friction, J_mqᵀ (J_m q̈_m + F_vm q̇_m + F_cm sign(q̇_m)) (..., n)
    (N m | N), with q̇_m = J_mq q̇, for joint velocities and accelerations ``qd``, ``qdd`` (..., n): the terms
    :func:`motor_inverse_dynamics` adds, seen from the joints (``inverse_dynamics(robot, q, qd, qdd) +
    transmission_torques(tr, qd, qdd)`` is its J_mqᵀ τ_m for ``robot.Ia = 0``)."""
    qd, qdd = _vec(tr, "qd", qd), _vec(tr, "qdd", qdd)
    J = tr.J_mq.astype(np.result_type(qd, qdd))
    return finite_result("transmission_torques", _rotor_torques(tr, qd @ J.T, qdd @ J.T) @ J)


def motor_inertia_matrix(robot: Robot, tr: Transmission, qm, method: str = "composite") -> np.ndarray:
    """Motor-side inertia matrix J_qmᵀ A(q) J_qm + diag(J_m) at q = J_qm q_m (module docstring).

    Parameters
    ----------
    robot : Robot — the links; ``robot.Ia`` must be zero (the rotors are ``tr.J_m``).
    tr : Transmission
    qm : array_like (..., n) — motor positions (rad).
    method : str — inertia-matrix method of :func:`robodyn.inertia_matrix`.

    Returns
    -------
    ndarray (..., n, n)  (kg m²); float32 if ``qm`` is.
    """
    _check(robot, tr)
    A = api.inertia_matrix(robot, joint_from_motor(tr, qm), method=method)
    J = tr.J_qm.astype(A.dtype)
    return finite_result("motor_inertia_matrix", np.swapaxes(J, 0, 1) @ A @ J + np.diag(tr.J_m).astype(A.dtype))


def motor_inverse_dynamics(robot: Robot, tr: Transmission, qm, qmd, qmdd, wrenches=None, gravity=None) -> np.ndarray:
    """Motor torques of the motor-side torque equation (..., n), in motor coordinates.

    τ_m = J_m q̈_m + F_vm q̇_m + F_cm sign(q̇_m) + J_qmᵀ Γ(q, q̇, q̈),  with (q, q̇, q̈) = J_qm (q_m, q̇_m, q̈_m),

    Γ the joint torques of ``robot`` (Newton–Euler, joint friction and wrenches included).  ``robot.Ia`` must
    be zero: the rotors are modelled by ``tr.J_m`` (their joint-side image is ``tr.reflected_inertia``).

    Parameters
    ----------
    robot : Robot
    tr : Transmission
    qm, qmd, qmdd : array_like (..., n) — motor positions (rad), velocities (rad/s), accelerations (rad/s²).
    wrenches, gravity : optional, as in :func:`robodyn.inverse_dynamics`.

    Returns
    -------
    ndarray (..., n)  motor torques τ_m (N m); float32 if every input is.
    """
    _check(robot, tr)
    dtype, _, a = joint_arrays(robot, qm=qm, qmd=qmd, qmdd=qmdd)
    q, qd, qdd = (joint_from_motor(tr, a[k]) for k in ("qm", "qmd", "qmdd"))
    tau = inverse_dynamics(robot, q, qd, qdd, wrenches=wrenches, gravity=gravity)
    return finite_result("motor_inverse_dynamics", (actuator_torques(tr, tau) + _rotor_torques(tr, a["qmd"], a["qmdd"])).astype(dtype))


def motor_forward_dynamics(robot: Robot, tr: Transmission, qm, qmd, tau_m, wrenches=None, gravity=None,
                           method: str | None = None, inertia_method: str = "composite") -> np.ndarray:
    """Motor accelerations q̈_m (..., n) under motor torques τ_m: the motor-side model solved by Cholesky.

    (J_qmᵀ A J_qm + J_m) q̈_m = τ_m − F_vm q̇_m − F_cm sign(q̇_m) − J_qmᵀ H(q, q̇)    (H: [9.95], friction and wrenches included)

    Parameters
    ----------
    robot : Robot — ``robot.Ia`` must be zero.
    tr : Transmission
    qm, qmd : array_like (..., n) — motor positions (rad) and velocities (rad/s).
    tau_m : array_like (..., n) — motor torques (N m).
    wrenches, gravity : optional, as in :func:`robodyn.forward_dynamics`.
    inertia_method : str — inertia-matrix method of :func:`robodyn.inertia_matrix` (the solve is Cholesky).
    method : str, deprecated — the old name of ``inertia_method`` (elsewhere ``method=`` of a forward-dynamics
        function names a direct-dynamics method, as in :func:`robodyn.dynamics.elastic_forward_dynamics`).

    Returns
    -------
    ndarray (..., n)  motor accelerations q̈_m (rad/s²); float32 if every input is.

    Raises
    ------
    ModelError
        The motor-side inertia matrix is singular (massless links, J_m = 0).
    """
    if method is not None:
        warnings.warn("motor_forward_dynamics(method=) is deprecated: it names the inertia-matrix method; use "
                      "inertia_method=", DeprecationWarning, stacklevel=2)
        inertia_method = method
    _check(robot, tr)
    dtype, _, a = joint_arrays(robot, qm=qm, qmd=qmd, tau_m=tau_m)
    q, qd = joint_from_motor(tr, a["qm"]), joint_from_motor(tr, a["qmd"])
    H = bias_torques(robot, q, qd, wrenches=wrenches, gravity=gravity)
    rhs = a["tau_m"] - motor_friction(tr, a["qmd"]) - actuator_torques(tr, H)
    A_m = motor_inertia_matrix(robot, tr, a["qm"], method=inertia_method)
    return finite_result("motor_forward_dynamics",
                         cholesky_solve(A_m, rhs, robot.name, what="motor-side inertia matrix").astype(dtype))


def end_effector_torques(robot: Robot, q, wrench, frame=None, point=None, expressed_in: str = "base") -> np.ndarray:
    """Joint torques Γ_e = Jᵀ L_e needed to exert the wrench L_e on the environment, [9.30].

    Parameters
    ----------
    q : array_like (..., n)
    wrench : array_like (..., 6)
        [f; m]: force (N) and moment (N m) exerted BY the robot ON the environment, the moment taken about the
        application point (the same sign convention as the ``wrenches`` argument of :func:`robodyn.inverse_dynamics`).
    frame : int or str, optional — the frame (1..nf or name) of the link that pushes; default the last.
    point : array_like (..., 3), optional — application point fixed to that link, in its frame R_j (m);
        default its origin O_j.
    expressed_in : {"base", "link"}
        The axes of ``wrench``: the base frame R_0 (default) or the pushing link's frame R_j, as the rows of
        ``wrenches=`` are.

    Returns
    -------
    ndarray (..., n), to be added to the free-motion torques of [9.6].
    """
    if expressed_in not in ("base", "link"):
        raise InputError(f"expressed_in = {expressed_in!r}; choose 'base' (axes of R_0) or 'link' (axes of R_j)")
    dtype, batch, a = joint_arrays(robot, q=q)
    L = check_array("wrench", wrench, (6,), batch, dtype)
    Jac = jacobian(robot, a["q"], frame=frame, point=point)
    if expressed_in == "link":
        j = frame_index(robot, frame)
        R = forward_kinematics(robot, a["q"])[..., j, :3, :3]
        L = np.concatenate([mv(R, L[..., :3]), mv(R, L[..., 3:])], -1)
    return finite_result("end_effector_torques", np.einsum("...ik,...i->...k", Jac, L))


def motor_friction(owner, qmd: np.ndarray) -> np.ndarray:
    """F_vm q̇_m + F_cm sign(q̇_m) of the motors of ``owner`` (a :class:`Transmission` or an elastic robot)."""
    dt = qmd.dtype
    return owner.Fv_m.astype(dt) * qmd + owner.Fc_m.astype(dt) * np.sign(qmd)


def _rotor_torques(tr: Transmission, qmd: np.ndarray, qmdd: np.ndarray) -> np.ndarray:
    return tr.J_m.astype(qmd.dtype) * qmdd + motor_friction(tr, qmd)


def _check(robot: Robot, tr: Transmission) -> None:
    check_robot(robot)
    check_type("tr", tr, Transmission)
    if tr.n != robot.n:
        raise InputError(f"transmission has n = {tr.n} motors but robot '{robot.name}' has n = {robot.n} joints")
    if np.any(robot.derived.Ia != 0):
        raise InputError(
            f"robot '{robot.name}' has rotor inertias Ia != 0 and a Transmission with motor inertias J_m; "
            "the rotors would count twice: use robot.replace(Ia=0)"
        )


def _vec(tr: Transmission, name: str, v) -> np.ndarray:
    check_type("tr", tr, Transmission)
    a = as_real_array(name, v)
    if a.ndim == 0 or a.shape[-1] != tr.n or a.dtype.kind not in "biuf":
        raise InputError(f"argument '{name}' has shape {a.shape}; give finite values of shape (..., {tr.n})")
    if not np.all(np.isfinite(a)):
        raise InputError(f"argument '{name}' contains NaN or inf; give finite values")
    return a.astype(working_dtype(a), copy=False)


def motor_vector(owner: str, key: str, value, n: int, positive: bool) -> np.ndarray:
    """A read-only (n,) float vector of motor constants (0 when ``value`` is None), every entry finite and > 0
    (``positive``) or >= 0; :class:`ModelError` naming ``owner`` and ``key`` otherwise."""
    v = np.zeros(n) if value is None else as_real_array(key, value).astype(float)
    bound = "> 0" if positive else ">= 0"
    if v.shape != (n,) or not np.all(np.isfinite(v)) or np.any(v <= 0 if positive else v < 0):
        raise ModelError(f"{owner}: {key} = {np.asarray(value).tolist()}; give {n} finite numbers, every entry must be {bound}")
    return _frozen(v)


#: Most motors a transmission file describes (its J_mq is checked invertible: O(size³) work).
MAX_MOTORS = 1000
#: Keys of a transmission file (see :func:`load_transmission`).
TRANSMISSION_KEYS = ("gear_ratios", "coupling", "motor_matrix", "drive_gains", "rotor_inertia", "viscous", "coulomb")


def _holds_bool(value) -> bool:
    """Whether a YAML value (a number, or nested lists) holds a boolean anywhere."""
    if isinstance(value, (bool, np.bool_)):
        return True
    return isinstance(value, (list, tuple)) and any(_holds_bool(v) for v in value)


def _counting_number(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def load_transmission(path, n: int | None = None) -> Transmission:
    """Read a transmission file (YAML, through the hardened model-file reader of :mod:`robodyn.model.io`).

    Format (every key optional except one of ``gear_ratios`` / ``motor_matrix``)::

        gear_ratios: [100, 100, 100, 80, 80, 50]    # N_i: q_mi = N_i q_i + coupling terms (J_mq's diagonal)
        coupling:                                   # off-diagonal entries of J_mq (motor and joint numbered from 1)
          - {motor: 6, joint: 5, value: 50}         # motor 6 also turns with q5: q_m6 = 50 q5 + 50 q6
        drive_gains: [0.2, 0.2, 0.2, 0.1, 0.1, 0.1] # k_i (N m per unit of the drive command): τ_mi = k_i u_i
        rotor_inertia: [...]                        # J_m (kg m²), viscous Fv_m, coulomb Fc_m: known motor constants

    or ``motor_matrix: [[...], ...]``, the whole J_mq (q_m = J_mq q), instead of ``gear_ratios`` and ``coupling``.

    Parameters
    ----------
    path : str or PathLike
    n : int, optional — the number of joints of the robot; a file of another size is refused.

    Raises
    ------
    ModelFileError
        Unreadable file, not valid YAML, an unknown key, a malformed entry (the message names the key and entry).
    ModelError
        A singular coupling matrix, a non-positive drive gain.
    """
    from robodyn.errors import ModelFileError
    from robodyn.model.io import read_yaml_file

    where = f"transmission file {str(path)!r}"
    doc = read_yaml_file(path, where)
    if not isinstance(doc, dict):
        raise ModelFileError(f"{where}: expected a mapping with keys {', '.join(TRANSMISSION_KEYS)}")
    unknown = sorted(str(k) for k in doc if k not in TRANSMISSION_KEYS)
    if unknown:
        raise ModelFileError(f"{where}: unknown key(s) {', '.join(map(repr, unknown))}; allowed: "
                             f"{', '.join(TRANSMISSION_KEYS)}")

    def numbers(key, shape=None):
        if _holds_bool(doc[key]):  # YAML's true / yes / on: not a ratio, gain or constant
            raise ModelFileError(f"{where}: {key} holds a boolean (true, yes, on, ...); give numbers")
        try:
            a = np.array(doc[key], dtype=float)
        except (TypeError, ValueError):
            raise ModelFileError(f"{where}: {key} must hold numbers") from None
        if a.ndim >= 1 and a.shape[0] > MAX_MOTORS:
            raise ModelFileError(f"{where}: {key} lists {a.shape[0]} entries; a transmission has at most "
                                 f"{MAX_MOTORS} motors")
        if (shape is not None and a.shape != shape) or not np.all(np.isfinite(a)):
            want = "finite numbers" if shape is None else f"{shape[0]} finite numbers" if len(shape) == 1 else \
                f"a {shape[0]} x {shape[1]} matrix of finite numbers"
            raise ModelFileError(f"{where}: {key} has shape {a.shape}; give {want}")
        return a

    if ("motor_matrix" in doc) == ("gear_ratios" in doc):
        raise ModelFileError(f"{where}: give either gear_ratios (with optional coupling) or motor_matrix")
    if "motor_matrix" in doc:
        if "coupling" in doc:
            raise ModelFileError(f"{where}: coupling goes with gear_ratios; motor_matrix already holds every entry")
        J = numbers("motor_matrix")
        if J.ndim != 2 or J.shape[0] != J.shape[1]:
            raise ModelFileError(f"{where}: motor_matrix has shape {J.shape}; give a square matrix, one row per motor")
    else:
        N = numbers("gear_ratios")
        if N.ndim != 1 or N.size == 0:
            raise ModelFileError(f"{where}: gear_ratios has shape {N.shape}; give one ratio per joint")
        J = np.diag(N)
        entries = doc.get("coupling") or []
        if not isinstance(entries, list):
            raise ModelFileError(f"{where}: coupling must be a list of {{motor: i, joint: j, value: x}}")
        for k, e in enumerate(entries, 1):
            if not isinstance(e, dict) or set(e) != {"motor", "joint", "value"}:
                raise ModelFileError(f"{where}: coupling entry {k} must be {{motor: i, joint: j, value: x}}")
            i, j, v = e["motor"], e["joint"], e["value"]
            size = N.size
            if not (_counting_number(i) and _counting_number(j) and 1 <= i <= size and 1 <= j <= size) or i == j:
                raise ModelFileError(f"{where}: coupling entry {k}: motor {i!r}, joint {j!r}; give two different "
                                     f"numbers from 1 to {size} (the diagonal is gear_ratios)")
            if not isinstance(v, (int, float)) or isinstance(v, bool) or not np.isfinite(v):
                raise ModelFileError(f"{where}: coupling entry {k}: value {v!r} is not a finite number")
            J[i - 1, j - 1] = v
    size = J.shape[0]
    if n is not None and size != n:
        raise ModelFileError(f"{where}: {size} motors but the robot has n = {n} joints; give one gear ratio per joint")
    extra = {}
    for key, arg in (("drive_gains", "gains"), ("rotor_inertia", "J_m"), ("viscous", "Fv_m"), ("coulomb", "Fc_m")):
        if key in doc:
            extra[arg] = numbers(key, (size,))
    try:
        return Transmission.from_motor_matrix(J, **extra)
    except ModelError as exc:
        raise ModelError(f"{where}: {exc}") from None
