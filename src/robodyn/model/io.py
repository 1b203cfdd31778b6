"""Robot model files (YAML) and the built-in robot library.

Schema (the contract users write; missing keys default to 0, antecedent to j − 1)::

    name: rx90
    source: "where the numbers come from"
    gravity: [0, 0, -9.81]
    joints:   # one row per frame j = 1..nf
      - {name: j1, antecedent: 0, sigma: 0, gamma: 0, b: 0, alpha: 0, d: 0, theta: 0, r: 0, qmin: -3, qmax: 3,
         qdmax: 2.5, taumax: 80}   # |q̇| <= qdmax (rad/s | m/s), |Γ| <= taumax (N m | N); absent: unlimited
    links:    # one row per frame; standard parameters in R_j about O_j (SI units)
      - {XX: 0, XY: 0, XZ: 0, YY: 0, YZ: 0, ZZ: 1.2, MX: 0, MY: 0, MZ: 0, M: 10, Ia: 0, Fc: 0, Fv: 0}
      # or: {mass: m, com: [x, y, z], inertia_com: [[..],[..],[..]], Ia: .., Fc: .., Fv: ..}

Angles are in radians; a number may be an expression of ``pi`` (:func:`_expression`).  Files are read by a
restricted YAML loader (:class:`_ModelLoader`) within the ``MAX_*`` limits below (docs/getting-started.md).
"""

from __future__ import annotations

from types import MappingProxyType
import ast
import math
import operator
import os
import re
from importlib import resources
from pathlib import Path

import numpy as np
import yaml

from robodyn.model.robot import check_robot
from robodyn.files import MAX_FILE_BYTES, read_text_file, write_atomically
from robodyn.errors import InputError, ModelError, ModelFileError, UnknownRobotError
from robodyn.model.inertia import standard_from_com
from robodyn.model.robot import PARAMETER_NAMES, Robot

_JOINT_KEYS = ("name", "antecedent", "sigma", "gamma", "b", "alpha", "d", "theta", "r", "qmin", "qmax", "qdmax", "taumax",
               "link")
_LINK_EXTRA = ("Ia", "Fc", "Fv", "Foff", "Fst", "kst", "Bst")
_COM_KEYS = ("mass", "com", "inertia_com")
_TOP_KEYS = ("name", "source", "gravity", "joints", "links", "base", "floating", "base_link")


# ---- hardened YAML reading: YAML 1.2 core scalars, no aliases, no duplicate keys, bounded size and depth ----

#: Limits on model files and their values (documented in docs/getting-started.md, "Model files"; MAX_FILE_BYTES in
#: robodyn.files, shared with the URDF reader).
MAX_DEPTH = 8
MAX_SCALAR_CHARS = 10_000
MAX_EXPRESSION_CHARS = 200
MAX_POWER_EXPONENT = 8
MAX_ABS_VALUE = 1e12

_INT_12 = re.compile(r"[-+]?(0|[1-9][0-9]*)\Z")
_FLOAT_12 = re.compile(r"[-+]?(\.[0-9]+|(0|[1-9][0-9]*)(\.[0-9]*)?)([eE][-+]?[0-9]+)?\Z")
_INF_12 = re.compile(r"[-+]?\.(inf|Inf|INF)\Z")
_NAN_12 = re.compile(r"\.(nan|NaN|NAN)\Z")


try:  # libyaml's event parser when PyYAML has it (5x faster); composing, checking and constructing stay in Python
    from yaml._yaml import CParser as _CParser

    _PARSER: tuple = (_CParser,)
except ImportError:  # pragma: no cover - PyYAML without libyaml
    _PARSER = (yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser)


class _ModelLoader(yaml.composer.Composer, *_PARSER, yaml.constructor.SafeConstructor, yaml.resolver.BaseResolver):
    """PyYAML's safe loading restricted to what a model file needs.

    Plain scalars are resolved as in the YAML 1.2 core schema (``yes``, ``on``, ``1:30`` and ``010`` stay
    strings, so they are reported instead of silently becoming ``True``, 90 or 8); anchors, aliases and
    merge keys are refused (no "billion laughs" expansion); duplicate keys are refused; nesting is limited
    to :data:`MAX_DEPTH` levels and scalars to :data:`MAX_SCALAR_CHARS` characters.
    """

    yaml_implicit_resolvers: dict = {}
    yaml_constructors: dict = {}

    def __init__(self, stream, origin):
        if _PARSER[0] is yaml.reader.Reader:
            yaml.reader.Reader.__init__(self, stream)
            yaml.scanner.Scanner.__init__(self)
            yaml.parser.Parser.__init__(self)
        else:
            _PARSER[0].__init__(self, stream)
        yaml.composer.Composer.__init__(self)
        yaml.constructor.SafeConstructor.__init__(self)
        yaml.resolver.BaseResolver.__init__(self)
        self.origin = origin
        self.path: list = []

    def _fail(self, message, mark=None):
        line = f", line {mark.line + 1}" if mark is not None else ""
        where = _describe_path(self.path)
        raise ModelFileError(f"{self.origin}{line}{where}: {message}")

    def compose_node(self, parent, index):
        self.path.append(index.value if isinstance(index, yaml.ScalarNode) else index)
        event = self.peek_event()
        if getattr(event, "anchor", None) is not None:
            what = "alias '*" if isinstance(event, yaml.AliasEvent) else "anchor '&"
            self._fail(f"{what}{event.anchor}' not allowed; model files may not use anchors and aliases, "
                       "write each value out", event.start_mark)
        if len(self.path) > MAX_DEPTH:
            self._fail(f"nested more than {MAX_DEPTH} levels deep; a model file needs at most 6", event.start_mark)
        if isinstance(event, yaml.ScalarEvent) and len(event.value) > MAX_SCALAR_CHARS:
            self._fail(f"a value of {len(event.value)} characters; the limit is {MAX_SCALAR_CHARS}", event.start_mark)
        node = super().compose_node(parent, index)
        if isinstance(node, yaml.MappingNode):
            seen = set()
            for k, _ in node.value:
                if not isinstance(k, yaml.ScalarNode):
                    self._fail("a key must be a plain name such as M or alpha, not a list or mapping", k.start_mark)
                if (k.tag, k.value) in seen:
                    self.path.append(k.value)
                    self._fail(f"duplicate key {_shown(k.value)}; give each field once", k.start_mark)
                seen.add((k.tag, k.value))
        self.path.pop()
        return node


def _describe_path(path) -> str:
    """', links row 3, field M' from the composer's path [None, 'links', 2, 'M'] (None: a key or the root)."""
    steps = [p for p in path if p is not None]
    parts = []
    for i, p in enumerate(steps):
        if isinstance(p, int):
            parts.append(f"row {p + 1}" if i == 1 and steps[0] in ("joints", "links") else f"entry {p + 1}")
        else:
            text = _shown(str(p))[1:-1]
            parts.append(f"field {text}" if i != 0 or len(steps) == 1 or not isinstance(steps[1], int) else text)
    if len(parts) >= 2 and parts[1].startswith("row"):
        parts[:2] = [f"{parts[0]} {parts[1]}"]
    return "".join(", " + x for x in parts[:3]) + (", ..." if len(parts) > 3 else "")


def _shown(value, limit: int = 60) -> str:
    """A value from a model file as it may appear in a message: quoted, control characters escaped (no terminal
    escape sequences reach the user's screen), long values cut."""
    text = value if isinstance(value, str) else repr(value)
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    text = text if len(text) <= limit else text[: limit - 3] + "..."
    return f"'{text}'" if isinstance(value, str) else text


def _construct_int(loader, node):
    value = loader.construct_scalar(node)
    if not _INT_12.match(value):
        raise yaml.constructor.ConstructorError(None, None, f"'{value}' is not a decimal integer", node.start_mark)
    return int(value) if len(value) <= 30 else float(value)


def _construct_float(loader, node):
    value = loader.construct_scalar(node)
    if _INF_12.match(value):
        return -math.inf if value.startswith("-") else math.inf
    if _NAN_12.match(value):
        return math.nan
    if not (_FLOAT_12.match(value) or _INT_12.match(value)):
        raise yaml.constructor.ConstructorError(None, None, f"'{value}' is not a number", node.start_mark)
    return float(value)


def _construct_bool(loader, node):
    return loader.construct_scalar(node) in ("true", "True", "TRUE")


def _construct_undefined(loader, node):
    raise yaml.constructor.ConstructorError(None, None, f"tag {node.tag} not allowed; model files hold numbers, "
                                            "strings, lists and mappings", node.start_mark)


for _tag, _regexp, _first in (
    ("tag:yaml.org,2002:null", r"(~|null|Null|NULL)?\Z", ["~", "n", "N", ""]),
    ("tag:yaml.org,2002:bool", r"(true|True|TRUE|false|False|FALSE)\Z", list("tTfF")),
    ("tag:yaml.org,2002:int", _INT_12.pattern, list("-+0123456789")),
    ("tag:yaml.org,2002:float", rf"({_FLOAT_12.pattern[:-2]}|{_INF_12.pattern[:-2]}|{_NAN_12.pattern[:-2]})\Z", list("-+.0123456789")),
):
    _ModelLoader.add_implicit_resolver(_tag, re.compile(_regexp), _first)
for _tag, _construct in (("null", yaml.SafeLoader.construct_yaml_null), ("bool", _construct_bool),
                         ("int", _construct_int), ("float", _construct_float),
                         ("str", yaml.SafeLoader.construct_yaml_str), ("seq", yaml.SafeLoader.construct_yaml_seq),
                         ("map", yaml.SafeLoader.construct_yaml_map)):
    _ModelLoader.add_constructor(f"tag:yaml.org,2002:{_tag}", _construct)
_ModelLoader.add_constructor(None, _construct_undefined)


def parse_yaml(text: str, origin: str):
    """The document of YAML text read by the hardened loader of model files (:class:`_ModelLoader`): at most
    :data:`MAX_FILE_BYTES` bytes and :data:`MAX_DEPTH` levels, no anchors or aliases (no "billion laughs"), no
    duplicate keys, YAML 1.2 core scalars (``yes``/``no`` stay strings).  Every YAML file robodyn reads (model
    files, closed chains, gravity calibrations) goes through it.

    Raises
    ------
    ModelFileError
        One line naming ``origin``, the line and the field.
    """
    if not isinstance(text, str):
        raise ModelFileError(f"{origin}: model text must be a str, got {type(text).__name__}")
    if len(text.encode("utf-8", "surrogatepass")) > MAX_FILE_BYTES:
        raise ModelFileError(f"{origin}: larger than {MAX_FILE_BYTES} bytes, the limit for a model file")
    try:
        loader = _ModelLoader(text, origin)
        try:
            return loader.get_single_data()
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f", line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = " ".join(x for x in (getattr(exc, "context", None), getattr(exc, "problem", None)) if x) or str(exc)
        raise ModelFileError(f"{origin}{line}: not valid YAML ({_shown(problem, 200)[1:-1]})") from None


def list_robots() -> list[str]:
    """Names of the built-in robots, sorted."""
    files = resources.files("robodyn.robots").iterdir()
    return sorted(Path(f.name).stem for f in files if f.name.endswith(".yaml"))


def load(name_or_path: str | os.PathLike, strict: bool = True, floating: bool = False) -> Robot:
    """Load a built-in robot by name (see :func:`list_robots`), a model file ``*.yaml``, a URDF file ``*.urdf``
    (:func:`robodyn.from_urdf`, default options) or a MuJoCo MJCF ``*.xml``.

    A ``str`` with no folder separator and no suffix that names a built-in robot is that robot, whatever exists
    in the current folder; write ``./rx90`` to mean a file of that name.  ``strict=False`` accepts published
    inertias that violate the triangle inequality, with a warning; ``floating=True`` gives the robot a floating
    base (a URDF's root link then becomes the base body).

    Raises
    ------
    UnknownRobotError
        A bare name that is neither a built-in robot nor an existing file.
    ModelFileError
        A missing, unreadable or malformed file, or a folder; the message names the file, the row and the field.
    """
    if builtin_name(name_or_path):
        builtin = resources.files("robodyn.robots").joinpath(f"{name_or_path}.yaml")
        return _floating(_from_text(builtin.read_text(encoding="utf-8"), f"built-in robot '{name_or_path}'", strict), floating)
    if not isinstance(name_or_path, (str, os.PathLike)):
        raise ModelFileError(f"load: expected a robot name or a path, got {type(name_or_path).__name__}")
    if isinstance(name_or_path, str) and _is_bare_name(name_or_path) and not Path(name_or_path).exists():
        raise UnknownRobotError(f"unknown robot '{name_or_path}'{_did_you_mean(name_or_path)}; built-in robots are "
                                f"{', '.join(list_robots())}, or give a path to a .yaml, .urdf or MJCF .xml file")
    if not str(name_or_path):
        raise UnknownRobotError("load: empty robot name; give a built-in robot name or a path to a .yaml file")
    if Path(name_or_path).suffix.lower() == ".urdf":
        from robodyn.model.urdf import from_urdf

        return from_urdf(Path(name_or_path), strict=strict, floating=floating)
    if Path(name_or_path).suffix.lower() == ".xml":  # a MuJoCo MJCF model
        from robodyn.model.mjcf import from_mjcf

        return _floating(from_mjcf(Path(name_or_path), strict=strict), floating)
    label = str(name_or_path)
    return _floating(_from_text(read_text_file(name_or_path, label), label, strict), floating)


def _floating(robot: Robot, floating: bool) -> Robot:
    """``robot`` with a floating base when ``floating`` (``load(..., floating=True)``)."""
    if not isinstance(floating, bool):
        raise InputError(f"load: floating = {floating!r}; give True or False")
    return robot.replace(base="floating") if floating and robot.base != "floating" else robot


def _did_you_mean(name: str) -> str:
    """``"; did you mean 'rx90'"`` for the built-in robot closest to a mistyped name (``rx9O``), else ``""``."""
    import difflib

    close = difflib.get_close_matches(name.lower(), list_robots(), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def builtin_name(name) -> bool:
    """Whether :func:`load` reads ``name`` as a built-in robot: a str with no folder separator and no model suffix
    that names one of :func:`list_robots`, whatever exists in the current folder."""
    return (isinstance(name, str) and _is_bare_name(name)
            and resources.files("robodyn.robots").joinpath(f"{name}.yaml").is_file())


def _is_bare_name(text: str) -> bool:
    seps = {"/", os.sep} | ({os.altsep} if os.altsep else set())
    return bool(text) and not any(c in text for c in seps) and Path(text).suffix.lower() not in (".yaml", ".yml", ".urdf", ".xml")


def read_yaml_file(path: str | os.PathLike, label: str, *, kind: str = "model file"):
    """The YAML document of a file, read by :func:`read_text_file` and parsed by :func:`parse_yaml` (size,
    encoding, depth, aliases, duplicate keys, YAML 1.2 scalars); raises :class:`ModelFileError`."""
    return parse_yaml(read_text_file(path, label, kind=kind), label)


def loads(text: str, origin: str = "<string>") -> Robot:
    """Parse a model from YAML text (``origin`` names it in error messages)."""
    return _from_text(text, origin)


def _from_text(text: str, origin: str, strict: bool = True) -> Robot:
    return robot_from_document(parse_yaml(text, origin), origin, strict)


def robot_from_document(doc, origin: str, strict: bool = True) -> Robot:
    """A :class:`Robot` from a parsed model-file document (the mapping of :func:`parse_yaml`); every field
    checked, errors (:class:`ModelFileError`) name ``origin``, the row and the field."""
    if not isinstance(doc, dict):
        raise ModelFileError(f"{origin}: expected a mapping with keys {', '.join(_TOP_KEYS)}")
    unknown = set(doc) - set(_TOP_KEYS)
    if unknown:
        shown = ", ".join(_shown(k) for k in sorted(unknown, key=str))
        raise ModelFileError(f"{origin}: unknown top-level key(s) [{shown}]; allowed: {', '.join(_TOP_KEYS)}")
    for key in ("joints", "links"):
        if not isinstance(doc.get(key), list) or not doc[key]:
            raise ModelFileError(f"{origin}: '{key}' must be a non-empty list, one row per frame")
    joints, links = doc["joints"], doc["links"]
    if len(joints) != len(links):
        raise ModelFileError(f"{origin}: {len(joints)} rows in 'joints' but {len(links)} in 'links'; give one of each per frame")
    nf = len(joints)
    geo = {k: np.zeros(nf) for k in ("gamma", "b", "alpha", "d", "theta", "r")}
    ant, sigma, names, qlim, link_names = np.arange(nf), np.zeros(nf, int), [], [], []
    rates = {"qdlim": [], "taulim": []}
    for j, row in enumerate(joints, start=1):
        where = f"{origin}, joints row {j}"
        _check_row(row, _JOINT_KEYS, where)
        names.append(_text(row.get("name", f"j{j}"), where, "name"))
        link_names.append(_text(row.get("link", ""), where, "link"))
        ant[j - 1] = _integer(row.get("antecedent", j - 1), where, "antecedent")
        sigma[j - 1] = _integer(row.get("sigma", 0), where, "sigma")
        for k in geo:
            geo[k][j - 1] = _number(row.get(k, 0), where, k)
        if sigma[j - 1] != 2:
            qlim.append([_limit(row, "qmin", -math.inf, where), _limit(row, "qmax", math.inf, where)])
            for field, key in (("qdlim", "qdmax"), ("taulim", "taumax")):
                rates[field].append(_limit(row, key, math.inf, where))
        else:
            for pair in (("qmin", "qmax"), ("qdmax", "taumax")):
                if any(k in row for k in pair):
                    raise ModelFileError(f"{where}: field {'/'.join(pair)} on a fixed frame (sigma: 2); remove it")
    params = np.zeros((nf, 10))
    extra = {k: np.zeros(nf) for k in _LINK_EXTRA}
    for j, row in enumerate(links, start=1):
        where = f"{origin}, links row {j}"
        params[j - 1] = _inertial_row(row, PARAMETER_NAMES + _LINK_EXTRA + _COM_KEYS, where)
        for k in _LINK_EXTRA:
            extra[k][j - 1] = _number(row.get(k, 0), where, k)
    base, base_params = _base_fields(doc, origin)
    gravity = doc.get("gravity", [0, 0, -9.81])
    if not isinstance(gravity, list) or len(gravity) != 3:
        raise ModelFileError(f"{origin}: field gravity must be a list of 3 numbers (m/s^2, base frame)")
    try:
        return Robot(name=_text(doc.get("name", Path(origin).stem), origin, "name"),
                     source=_text(doc.get("source", ""), origin, "source"), antecedent=ant, sigma=sigma, params=params,
                     gravity=[_number(g, origin, "gravity") for g in gravity], frame_names=tuple(names),
                     link_names=tuple(link_names), qlim=np.array(qlim).reshape(-1, 2), qdlim=np.array(rates["qdlim"]),
                     taulim=np.array(rates["taulim"]), strict=strict, base=base, base_params=base_params, **geo,
                     **extra)
    except ModelError as exc:
        raise ModelFileError(f"{origin}: {exc}") from None


def _base_fields(doc, origin) -> tuple[str, np.ndarray]:
    """``base`` (fixed | mobile | floating; ``floating: true`` is short for ``base: floating``) and the standard
    parameters of the base body, ``base_link`` (a links row without joint quantities), of a model file."""
    base = doc.get("base", "fixed")
    if base not in ("fixed", "mobile", "floating"):
        raise ModelFileError(f"{origin}: field base = {_shown(base)}; use fixed, mobile or floating")
    floating = doc.get("floating", base == "floating")
    if not isinstance(floating, bool) or ("base" in doc and floating != (base == "floating")):
        raise ModelFileError(f"{origin}: field floating = {_shown(floating)}; give true or false, agreeing with base")
    base = "floating" if floating else base
    return base, _inertial_row(doc.get("base_link", {}), PARAMETER_NAMES + _COM_KEYS, f"{origin}, base_link")


def _inertial_row(row, allowed, where) -> np.ndarray:
    """The standard parameters (10,) of a links row (fields ``allowed``): XX..M, or mass/com/inertia_com."""
    _check_row(row, allowed, where)
    if any(k in row for k in _COM_KEYS):
        if any(k in row for k in PARAMETER_NAMES):
            raise ModelFileError(f"{where}: give either standard parameters (XX..M) or mass/com/inertia_com, not both")
        return _from_com(row, where)
    return np.array([_number(row.get(k, 0), where, k) for k in PARAMETER_NAMES])


def _check_row(row, allowed, where):
    if not isinstance(row, dict):
        raise ModelFileError(f"{where}: expected a mapping like {{{allowed[0]}: ...}}, got {_shown(row)}")
    unknown = [k for k in row if k not in allowed]
    if unknown:
        raise ModelFileError(f"{where}: unknown field {_shown(unknown[0])}; allowed fields: {', '.join(allowed)}")


def _from_com(row, where):
    missing = [k for k in _COM_KEYS if k not in row]
    if missing:
        raise ModelFileError(f"{where}: field '{missing[0]}' missing; mass, com and inertia_com go together")
    mass = _number(row["mass"], where, "mass")
    com = row["com"]
    if not isinstance(com, list) or len(com) != 3:
        raise ModelFileError(f"{where}: field com must be [x, y, z] in metres, in frame R_j")
    I = row["inertia_com"]
    flat = [x for r in I for x in (r if isinstance(r, list) else [r])] if isinstance(I, list) else None
    if flat is None or len(flat) not in (6, 9) or (len(flat) == 9 and not all(isinstance(r, list) and len(r) == 3 for r in I)):
        raise ModelFileError(f"{where}: field inertia_com must be a 3x3 matrix or [XX, XY, XZ, YY, YZ, ZZ] about the centre of mass")
    vals = np.array([_number(x, where, "inertia_com") for x in flat])
    if len(vals) == 9:
        vals = vals.reshape(3, 3)
        if not np.allclose(vals, vals.T, rtol=0, atol=1e-12 * max(1.0, np.abs(vals).max())):
            raise ModelFileError(f"{where}: field inertia_com is not symmetric")
    return standard_from_com(mass, [_number(c, where, "com") for c in com], vals)


_BINARY = MappingProxyType({ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv})
_HINT = "a number or an expression of numbers and pi with + - * / ** and parentheses, e.g. pi/2 or 0.3**2 * 4"


def _number(value, where, field) -> float:
    """A finite float from a YAML number or an expression string (grammar in docs/getting-started.md)."""
    if isinstance(value, bool) or value is None:
        shown = "empty" if value is None else repr(value)
        raise ModelFileError(f"{where}: field {field} = {shown} is not a number; give {_HINT}")
    if isinstance(value, (int, float)):
        x = float(value)
    elif isinstance(value, str):
        x = _expression(value, where, field)
    else:
        raise ModelFileError(f"{where}: field {field} = {_shown(value)} is not a number (a {type(value).__name__}); give {_HINT}")
    if not math.isfinite(x):
        raise ModelFileError(f"{where}: field {field} = {_shown(value)} is not finite; give a finite number")
    if abs(x) > MAX_ABS_VALUE:
        raise ModelFileError(f"{where}: field {field} = {_shown(value)} exceeds {MAX_ABS_VALUE:g} in magnitude; model "
                             "values are in SI units")
    return x


def _expression(text, where, field) -> float:
    """Evaluate a numeric expression with :mod:`ast`, never ``eval``: numbers, ``pi``, + − * /, unary ±,
    parentheses and ``**`` with an exponent of magnitude <= MAX_POWER_EXPONENT; every step must stay finite."""
    shown = _shown(text)
    def bad(why):
        return ModelFileError(f"{where}: field {field} = {shown} is not a number ({why}); give {_HINT}")
    if len(text) > MAX_EXPRESSION_CHARS:
        raise bad(f"longer than {MAX_EXPRESSION_CHARS} characters")
    if re.fullmatch(r"\s*[-+]?[0-9]+(:[0-5]?[0-9])+(\.[0-9]*)?\s*", text):
        raise bad("a YAML 1.1 sexagesimal number such as 1:30 is not read")
    if re.fullmatch(r"\s*[-+]?0[0-9]+\s*", text):
        raise bad("a leading zero is octal in YAML 1.1 and decimal in YAML 1.2; write the number without it")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        raise bad("not an arithmetic expression") from None

    def ev(node):
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            return float(node.value)
        if isinstance(node, ast.Name) and node.id == "pi":
            return math.pi
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            x = ev(node.operand)
            return -x if isinstance(node.op, ast.USub) else x
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            a, b = ev(node.left), ev(node.right)
            if isinstance(node.op, ast.Div) and b == 0:
                raise bad("division by zero")
            return _BINARY[type(node.op)](a, b)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
            a, b = ev(node.left), ev(node.right)
            if abs(b) > MAX_POWER_EXPONENT:
                raise bad(f"power {b:g}: exponents are limited to +-{MAX_POWER_EXPONENT}")
            if a < 0 and b != int(b):
                raise bad("a negative number to a fractional power")
            if a == 0 and b < 0:
                raise bad("division by zero")
            try:
                return math.pow(a, b)
            except OverflowError:
                raise bad("overflow") from None
        if isinstance(node, ast.Name):
            raise bad(f"unknown name '{node.id}', the only name allowed is pi")
        raise bad("not an arithmetic expression")

    x = ev(tree.body)
    if not math.isfinite(x):
        raise bad("overflow")
    return x


def _limit(row, key, default, where) -> float:
    """A joint limit: a number as :func:`_number`, or +-inf (``.inf``) for no limit; default when absent."""
    value = row.get(key, default)
    if isinstance(value, float) and math.isinf(value):
        return value
    return _number(value, where, key)


def _text(value, where, field) -> str:
    """A name or free text: a string (a plain number such as ``name: 560`` is read as its text)."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ModelFileError(f"{where}: field {field} must be text, got {_shown(value)}; quote it")
    return str(value)


def _integer(value, where, field) -> int:
    x = _number(value, where, field)
    if x != int(x):
        raise ModelFileError(f"{where}: field {field} = {_shown(value)} must be an integer")
    return int(x)


def dumps(robot: Robot) -> str:
    """The YAML text of a robot in the standard-parameter form of the schema."""
    check_robot(robot)
    joints, links = [], []
    for i in range(robot.nf):
        row = {"name": robot.frame_names[i], **({"link": robot.link_names[i]} if robot.link_names[i] else {}),
               "antecedent": int(robot.antecedent[i]), "sigma": int(robot.sigma[i])}
        row.update({g: float(getattr(robot, g)[i]) for g in ("gamma", "b", "alpha", "d", "theta", "r")})
        k = robot.derived.joint_of[i]  # the joint's column of q
        if k >= 0:
            lo, hi = robot.qlim[k]
            if np.isfinite(lo):
                row["qmin"] = float(lo)
            if np.isfinite(hi):
                row["qmax"] = float(hi)
            for key, values in (("qdmax", robot.qdlim), ("taumax", robot.taulim)):
                if np.isfinite(values[k]):
                    row[key] = float(values[k])
        joints.append(row)
        link = {p: float(v) for p, v in zip(PARAMETER_NAMES, robot.params[i])}
        link.update({e: float(getattr(robot, e)[i]) for e in _LINK_EXTRA if getattr(robot, e)[i] != 0})
        links.append(link)
    doc = {"name": robot.name, "source": robot.source, "gravity": [float(g) for g in robot.gravity], "joints": joints, "links": links}
    if robot.base != "fixed":
        doc["base"] = robot.base
    if np.any(robot.base_params != 0):
        doc["base_link"] = {p: float(v) for p, v in zip(PARAMETER_NAMES, robot.base_params)}
    return yaml.dump(doc, Dumper=_ModelDumper, sort_keys=False, default_flow_style=None, width=200, allow_unicode=False)


class _ModelDumper(yaml.SafeDumper):
    """Quotes every string that :class:`_ModelLoader` would read as something else (``1e5``, ``true``), so that
    ``loads(dumps(robot))`` gives back the same names; never writes anchors or aliases."""

    def ignore_aliases(self, data):
        return True


def _represent_str(dumper, data):
    resolvers = _ModelLoader.yaml_implicit_resolvers.get(data[:1], []) + _ModelLoader.yaml_implicit_resolvers.get(None, [])
    typed = any(tag != "tag:yaml.org,2002:str" and regexp.match(data) for tag, regexp in resolvers)
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="'" if typed or not data else None)


_ModelDumper.add_representer(str, _represent_str)


def save(robot: Robot, path: str | os.PathLike) -> Path:
    """Write ``robot`` to a YAML model file (or URDF for ``*.urdf``) atomically (no partial file on error);
    returns the path."""
    if not isinstance(path, (str, os.PathLike)) or not str(path):
        raise InputError(f"argument 'path' is {path!r}; give the path of the .yaml or .urdf file to write")
    text = model_text(robot, path)
    return write_atomically(path, lambda fh: fh.write(text), what="model file")


def model_text(robot: Robot, path: str | os.PathLike) -> str:
    """The text :func:`save` writes to ``path``: URDF for ``*.urdf``, else the YAML model file."""
    if Path(path).suffix.lower() == ".urdf":
        from robodyn.model.urdf import to_urdf

        return to_urdf(robot)
    return dumps(robot)
