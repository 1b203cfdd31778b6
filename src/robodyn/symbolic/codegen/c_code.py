"""C99 code of a customized model: a plain per-sample function, a batched loop and (optionally) a
CPython entry point for low-latency single calls.

    int NAME(const double *q, const double *qd, const double *qdd, double *out);
    long NAME_batch(long count, const double *q, long q_stride, ..., double *out);

NAME returns 0, or a status (:data:`SINGULAR` + k: the pivot of joint k of forward dynamics fails the relative
test of the numeric formulations; :data:`OVERFLOW`: an output is NaN or inf). The batched version reads sample i
of argument a at ``a + i*a_stride`` (stride 0 broadcasts one value to every sample), checks that the inputs are
finite and returns 0, 1 + the index of the first argument holding NaN/inf, or the first status of NAME (then
``out`` is incomplete).  With ``-DRD_PYTHON -DRD_NUMPY`` the file also defines the
Python module ``rdmodel`` (:data:`ENTRY`): a description of the function (capsule ``variant``) and the type
``Entry``, the call of ``rd.compile``'s models for one state.
"""

from __future__ import annotations

from importlib import resources

import numpy as np

from robodyn.native import parallel_source
from robodyn.sanitize import comment, identifier
import symengine as se

from robodyn.symbolic.codegen.printer import C, Argument, Language, literal, statements, to_source, used_symbols
from robodyn.arrays import PIVOT_EPS


def _c_text(name: str) -> str:
    """A fixed C fragment of the generated file, kept beside this module as C (trig.c, vec_trig.c, entry.c)."""
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


#: the lane version's spelling of functions (lane-wise helpers defined in the generated file)
VEC = Language("c", {"sin": "rd_v4sin", "cos": "rd_v4cos", "sign": "rd_v4sign", "exp": "rd_v4exp",
                     "abs": "rd_v4fabs"}, "pow")


#: sin/cos inlined so that the compiler shares the argument reduction of S_j and C_j: the reduction
#: x = k π/2 + r with π/2 split in three parts (exact products for |k| < 2^20) and fdlibm's minimax
#: kernels on |r| ≤ π/4 (error below 1 ulp of the kernel); libm for |x| ≥ 1e5 and non-finite x.
TRIG = "\n" + _c_text("trig.c")


#: above this many assignments a model has no lane version and its body is not inlined: compiling
#: straight-line code costs the C compiler time that grows faster than its length (register allocation,
#: alias walks), each copy of the body multiplies it, and large models spend their time in arithmetic, not
#: in call overhead (a 20-joint regressor: about 10^4 assignments)
LANES_LIMIT = 1500


#: statements per function in the body of a model above LANES_LIMIT: the compiler's register allocation
#: grows faster than the length of a function, so the body is cut into functions of this many statements
CHUNK = 500


#: status codes of NAME and NAME_batch, after the inputs' 1 + index: the pivot of check k (a joint of forward
#: dynamics) fails the relative test (the direct dynamic model is singular there), or an output is NaN or inf
#: although every input is finite (floating-point overflow). rd_parallel keeps the smallest positive code, so a
#: bad input wins over a singular pivot, and a singular pivot over an overflow.
SINGULAR = 16
OVERFLOW = 1 << 30


def size(a) -> int:
    return int(np.prod(a.shape))


def _strided(model) -> str:
    """The parameters of the batched functions: each argument and its stride between samples, then out."""
    return ", ".join([f"const double *{a.name}, long {a.name}_stride" for a in model.arguments] + ["double *out"])


def signature(model, name: str, batch: bool = False) -> str:
    name = identifier(name)
    if batch:
        return f"long {name}_batch(long count, {_strided(model)})"
    args = [f"const double *{a.name}" for a in model.arguments] + ["double *out"]
    return f"int {name}({', '.join(args)})"


def declarations(model, name: str) -> str:
    return f"{signature(model, name)};\n{signature(model, name, batch=True)};\n"


def parameter_names(model) -> list[str]:
    """The model's constants other than gravity (G1..G3), in the order of the ``params`` argument."""
    import re

    return [str(s) for s in sorted(model.constants, key=str) if not re.fullmatch(r"G[123]", str(s))]


def with_parameter_input(model):
    """The same model with its constant parameters read from an extra argument ``params`` (P,).

    Built from a model generated with ``symbolic_inertia=True``, ``params`` holds every nonzero inertial
    parameter and friction coefficient (names: :func:`parameter_names`, values of the robot file as
    defaults), so one compiled function serves nominal and identified parameters. Parameters that are zero
    in the robot file were folded away when the model was generated and stay zero."""
    import dataclasses

    names = parameter_names(model)
    by_name = {str(s): s for s in model.constants}
    arg = Argument("params", (len(names),), tuple((k, by_name[n]) for k, n in enumerate(names)))
    return dataclasses.replace(model, arguments=list(model.arguments) + [arg],
                               constants={s: v for s, v in model.constants.items() if str(s) not in names})


def _status_text(model) -> list[str]:
    """Comment lines on the status codes (header and source)."""
    lines = [" * NAME returns 0, or " + (f"{SINGULAR} + k where the pivot of joint k (0-based: "
                                         + ", ".join(f"{k} {comment(j)}" for k, (j, _, _) in enumerate(model.checks))
                                         + ") is below 64 eps of its scale (the model is singular at that state), or "
                                         if model.checks else "")
             + f"{OVERFLOW} where an output is NaN or inf (floating-point overflow: inputs too large).",
             " * NAME_batch reads sample i of argument a at a + i*a_stride (stride 0: one value for every sample) and",
             " * returns 0, 1 + the index of the first argument holding NaN or inf, or the first nonzero status of",
             " * NAME over the samples (then out is incomplete)."]
    return lines


def header(model, name: str) -> str:
    """C header with the prototypes of :func:`source`'s functions (include guard, C++-safe)."""
    name = identifier(name)
    guard = f"{name.upper()}_H"
    lines = [
        f"/* {model.kind} of robot {comment(model.robot.name)} ({model.parameters} inertial parameters), generated by robodyn.",
        " * Arguments: " + ", ".join(f"{a.name} ({' x '.join(map(str, a.shape))}, row-major)" for a in model.arguments)
        + f"; out ({' x '.join(map(str, model.output_shape))}).",
    ]
    lines += _status_text(model)
    lines[-1] += " */"
    for a in model.arguments:
        if a.name == "params":
            lines += ["/* params: " + ", ".join(f"{k} {s}" for k, s in a.entries) + " */"]
    lines += [f"#ifndef {guard}", f"#define {guard}", "#ifdef __cplusplus", 'extern "C" {', "#endif", ""]
    lines += [f"{signature(model, name)};", f"{signature(model, name, batch=True)};"]
    lines += ["", "#ifdef __cplusplus", "}", "#endif", f"#endif /* {guard} */"]
    return "\n".join(lines) + "\n"


def _check_line(k, pivot, scale):
    # the numeric formulations' relative test (robodyn._arrays.pivot_too_small); the first failing pivot is kept
    return f"if (!rd_status && !({pivot} > {literal(PIVOT_EPS * np.finfo(np.float64).eps)}*({scale}))) rd_status = {SINGULAR + k};"


def source(model, name: str, python_entry: bool = False, robot_name: bool = True) -> str:
    """C99 source; ``name`` and the robot's name pass through :mod:`robodyn.sanitize`.

    The robot's name appears only in the first comment line, and only with ``robot_name=True`` (the files
    ``robodyn generate`` writes). ``rd.compile`` passes False, so that the compiled source, and with it the
    compile cache's key, depends on the robot's content alone: two robots that differ only by their names
    share one library.

    ``NAME`` returns a status (0: the result is valid; :data:`SINGULAR` + k: the pivot of check k failed;
    :data:`OVERFLOW`: an output is not finite), checked in C after the outputs are written, while they are in
    the cache: the callers (``rd.compile``, the CPython entry) raise instead of returning NaN, inf or the
    1e33 of a singular pivot."""
    name = identifier(name)
    out_size = int(np.prod(model.output_shape))
    lanes = len(model.program.assignments) <= LANES_LIMIT
    of_robot = f" of robot {comment(model.robot.name)}" if robot_name else ""
    lines = [
        f"/* {model.kind}{of_robot} ({model.parameters} inertial parameters), generated by robodyn.",
        f" * Operations: {model.operation_count()}",
    ] + _status_text(model)
    lines[-1] += " */"
    if python_entry:
        lines += ["#ifdef RD_PYTHON", "#define PY_SSIZE_T_CLEAN", "#include <Python.h>", "#endif"]
    lines += [
        "#include <math.h>",
        "",
        "#if defined(__GNUC__)",
        "#define RD_ALWAYS_INLINE static inline __attribute__((always_inline))",
        "#else",
        "#define RD_ALWAYS_INLINE static inline",
        "#endif",
        "#if defined(__GNUC__)",
        "#define RD_NOINLINE static __attribute__((noinline))",
        "#else",
        "#define RD_NOINLINE static",
        "#endif",
        "",
        "static inline double rd_sign(double x) { return (double)((x > 0) - (x < 0)); }",
        TRIG,
        "static int rd_finite(const double *a, long n) {",
        "    int ok = 1;",
        "    for (long k = 0; k < n; ++k) ok &= (a[k] - a[k] == 0.0);",
        "    return ok;",
        "}",
        "",
    ]
    unused = [f"    (void){a.name};" for a in model.arguments]
    if lanes:
        lines.append(signature(model, name).replace(f"int {name}(", f"RD_ALWAYS_INLINE int {name}_body(") + " {")
        lines += unused + ["    int rd_status = 0;"]
        lines += statements(model, C, lambda a, k, s: f"const double {s} = {a}[{k}];", lambda k, e: f"out[{k}] = {e};",
                            "const double {s} = {v};", "const double {s} = {e};", check=_check_line)
        lines.append("    return rd_status;")
    else:
        lines += _chunked_body(model, name)
    args = ", ".join(a.name for a in model.arguments)
    lines += ["}", "",
              signature(model, name).replace(f"int {name}(", f"RD_ALWAYS_INLINE int {name}_checked(") + " {",
              f"    int status = {name}_body({args}, out);",
              f"    return status ? status : rd_finite(out, {out_size}) ? 0 : {OVERFLOW};",
              "}", "",
              signature(model, name) + " {", f"    return {name}_checked({args}, out);", "}", ""]
    if lanes:
        lines += _lanes(model, name)
    lines.append(signature(model, name, batch=True) + " {")
    for k, a in enumerate(model.arguments):
        lines.append(f"    for (long i = 0; i < ({a.name}_stride ? count : 1); ++i)")
        lines.append(f"        if (!rd_finite({a.name} + i*{a.name}_stride, {size(a)})) return {k + 1};")
    lines.append("    long i = 0;")
    call = [f"{a.name} + i*{a.name}_stride" for a in model.arguments] + [f"out + i*{out_size}"]
    if lanes:
        q = model.arguments[0]
        lines.append(f"    if (rd_small({q.name}, {q.name}_stride ? count : 1, {q.name}_stride, {size(q)}))")
        args = ", ".join(f"{a.name}, {a.name}_stride" for a in model.arguments)
        lines += ["        for (; i + RD_LANES <= count; i += RD_LANES)",
                  f"            if (!{name}_lanes(i, {args}, out))  /* a lane failed a check: which one, and why */",
                  "                for (long j = i; j < i + RD_LANES; ++j) {",
                  f"                    int status = {name}_checked({', '.join(c.replace('i*', 'j*') for c in call)});",
                  "                    if (status) return status;",
                  "                }"]
    lines.append("    for (; i < count; ++i) {")
    lines.append(f"        int status = {name}_checked({', '.join(call)});")
    lines += ["        if (status) return status;", "    }", "    return 0;", "}"]
    if python_entry:
        lines += _python_entry(model, name)
    return "\n".join(lines) + "\n"


def _chunked_body(model, name):
    """The one-sample body of a large model as functions of :data:`CHUNK` statements (assignments, pivot
    checks, then outputs) called in order; a value used after the cut where it is computed goes through a
    scratch array ``rd_v`` on the stack, the status through ``rd_s``. Same operations in the same order as one
    function: the same result bit for bit. Ends open: the caller closes the body function."""
    params = signature(model, name)
    params = params[params.index("(") + 1:-1]
    call = ", ".join(a.name for a in model.arguments) + ", out, rd_v, &rd_status"
    # items: (defined name or None, expressions read, C statement)
    items = [(str(s), [e], lambda st, s=s, e=e: f"const double {s} = {to_source(e, C)};")
             for s, e in model.program.assignments]
    items += [(None, [p, sc], lambda st, k=k, p=p, sc=sc: _check_line(k, to_source(p, C), to_source(sc, C))
               .replace("rd_status", "*rd_s")) for k, (_, p, sc) in enumerate(model.checks)]
    items += [(None, [o], lambda st, k=k, o=o: f"out[{k}] = {to_source(o, C)};") for k, o in enumerate(model.outputs)]
    chunks = [items[i:i + CHUNK] for i in range(0, len(items), CHUNK)]
    inputs = {str(s): (a.name, k) for a in model.arguments for k, s in a.entries}
    defined = {s: c for c, chunk in enumerate(chunks) for s, _, _ in chunk if s is not None}
    used = [sorted({str(x) for _, es, _ in chunk for e in es for x in se.sympify(e).free_symbols}) for chunk in chunks]
    slot = {}
    for c, names in enumerate(used):
        for u in names:
            if u in defined and defined[u] < c and u not in slot:
                slot[u] = len(slot)
    lines = [f"static const double {k} = {literal(v)};" for k, v in sorted(model.constants.items(), key=lambda kv: str(kv[0]))]
    for c, chunk in enumerate(chunks):
        lines += ["", f"RD_NOINLINE void {name}_part{c}({params}, double *rd_v, int *rd_s) {{"]
        lines += [f"    (void){a.name};" for a in model.arguments] + ["    (void)out;", "    (void)rd_v;", "    (void)rd_s;"]
        for u in used[c]:
            if u in inputs:
                lines.append(f"    const double {u} = {inputs[u][0]}[{inputs[u][1]}];")
            elif u in slot and defined[u] < c:
                lines.append(f"    const double {u} = rd_v[{slot[u]}];")
        for s, _, text in chunk:
            lines.append("    " + text(None))
            if s is not None and s in slot:
                lines.append(f"    rd_v[{slot[s]}] = {s};")
        lines.append("}")
    lines += ["", signature(model, name).replace(f"int {name}(", f"RD_NOINLINE int {name}_body(") + " {",
              f"    double rd_v[{max(len(slot), 1)}];", "    int rd_status = 0;"]
    lines += [f"    {name}_part{c}({call});" for c in range(len(chunks))]
    lines.append("    return rd_status;")
    return lines


#: rd_vsin / rd_vcos of TRIG on the 4 lanes at once: the same operations in the same order on each lane (so the
#: same bits as the one-sample function), the quadrant's choice and sign by bit masks instead of branches.
VEC_TRIG = _c_text("vec_trig.c").removesuffix("\n")


def _lanes(model, name):
    """RD_LANES = 4 samples at a time, each per-sample scalar of the program a GCC/Clang vector of 4 doubles
    (``vector_size``), so that the C compiler computes the samples side by side (an AVX2 clone is selected at
    load time where the CPU has it; built with ``-DRD_ARCH``, on a machine with AVX2, that clone alone). Vector
    values are registers, not memory: the compiler spends little time on them (arrays over the lanes made it walk
    aliases between hundreds of local arrays: 40 s for a 7-joint direct dynamic model). Lane arithmetic is IEEE
    element by element, so the result equals the one-sample function's bit for bit. Other compilers call the
    one-sample function per lane."""
    lane = {str(s) for a in model.arguments for _, s in a.entries}
    # an assignment is computed once per call only if it depends on no per-sample value (arguments can
    # include parameters that were constants when the program was hoisted: with_parameter_input)
    hoisted = set()
    for s, e in model.program.assignments:
        if s in model.program.hoisted and not ({str(x) for x in e.free_symbols} & lane):
            hoisted.add(s)
        else:
            lane.add(str(s))

    def vec(e):  # RD_V: a scalar or a lane vector as a lane vector (x - 0 == x exactly, -0 included)
        text = to_source(e, VEC).replace("pow(", "rd_v4pow(")
        return f"RD_V({text})"

    out_size = int(np.prod(model.output_shape))
    args = _strided(model)
    lanewise = "rd_v4 r; for (int l = 0; l < 4; ++l) r[l] = {}; return r;"
    lines = [
        "",
        "static int rd_small(const double *a, long count, long stride, long n) {",
        "    int ok = 1;",
        "    for (long i = 0; i < count; ++i) for (long k = 0; k < n; ++k) ok &= (fabs(a[i*stride + k]) < 1e5);",
        "    return ok;",
        "}",
        "",
        "#define RD_LANES 4",
        "#if defined(__GNUC__)",
        "#if !defined(__clang__)",
        '#pragma GCC diagnostic ignored "-Wpsabi"',
        "#endif",
        "typedef double rd_v4 __attribute__((vector_size(4 * sizeof(double))));",
        "#define RD_V(x) ((x) - (rd_v4){0.0, 0.0, 0.0, 0.0})",
        VEC_TRIG,
        "RD_ALWAYS_INLINE rd_v4 rd_v4sign_(rd_v4 x) { " + lanewise.format("rd_sign(x[l])") + " }",
        "RD_ALWAYS_INLINE rd_v4 rd_v4exp_(rd_v4 x) { " + lanewise.format("exp(x[l])") + " }",
        "RD_ALWAYS_INLINE rd_v4 rd_v4fabs_(rd_v4 x) { " + lanewise.format("fabs(x[l])") + " }",
        "RD_ALWAYS_INLINE rd_v4 rd_v4pow_(rd_v4 x, rd_v4 y) { " + lanewise.format("pow(x[l], y[l])") + " }",
        "#define rd_v4sin(x) rd_v4sin_(RD_V(x))",
        "#define rd_v4cos(x) rd_v4cos_(RD_V(x))",
        "#define rd_v4sign(x) rd_v4sign_(RD_V(x))",
        "#define rd_v4exp(x) rd_v4exp_(RD_V(x))",
        "#define rd_v4fabs(x) rd_v4fabs_(RD_V(x))",
        "#define rd_v4pow(x, y) rd_v4pow_(RD_V(x), RD_V(y))",
        "#if defined(__x86_64__) && defined(__linux__)",
        "#if defined(RD_ARCH)",  # built for an x86-64-v3 or v4 machine (robodyn.native.build.arch_flags): its clone
        '__attribute__((target("avx2")))',
        "#else",
        '__attribute__((target_clones("avx2", "default")))',
        "#endif",
        "#endif",
        f"static int {name}_lanes(long i0, {args}) {{",
    ]
    lines += [f"    (void){a.name}; (void){a.name}_stride;" for a in model.arguments]
    for s, v in sorted(model.constants.items(), key=lambda kv: str(kv[0])):
        lines.append(f"    const double {s} = {literal(v)};")
    used = used_symbols(model)
    for a in model.arguments:
        for k, s in a.entries:
            if str(s) in used:
                loads = ", ".join(f"{a.name}[(i0 + {l})*{a.name}_stride + {k}]" for l in range(4))
                lines.append(f"    const rd_v4 {s} = {{{loads}}};")
    for s, e in model.program.assignments:
        if s in hoisted:
            lines.append(f"    const double {s} = {to_source(e, C)};")
        else:
            lines.append(f"    const rd_v4 {s} = {vec(e)};")
    # the checks of the one-sample function on all lanes at once: pivots (a lane mask, or one flag where the
    # pivot is computed once per call), and x - x summed over the outputs (0, or NaN where one is NaN or inf)
    bound = literal(PIVOT_EPS * np.finfo(np.float64).eps)
    lines += ["    int rd_ok = 1;", "    rd_i4 rd_lane_ok = {-1, -1, -1, -1};", "    rd_v4 rd_z = {0.0, 0.0, 0.0, 0.0};"]
    for _, p, sc in model.checks:
        if {str(x) for x in (se.sympify(p).free_symbols | se.sympify(sc).free_symbols)} & lane:
            lines.append(f"    rd_lane_ok &= (rd_i4)({vec(p)} > {bound}*{vec(sc)});")
        else:
            lines.append(f"    rd_ok &= ({to_source(p, C)} > {bound}*({to_source(sc, C)}));")
    for k, o in enumerate(model.outputs):
        stores = " ".join(f"out[(i0 + {l})*{out_size} + {k}] = t[{l}];" for l in range(4))
        lines.append(f"    {{ const rd_v4 t = {vec(o)}; {stores} rd_z += t - t; }}")
    call = ", ".join(f"{a.name} + (i0 + l)*{a.name}_stride" for a in model.arguments) + f", out + (i0 + l)*{out_size}"
    lines += [
        "    rd_lane_ok &= (rd_i4)(rd_z == 0.0);",
        "    return rd_ok && rd_lane_ok[0] && rd_lane_ok[1] && rd_lane_ok[2] && rd_lane_ok[3];",
        "}",
        "#else",
        f"static int {name}_lanes(long i0, {args}) {{",
        f"    for (long l = 0; l < RD_LANES; ++l) if ({name}_checked({call})) return 0;",
        "    return 1;",
        "}",
        "#endif",
        "",
    ]
    return lines


#: the CPython entry of a compiled model (``-DRD_PYTHON -DRD_NUMPY``), the same text in every model: the module
#: ``rdmodel`` holds ``variant`` (a capsule describing the model's C function: argument names and shapes, result
#: shape) and the type ``Entry``, which evaluates one state in C or calls the general path with the same arguments
#: (docs/symbolic.md, "One state per call"; :class:`robodyn.symbolic.compile.CompiledModel`).
ENTRY = "\n" + _c_text("entry.c")


def _python_entry(model, name):
    """The CPython module ``rdmodel`` of one model: :data:`ENTRY` and this model's ``variant``."""
    k = len(model.arguments)
    inputs = ", ".join(f"in[{i}]" for i in range(k))

    def shape(s):  # "ndim, {d0, d1}": arguments and results have at most two axes
        s = tuple(s)
        assert len(s) <= 2
        return f"{len(s)}, {{{', '.join(map(str, s + (1,) * (2 - len(s))))}}}"

    # argument names are robodyn's own (q, qd, qdd, tau, gravity, wrenches, params), never a model file's
    assert all(a.name.isidentifier() and a.name.isascii() for a in model.arguments)
    args = ", ".join(f'{{"{a.name}", {shape(a.shape)}}}' for a in model.arguments)
    return [
        "",
        "#if defined(RD_PYTHON) && defined(RD_NUMPY)",
        ENTRY,
        f"static int rd_packed(const double *const *in, double *out) {{ return {name}({inputs}, out); }}",
        f"static const rd_variant rd_this = {{{k}, {{{args}}}, {shape(model.output_shape)}, rd_packed}};",
        "",
        "PyMODINIT_FUNC PyInit_rdmodel(void) {",
        "    import_array();",
        "    if (PyType_Ready(&rd_entry_type) < 0) return NULL;",
        "    PyObject *m = PyModule_Create(&rd_module);",
        "    if (m == NULL) return NULL;",
        "    PyObject *cap = PyCapsule_New((void *)&rd_this, RD_VARIANT_CAPSULE, NULL);",
        "    if (cap == NULL || PyModule_AddObjectRef(m, \"variant\", cap) < 0",
        "        || PyModule_AddObjectRef(m, \"Entry\", (PyObject *)&rd_entry_type) < 0) {",
        "        Py_XDECREF(cap);",
        "        Py_DECREF(m);",
        "        return NULL;",
        "    }",
        "    Py_DECREF(cap);",
        "    return m;",
        "}",
        "#endif",
    ]


#: Threads for ``NAME_threads``: POSIX threads where <pthread.h> exists, serial otherwise; the driver itself is
#: robodyn.native's (:func:`robodyn.native.parallel_source`).
_PTHREADS = """
#if defined(__has_include)
#if __has_include(<pthread.h>)
#include <pthread.h>
#define RD_THREADS 1
#endif
#endif
"""


def threads_signature(model, name: str) -> str:
    return f"long {identifier(name)}_threads(long count, int threads, {_strided(model)})"


def threads_source(model, name: str) -> str:
    """``NAME_threads(count, threads, ...)``: ``NAME_batch`` with the states split over ``threads`` threads (the
    arguments of NAME_batch after ``threads``). Chunks are consecutive states and every state is computed by the
    same instructions whatever its chunk, so the result is the single-threaded one bit for bit. Appended to
    :func:`source` by ``rd.compile``; needs ``<stdlib.h>``."""
    name = identifier(name)
    out_size = int(np.prod(model.output_shape))
    fields = " ".join(f"const double *{a.name}; long {a.name}_stride;" for a in model.arguments)
    call = ", ".join(f"x->{a.name} + lo * x->{a.name}_stride, x->{a.name}_stride" for a in model.arguments)
    init = ", ".join(f"{a.name}, {a.name}_stride" for a in model.arguments)
    return "\n".join([
        "#include <stdlib.h>",
        _PTHREADS + parallel_source(),
        f"typedef struct {{ {fields} double *out; }} {name}_args;",
        f"static long {name}_chunk(void *p, long lo, long hi) {{",
        f"    const {name}_args *x = ({name}_args *)p;",
        f"    return {name}_batch(hi - lo, {call}, x->out + lo * {out_size});",
        "}",
        threads_signature(model, name) + " {",
        f"    {name}_args x = {{{init}, out}};",
        f"    return rd_parallel({name}_chunk, &x, count, count / 256 < threads ? (int)(count / 256) : threads, 4);",
        "}",
        "",
    ])
