"""The one tracer (robodyn.dynamics.trace): its IR, its counter, its snap tolerance, its exact and counting tapes."""

import math

import pytest

from robodyn.analysis.traced import Traced, counting
from robodyn.dynamics import fast
from robodyn.dynamics.trace import SNAP_TOL, snap, tally, trace_kernel


def test_snap_and_tally():
    assert (snap(0.5 * SNAP_TOL), snap(1 - 0.5 * SNAP_TOL), snap(-1 - 0.5 * SNAP_TOL)) == (0.0, 1.0, -1.0)
    assert snap(2 * SNAP_TOL) == 2 * SNAP_TOL and snap(1 + 2 * SNAP_TOL) == 1 + 2 * SNAP_TOL
    assert tally(["mul", "cmul", "div", "divc", "add", "addc", "cos", "sin", "sqrt", "exp", "pow", "let", "abs",
                  "check", "in"]) == {"mul": 4, "add": 2, "sin": 1, "cos": 1, "sqrt": 1, "other": 2, "div": 2}


def test_counting_scalars_use_the_one_counter_and_tolerance():
    a, b = Traced(2.0), Traced(3.0)
    with counting() as t:
        r = a / b + (1 + 0.5 * SNAP_TOL) * a + 1.0 / a + a * (0.5 * SNAP_TOL)
    assert (t.mul, t.div, t.add) == (2, 2, 2) and math.isclose(r.v, 2 / 3 + 2 + 0.5)


def test_exact_tape_keeps_every_constant_and_records_checks():
    c1, c2 = 0.1 + 1e-15, 0.1  # equal to 12 digits: one node on a symbolic tape, two on an exact one
    tape, outputs, kept = trace_kernel(lambda backend, x: [x[0] * c1 - x[0] * c2, (1 - 1e-14) * x[1]],
                                       {"x": 2})
    ops = [tape.ops[k] for k in kept]
    assert ("cmul", c1, 0) in ops and ("cmul", c2, 0) in ops and ("cmul", 1 - 1e-14, 1) in ops
    fn = fast.generate("k", lambda backend, x: [x[0] * c1 - x[0] * c2, (1 - 1e-14) * x[1]], {"x": 2})
    assert fn(3.0, 5.0) == (3.0 * c1 - 3.0 * c2, (1 - 1e-14) * 5.0)

    def pivot(backend, x):
        assert x[0] > 2.0 * x[1] and x[0].records_checks
        return [x[1] / x[0]]

    fn = fast.generate("p", pivot, {"x": 2})
    assert fn(4.0, 1.0) == (0.25,)
    with pytest.raises(fast.Fallback):
        fn(1.0, 1.0)
    assert [op[0] for op in trace_kernel(pivot, {"x": 2})[0].ops].count("check") == 1


def test_counting_scalars_are_recording_scalars_of_the_counting_tape():
    """robodyn.analysis.traced has no arithmetic of its own: a counting scalar is a Rec on a counting tape, each
    executed operation one IR assignment (no sharing), and the counting block reads them."""
    from robodyn.dynamics.trace import Rec, Tape

    a, b = Traced(2.0), Traced(3.0)
    assert type(a) is Rec and a.g is b.g and a.g.counting and isinstance(a, Traced)
    assert not any(isinstance(Tape(exact=e).input("x", [1.0])[0], Traced) for e in (True, False))
    with counting() as t:
        r = a * b + a * b - 2.5 / a + a / 4.0
    tape = a.g
    assert t.ops == ("mul", "mul", "add", "cdiv", "add", "divc", "add")  # a·b twice: executed, not shared
    assert [op[0] for op in tape.ops[-7:]] == list(t.ops) and (t.mul, t.div, t.add) == (4, 2, 3)
    assert r.v == 2.0 * 3.0 + 2.0 * 3.0 - 2.5 / 2.0 + 2.0 / 4.0
    assert (a * 1 is a) and (a == 2.0) and (a != b) and float(b) == 3.0 and a < b
