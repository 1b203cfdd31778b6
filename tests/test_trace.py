"""The one tracer (robodyn.dynamics.trace): its IR, its counter, its snap tolerance, its counting tapes."""

import math

from robodyn.analysis.traced import Traced, counting
from robodyn.dynamics.trace import SNAP_TOL, snap, tally


def test_snap_and_tally():
    assert (snap(0.5 * SNAP_TOL), snap(1 - 0.5 * SNAP_TOL), snap(-1 - 0.5 * SNAP_TOL)) == (0.0, 1.0, -1.0)
    assert snap(2 * SNAP_TOL) == 2 * SNAP_TOL and snap(1 + 2 * SNAP_TOL) == 1 + 2 * SNAP_TOL
    assert tally(["mul", "cmul", "div", "divc", "add", "addc", "cos", "sin", "sqrt", "exp", "pow", "let", "abs",
                  "in"]) == {"mul": 4, "add": 2, "sin": 1, "cos": 1, "sqrt": 1, "other": 2, "div": 2}


def test_counting_scalars_use_the_one_counter_and_tolerance():
    a, b = Traced(2.0), Traced(3.0)
    with counting() as t:
        r = a / b + (1 + 0.5 * SNAP_TOL) * a + 1.0 / a + a * (0.5 * SNAP_TOL)
    assert (t.mul, t.div, t.add) == (2, 2, 2) and math.isclose(r.v, 2 / 3 + 2 + 0.5)


def test_counting_scalars_are_recording_scalars_of_the_counting_tape():
    """robodyn.analysis.traced has no arithmetic of its own: a counting scalar is a Rec on a counting tape, each
    executed operation one IR assignment (no sharing), and the counting block reads them."""
    from robodyn.dynamics.trace import Rec, Tape

    a, b = Traced(2.0), Traced(3.0)
    assert type(a) is Rec and a.g is b.g and a.g.counting and isinstance(a, Traced)
    assert not isinstance(Tape().input("x", [1.0])[0], Traced)
    with counting() as t:
        r = a * b + a * b - 2.5 / a + a / 4.0
    tape = a.g
    assert t.ops == ("mul", "mul", "add", "cdiv", "add", "divc", "add")  # a·b twice: executed, not shared
    assert [op[0] for op in tape.ops[-7:]] == list(t.ops) and (t.mul, t.div, t.add) == (4, 2, 3)
    assert r.v == 2.0 * 3.0 + 2.0 * 3.0 - 2.5 / 2.0 + 2.0 / 4.0
    assert (a * 1 is a) and (a == 2.0) and (a != b) and float(b) == 3.0 and a < b
