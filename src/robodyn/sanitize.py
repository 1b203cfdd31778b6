"""The one gate between text from a model file and what robodyn writes or executes.

A model file is data from someone else.  Its strings (robot name, joint/link names, ``source``, descriptions)
reach generated source code, comments, docstrings, identifiers, file names, figures and the terminal only
through the functions of this module.
"""

from __future__ import annotations

import builtins
import hashlib
import keyword
import os
import re
import unicodedata
from pathlib import Path

from robodyn.errors import InputError

MAX_IDENTIFIER = 48
MAX_COMMENT = 200

_C = """auto break case char const continue default do double else enum extern float for goto if inline int long
register restrict return short signed sizeof static struct switch typedef union unsigned void volatile while _Bool
_Complex _Imaginary bool true false NULL main errno asm fortran""".split()
_MATLAB = """break case catch classdef continue else elseif end for function global if otherwise parfor persistent
return spmd switch try while ans pi eps Inf NaN inf nan i j zeros ones size sin cos sign exp abs pow""".split()
_JULIA = """baremodule begin break catch const continue do else elseif end export false finally for function global
if import let local macro module quote return struct true try using while abstract mutable primitive type where in
isa outer Vector Matrix Float64 nothing missing""".split()
#: names the generated code itself defines or uses (arguments, outputs, helpers, modules)
_GENERATED = """np numpy out batch q qd qdd tau gravity wrenches single fabs sqrt""".split()

#: keywords and reserved names of the four languages, Python's built-ins and the generated code's own names
RESERVED = frozenset(keyword.kwlist) | frozenset(keyword.softkwlist) | frozenset(dir(builtins)) | frozenset(_C) | \
    frozenset(_MATLAB) | frozenset(_JULIA) | frozenset(_GENERATED)

_NOT_IDENT = re.compile(r"[^A-Za-z0-9_]+")
_NOT_COMMENT = re.compile(r"[^A-Za-z0-9 _\-.,:;()+=<>'!@&|~^/]")
_MARKDOWN_PUNCTUATION = re.compile(r"[!-/:-@\[-`{-~]")


def _ascii(text) -> str:
    return unicodedata.normalize("NFKD", str(text)).encode("ascii", "ignore").decode("ascii")


def identifier(text, default: str = "robot") -> str:
    """A name usable as an identifier in Python, C99, MATLAB and Julia and as a file name.

    NFKD → ASCII; every run of characters outside ``[A-Za-z0-9_]`` becomes one ``_``, stripped at both ends;
    empty → ``default``; a leading digit gets ``m_``; longer than :data:`MAX_IDENTIFIER` + 9 (57) characters: cut
    to 48, then ``_`` and 8 hex digits of the SHA-256 of ``text`` (long names stay distinct); a reserved name
    (:data:`RESERVED`) gets the suffix ``_``.  The result matches ``[A-Za-z][A-Za-z0-9_]*``: ``"my-robot 2"`` →
    ``"my_robot_2"``, ``"6dof"`` → ``"m_6dof"``, ``"int"`` → ``"int_"``.
    """
    s = _NOT_IDENT.sub("_", _ascii(text))
    s = s.strip("_") or default
    if s[0].isdigit():
        s = "m_" + s
    if len(s) > MAX_IDENTIFIER + 9:  # (+9: a result of this rule is left as it is: identifier is idempotent)
        digest = hashlib.sha256(str(text).encode("utf-8", "surrogatepass")).hexdigest()[:8]
        s = s[:MAX_IDENTIFIER].rstrip("_") + "_" + digest
    if s in RESERVED or s.lower() in RESERVED:
        s += "_"
    return s


def identifiers(texts, default: str = "robot") -> list[str]:
    """``identifier`` of each text, made unique in order with suffixes ``_2``, ``_3``, ..."""
    out, seen = [], set()
    for t in texts:
        base = identifier(t, default)
        s, k = base, 1
        while s in seen:
            k += 1
            s = f"{base}_{k}"
        seen.add(s)
        out.append(s)
    return out


def comment(text, limit: int = MAX_COMMENT) -> str:
    """``text`` as one line that no comment or docstring of the four languages can be closed by.

    NFKD → ASCII; every character outside letters, digits, space and ``_-.,:;()+=<>'!@&|~^/`` becomes ``_`` (no
    newline, quote, backslash, ``*``, ``#``, ``%``, ``{``, ``}``, ``?`` or ``$`` remains: no ``*/``, ``\"\"\"``,
    ``%{``, ``#=``, trigraph or line splice), whitespace runs become one space, at most ``limit`` characters.
    """
    s = _ascii(text)
    s = " ".join(_NOT_COMMENT.sub("_", " ".join(s.split())).split())
    if len(s) > limit:
        s = s[: limit - 3].rstrip() + "..."
    return s


def markdown(text, limit: int = MAX_COMMENT) -> str:
    """``comment(text)`` with every ASCII punctuation character backslash-escaped, as CommonMark allows: safe in
    Markdown and HTML (no tag, entity, link, emphasis, code span or table cell can start)."""
    return _MARKDOWN_PUNCTUATION.sub(r"\\\g<0>", comment(text, limit))


def figure_text(text) -> str:
    """``text`` shown literally in a Matplotlib figure: every ``$`` escaped, so no math text is parsed."""
    return str(text).replace("$", "\\$")


def printable(text) -> str:
    """``text`` safe on a terminal: tabs and line breaks as spaces, every other control or format character
    (escape sequences, bidirectional overrides, ...) shown as ``\\xNN`` / ``\\uNNNN``."""
    out = []
    for ch in str(text):
        if ch in "\t\n\r\v\f\u2028\u2029\x85":
            out.append(" ")
        elif unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn"):
            out.append(f"\\x{ord(ch):02x}" if ord(ch) < 256 else f"\\u{ord(ch):04x}" if ord(ch) < 0x10000
                       else f"\\U{ord(ch):08x}")
        else:
            out.append(ch)
    return "".join(out)


def child_path(folder: str | os.PathLike, name: str) -> Path:
    """``folder / name`` where ``name`` must be one plain file name (no separator, ``..``, drive or root)."""
    folder = Path(folder)
    bad = (not name or name in (".", "..") or "/" in name or "\\" in name or os.sep in name
           or (os.altsep and os.altsep in name) or "\0" in name or Path(name).is_absolute())
    if bad:
        raise InputError(f"file name {name!r} would leave the output folder {str(folder)!r}; this is a bug in robodyn")
    return folder / name
