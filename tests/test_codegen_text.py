"""MATLAB and Julia text: translated back to Python line by line, it reproduces the numeric model."""

import re

import numpy as np
import pytest

import robodyn as rd
from tests.support.random_robots import random_robot, random_state

FUNCS = {"sin": np.sin, "cos": np.cos, "sign": np.sign, "exp": np.exp, "abs": np.abs}


def run_text(text, lang, args):
    env = dict(FUNCS, **args)
    opener, closer = ("(", ")") if lang == "matlab" else ("[", "]")
    index = re.compile(r"\b(q|qd|qdd|tau|out)" + re.escape(opener) + r"([\d, ]+)" + re.escape(closer))
    for line in text.splitlines():
        line = line.strip().rstrip(";")
        if not line or line[0] in "%#" or line.startswith(("function", "end", "return")):
            continue
        m = re.match(r"out = zeros\(([\d, ]+)\)", line)
        if m:
            env["out"] = np.zeros(tuple(int(k) for k in m[1].split(",")))
            continue
        line = index.sub(lambda m: f"{m[1]}[{', '.join(str(int(k) - 1) for k in m[2].split(','))}]", line)
        exec(line.replace("^", "**"), env)  # noqa: S102 (test of our own generated text)
    return env["out"]


@pytest.mark.parametrize("lang", ["matlab", "julia"])
@pytest.mark.parametrize("kind", ["inverse_dynamics", "inertia_matrix"])
def test_text_reproduces_model(lang, kind):
    robot = random_robot(7, fixed=True)
    q, qd, qdd = random_state(robot, 7)
    m = rd.customized_model(robot, kind)
    text = m.matlab_source("f") if lang == "matlab" else m.julia_source("f")
    assert ("function out = f(" if lang == "matlab" else "function f(") in text
    if kind == "inverse_dynamics":
        got = run_text(text, lang, {"q": q, "qd": qd, "qdd": qdd}).reshape(-1)
        want = rd.inverse_dynamics(robot, q, qd, qdd)
    else:
        got = run_text(text, lang, {"q": q})
        want = m.numpy_function()(q)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12 * np.abs(want).max())
