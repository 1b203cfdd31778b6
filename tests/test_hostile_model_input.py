"""Hostile and malformed input (issue 13): model files, the expression grammar, robot validation, the numeric API.

Every reproducer of the issue that concerns model input or the numeric API is here; each asserts the error
class and that the message names the field or argument.
"""

import math

import numpy as np
import pytest
from hypothesis import given

import robodyn as rd
from robodyn.model import io
from tests.support.random_robots import random_state, robots

J1 = "joints: [{sigma: 0}]\n"
L1 = "links: [{M: 1}]\n"


def file_error(text, match):
    with pytest.raises(rd.ModelFileError, match=match):
        rd.loads(text, "hostile.yaml")


# ---- YAML: resource bombs, duplicate keys, YAML 1.1 surprises ----------------------------------------------

def test_billion_laughs_is_refused_before_expansion():
    laughs = 'a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n'
    laughs += "".join(f"{c}: &{c} [{', '.join(['*' + p] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi"))
    file_error("source: *i\n" + laughs + J1 + L1, r"hostile\.yaml, line 1, field source: alias '\*i' not allowed")
    file_error("joints: [{name: &n j, sigma: 0}, {name: *n, sigma: 0}]\nlinks: [{}, {}]\n",
               r"hostile\.yaml, line 1, joints row 1, field name: anchor '&n' not allowed")


def test_duplicate_keys_are_refused_naming_row_and_field():
    file_error(J1 + "links: [{M: 1, M: 100}]\n", r"hostile\.yaml, line 2, links row 1, field M: duplicate key 'M'")
    file_error("name: a\nname: b\n" + J1 + L1, r"hostile\.yaml, line 2, field name: duplicate key 'name'")


@pytest.mark.parametrize(
    "value, why",
    [
        ("1:30", r"sexagesimal"),
        ("010", r"leading zero is octal in YAML 1.1"),
        ("yes", r"unknown name 'yes'"),
        ("on", r"unknown name 'on'"),
        ("off", r"unknown name 'off'"),
        ("no", r"unknown name 'no'"),
        ("true", r"= True is not a number"),
        ("~", r"= empty is not a number"),
        ("2001-01-01", r"not an arithmetic expression"),
    ],
)
def test_yaml_11_surprises_are_errors_not_numbers(value, why):
    file_error(f"joints: [{{sigma: 0, theta: {value}}}]\n" + L1, rf"hostile\.yaml, joints row 1: field theta.*{why}")


def test_yaml_12_scalars():
    robot = rd.loads("name: yes\njoints: [{sigma: 0, d: 0.5, r: -2, alpha: 1e-1, qmin: -.inf}]\nlinks: [{M: 1.}]\n")
    assert robot.name == "yes"  # YAML 1.2: a string, not True
    assert (robot.d[0], robot.r[0], robot.alpha[0], robot.M[0]) == (0.5, -2.0, 0.1, 1.0)
    assert robot.qlim[0, 0] == -math.inf


@pytest.mark.parametrize("nest", ["[" * 4000 + "]" * 4000, "{a: " * 4000 + "1" + "}" * 4000])
def test_deep_nesting_is_refused_without_recursion_error(nest):
    # refused by robodyn's depth limit, or earlier by libyaml's own (1000 levels) when PyYAML uses it
    file_error(f"name: {nest}\n" + J1 + L1, rf"nested more than {io.MAX_DEPTH} levels deep|exceeded maximum nesting depth")
    file_error("name: " + "[" * 20 + "]" * 20 + "\n" + J1 + L1, rf"hostile\.yaml, line 1, .*: nested more than {io.MAX_DEPTH} levels deep")


def test_size_limits(tmp_path):
    file_error("source: '" + "x" * io.MAX_FILE_BYTES + "'\n" + J1 + L1, rf"larger than {io.MAX_FILE_BYTES} bytes")
    file_error("source: '" + "x" * (io.MAX_SCALAR_CHARS + 1) + "'\n" + J1 + L1,
               rf"field source: a value of {io.MAX_SCALAR_CHARS + 1} characters; the limit is {io.MAX_SCALAR_CHARS}")
    file_error("joints: [{sigma: 0, d: '" + "1+" * 150 + "1'}]\n" + L1, rf"longer than {io.MAX_EXPRESSION_CHARS} characters")
    big = tmp_path / "big.yaml"
    big.write_text("# " + "x" * io.MAX_FILE_BYTES + "\n" + J1 + L1)
    with pytest.raises(rd.ModelFileError, match=rf"big\.yaml: larger than {io.MAX_FILE_BYTES} bytes"):
        rd.load(big)


def test_tags_and_other_types_are_refused():
    file_error("name: !!python/object/apply:os.system ['id']\n" + J1 + L1, r"tag .*python/object/apply:os\.system not allowed")
    file_error("name: !!binary aGVsbG8=\n" + J1 + L1, r"tag .*binary not allowed")
    file_error("name: [a, b]\n" + J1 + L1, r"field name must be text")
    file_error("joints: [{sigma: 0, name: {a: 1}}]\n" + L1, r"joints row 1: field name must be text")
    file_error("? [a]\n: 1\n" + J1 + L1, r"a key must be a plain name")
    file_error("name: \x07bell\n" + J1 + L1, r"not valid YAML \(unacceptable character #x0007")
    with pytest.raises(rd.ModelFileError, match=r"model text must be a str, got bytes"):
        rd.loads(J1.encode() + L1.encode())


def test_messages_escape_control_characters_from_the_file():
    """Text from a model file never puts terminal escape sequences into a message."""
    for text in ('joints: [{sigma: 0, "\\e[31mred": 1}]\n' + L1, 'joints: [{sigma: 0, d: "\\e[2J"}]\n' + L1,
                 'name: "\\e[2J"\nname: x\n' + J1 + L1, '"\\e]0;x\\a": 1\n' + J1 + L1):
        with pytest.raises(rd.ModelFileError) as err:
            rd.loads(text, "hostile.yaml")
        assert "\x1b" not in str(err.value) and "\x07" not in str(err.value)


# ---- the expression grammar -------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "text, value",
    [
        ("pi/2", math.pi / 2),
        ("-pi/4", -math.pi / 4),
        ("62.6111**2 * 291e-6", 62.6111**2 * 291e-6),
        ("0.1*(0.02**2 + 0.02**2)/12", 0.1 * (0.02**2 + 0.02**2) / 12),
        ("-(1 + 2) * 3", -9.0),
        ("2**-1", 0.5),
        ("+2**0.5", 2**0.5),
        ("(-2)**3", -8.0),
    ],
)
def test_expressions_of_the_grammar(text, value):
    robot = rd.loads(f"joints: [{{sigma: 0, d: '{text}'}}]\n" + L1)
    assert robot.d[0] == value


@pytest.mark.parametrize(
    "text, why",
    [
        ("9**9**9**9", r"power 9: exponents are limited to \+-8"),
        ("10**400", r"power 400: exponents are limited"),
        ("pi**1000", r"power 1000: exponents are limited"),
        ("1e300*1e300", r"overflow"),
        ("1e308*10 - 1e308*10", r"overflow"),
        ("(-8)**(1/3)", r"a negative number to a fractional power"),
        ("1/0", r"division by zero"),
        ("0**-1", r"division by zero"),
        ("__import__('os').system('id')", r"not an arithmetic expression"),
        ("pi.real", r"not an arithmetic expression"),
        ("e", r"unknown name 'e'"),
        ("2 if 1 else 3", r"not an arithmetic expression"),
        ("1j", r"not an arithmetic expression"),
        ("7 // 2", r"not an arithmetic expression"),
        ("[1][0]", r"not an arithmetic expression"),
    ],
)
def test_expressions_outside_the_grammar_name_the_field(text, why):
    file_error(f"joints: [{{sigma: 0, d: \"{text}\"}}]\n" + L1, rf"joints row 1: field d = .* is not a number \({why}")


# ---- robot validation -------------------------------------------------------------------------------------

def test_zero_joint_model_is_refused_at_load():
    file_error("joints: [{sigma: 2}, {sigma: 2}]\nlinks: [{M: 1}, {M: 1}]\n", r"robot 'hostile': no joint, every frame has sigma = 2")
    with pytest.raises(rd.ModelError, match=r"robot 'x': no joint"):
        rd.Robot(name="x", sigma=[2])


def test_non_finite_and_absurd_values_name_the_link_and_field():
    file_error("joints: [{sigma: 0, antecedent: .inf}]\n" + L1, r"joints row 1: field antecedent = inf is not finite")
    file_error("joints: [{sigma: 0, d: .nan}]\n" + L1, r"joints row 1: field d = nan is not finite")
    file_error(J1 + "links: [{M: 1e-300, MX: 1e300}]\n", r"links row 1: field MX = 1e\+300 exceeds 1e\+12 in magnitude")
    file_error(J1 + "links: [{M: 1e999}]\n", r"links row 1: field M = inf is not finite")
    file_error(J1 + "links: [{M: " + "9" * 5000 + "}]\n", r"links row 1: field M = inf is not finite")
    file_error(J1 + "links: [{M: 1e-300, MX: 1e10}]\n",
               r"link 1 \(j1\): fields MX, MY, MZ = .* with M = 1e-300 put the centre of mass inf m from O_j")
    with pytest.raises(rd.NonPhysicalInertiaError, match=r"link 1 \(j1\): field MX = 1e\+300 exceeds"):
        rd.Robot(name="x", sigma=[0], params=[[0, 0, 0, 0, 0, 0, 1e300, 0, 0, 1e-300]])
    with pytest.raises(rd.ModelError, match=r"robot 'x', frame 1: field d = 1e\+13 exceeds 1e\+12"):
        rd.Robot(name="x", sigma=[0], d=[1e13])
    with pytest.raises(rd.ModelError, match=r"robot 'x': field params must be an array of real numbers"):
        rd.Robot(name="x", sigma=[0], params=[["a"] * 10])


# ---- rd.load: built-in names are never hidden by the current folder ----------------------------------------

def test_builtin_name_is_not_hidden_by_a_folder_or_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rx90").mkdir()
    (tmp_path / "planar2r").write_text("joints: [{sigma: 1}]\nlinks: [{M: 1}]\n")
    assert rd.load("rx90").n == 6
    assert rd.load("planar2r").name == "planar2r" and rd.load("planar2r").n == 2
    assert rd.load("./planar2r").sigma.tolist() == [1]  # a path: the local file
    with pytest.raises(rd.ModelFileError, match=r"\./rx90: is a folder, not a model file"):
        rd.load("./rx90")
    (tmp_path / "mine").write_text("name: mine\n" + J1 + L1)
    assert rd.load("mine").name == "mine"  # an unknown bare name that is a file
    (tmp_path / "binary.yaml").write_bytes(b"\x00\xff\xfe")
    with pytest.raises(rd.ModelFileError, match=r"binary\.yaml: not UTF-8 text"):
        rd.load("binary.yaml")
    with pytest.raises(rd.UnknownRobotError, match=r"unknown robot 'nope'"):
        rd.load("nope")


# ---- the numeric API --------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def planar():
    return rd.load("planar2r")


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda r, q: rd.inverse_dynamics(None, q, q, q), r"argument 'robot' is NoneType None; give a Robot"),
        (lambda r, q: rd.inverse_dynamics("rx90", q, q, q), r"argument 'robot' is str 'rx90'; give a Robot"),
        (lambda r, q: rd.forward_kinematics(r, None), r"argument 'q' is None"),
        (lambda r, q: rd.inverse_dynamics(r, [[0.1, 0.2], [0.3]], q, q), r"argument 'q' is a ragged or mixed sequence"),
        (lambda r, q: rd.gravity_torques(r, [True, False]), r"argument 'q' has dtype bool \(True/False is not a joint value\)"),
        (lambda r, q: rd.jacobian(r, "ab"), r"argument 'q' has dtype <U2"),
        (lambda r, q: rd.jacobian(r, q, frame=True), r"frame = True; give a frame number 1\.\.2"),
        (lambda r, q: rd.inverse_dynamics(r, q, q, q, gravity=[[0, 0, 1]] * 4 + [[0, 1]]), r"argument 'gravity' is a ragged"),
        (lambda r, q: rd.inverse_dynamics(r, q, q, q, gravity=np.zeros((4, 2))), r"argument 'gravity' has shape \(4, 2\); expected \(\.\.\., 3\)"),
        (lambda r, q: rd.inverse_dynamics(r, np.zeros((5, 2)), q, q, gravity=np.zeros((4, 3))),
         r"argument 'gravity' with shape \(4, 3\) does not broadcast to batch \(5,\)"),
        (lambda r, q: rd.standard_from_com(1.0, com=[0, 0], inertia_com=np.eye(3)), r"argument 'com' = \[0, 0\] is not valid; give \[x, y, z\]"),
        (lambda r, q: rd.standard_from_com(None, com=[0, 0, 0], inertia_com=np.eye(3)), r"argument 'mass' = None"),
        (lambda r, q: rd.standard_from_com(1.0, com=[0, 0, 0], inertia_com=np.eye(2)), r"argument 'inertia_com'"),
        (lambda r, q: rd.com_from_standard([1, 2]), r"argument 'params'"),
        (lambda r, q: rd.state_derivative("rx90", np.zeros(4), q), r"argument 'robot' is str 'rx90'"),
        (lambda r, q: rd.state_derivative(r, [[0, 1, 2, 3], [1]], q), r"argument 'x' is a ragged"),
        (lambda r, q: rd.dynamics.elastic_energy(r, q, q, q, q), r"argument 'er' is Robot .*; give a ElasticRobot"),
        (lambda r, q: rd.dynamics.elastic_state_derivative(None, np.zeros(8), q), r"argument 'er' is NoneType None"),
        (lambda r, q: rd.dynamics.joint_from_motor(r, q), r"argument 'tr' is Robot .*; give a Transmission"),
        (lambda r, q: rd.dynamics.motor_inverse_dynamics("rx90", rd.dynamics.Transmission.gears([1, 1], [0.1, 0.1]), q, q, q), r"argument 'robot' is str"),
        (lambda r, q: rd.dumps(None), r"argument 'robot' is NoneType None"),
        (lambda r, q: rd.save(r, None), r"argument 'path' is None"),
        (lambda r, q: rd.model.to_craig_mdh("rx90"), r"argument 'robot' is str 'rx90'"),
        (lambda r, q: rd.model.from_craig_mdh(alpha="rx90", a=[0], theta=[0], d=[0]), r"argument 'alpha' has dtype <U4"),
    ],
)
def test_bad_arguments_raise_input_error_naming_them(planar, call, match):
    with pytest.raises(rd.InputError, match=match):
        call(planar, np.array([0.1, 0.2]))


def test_gravity_batch_broadcasts_against_one_state(planar):
    q, qd, qdd = np.array([0.3, -0.7]), np.array([0.5, 0.2]), np.array([-1.0, 2.0])
    G = np.array([[0, -9.81, 0], [0, 0, -9.81], [1.5, -2.0, 0.3], [0, 0, 0]])
    for method in ("newton_euler", "gibbs_appell", "spatial_operator"):
        tau = rd.inverse_dynamics(planar, q, qd, qdd, gravity=G, method=method)
        assert tau.shape == (4, 2)
        for k in range(4):
            np.testing.assert_allclose(tau[k], rd.inverse_dynamics(planar, q, qd, qdd, gravity=G[k], method=method), rtol=1e-12, atol=1e-12)
    for method in ("recursive", "cholesky", "gibbs_appell", "spatial_operator"):
        acc = rd.forward_dynamics(planar, q, qd, qdd, gravity=G, method=method)
        assert acc.shape == (4, 2)
        np.testing.assert_allclose(acc[2], rd.forward_dynamics(planar, q, qd, qdd, gravity=G[2], method=method), rtol=1e-12, atol=1e-12)
    Q = rd.gravity_torques(planar, q, gravity=G)
    np.testing.assert_allclose(Q[1], rd.gravity_torques(planar, q, gravity=G[1]), rtol=1e-12, atol=1e-12)
    assert rd.potential_energy(planar, q, gravity=G).shape == (4,)
    np.testing.assert_allclose(rd.bias_torques(planar, q, qd, gravity=G)[3], rd.bias_torques(planar, q, qd, gravity=G[3]), atol=1e-12)


@given(robot=robots)
def test_gravity_batch_equals_per_sample_on_random_robots(robot):
    """Batch axes of gravity join those of the state: result k is the one-gravity result (trees, fixed frames)."""
    q, qd, qdd = random_state(robot, 7)
    G = np.random.default_rng(robot.n).normal(size=(3, 3)) * 9.81
    for method in ("newton_euler", "gibbs_appell", "spatial_operator"):
        tau = rd.inverse_dynamics(robot, q, qd, qdd, gravity=G, method=method)
        ref = np.stack([rd.inverse_dynamics(robot, q, qd, qdd, gravity=g, method=method) for g in G])
        np.testing.assert_allclose(tau, ref, rtol=1e-10, atol=1e-10 * np.abs(ref).max())
    for method in ("recursive", "cholesky", "gibbs_appell", "spatial_operator"):
        acc = rd.forward_dynamics(robot, q, qd, qdd, gravity=G, method=method)
        ref = np.stack([rd.forward_dynamics(robot, q, qd, qdd, gravity=g, method=method) for g in G])
        np.testing.assert_allclose(acc, ref, rtol=1e-10, atol=1e-10 * np.abs(ref).max())


#: The public numeric entry points checked by robodyn.arrays.finite_result, with finite inputs that overflow.
#: (inertia_matrix is checked too but cannot overflow: model values are bounded by 1e12 and q enters through
#: sines and cosines.)
_BIG = 1e155
OVERFLOWING = {
    "inverse_dynamics": lambda r, q, b: rd.inverse_dynamics(r, q, b, q),
    "inverse_dynamics/gibbs_appell": lambda r, q, b: rd.inverse_dynamics(r, q, b, q, method="gibbs_appell"),
    "inverse_dynamics/spatial_operator": lambda r, q, b: rd.inverse_dynamics(r, q, b, q, method="spatial_operator"),
    "forward_dynamics/recursive": lambda r, q, b: rd.forward_dynamics(r, q, b, q),
    "forward_dynamics/cholesky": lambda r, q, b: rd.forward_dynamics(r, q, b, q, method="cholesky"),
    "forward_dynamics/gibbs_appell": lambda r, q, b: rd.forward_dynamics(r, q, b, q, method="gibbs_appell"),
    "forward_dynamics/spatial_operator": lambda r, q, b: rd.forward_dynamics(r, q, b, q, method="spatial_operator"),
    "bias_torques": lambda r, q, b: rd.bias_torques(r, q, b),
    "gravity_torques": lambda r, q, b: rd.gravity_torques(r, q, gravity=[0, 1e308, 1e308]),
    "friction_torques": lambda r, q, b: rd.friction_torques(r.replace(Fv=[1e12, 1e12]), np.array([1e300, 1.0])),
    "kinetic_energy": lambda r, q, b: rd.kinetic_energy(r, q, b),
    "potential_energy": lambda r, q, b: rd.potential_energy(r.replace(d=[0, 1e12]), q, gravity=[1e300, 1e300, 0]),
    "coriolis_matrix": lambda r, q, b: rd.coriolis_matrix(r.replace(d=[0, 1e12]), q, np.array([1e300, 1e300])),
    "inertia_matrix_derivative": lambda r, q, b: rd.dynamics.inertia_matrix_derivative(r.replace(d=[0, 1e12]), q, np.array([1e300, 1e300])),
    "state_derivative": lambda r, q, b: rd.state_derivative(r, np.concatenate([q, b]), q),
    "link_velocities": lambda r, q, b: rd.link_velocities(r.replace(d=[0, 1e12]), q, np.array([1e300, 1e300])),
    "link_accelerations": lambda r, q, b: rd.link_accelerations(r, q, b, q),
    "jacobian_dot_qd": lambda r, q, b: rd.jacobian_dot_qd(r, q, b),
    "regressor": lambda r, q, b: rd.regressor(r, q, b, q),
    "joint_from_motor": lambda r, q, b: rd.dynamics.joint_from_motor(rd.dynamics.Transmission.gears([1e-10, 1], [1, 1]), [1e300, 0]),
    "motor_from_joint": lambda r, q, b: rd.dynamics.motor_from_joint(rd.dynamics.Transmission.gears([1e10, 1], [1, 1]), [1e300, 0]),
    "actuator_torques": lambda r, q, b: rd.dynamics.actuator_torques(rd.dynamics.Transmission.gears([1e-10, 1], [1, 1]), [1e300, 0]),
}


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("name", sorted(OVERFLOWING))
def test_overflow_from_finite_inputs_is_an_error(planar, name):
    q, big = np.array([0.3, 0.2]), np.full(2, _BIG)
    with pytest.raises(rd.NumericOverflowError, match=r"the result is not finite \(floating-point overflow in float64"):
        OVERFLOWING[name](planar, q, big)
    assert issubclass(rd.NumericOverflowError, rd.InputError)


#: Massless link 2 and a point mass on joint 2's axis (frame 3 is fixed at r = 0.5 along z2, turned by alpha = pi,
#: so rounding leaves a pivot of ~1e-32 where the exact articulated inertia about joint 2 is 0).
SINGULAR = """
name: singular
joints:
  - {name: j1, sigma: 0}
  - {name: j2, sigma: 0, d: 1.0}
  - {name: tip, sigma: 2, alpha: pi, r: 0.5}
links:
  - {mass: 1.0, com: [0.5, 0, 0], inertia_com: [0.01, 0, 0, 0.1, 0, 0.1]}
  - {M: 0}
  - {M: 2}
"""


@pytest.mark.parametrize("method", ["recursive", "cholesky", "gibbs_appell", "spatial_operator"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_singular_model_same_error_from_every_formulation(method, dtype):
    robot = rd.loads(SINGULAR)
    q = np.array([[0.3, 0.2], [-1.0, 2.0]], dtype)
    with pytest.raises(rd.ModelError, match=r"robot 'singular': .*: the direct dynamic model is singular, a joint moves only massless"):
        rd.forward_dynamics(robot, q, q, q, method=method)
    with pytest.raises(rd.ModelError, match=r"the direct dynamic model is singular"):  # one state: its own fast path
        rd.forward_dynamics(robot, q[0], q[0], q[0], method=method)
    with pytest.raises(rd.ModelError, match=r"the direct dynamic model is singular"):
        rd.state_derivative(robot, np.concatenate([q, q], -1), q, method=method)


@pytest.mark.parametrize("name", rd.list_robots())
def test_no_false_singular_on_builtin_robots(name):
    """The relative pivot tolerance leaves every built-in robot solvable, in float32 too, and the formulations agree."""
    robot = rd.load(name)
    rng = np.random.default_rng(3)
    q, qd, tau = (rng.uniform(-1.5, 1.5, (4, robot.n)) for _ in range(3))
    ref = rd.forward_dynamics(robot, q, qd, tau)
    for method in ("cholesky", "gibbs_appell", "spatial_operator"):
        np.testing.assert_allclose(rd.forward_dynamics(robot, q, qd, tau, method=method), ref, rtol=1e-8, atol=1e-8 * np.abs(ref).max())
    for method in ("recursive", "cholesky", "gibbs_appell", "spatial_operator"):
        acc32 = rd.forward_dynamics(robot, *(x.astype(np.float32) for x in (q, qd, tau)), method=method)
        assert acc32.dtype == np.float32 and np.all(np.isfinite(acc32))


def test_urdf_with_entities_or_a_dtd_is_refused(tmp_path):
    """External entities would read local files into the model and nested ones expand without bound."""
    pytest.importorskip("yourdfpy")
    xxe = ('<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
           '<robot name="&x;"><link name="base"/></robot>')
    laughs = ('<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]>'
              '<robot name="&b;"><link name="base"/></robot>')
    for text in (xxe, laughs):
        with pytest.raises(rd.ModelFileError, match="DOCTYPE"):
            rd.from_urdf(text)
        path = tmp_path / "r.urdf"
        path.write_text(text)
        with pytest.raises(rd.ModelFileError, match="DOCTYPE"):
            rd.load(str(path))
