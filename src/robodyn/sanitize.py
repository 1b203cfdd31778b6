"""The one gate between text from a model file and what robodyn writes or executes.

A model file is data from someone else (shared between labs, downloaded with papers). Its strings — the robot
name, joint/link names, ``source`` and descriptions — reach generated source code, comments, docstrings,
identifiers and file names only through the functions of this module:

``identifier(text)``
    A name usable as an identifier in Python, C99, MATLAB and Julia and as a file name. The rule:

    1. Unicode NFKD normalisation, then ASCII only (accents dropped: ``"Bräu"`` → ``"Brau"``);
    2. every run of characters outside ``[A-Za-z0-9_]`` becomes one ``_``, and ``_`` is stripped at both ends
       (``"my-robot 2"`` → ``"my_robot_2"``, ``"__init__"`` → ``"init"``);
    3. empty → ``"robot"``; a leading digit gets the prefix ``m_`` (``"6dof"`` → ``"m_6dof"``);
    4. longer than :data:`MAX_IDENTIFIER` + 9 (57) characters: cut to 48, then ``_`` and 8 hex digits of the SHA-256
       of the original text, so that two long names stay distinct;
    5. a keyword or reserved name of Python, C, MATLAB or Julia, or a name the generated code itself uses
       (``np``, ``out``, ``sin``, ...), gets the suffix ``_`` (``"int"`` → ``"int_"``).

    The result matches ``[A-Za-z][A-Za-z0-9_]*`` and has at most 57 characters.

``identifiers(texts)``
    ``identifier`` of each, made unique in order: a repeated result gets ``_2``, ``_3``, ... .

``comment(text)``
    Text safe inside any comment or docstring of the four languages: NFKD → ASCII, every character outside
    letters, digits, space and ``_-.,:;()+=<>'!@&|~^/`` becomes ``_`` (so no newline, quote, backslash,
    ``*``, ``#``, ``%``, ``{``, ``}``, ``?`` or ``$`` remains: no ``*/``, ``\"\"\"``, ``%{``, ``#=``, trigraph or
    line splice can end the comment), whitespace runs become one space, at most :data:`MAX_COMMENT` (200)
    characters.

``markdown(text)``
    Text safe inside Markdown and HTML (the ``README.md`` robodyn generate writes): ``comment(text)`` with every
    ASCII punctuation character escaped by a backslash, as CommonMark allows for each of them (``<img>`` →
    ``\\<img\\>``): no tag, entity, link, emphasis, code span or table cell can start; a renderer shows the
    text of ``comment(text)``.

``figure_text(text)``
    Text shown literally in a Matplotlib figure (titles, labels): every ``$`` becomes ``\\$``, so Matplotlib
    never parses math text in it (a robot named ``$\\frac{$`` would otherwise make drawing fail).

``printable(text)``
    Text safe to print on a terminal: tabs and line breaks become spaces, and every other control or format
    character (escape sequences, bidirectional overrides, ...) is shown as ``\\xNN`` / ``\\uNNNN``. The
    command line shows model-file text only through it.

``child_path(folder, name)``
    ``folder / name`` for a file name built by robodyn, checked to stay inside ``folder`` (one plain component:
    no separator, no ``..``, not absolute).
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
    """A safe identifier for ``text`` (see the module docstring for the rule)."""
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
    """``text`` as one line that no comment or docstring syntax can be closed by (see the module docstring)."""
    s = _ascii(text)
    s = " ".join(_NOT_COMMENT.sub("_", " ".join(s.split())).split())
    if len(s) > limit:
        s = s[: limit - 3].rstrip() + "..."
    return s


def markdown(text, limit: int = MAX_COMMENT) -> str:
    """``comment(text)`` with every ASCII punctuation character backslash-escaped (see the module docstring)."""
    return _MARKDOWN_PUNCTUATION.sub(r"\\\g<0>", comment(text, limit))


def figure_text(text) -> str:
    """``text`` shown literally in a Matplotlib figure: every ``$`` escaped, so no math text is parsed."""
    return str(text).replace("$", "\\$")


def printable(text) -> str:
    """``text`` with tabs/line breaks as spaces and other control or format characters escaped (see above)."""
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
