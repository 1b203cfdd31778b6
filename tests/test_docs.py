"""The ```python examples of README.md and docs/*.md run as a reader pastes them, and the values they show are true.

Each page runs in a fresh namespace, its blocks in order, in an empty working directory holding `my_robot.yaml`
(getting-started loads it).  A value shown in a comment is checked where it follows an expression statement or
an assignment to one name, on the same line or on the comment lines right below:

    res.qm          # [ 0.33848755 -0.38362932]   rad: ...     numbers, to the printed digits
    cs.inertia_entry(1, 2)   # 'm12(q2)'  ...                  Python literals, `...` for elided items
    robot           # Robot('rx90', RRRRRR, n=6, nf=6)         the repr of an object of that type
    tau = f(q)      # (1000, 6)  or  (..., 6)                  a tuple for an array value is its shape

Comments that are not Python literals (prose, `(..., n)`, equation numbers such as `[9.12]`) are not claims.
"""

import ast
import os
import re

import numpy as np
import pytest

import robodyn as rd
from robodyn.native import NativeUnavailableError
from robodyn.symbolic import CompilerNotFoundError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGES = ["README.md"] + sorted(f"docs/{name}" for name in os.listdir(os.path.join(ROOT, "docs"))
                               if name.endswith(".md"))


def fenced_blocks():
    """(page, language, text) of every fenced block of README.md and docs/*.md, in page order."""
    for page in PAGES:
        text = open(os.path.join(ROOT, page), encoding="utf-8").read()
        for lang, block in re.findall(r"```(\w*)\n(.*?)```", text, flags=re.S):
            yield page, lang, block


def python_blocks(page):
    text = open(os.path.join(ROOT, page), encoding="utf-8").read()
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


# ---- reading a claim out of a comment ----------------------------------------------------------------------------

_EQUATION_REFERENCE = re.compile(r"\[\d+\.\d+\]")  # [9.12]: a seed equation number, not a value


def _balanced(text):
    """The prefix of `text` up to the parenthesis closing its first one, or None."""
    depth = 0
    for i, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")"
        if ch == ")" and depth == 0:
            return text[: i + 1]
    return None


_NOT_A_LITERAL = object()


def _literal(text):
    """`text` as a Python literal (NumPy's comma-less printing accepted), or _NOT_A_LITERAL."""
    for candidate in (text, re.sub(r"(?<=[\d.\]])\s+(?=[-\d\[])", ", ", text)):
        try:
            return ast.literal_eval(candidate)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            pass
    return _NOT_A_LITERAL


def claim_of(comment):
    """('literal', obj, text) | ('array', obj, text) | ('repr', type_name, text), or None when not a claim.

    A claim is the longest prefix of the comment that is a Python literal and ends at the end, before two
    spaces, a ';' or a ' = ' (or, for a container, before a word: `(1000, 6) Newton–Euler`); or an object's
    repr `Name('...', ...)`; or `array([...])`."""
    comment = comment.strip()
    call = re.match(r"(\w+)\(", comment)
    if call:
        text = _balanced(comment)
        if text is None:
            return None
        if call.group(1) == "array":
            inner = _literal(text[len("array(") : -1])
            return None if inner is _NOT_A_LITERAL else ("array", inner, text)
        name, args = call.group(1), text[len(call.group(0)) :]
        if len(name) > 1 and name[0].isupper() and args[:1] in ("'", '"'):
            return ("repr", name, text)
        return None
    strong = {m.start() for m in re.finditer(r"\s{2,}|;|\s=\s", comment)} | {len(comment)}
    weak = {m.start() for m in re.finditer(r"\s+(?=[A-Za-z])", comment)} - strong
    for end in sorted(strong | weak, reverse=True):
        text = comment[:end].strip()
        if not text or text[0] not in "[({'\"-0123456789" or _EQUATION_REFERENCE.fullmatch(text):
            continue
        obj = _literal(text)
        if obj is _NOT_A_LITERAL or (end in weak and not isinstance(obj, (list, tuple, dict))):
            continue  # `10 states`, `5 kg`: a number followed by prose is prose
        return ("literal", obj, text)
    return None


# ---- comparing a claim with a value ------------------------------------------------------------------------------


def _number_close(shown, value):
    """Numbers with 4 or more decimals are read as rounded to their last digit; shorter ones (0.2, 40) as exact
    to NumPy's printing precision, 8 decimals."""
    if isinstance(shown, bool) or isinstance(value, (bool, np.bool_)):
        return shown == value
    value = float(value)
    if isinstance(shown, int):
        return value == shown
    mantissa, _, exponent = repr(shown).lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    decimals = decimals if decimals >= 4 else 8
    half_unit = 0.5 * 10.0 ** (int(exponent or 0) - decimals)
    return abs(value - shown) <= half_unit * (1 + 1e-9) + 1e-15 * abs(shown)


def _segments_match(shown, value):
    """`shown` with `...` gaps (each standing for zero or more items) against the sequence `value`."""
    segments, start = [], 0
    for i, item in enumerate(list(shown) + [Ellipsis]):
        if item is Ellipsis:
            segments.append(list(shown[start:i]))
            start = i + 1
    head, *middle, tail = segments
    if len(head) + len(tail) > len(value) or not all(map(matches, head, value[: len(head)])):
        return False
    if tail and not all(map(matches, tail, value[len(value) - len(tail) :])):
        return False
    at, stop = len(head), len(value) - len(tail)
    for segment in middle:  # leftmost placement of each segment leaves the most room for the next ones
        found = next((k for k in range(at, stop - len(segment) + 1)
                      if all(map(matches, segment, value[k : k + len(segment)]))), None)
        if found is None:
            return False
        at = found + len(segment)
    return True


def matches(shown, value):
    """True when `value` prints as `shown` does (numbers to the shown digits, `...` elides items)."""
    if isinstance(shown, (int, float)) and not isinstance(shown, bool):
        return np.ndim(value) == 0 and np.issubdtype(np.asarray(value).dtype, np.number) and _number_close(shown, value)
    if isinstance(shown, (list, tuple)):
        if isinstance(value, np.ndarray):
            value = list(value)
        if not isinstance(value, (list, tuple)):
            return False
        if Ellipsis in shown:
            return _segments_match(shown, value)
        return len(shown) == len(value) and all(map(matches, shown, value))
    if isinstance(shown, dict):
        return (isinstance(value, dict) and shown.keys() == value.keys()
                and all(matches(shown[k], value[k]) for k in shown))
    return type(shown) is type(value) and shown == value


def claim_holds(claim, value):
    kind, shown, text = claim
    if kind == "repr":
        return shown == type(value).__name__ and " ".join(repr(value).split()) == " ".join(text.split())
    if kind == "array":
        return isinstance(value, np.ndarray) and matches(shown, value)
    if isinstance(value, np.ndarray) and isinstance(shown, tuple):  # arrays print as lists: a tuple is a shape
        if shown and shown[0] is Ellipsis:
            return value.shape[len(value.shape) - len(shown) + 1 :] == shown[1:]
        return value.shape == shown
    return matches(shown, value)


# ---- running a page ----------------------------------------------------------------------------------------------


def _comment_after(lines, end_line):
    """The comment on line `end_line` (1-based) and the comment-only lines right below it, one entry each."""
    first = lines[end_line - 1]
    comments = [first.split("#", 1)[1]] if "#" in first else []
    for line in lines[end_line:]:
        if not line.strip().startswith("#"):
            break
        comments.append(line.strip()[1:])
    return comments


def _claim_below(comments):
    """The claim in the first comment, or spread over it and the following comment-only lines."""
    for k in range(1, len(comments) + 1):
        claim = claim_of(" ".join(c.strip() for c in comments[:k]))
        if claim is not None:
            return claim
    return None


def run_page(page):
    """Execute the page's python blocks in one namespace, statement by statement (so that a claim is compared
    with the value at its line); return the namespace and the claims as (block, line, claim text, holds)."""
    namespace, checked = {}, []
    for b, block in enumerate(python_blocks(page), 1):
        lines, where = block.splitlines(), f"{page}, python block {b}"
        for statement in ast.parse(block, where).body:
            if isinstance(statement, ast.Expr):
                value = eval(compile(ast.Expression(statement.value), where, "eval"), namespace)
            else:
                exec(compile(ast.Module([statement], type_ignores=[]), where, "exec"), namespace)
                single = isinstance(statement, ast.Assign) and len(statement.targets) == 1
                if not (single and isinstance(statement.targets[0], ast.Name)):
                    continue
                value = namespace[statement.targets[0].id]
            claim = _claim_below(_comment_after(lines, statement.end_lineno))
            if claim is not None:
                checked.append((b, statement.end_lineno, claim[2], claim_holds(claim, value)))
    return namespace, checked


@pytest.mark.parametrize("page", PAGES)
def test_python_examples_run_and_show_true_values(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples write files (copy.yaml, plots) into the working directory
    rd.save(rd.load("planar2r"), tmp_path / "my_robot.yaml")
    try:
        namespace, checked = run_page(page)
    except (CompilerNotFoundError, NativeUnavailableError) as exc:  # a page on compiled code, here without a compiler
        pytest.skip(f"{page} runs compiled code: {exc}")
    wrong = [f"block {b}, line {line}: {text}" for b, line, text, holds in checked if not holds]
    assert not wrong, f"{page}: comments showing values the code does not give: {wrong}"
    if python_blocks(page):
        assert "rd" in namespace  # the page imported robodyn itself, as a reader must


def test_the_pages_show_values_that_are_checked():
    """The claims the pages make today, so that a parser change cannot silently stop checking them."""
    claims = {page: [c for c in (claim_of(line.split("#", 1)[1]) for block in python_blocks(page)
                                  for line in block.splitlines() if "#" in line) if c] for page in PAGES}
    texts = {page: [c[2] for c in cs] for page, cs in claims.items()}
    assert "Robot('rx90', RRRRRR, n=6, nf=6)" in texts["README.md"]
    assert "('ZZR1', 'XXR2', 'XY2'), 40" in texts["README.md"]
    assert "[[(2,), (2,)], [(2,), ()]]" in texts["docs/analysis.md"]
    assert "[ 0.33848755 -0.38362932]" in texts["docs/extended-models.md"]
    assert "{'mul': 186, 'add': 152, 'sincos': 10, 'other': 6}" in texts["docs/symbolic.md"]
    assert "(6, 6)" in texts["docs/formulations.md"] and "(..., 6)" in texts["docs/getting-started.md"]


@pytest.mark.parametrize(("comment", "value", "holds"), [
    ("[ 0.33848755 -0.38362932]   rad", np.array([0.338487554, -0.383629321]), True),
    ("[ 0.33848755 -0.38362932]   rad", np.array([0.33848757, -0.38362932]), False),
    ("array([-2.10740833,  0.90296869])", np.array([-2.107408334, 0.902968694]), True),
    ("array([-2.10740833,  0.90296869])", [-2.107408334, 0.902968694], False),
    ("['a', 'b', ..., 'z']  names", ["a", "b", "c", "z"], True),
    ("['a', 'b', ..., 'z']  names", ["a", "c", "z"], False),
    ('["a", ..., "c", "d", ..., "f", ...]', list("abcdefg"), True),
    ('["a", ..., "c", "d", ..., "f", ...]', list("abdcefg"), False),
    ("'m12(q2)'      (1-based)", "m12(q2)", True),
    ("'m12(q2)'      (1-based)", "m12(q1, q2)", False),
    ("('ZZR1', 'XY2'), 40; equations", (("ZZR1", "XY2"), 40), True),
    ("('ZZR1', 'XY2'), 40; equations", (("ZZR1", "XY2"), 41), False),
    ("(..., 6)   J q", np.zeros((4, 6)), True),
    ("(1000, 6) Newton–Euler", np.zeros((1000, 5)), False),
    ("{'mul': 188, 'add': 152}", {"mul": 188, "add": 152}, True),
    ("{'mul': 188, 'add': 152}", {"mul": 188, "add": 150}, False),
    ("[[0.2, 0], [0, 0.1]] = N² J_m", np.diag([0.2, 0.1]), True),
    ("[[0.2, 0], [0, 0.1]] = N² J_m", np.diag([0.2, 0.10001]), False),
    ("Robot('rx90', RRRRRR, n=6, nf=6)", rd.load("rx90"), True),
    ("Robot('rx90', RRRRRR, n=6, nf=6)", rd.load("puma560"), False),
])
def test_claims_in_comments_are_compared_to_the_printed_digits(comment, value, holds):
    claim = claim_of(comment)
    assert claim is not None and claim_holds(claim, value) is holds


@pytest.mark.parametrize("comment", ["[9.12]", "(..., n, 11 nf + 3 n)", "(n,n), (n,n), (n,n,n) [i, j, k] bool",
                                     "10 states", "= inverse dynamics without friction", "(methods, n): max / mean",
                                     "a built-in robot by name (rd.list_robots())", "{method: (6, 3) array}"])
def test_prose_comments_are_not_claims(comment):
    assert claim_of(comment) is None


def test_every_cli_command_is_in_the_readme_table():
    """README's command table names every command of `robodyn` (sub-commands of `demo` included)."""
    import typer

    from robodyn.cli import app

    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    section = text.split("### Command line", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `robodyn")]
    commands = []

    def walk(cmd, path):
        if hasattr(cmd, "commands"):
            for name, sub in cmd.commands.items():
                walk(sub, path + [name])
        else:
            commands.append(" ".join(path))

    walk(typer.main.get_command(app), [])
    missing = [c for c in commands if not any(f"`robodyn {c} " in row or f"`robodyn {c}`" in row for row in rows)]
    assert len(commands) >= 16 and not missing, missing


def test_readme_counts_the_built_in_robots():
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    assert f"{len(rd.list_robots())} built-in robots" in text
