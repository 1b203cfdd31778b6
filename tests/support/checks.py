"""Assertions and fixtures shared by the tests of the alternative formulations (Gibbs–Appell, spatial operator)."""

from __future__ import annotations

import numpy as np

RTOL = 1e-10


def assert_close(a, b, rtol=RTOL):
    """Same shape and max|a − b| ≤ rtol · max|b| (relative to the largest entry, no absolute floor)."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape
    scale = max(np.max(np.abs(b)), 1e-300)
    err = np.max(np.abs(a - b))
    assert err <= rtol * scale, f"max error {err:.3e} > {rtol:g} x {scale:.3e}"


def wrenches_for(robot, seed, batch=()):
    """Random wrenches (..., nf, 6) for ``robot``, reproducible from ``seed``."""
    return np.random.default_rng(seed + 7).normal(size=batch + (robot.nf, 6))


def planar2r_closed_form(q):
    """Textbook inertia matrix D (2, 2) and gravity torques G (2,) of the built-in ``planar2r`` (uniform rods,
    m = 1 kg, l = 1 m, centre of mass at l/2, g = 9.81 m/s² in the plane) at q (2,)."""
    m, l, lc = 1.0, 1.0, 0.5
    I = m * l**2 / 12
    c2 = np.cos(q[1])
    D = np.array(
        [
            [2 * I + m * lc**2 + m * (l**2 + lc**2 + 2 * l * lc * c2), I + m * (lc**2 + l * lc * c2)],
            [I + m * (lc**2 + l * lc * c2), I + m * lc**2],
        ]
    )
    g = 9.81
    G = np.array([(m * lc + m * l) * g * np.cos(q[0]) + m * lc * g * np.cos(q[0] + q[1]), m * lc * g * np.cos(q[0] + q[1])])
    return D, G


def assert_accelerations_close(robot, q, qd, tau, got, want, tol=1e-12):
    """Direct dynamics q̈ = A⁻¹(τ − H) from two algorithms, checked to 1e-12 the only way that is exact:

    * backward error: the inverse dynamics of ``got`` gives back τ to ``tol`` relative (scale max(1, |τ|, |A q̈|));
    * forward error: |got − want| ≤ ``tol`` · cond(A) · max(1, |want|) — two correct solvers of A q̈ = b differ by
      up to cond(A) times the rounding of b, so a fixed 1e-12 on q̈ would be wrong for badly conditioned robots
      (ascher2: cond(A) ≈ 4e4) and needlessly loose for the others.
    """
    import robodyn as rd

    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape
    A = rd.inertia_matrix(robot, q)
    back = rd.inverse_dynamics(robot, q, qd, got)
    scale = max(1.0, float(np.abs(tau).max()), float(np.abs(A @ got[..., None]).max()))
    assert np.abs(back - tau).max() <= tol * scale, f"backward error {np.abs(back - tau).max():.3e} > {tol:g} x {scale:.3e}"
    cond = float(np.max(np.linalg.cond(A)))
    bound = tol * cond * max(1.0, float(np.abs(want).max()))
    assert np.abs(got - want).max() <= bound, f"forward error {np.abs(got - want).max():.3e} > {bound:.3e} (cond {cond:.1e})"


class CaseTimeout(Exception):
    """Raised by the ``time_limit`` fixture's alarm (tests/conftest.py): a case that hangs."""


def raise_case_timeout(signum, frame):
    raise CaseTimeout


def example_robot_data_path(rel: str) -> str:
    """Path of a URDF shipped by the example-robot-data wheel (data only, under cmeel.prefix/share); the test is
    skipped where the package or the file is missing."""
    import importlib.metadata
    from pathlib import Path

    import pytest

    try:
        dist = importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("example-robot-data is not installed")
    path = Path(dist.locate_file(f"cmeel.prefix/share/example-robot-data/robots/{rel}"))
    if not path.is_file():
        pytest.skip(f"example-robot-data has no {rel}")
    return str(path)


def friction_campaign(noise: bool = True):
    """docs/identification.md's worked example: the planar 3R with Coulomb, viscous and offset friction on an
    excitation trajectory (cond(W) minimised to convergence) sampled at 500 Hz, measured with 1.5 µrad and 0.05 N m noise
    (fixed seeds), or exactly with ``noise=False``.
    Returns (nominal robot, trajectory, t, q_meas, tau_meas, true base parameters with friction)."""
    import robodyn as rd

    nominal = rd.load("planar3r")
    real = nominal.replace(Fc=[0.5, 0.4, 0.3, 0.0], Fv=[0.3, 0.2, 0.1, 0.0], Foff=[0.1, -0.05, 0.02, 0.0])
    traj = rd.excitation_trajectory(nominal, duration=10.0, harmonics=4, seed=1, unlimited=True,
                                    criterion="cond")
    assert traj.converged, traj.message
    rng = np.random.default_rng(0)
    t = traj.times(500.0)
    q, qd, qdd = traj.sample(t)
    scale = 1.0 if noise else 0.0
    q_meas = q + scale * rng.normal(0.0, 1.5e-6, q.shape)
    tau_meas = rd.inverse_dynamics(real, q, qd, qdd) + scale * rng.normal(0.0, 0.05, q.shape)
    truth = rd.base_parameters(real, friction=True).values
    return nominal, traj, t, q_meas, tau_meas, truth


#: A Stäubli-like wrist: motor 6 turns with q5 + q6 (q_m6 = 50 q5 + 50 q6); motors 1-5 drive one joint each.
WRIST_J_MQ = np.diag([100.0, 100.0, 80.0, 60.0, 60.0, 50.0])
WRIST_J_MQ[5, 4] = 50.0
WRIST_MOTORS = dict(J_m=np.arange(1, 7) * 1e-5, Fv_m=np.arange(1, 7) * 1e-4, Fc_m=np.arange(1, 7) * 1e-2)


def coupled_wrist_log():
    """The RX90 with joint friction and the motors ``WRIST_MOTORS`` of the coupling ``WRIST_J_MQ``: 20 s at 200 Hz
    of a continuous motion (sums of sines, every joint and motor reverses), exact torques.
    Returns (arm, the transmission with its motors, t (N,), q (N, 6), q̇, q̈, τ (N, 6) joint side)."""
    import robodyn as rd
    from robodyn.dynamics.transmission import Transmission, transmission_torques

    arm = rd.load("rx90").replace(Fc=np.full(6, 0.5), Fv=np.full(6, 0.3), Foff=np.full(6, 0.1))
    t = np.arange(4000) / 200.0
    w = 2 * np.pi * np.array([0.11, 0.13, 0.17, 0.19, 0.23, 0.29])
    phase = t[:, None] * w
    q = np.sin(phase + np.arange(6)) + 0.5 * np.sin(2.7 * phase)
    qd = w * (np.cos(phase + np.arange(6)) + 1.35 * np.cos(2.7 * phase))
    qdd = -w ** 2 * (np.sin(phase + np.arange(6)) + 3.645 * np.sin(2.7 * phase))
    real = Transmission.from_motor_matrix(WRIST_J_MQ, **WRIST_MOTORS)
    tau = rd.inverse_dynamics(arm, q, qd, qdd) + transmission_torques(real, qd, qdd)
    return arm, real, t, q, qd, qdd, tau


def assert_physically_consistent(robot) -> None:
    """Every link's pseudo-inertia ⪰ 0 and Ia, Fc, Fv ≥ 0, to round-off (Wensing et al.; Sousa and Cortesão)."""
    from robodyn.identification.consistent import pseudo_inertia

    lam = np.linalg.eigvalsh(pseudo_inertia(robot.params))
    assert np.all(lam >= -1e-9 * np.abs(lam).max())
    assert all(np.all(np.asarray(x) >= 0) for x in (robot.Ia, robot.Fc, robot.Fv))


def measured_folder(name: str):
    """The folder of measured data set ``name``: ``tests/data/measured/<name>`` when its files were built there
    (its make script), else ``shared/realdata/<name>`` beside the checkout, where public runs are kept."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    built = root / "tests" / "data" / "measured" / name
    shared = root.parent / "shared" / "realdata" / name
    return shared if shared.is_dir() and not any(built.glob("*.npz")) and not any(built.glob("*.csv.gz")) else built
