"""Every public callable fails only with a RobodynError on a bad robot or a bad array argument (issue 13).

The callables are found by introspection (the top-level names, ``rd.compile`` included, the public names of the
namespaces, and the former top-level names where they live now), so a function added later without argument checks fails here.
Each is called with one bad argument at a time (chosen by parameter name), the others taken from a table of
good values for the two-joint planar arm.
"""

from __future__ import annotations

import importlib
import inspect

import numpy as np
import pytest

import robodyn as rd
import robodyn.analysis
import robodyn.control
import robodyn.identification
import robodyn.native
import robodyn.parameters
import robodyn.simulation
from robodyn.arrays import _arrays_in
from robodyn.errors import NumericOverflowError, RobodynError
from robodyn.model.closed_chain import closed_chain_from_text
from tests.test_closed_chain import PARALLELOGRAM

SUBPACKAGES = (rd.native, rd.identification, rd.control, rd.simulation, rd.analysis, rd.parameters, rd.dynamics,
               rd.floating, rd.closed_chain)

#: Records built by robodyn and returned to the user (results of a computation): not entry points.
RECORDS = {
    "BaseParameters", "GravityCalibration", "LockedBodyInertia", "LinkInertias", "ExcitationTrajectory", "IdentificationData",
    "Identification", "Simulation", "PumaLineResult", "Reference", "BoundEstimates", "CouplingStructure",
    "InertiaCheck", "PassivityCheck", "SkewCheck", "MimicCoupling", "LoopClosure", "ClosedChainRobot",
    "EssentialParameters", "Payload", "DriveGains", "GravityDirection",
    "PhysicalFit", "Validation", "IdentificationOptions", "RelativePosition", "ContactStep",
    "ContactDerivatives",
}
#: Callables without a robot or array argument, or whose only argument is a path / text / option.
NO_CHECKED_ARGUMENTS = {"list_robots", "available", "takes_batch", "threaded", "release_memory", "opcount_report",
                        "from_urdf", "from_mjcf", "load", "loads", "load_closed_chain", "load_gravity_calibration",
                        "load_transmission"}


def _public_callables():
    seen = {}
    sources = [(rd, "rd", sorted(rd._PUBLIC))] + [
        (m, m.__name__, getattr(m, "__all__", [n for n in dir(m) if not n.startswith("_")])) for m in SUBPACKAGES
    ] + [(importlib.import_module(where), where, [name]) for name, where in sorted(rd._MOVED.items())]
    for module, owner, names in sources:
        for name in names:
            obj = getattr(module, name)
            if inspect.ismodule(obj) or (inspect.isclass(obj) and issubclass(obj, BaseException)):
                continue
            if not callable(obj) or name in RECORDS or name in NO_CHECKED_ARGUMENTS:
                continue
            if getattr(obj, "__module__", "").split(".")[0] != "robodyn":
                continue
            seen.setdefault(f"{owner}.{name}", obj)
    return sorted(seen.items())


PUBLIC = _public_callables()

ROBOT = rd.load("planar2r")
N = ROBOT.n
#: Parameters that take a robot-like object, and a good value of each.
ELASTIC = rd.dynamics.ElasticRobot(ROBOT.replace(Ia=np.zeros(ROBOT.nf)), [100.0, 200.0], [0.5, 0.3])
TRANSMISSION = rd.dynamics.Transmission(np.eye(N), np.ones(N))
CC = closed_chain_from_text(PARALLELOGRAM, "parallelogram.yaml")
Q_CC = rd.closed_chain.close_loops(CC, [0.3, 0.5])
ROBOT_PARAMETERS = {"robot": ROBOT, "er": ELASTIC, "tr": TRANSMISSION, "cc": CC, "tree": ROBOT, "model": ROBOT}
#: Joint-space arrays of shape (n,) (one state), and the other array arguments with their good value.
JOINT = {"q", "qd", "qdd", "tau", "q0", "qd0", "qf", "qm", "qmd", "qmdd", "tau_m", "q3", "q4", "q_start",
         "q_goal", "q_active", "qd_active", "qdd_active", "K", "B_m", "J_m", "gain", "u"}
GOOD = {
    "x": np.zeros(2 * N), "torque_limits": np.full(N, 50.0), "gravity": np.array([0.0, 0.0, -9.81]),
    "wrench": np.zeros(6), "com": np.zeros(3), "inertia_com": np.eye(3), "mass": 1.0, "params": np.array([1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]),
    "J_qm": np.eye(N), "target": np.eye(4), "t": np.linspace(0.0, 0.1, 5), "t_eval": np.linspace(0.0, 0.01, 3),
    "duration": 1.0, "Kp": 10.0, "Ki": 4.0, "Kd": 2.0, "Lam": 5.0, "jacobian": np.eye(N), "count": 3, "joint": 1,
    "times": np.array([0.0, 1.0]), "waypoints": np.zeros((2, N)), "frequency": 1.0, "a": np.zeros((1, N)),
    "b": np.zeros((1, N)), "alpha": 0.0, "d": 0.0, "theta": 0.0, "r": 0.0, "w": np.zeros(3), "wd": np.zeros(3),
    "Vd": np.zeros(3), "target_pose": np.eye(4), "pose": np.eye(4), "rotation": np.eye(3),
    "p_start": np.zeros(3), "p_end": np.ones(3), "phi": 0.0, "psi": 0.0, "A": np.zeros((2, 2)), "B": np.ones((2, 1)),
    "points": np.zeros((1, 3)),
}
ARRAYS = JOINT | {"Kp", "Ki", "Kd", "Lam", "point", "wrenches", "tau_friction", "torque_limits", "x", "gravity",
                  "wrench", "com", "inertia_com", "params", "J_qm", "target", "t", "t_eval", "jacobian", "times",
                  "waypoints", "a", "b", "w", "wd", "Vd", "pose", "rotation", "p_start", "p_end", "alpha", "d",
                  "theta", "r", "phi", "psi", "A", "B", "points"}
#: Samples for the functions that take data (N, n): random states and their exact torques.
_RNG = np.random.default_rng(0)
QS, QDS, QDDS = (_RNG.uniform(-1.0, 1.0, (40, N)) for _ in range(3))
TAUS = rd.inverse_dynamics(ROBOT, QS, QDS, QDDS)
OMIT = object()  # leave the argument at its default
#: Per-callable good values (by name, for the top-level and the subpackage spellings alike).
SPECIAL = {
    "identify": {"q": QS, "qd": QDS, "qdd": QDDS, "tau": TAUS},
    "essential_parameters": {"result": rd.identify(ROBOT, QS, QDS, QDDS, TAUS), "q": QS, "qd": QDS, "qdd": QDDS,
                             "tau": TAUS},
    "identify_payload": {"q": QS, "qd": QDS, "qdd": QDDS, "tau": TAUS},
    "identify_drive_gains": {"q": QS, "qd": QDS, "qdd": QDDS, "u": TAUS, "loaded": np.arange(40) % 2 == 0,
                             "payload_mass": 1.0},
    "identify_locked_inertia": {"calibration": np.zeros((N, 3)), "q": QS, "qd": QDS, "qdd": QDDS, "tau": TAUS},
    "identify_locked_body": {"q": QS, "qd": QDS, "qdd": QDDS, "tau": TAUS},
    "calibrate_gravity": {"q": QS, "tau": rd.gravity_torques(ROBOT, QS)},
    "prepare_identification_data": {"t": np.linspace(0, 1, 40), "q": QS, "tau": TAUS},
    "momentum_observer": {"t": np.linspace(0, 0.04, 5), "q": QS[:5], "qd": QDS[:5], "tau": TAUS[:5], "gain": 5.0},
    "time_scale": {"trajectory": rd.simulation.RestToRest(np.zeros(N), np.full(N, 0.5), 1.0)},
    "time_optimal": {"path": rd.simulation.RestToRest(np.zeros(N), np.full(N, 0.5), 1.0)},
    "FourierSeries": {"a": np.zeros((N, 1)), "b": np.zeros((N, 1))},
    "ElasticRobot": {"K": np.array([100.0, 200.0]), "B_m": np.array([0.5, 0.3])},
    "elastic_state_derivative": {"x": np.zeros(4 * N)},
    "linearize": {"qdd": OMIT},
    "task_space_dynamics": {"rows": [0, 1], "q": np.array([0.3, 0.5]), "point": np.array([1.0, 0.0, 0.0])},
    "optimal_motion": {"duration": OMIT, "q_goal": np.full(N, 0.5)},
    "simulate": {"torque": lambda t: np.zeros(N)},
    "CompiledModel": {"kind": "gravity"},
    "Robot": {"name": "two", "sigma": np.zeros(N), "b": np.zeros(N), "params": np.zeros((N, 10)),
              "alpha": np.zeros(N), "d": np.array([0.0, 1.0]), "theta": np.zeros(N), "r": np.zeros(N)},
    "from_craig_mdh": {"alpha": np.zeros(N), "a": np.ones(N), "theta": np.zeros(N), "d": np.zeros(N)},
    "from_standard_dh": {"alpha": np.zeros(N), "a": np.ones(N), "theta": np.zeros(N), "d": np.zeros(N)},
    "closed_chain_inverse_dynamics": {"q": Q_CC},
    "closed_chain_forward_dynamics": {"q": Q_CC},
    "closed_chain_model": {"q": Q_CC},
    "loop_jacobian": {"q": Q_CC},
    "constrained_forward_dynamics": {"frames": [2], "rows": [0, 1]},
    "contact_step": {"v": np.zeros(N), "dt": 1e-3, "points": [2], "height": -0.5},
    "contact_step_derivatives": {"v": np.zeros(N), "dt": 1e-3, "points": [2], "height": -0.5},
    "loop_residual": {"q": Q_CC},
    "inverse_kinematics": {"target": rd.forward_kinematics(ROBOT, np.array([0.3, 0.5]))[-1]},
    "standard_from_com": {"inertia_com": np.eye(3)},
}
for _controller in ("ComputedTorque", "PDGravity", "PassivityBased", "SampledPID"):
    SPECIAL[_controller] = {"reference": rd.control.QuinticReference(np.zeros(N), np.full(N, 0.5), 1.0)}

#: Required arguments where None is documented as zeros.
NONE_MEANS_ZERO = {("robodyn.dynamics.Transmission", "J_m")}
BAD_ROBOTS = [None, "rx90", 3, [1, 2]]
BAD_ARRAYS = {
    "None": None,
    "string": "abc",
    "ragged": [[0.0, 1.0], [2.0]],
    "boolean": np.ones(N, dtype=bool),
    "nan": np.full(N, np.nan),
}


def _good_arguments(qualname, fn):
    """Keyword arguments: every required parameter and every known array, from SPECIAL, the tables, or 1.0."""
    special = SPECIAL.get(qualname.rsplit(".", 1)[1], {})
    kwargs = {}
    for p in inspect.signature(fn).parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.name in special:
            if special[p.name] is not OMIT:
                kwargs[p.name] = special[p.name]
        elif isinstance(p.default, (str, bool)):
            continue  # an option: its default
        elif p.name in ROBOT_PARAMETERS:
            kwargs[p.name] = ROBOT_PARAMETERS[p.name]
        elif p.name in JOINT:
            kwargs[p.name] = np.zeros(N)
        elif p.name in GOOD:
            kwargs[p.name] = GOOD[p.name]
        elif p.default is p.empty:
            kwargs[p.name] = 1.0
    return kwargs


def _cases():
    for qualname, fn in PUBLIC:
        params = inspect.signature(fn).parameters
        for p in params:
            if p in ROBOT_PARAMETERS:
                for k, bad in enumerate(BAD_ROBOTS):
                    if bad is None and params[p].default is None:
                        continue  # a documented default robot
                    yield pytest.param(qualname, fn, p, bad, id=f"{qualname}-{p}-{type(bad).__name__}{k}")
            elif p in ARRAYS and not isinstance(params[p].default, (str, bool)):  # str: an option, not an array
                for label, bad in BAD_ARRAYS.items():
                    if bad is None and (params[p].default is None or (qualname, p) in NONE_MEANS_ZERO):
                        continue  # None is documented there: the default value
                    yield pytest.param(qualname, fn, p, bad, id=f"{qualname}-{p}-{label}")


CASES = list(_cases())


def test_every_public_callable_is_covered():
    """A public callable with a required argument outside the tables must be added to them (or to RECORDS)."""
    uncovered = []
    for qualname, fn in PUBLIC:
        params = inspect.signature(fn).parameters
        if not any(p in ROBOT_PARAMETERS or p in ARRAYS for p in params):
            uncovered.append(qualname)
    assert uncovered == [], uncovered
    assert len(PUBLIC) > 80 and len(CASES) > 400


@pytest.mark.parametrize(("qualname", "fn", "argument", "bad"), CASES)
def test_bad_argument_raises_robodyn_error(qualname, fn, argument, bad):
    kwargs = _good_arguments(qualname, fn)
    kwargs[argument] = bad
    with pytest.raises(RobodynError):
        fn(**kwargs)


HUGE = np.full(N, 1e155)


@pytest.mark.parametrize(
    "call",
    [
        lambda: rd.inverse_dynamics(ROBOT, np.zeros(N), HUGE, np.zeros(N)),
        lambda: rd.forward_dynamics(ROBOT, np.zeros(N), HUGE, np.zeros(N)),
        lambda: rd.kinetic_energy(ROBOT, np.zeros(N), HUGE),
        lambda: rd.coriolis_matrix(ROBOT, np.zeros(N), HUGE),
        lambda: rd.parameters.energy_functions(ROBOT, np.zeros(N), HUGE),
        lambda: rd.regressor(ROBOT, np.zeros(N), HUGE, np.zeros(N)),
        lambda: rd.inverse_dynamics_derivatives(ROBOT, np.zeros(N), HUGE, np.zeros(N)),
        lambda: rd.forward_dynamics_derivatives(ROBOT, np.zeros(N), HUGE, np.zeros(N)),
        lambda: rd.dynamics.generalized_momentum(ROBOT, np.zeros(N), HUGE * 1e153),
        lambda: rd.dynamics.task_space_dynamics(ROBOT, np.full(N, 0.5), HUGE, rows=[0, 1]),
        lambda: rd.state_derivative(ROBOT, np.concatenate([np.zeros(N), HUGE]), np.zeros(N)),
        lambda: rd.link_accelerations(ROBOT, np.zeros(N), HUGE, np.zeros(N)),
        lambda: rd.jacobian_dot_qd(ROBOT, np.full(N, 0.5), HUGE),
        lambda: rd.linearize(ROBOT, np.zeros(N), HUGE),
        lambda: rd.dynamics.transform_dynamics(ROBOT, np.zeros(N), HUGE, np.eye(N)),
        lambda: rd.simulate(ROBOT, lambda t: np.zeros(N), np.zeros(N), HUGE, np.linspace(0.0, 1e-3, 3)),
    ],
    ids=["inverse_dynamics", "forward_dynamics", "kinetic_energy", "coriolis_matrix", "energy_functions",
         "regressor", "inverse_dynamics_derivatives", "forward_dynamics_derivatives", "generalized_momentum",
         "task_space_dynamics", "state_derivative", "link_accelerations", "jacobian_dot_qd", "linearize",
         "transform_dynamics", "simulate"],
)
def test_huge_velocities_give_overflow_error(call):
    """q̇ = 1e155 is finite but its square overflows float64: an error naming the overflow, never NaN/inf."""
    try:
        result = call()
    except NumericOverflowError as e:
        assert "overflow" in str(e).lower()
        return
    arrays = list(_arrays_in(result))
    assert arrays and all(np.all(np.isfinite(a)) for a in arrays)


def test_identified_model_prediction_checks_arguments_and_overflow():
    ident = rd.identify(ROBOT, QS, QDS, QDDS, TAUS, method="ols")
    np.testing.assert_allclose(ident.predict(QS, QDS, QDDS), TAUS, rtol=1e-9, atol=1e-9)
    with pytest.raises(rd.InputError, match="'qd'"):
        ident.predict(np.zeros(N), [[0.0, 1.0], [2.0]], np.zeros(N))
    with pytest.raises(NumericOverflowError, match="overflow"):
        ident.predict(np.zeros(N), HUGE, np.zeros(N))


HUGE_ARGUMENTS = ("qd", "qd0", "qmd", "qd_active", "qdd", "tau")


@pytest.mark.parametrize(
    ("qualname", "fn", "argument"),
    [pytest.param(q, f, a, id=f"{q}-{a}") for q, f in PUBLIC for a in HUGE_ARGUMENTS
     if a in inspect.signature(f).parameters],
)
def test_huge_finite_inputs_give_finite_results_or_a_robodyn_error(qualname, fn, argument):
    """Every public callable given 1e155 (finite, but its square overflows) returns finite numbers or raises a
    RobodynError (NumericOverflowError when the cause is the overflow), never NaN/inf or a raw numpy error."""
    kwargs = _good_arguments(qualname, fn)
    if kwargs.get(argument) is None:
        pytest.skip(f"{argument} is left at its default here")
    kwargs[argument] = np.full(np.shape(kwargs[argument]), 1e155)
    with np.errstate(all="ignore"):
        try:
            result = fn(**kwargs)
        except RobodynError:
            return
    assert all(np.all(np.isfinite(a)) for a in _arrays_in(result))
