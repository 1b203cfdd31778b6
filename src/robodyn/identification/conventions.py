"""A log's conventions against the model: which way gravity points (the mounting), which joints' torques have the
other sign (Khalil & Dombre [9.36]).

The regressor is affine in the gravity vector g (base frame): D(q, q̇, q̈; g) = D(q, q̇, q̈; 0) + Σ_k g_k D_k(q), D_k
the gravity columns of the unit vector e_k.  So the least-squares residual of any g comes from one Gram matrix of
five regressors of the samples, and the direction that explains the torques best is found on the sphere
|g| = |g_model|.  An arm on a wall or a tilted base, loaded with the floor's g = (0, 0, −9.81), leaves most of its
torques unexplained whatever the parameters: a log of a wall-mounted seven-joint arm (docs/identification.md,
"Warnings about the data") fits at 70 to 800 % per joint with g along −z and at 1 to 34 % with g along +x.
A joint whose torque was logged with the other sign contradicts the parameters it shares with the other joints:
negated, its least-squares residual falls; a joint whose torque its own parameters alone carry is seen instead by
the model's own (a priori) parameters, which predict it far better negated.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from robodyn.errors import InputError
from robodyn.identification.samples import stacked_runs
from robodyn.model.robot import Robot, check_robot

#: Samples (rows) the search uses, evenly spread over the log ...
SAMPLES = 2000
#: ... and at most this many equations (rows × joints) in the check of every :func:`robodyn.identify` call.
EQUATIONS = 14000
#: :func:`robodyn.identify` checks the mounting when least squares with the model's g leaves more than this share
#: of the torques' norm unexplained (the measured logs of the test suite: 0.016 to 0.22; a Panda tilted by 45°:
#: 0.34) ...
POOR_FIT = 0.3
#: ... and names a direction when its residual is below this fraction of the model's.
BETTER = 0.5
#: A joint's torque looks of the other sign when negating it brings that joint's least-squares residual below this
#: share of its torque's norm and below this fraction of what it was, the whole residual not growing.
FLIPPED = 0.5


@dataclass(frozen=True, eq=False)
class GravityDirection:
    """Result of :func:`gravity_direction`.

    Attributes
    ----------
    gravity : ndarray (3,) — the estimated gravity vector in the base frame (m/s²), of the model's magnitude.
    residual : float — ‖τ − D(g) K̂‖ / ‖τ‖ of least squares (standard parameters and friction) with it.
    model_residual : float — the same with the model's ``robot.gravity``.
    sign_from_model : bool — the sign of g was chosen by the model's own (a priori) parameters, whose prediction
        it makes closer to the torques; False where the model has no masses and the data chose it (least squares
        tells g from −g only through the inertial terms the same parameters carry, weakly).
    """

    gravity: np.ndarray
    residual: float
    model_residual: float
    sign_from_model: bool

    @property
    def direction(self) -> np.ndarray:
        """The unit vector gravity points along (base frame)."""
        return self.gravity / np.linalg.norm(self.gravity)


def _spread(N: int, samples: int) -> np.ndarray:
    return np.unique(np.linspace(0, N - 1, min(samples, N)).astype(int))


def _residual_function(robot: Robot, q, qd, qdd, tau, rows: np.ndarray):
    """residual(g): ‖y − D(g) θ̂‖ / ‖y‖ of least squares on the samples ``rows``, from one Gram matrix."""
    from robodyn.parameters.regressor import regressor

    s = tuple(x[rows] for x in (q, qd, qdd))
    y = tau[rows].ravel()
    still = (s[0], np.zeros_like(s[1]), np.zeros_like(s[2]))
    rest = regressor(robot, *still, gravity=np.zeros(3))
    parts = [regressor(robot, *s, gravity=np.zeros(3)).reshape(y.size, -1)] + [
        (regressor(robot, *still, gravity=e) - rest).reshape(y.size, -1) for e in np.eye(3)]
    p = parts[0].shape[1]
    scale = np.maximum(np.linalg.norm(np.hstack(parts), axis=0).reshape(4, p).max(axis=0), np.finfo(float).tiny)
    B = np.hstack([A / scale for A in parts] + [y[:, None] / np.linalg.norm(y)])
    G = B.T @ B  # the Gram matrix of [D(0) D_x D_y D_z y]: each trial g costs a p × p solve, not a pass

    def residual(g) -> float:
        T = np.vstack([np.eye(p)] + [gk * np.eye(p) for gk in g])
        H, b = T.T @ G[:4 * p, :4 * p] @ T, T.T @ G[:4 * p, -1]
        w, V = np.linalg.eigh(H)
        keep = w > 1e-12 * w.max()
        explained = (V[:, keep].T @ b) ** 2 / w[keep]  # bᵀ H⁺ b, H⁺ of the resolved directions
        return float(np.sqrt(max(G[-1, -1] - explained.sum(), 0.0)))

    return residual


def _model_torques(robot: Robot, q, qd, qdd, gravities) -> list | None:
    """Γ_model(g) (N, n) of the model's own (a priori) parameters with each of ``gravities``; None where the model
    has no masses (its prediction says nothing of g, nor of a joint's sign)."""
    from robodyn.dynamics.api import inverse_dynamics

    if not np.any(robot.params[:, 9] > 0):
        return None
    return [inverse_dynamics(robot, q, qd, qdd, gravity=g) for g in gravities]


def _misses(torques, tau) -> list | None:
    """‖τ − Γ‖ / ‖τ‖ of each of ``torques`` (:func:`_model_torques`; None stays None)."""
    return None if torques is None else [float(np.linalg.norm(G - tau) / np.linalg.norm(tau)) for G in torques]


def _model_flips(y, signs, norms, predicted, reversed_gravity) -> list[tuple[int, float, float]]:
    """Joints not yet named (``signs`` > 0) whose torques the model's own (a priori) parameters predict far better
    negated (``FLIPPED``): [(j, ‖τ_j − Γ_j‖ / ‖τ_j‖, ‖−τ_j − Γ_j‖ / ‖τ_j‖)], ``norms`` the ‖τ_j‖,
    Γ the model's torques with its gravity and reversed (:func:`_model_torques`).  Least squares cannot see a joint
    whose torque its own parameters alone carry (a shoulder's gravity: negated, they fit it with the other sign),
    the model's masses can.  Empty where reversing gravity predicts the torques at least as well as these signs (a
    ceiling mount, which :func:`_reversed_gravity` names)."""
    per = np.where(norms > 0, norms, 1.0)
    miss, negated = (np.linalg.norm(s * y - predicted, axis=0) / per for s in (1.0, -1.0))
    flips = np.flatnonzero((norms > 0) & (signs > 0) & (negated < FLIPPED * np.minimum(miss, 1.0)))
    if not flips.size:
        return []

    def misses(Y, G):  # per joint, capped at 1: a joint the model predicts worse than zero torque tells nothing
        return np.sum(np.minimum(np.linalg.norm(Y - G, axis=0) / per, 1.0) ** 2)

    changed = np.where(np.isin(np.arange(y.shape[1]), flips), -signs, signs)
    if misses(changed * y, predicted) >= misses(signs * y, reversed_gravity):
        return []
    return [(int(j), float(miss[j]), float(negated[j])) for j in flips]


def _identify_with(g) -> str:
    """The advice of a warning naming the gravity vector ``g`` (rounded, a list)."""
    return (f"Identify with robot.replace(gravity={g}) (robodyn identify --gravity={','.join(map(str, g))}")


def gravity_direction(robot: Robot, q, qd=None, qdd=None, tau=None, samples: int = SAMPLES) -> GravityDirection:
    """The gravity vector (base frame) that least squares fits the measured torques best with: how the arm is mounted.

    The six axis directions ±x, ±y, ±z and the model's own are tried, then the best is refined on the sphere
    |g| = |``robot.gravity``| (Nelder–Mead on two angles), each trial the least-squares fit of the standard
    parameters and friction ([9.36], sign(q̇) Coulomb columns) on ``samples`` rows spread over the log.

    Parameters
    ----------
    robot : Robot — the model; its geometry and |g| are used, and its parameters choose the sign of g.
    q, qd, qdd, tau : array (N, n) — joint positions, velocities, accelerations, torques (SI units), or ``q`` a
        prepared run or a list of runs (:func:`robodyn.identify`'s forms).
    samples : int — rows used (default ``SAMPLES``).

    Returns
    -------
    GravityDirection

    Raises
    ------
    InputError — shapes, NaN, a robot without gravity, torques that are all zero, ``samples`` < 1.
    """
    from scipy.optimize import minimize

    check_robot(robot)
    if isinstance(samples, bool) or int(samples) != samples or samples < 1:
        raise InputError(f"samples = {samples!r}; give a number of rows >= 1")
    q, qd, qdd, tau = stacked_runs(robot, q, qd, qdd, tau)[:4]
    magnitude = float(np.linalg.norm(robot.gravity))
    if magnitude == 0:
        raise InputError(f"robot '{robot.name}' has no gravity (robot.gravity = 0): its direction cannot be sought")
    rows = _spread(q.shape[0], int(samples))
    if not np.any(tau[rows]):
        raise InputError("tau is zero on every sample used: no torque to explain")
    residual = _residual_function(robot, q, qd, qdd, tau, rows)
    model = residual(robot.gravity)
    trials = [robot.gravity] + [s * magnitude * e for e in np.eye(3) for s in (1.0, -1.0)]
    start = min(trials, key=residual)

    def on_sphere(angles):
        a, b = angles
        return magnitude * np.array([np.sin(a) * np.cos(b), np.sin(a) * np.sin(b), np.cos(a)])

    a0 = np.arccos(np.clip(start[2] / magnitude, -1.0, 1.0))
    b0 = np.arctan2(start[1], start[0])
    best = minimize(lambda x: residual(on_sphere(x)), [a0, b0], method="Nelder-Mead",
                    options=dict(xatol=1e-4, fatol=1e-6, initial_simplex=[[a0, b0], [a0 + 0.1, b0], [a0, b0 + 0.1]]))
    g = on_sphere(best.x) if best.fun < residual(start) else np.asarray(start, dtype=float)
    g[np.abs(g) < 1e-9 * magnitude] = 0.0
    # least squares fits g and −g almost alike; the model's masses and first moments predict with the right one
    miss = _misses(_model_torques(robot, q[rows], qd[rows], qdd[rows], (g, -g)), tau[rows])
    if (residual(-g) < residual(g)) if miss is None else miss[1] < miss[0]:
        g = -g
    return GravityDirection(gravity=g, residual=residual(g), model_residual=model, sign_from_model=miss is not None)


def _reversed_gravity(robot: Robot, y, torques) -> list[str]:
    """A ceiling mount: least squares fits −g with negated masses, but the model's own parameters (when it has
    masses) predict the torques far better with the gravity reversed; ``torques``: :func:`_model_torques` with
    ``robot.gravity`` and its reverse."""
    miss = _misses(torques, y)
    if miss is None or not miss[1] < min(BETTER * miss[0], POOR_FIT):
        return []
    g = (-np.round(robot.gravity, 4) + 0.0).tolist()
    return [f"robot '{robot.name}': the model's own parameters predict the torques at {100 * miss[0]:.0f} % with its "
            f"gravity and at {100 * miss[1]:.0f} % with gravity reversed, {g} m/s² (least squares fits either, with "
            f"masses of the other sign): is the arm mounted on a ceiling? {_identify_with(g)})."]


def convention_hints(robot: Robot, q, qd, qdd, tau) -> list[str]:
    """The warnings :func:`robodyn.identify` gives about the conventions of samples (N, n) (already checked): joints
    whose torques look of the other sign to least squares or to the model's own parameters (``FLIPPED``,
    :func:`_model_flips`); else, where least squares with the model's gravity leaves
    more than ``POOR_FIT`` of the torques unexplained, the direction of gravity that explains them
    (:func:`gravity_direction`) or the other usual causes; else a model whose own parameters predict the torques
    far better with its gravity reversed (a ceiling).  One pivoted QR of the regressor on at most
    ``EQUATIONS`` equations spread over the log."""
    from robodyn.parameters.regressor import regressor

    rows = _spread(q.shape[0], min(SAMPLES, max(EQUATIONS // q.shape[1], 1)))
    y = tau[rows]
    if not np.any(y):
        return []
    A = regressor(robot, q[rows], qd[rows], qdd[rows]).reshape(y.size, -1)
    scale = np.linalg.norm(A, axis=0)
    Q, R, _ = scipy.linalg.qr(A / np.where(scale > 0, scale, 1.0), mode="economic", pivoting=True)
    d = np.abs(np.diag(R))
    U = Q[:, :int(np.sum(d > 1e-10 * d[0]))] if d.size and d[0] > 0 else Q[:, :0]  # the range of A

    def residual(Y):
        Y = Y.ravel()
        return (Y - U @ (U.T @ Y)).reshape(y.shape)

    norms = np.linalg.norm(y, axis=0)
    per = np.where(norms > 0, norms, 1.0)
    share = np.linalg.norm(residual(y), axis=0) / per
    alone = [residual(np.where(np.arange(y.shape[1]) == j, y, 0.0)) for j in range(y.shape[1])]  # of τ_j alone
    signs = np.ones(y.shape[1])
    while True:  # greedy: one wrong sign corrupts the shared parameters, so the others are judged after it
        now = residual(signs * y)
        gains = {}
        for j in np.flatnonzero((norms > 0) & (signs > 0)):
            other = now - 2.0 * alone[j]  # the residual with joint j's torques negated too
            if (np.linalg.norm(other[:, j]) < FLIPPED * min(np.linalg.norm(now[:, j]), norms[j])
                    and np.linalg.norm(other) < np.linalg.norm(now)):
                gains[j] = np.linalg.norm(now) - np.linalg.norm(other)
        if not gains:
            break
        signs[max(gains, key=gains.get)] = -1.0
    check = "Check the sign convention of the log's torques (and positions) against the model's joint axes."
    hints = []
    fitted = residual(signs * y)
    if np.any(signs < 0):
        after = np.linalg.norm(fitted, axis=0) / per
        listed = ", ".join(f"joint {j + 1} ({robot.q_names[j]}: {100 * share[j]:.0f} % → {100 * after[j]:.0f} %)"
                           for j in np.flatnonzero(signs < 0))
        hints.append(f"robot '{robot.name}': the torques of {listed} look of the other sign: negated, least squares "
                     f"leaves that share of them unexplained instead. {check}")
    # where least squares leaves much unexplained, the model's gravity is suspect, and with it its predictions
    fits = np.linalg.norm(fitted) / np.linalg.norm(y) <= POOR_FIT
    torques = _model_torques(robot, q[rows], qd[rows], qdd[rows], (robot.gravity, -robot.gravity)) if fits else None
    flips = [] if torques is None else _model_flips(y, signs, norms, *torques)
    if flips:
        listed = ", ".join(f"joint {j + 1} ({robot.q_names[j]}: {100 * m:.0f} % → {100 * f:.0f} %)"
                           for j, m, f in flips)
        hints.append(f"robot '{robot.name}': the model's own parameters predict the torques of {listed} far better "
                     f"negated (the share of their norm left unexplained; least squares fits either sign there, its "
                     f"parameters taking the other). {check}")
    if hints:
        return hints
    if not np.any(robot.gravity):
        return []
    if fits:  # no sign named: least squares with the model's gravity explains the torques
        return _reversed_gravity(robot, y, torques)
    found = gravity_direction(robot, q, qd, qdd, tau)
    model = (np.round(robot.gravity, 4) + 0.0).tolist()  # + 0.0: no "-0.0" in the message
    head = (f"robot '{robot.name}': least squares with the model's gravity {model} m/s² leaves "
            f"{100 * found.model_residual:.0f} % of the torques unexplained (norm of the residual).")
    if found.residual < BETTER * found.model_residual:
        g = (np.round(found.gravity, 3) + 0.0).tolist()
        return [f"{head} Gravity {g} m/s² in the base frame leaves {100 * found.residual:.0f} %: is the arm mounted "
                f"on a wall, a ceiling or a tilted base? {_identify_with(g)}; rd.identification.gravity_direction "
                "estimates it)."]
    return [f"{head} No direction of gravity does much better ({100 * found.residual:.0f} %): check the torques' "
            "units and signs, the order of the joints and their zeros against the model."]
