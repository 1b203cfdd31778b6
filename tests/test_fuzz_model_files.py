"""Fuzzing the model-file loader (issue 13): every mutation of a built-in model file either loads as a valid
Robot or raises a RobodynError, never another exception and never a hang.

Mutations act on the parsed document (values, keys, types, structure, shared objects that the YAML writer
turns into anchors and aliases) and on the text (anchors, aliases, huge numbers, expressions, YAML 1.1
forms, unicode and control characters, deep nesting, cut and duplicated lines).  The examples are
derandomised (a fixed seed), a few thousand in all, each under a time limit (``signal.alarm``).
"""

import copy
import math
import os
import signal
from importlib import resources

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import robodyn as rd
from tests.support.checks import CaseTimeout

BUILTIN = {
    name: resources.files("robodyn.robots").joinpath(f"{name}.yaml").read_text(encoding="utf-8")
    for name in ("planar2r", "pr", "rx90", "puma560", "ascher2", "panda")
}
PARSED = {name: yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) for name, text in BUILTIN.items()}
DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
PER_CASE_SECONDS = 2
FUZZ = settings(
    max_examples=2000 if os.environ.get("CI") else 300,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)

HOSTILE_TOKENS = [
    "1:30", "010", "0o17", "0x1F", "yes", "no", "on", "off", "~", "null", ".inf", "-.inf", ".nan", "1e999", "-1e400",
    "1e-300", "1e300", "9" * 400, "'9**9**9**9'", "'10**400'", "'pi**1000'", "'pi**8'", "'2**-8'", "'(-1)**0.5'",
    "'1/0'", "'__import__(\"os\")'", "'pi/2'", "'-(pi)'", "'1e308*10'", "*a", "&a 1", "!!python/object:os.system",
    "!!binary aGk=", "[1, 2]", "{a: 1}", "[[[[[[[[[[1]]]]]]]]]]", "''", "'\u202e'", "'\x00'", "\x07", "\ufeff",
    "é", "'𝔭𝔦'", "true", "2001-01-01", "<<", "-", "?", ":", "|", ">", "\t", "'" + "x" * 20000 + "'",
]
KEYS = ["name", "source", "gravity", "joints", "links", "M", "MX", "XX", "ZZ", "mass", "com", "inertia_com", "Ia",
        "Fc", "Fv", "Fst", "kst", "Bst", "sigma", "antecedent", "alpha", "d", "theta", "r", "qmin", "qmax", "<<", "", "j1"]

finite = st.floats(allow_nan=False, allow_infinity=False)
leaf = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(10**30), max_value=10**30), st.floats(), finite,
    st.text(max_size=30), st.sampled_from(HOSTILE_TOKENS),
    st.sampled_from(["pi/2", "62.6111**2 * 291e-6", "9**9**9**9", "10**400", "pi**1000", "2**0.5", "-pi", "0.1*(2+3)"]),
)
value = st.recursive(leaf, lambda kids: st.one_of(st.lists(kids, max_size=4), st.dictionaries(st.sampled_from(KEYS), kids, max_size=4)), max_leaves=12)


def _paths(doc, prefix=()):
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _paths(v, prefix + (i,))


def _get(doc, path):
    for p in path:
        doc = doc[p]
    return doc


@st.composite
def structural_mutation(draw):
    doc = copy.deepcopy(PARSED[draw(st.sampled_from(sorted(PARSED)))])
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in _paths(doc) if p]
        path = draw(st.sampled_from(paths))
        parent, key = _get(doc, path[:-1]), path[-1]
        action = draw(st.sampled_from(["replace", "delete", "rename", "duplicate", "wrap"]))
        if action == "replace":
            parent[key] = draw(value)
        elif action == "delete":
            del parent[key]
        elif action == "rename" and isinstance(parent, dict):
            parent[draw(st.sampled_from(KEYS))] = parent.pop(key)
        elif action == "duplicate" and isinstance(parent, list):
            parent.insert(key, parent[key])  # the same object twice: written as an anchor and an alias
        elif action == "wrap":
            parent[key] = [parent[key]]
    return yaml.dump(doc, Dumper=DUMPER, sort_keys=False, allow_unicode=draw(st.booleans()))


@st.composite
def text_mutation(draw):
    text = BUILTIN[draw(st.sampled_from(sorted(BUILTIN)))]
    for _ in range(draw(st.integers(1, 4))):
        action = draw(st.sampled_from(["insert", "token", "cut", "dupline", "anchor", "nest"]))
        i = draw(st.integers(0, len(text)))
        if action == "insert":
            text = text[:i] + draw(st.one_of(st.sampled_from(HOSTILE_TOKENS), st.text(max_size=8))) + text[i:]
        elif action == "token":
            numbers = [k for k, c in enumerate(text) if c.isdigit() and (k == 0 or not text[k - 1].isalnum())]
            if numbers:
                k = draw(st.sampled_from(numbers))
                end = k
                while end < len(text) and (text[end].isalnum() or text[end] in ".e-+*/"):
                    end += 1
                text = text[:k] + draw(st.sampled_from(HOSTILE_TOKENS)) + text[end:]
        elif action == "cut":
            text = text[:i] + text[i + draw(st.integers(1, 200)) :]
        elif action == "dupline":
            lines = text.splitlines(keepends=True)
            k = draw(st.integers(0, len(lines) - 1))
            lines.insert(k, lines[k])
            text = "".join(lines)
        elif action == "anchor":
            text = "x: &a [" + ", ".join(["lol"] * 9) + "]\n" + text.replace("name:", "name: *a #", 1)
        elif action == "nest":
            depth = draw(st.integers(5, 3000))
            text = text.replace("gravity:", "gravity: " + "[" * depth + "]" * depth + " #", 1)
    return text


@pytest.fixture(scope="module", autouse=True)
def _kernels_built():
    """The first numeric call of a session builds robodyn's generic kernels (seconds, once per machine and cache):
    done before the fuzzing, whose per-case alarm measures loading and one evaluation, not that build."""
    q = np.zeros(2)
    rd.inverse_dynamics(rd.load("planar2r"), q, q, q)


def check_loads(text):
    signal.alarm(PER_CASE_SECONDS)
    try:
        try:
            robot = rd.loads(text, "fuzzed.yaml")
        except rd.RobodynError as exc:
            event(type(exc).__name__)
            assert str(exc).startswith("fuzzed.yaml")  # every message names the file
            return
        except CaseTimeout:
            pytest.fail(f"loading took more than {PER_CASE_SECONDS} s:\n{text[:500]}")
        # a valid Robot: joints, finite bounded numbers, physical links, and it survives a save/load round trip
        assert robot.n >= 1
        for key in ("gamma", "b", "alpha", "d", "theta", "r", "params", "Ia", "Fc", "Fv", "gravity"):
            assert np.all(np.isfinite(getattr(robot, key)))
        again = rd.loads(rd.dumps(robot))
        event("loaded")
        assert again.name == robot.name and again.joint_names == robot.joint_names
        np.testing.assert_array_equal(again.params, robot.params)
        np.testing.assert_array_equal(again.qlim, robot.qlim)
        q = np.zeros(robot.n)
        try:
            assert np.all(np.isfinite(rd.inverse_dynamics(robot, q, q, q)))
        except rd.RobodynError:
            pass
    finally:
        signal.alarm(0)


@FUZZ
@given(text=structural_mutation())
def test_structural_mutations_load_or_raise_robodyn_error(text, time_limit):
    check_loads(text)


@FUZZ
@given(text=text_mutation())
def test_text_mutations_load_or_raise_robodyn_error(text, time_limit):
    check_loads(text)


def test_fuzz_cases_include_valid_robots_and_errors(time_limit):
    """The mutations are not all rejected: an untouched file and a mild change still load."""
    assert rd.loads(BUILTIN["rx90"]).n == 6
    assert math.isclose(rd.loads(BUILTIN["planar2r"].replace("d: 1.0", "d: '1.0 + pi*0'")).d[1], 1.0)


ROBOT_FIELDS = ["antecedent", "gamma", "b", "alpha", "d", "theta", "r", "params", "Ia", "Fc", "Fv", "Foff", "Fst",
                "kst", "Bst", "qlim", "gravity", "frame_names"]
field_value = st.one_of(
    st.none(), st.booleans(), finite, st.floats(), st.text(max_size=5),
    st.lists(st.one_of(finite, st.floats(), st.text(max_size=2), st.lists(finite, max_size=10)), max_size=4),
    st.builds(np.full, st.sampled_from([(2,), (2, 10), (2, 2), (3,), (1,)]), st.sampled_from([0.0, 1.0, -1.0, 1e300, 1e-300, np.nan])),
)


@FUZZ
@given(
    sigma=st.one_of(st.sampled_from([[0, 1], [2, 2], [0], [], [3], [0.5, 0], "RR", None]), st.lists(st.integers(-1, 3), max_size=3)),
    fields=st.dictionaries(st.sampled_from(ROBOT_FIELDS), field_value, max_size=4),
)
def test_robot_constructor_accepts_or_raises_robodyn_error(sigma, fields, time_limit):
    """Robot(...) with hostile fields: a valid robot or a RobodynError, never a NumPy or Python exception."""
    signal.alarm(PER_CASE_SECONDS)
    try:
        robot = rd.Robot(name="fuzz", sigma=sigma, **fields)
    except rd.RobodynError:
        event("refused")
        return
    finally:
        signal.alarm(0)
    event("built")
    assert robot.n >= 1 and np.all(np.isfinite(robot.params)) and np.all(np.abs(robot.params) <= 1e12)
