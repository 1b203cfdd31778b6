"""robodyn.sanitize: the documented rules for identifiers, comment text and child paths."""

import keyword
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

import robodyn as rd
from robodyn.sanitize import MAX_COMMENT, RESERVED, child_path, comment, identifier, identifiers

IDENT = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")


@pytest.mark.parametrize("text, expected", [
    ("my-robot 2", "my_robot_2"), ("6dof", "m_6dof"), ("int", "int_"), ("end", "end_"), ("np", "np_"),
    ("", "robot"), ("___", "robot"), ("Bräu", "Brau"), ("../../escaped", "escaped"), ("/etc/passwd", "etc_passwd"),
    ("rx90", "rx90"), ("arm */\n#include <stdlib.h>", "arm_include_stdlib_h"), ("日本", "robot"),
])
def test_identifier_rule(text, expected):
    assert identifier(text) == expected


def test_long_names_are_cut_with_a_hash_and_stay_distinct():
    a, b = identifier("x" * 100 + "a"), identifier("x" * 100 + "b")
    assert a != b and len(a) == len(b) == 57 and a.startswith("x" * 48 + "_")


def test_identifiers_are_made_unique_with_suffixes():
    assert identifiers(["a-b", "a b", "a_b", "c"]) == ["a_b", "a_b_2", "a_b_3", "c"]


@given(st.text(max_size=80))
def test_identifier_is_safe_everywhere(text):
    s = identifier(text)
    assert IDENT.match(s) and s.isidentifier() and not keyword.iskeyword(s) and s not in RESERVED
    assert len(s) <= 57 and identifier(s) == s


@given(st.text(max_size=400))
def test_comment_cannot_close_any_comment(text):
    s = comment(text)
    assert s.isascii() and s.isprintable() and len(s) <= MAX_COMMENT
    for closer in ("*/", "/*", '"""', "'''", "%{", "%}", "#=", "=#", "\\", "\n", "\r", "??", "$", "`"):
        assert closer not in s


def test_child_path_stays_in_the_folder(tmp_path):
    assert child_path(tmp_path, "a_idm.py") == tmp_path / "a_idm.py"
    for bad in ("..", "../x", "/etc/x", "a/b", "", "."):
        with pytest.raises(rd.InputError, match="would leave the output folder"):
            child_path(tmp_path, bad)


def test_printable_escapes_terminal_controls():
    from robodyn.sanitize import printable

    assert printable("a\x1b[31mb\tc\nd\u202ee") == "a\\x1b[31mb c d\\u202ee"
    assert printable("Bräu [/] 日本") == "Bräu [/] 日本"
