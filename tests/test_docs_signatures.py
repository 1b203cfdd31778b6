"""Every signature a page of the docs writes out (``name(arg, kw=default, ...) -> result`` lines of its ```text
blocks) names the function's real parameters, in order, with the defaults shown (users issue §1)."""

from __future__ import annotations

import inspect
import re

import pytest

import robodyn as rd

from tests.test_docs import fenced_blocks
_LINE = re.compile(r"\s*((?:rd\.)?[A-Za-z_][\w.]*)\((.*?)\)\s*(?:->|#|$)")


def documented_signatures():
    found = []
    for page, lang, block in fenced_blocks():
        if lang != "text":
            continue
        lines = block.splitlines()
        for i, line in enumerate(lines):
            if line.rstrip().endswith(","):  # a signature continued on the next line
                line = line.rstrip() + " " + lines[i + 1].strip() if i + 1 < len(lines) else line
            m = _LINE.match(line)
            if m and _resolve(m.group(1)) is not None:
                found.append(pytest.param(m.group(1), m.group(2), id=f"{page}: {m.group(1)}"))
    return found


def _resolve(name):
    """The robodyn object a documented name means (``rd.x``, ``x`` exported by robodyn, ``Class.method``)."""
    obj = rd
    for part in name.removeprefix("rd.").split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj if callable(obj) else None


def test_the_pages_write_signatures():
    assert len(documented_signatures()) >= 15


@pytest.mark.parametrize("name, args", documented_signatures())
def test_documented_signature_matches_the_code(name, args):
    params = inspect.signature(_resolve(name)).parameters
    real = [p for p in params if p not in ("self", "cls")]
    shown = []
    for piece in (a.strip() for a in args.split(",")):
        if piece in ("", "*", "...") or piece.startswith("**"):
            continue
        key, _, default = piece.partition("=")
        key = key.strip()
        shown.append(key)
        assert key in params, f"{name}: the docs show a parameter {key!r} the code does not have ({real})"
        if default.strip() not in ("", "..."):
            want = params[key].default
            assert default.strip() == repr(want).replace("'", '"') or default.strip() == str(want), \
                f"{name}: {key} defaults to {want!r} in the code, {default.strip()} in the docs"
    order = [p for p in real if p in shown]
    assert order == shown, f"{name}: the docs show {shown}, the code's order is {order}"
