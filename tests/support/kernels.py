"""The skip conditions of the tests that need compiled code: robodyn's generic kernels (:mod:`robodyn.native`), or
a C compiler for the customized models of ``rd.compile``.

Most compare the kernels with the NumPy path, or check that robodyn's functions hand a call to them: they need
the kernels built and loaded here (a C compiler and Python's C headers) and switched on (the environment variable
``ROBODYN_NATIVE`` not 0), :data:`needs_kernels`.  A few check what robodyn keeps of the kernels' entries for a
robot (an entry, or False where there are no kernels): they need the switch alone, :data:`switched_on`.  Those
that compile a customized model need the C compiler robodyn finds, :data:`needs_compiler`.  Without them robodyn
computes on NumPy, which the other tests cover; these skip and say why.  Evaluated once per test
process: the variable is read when the tests are collected.
"""

from __future__ import annotations

import pytest

from robodyn import native
from robodyn.dynamics import executor
from robodyn.native import build

SWITCHED_OFF = "ROBODYN_NATIVE=0 switches robodyn's compiled kernels off"


def _why_not() -> str:
    """Why the compiled kernels cannot serve a test in this process, or "" when they can (the switch is read first:
    with ROBODYN_NATIVE=0 nothing is built)."""
    if not executor.enabled():
        return SWITCHED_OFF
    if not native.available():
        return "no C compiler (or no Python C headers): robodyn.native unavailable"
    return ""


WHY_NOT = _why_not()

#: the marker of a test, or the ``pytestmark`` of a file, that needs the compiled kernels
needs_kernels = pytest.mark.skipif(bool(WHY_NOT), reason=WHY_NOT or "robodyn.native is built and switched on")

#: the marker of a test of the kernels' entries kept for a robot: none are bound while the kernels are switched off
switched_on = pytest.mark.skipif(not executor.enabled(), reason=f"{SWITCHED_OFF}: no entry is bound to a robot")


def has_compiler() -> bool:
    """Whether robodyn finds a C compiler ($CC, cc, gcc or clang on PATH), as ``rd.compile`` looks for one."""
    try:
        build.find_compiler()
    except build.CompilerNotFoundError:
        return False
    return True


#: the marker of a test that compiles C (a customized model of rd.compile, a kernel text through its host shim)
needs_compiler = pytest.mark.skipif(not has_compiler(), reason="no C compiler ($CC, cc, gcc or clang on PATH)")


def numpy_path(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` on robodyn's NumPy recursions (ROBODYN_NATIVE=0 for this call alone): the reference
    of a kernel.  A float64 batch, or one state, of ``rd.inertia_matrix`` & co. otherwise runs the kernels
    themselves, and a test would compare them with themselves."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ROBODYN_NATIVE", "0")
        return fn(*args, **kwargs)


def host_launch(source: str, name: str = "rd_kernel"):
    """(address, library) of a host function with ``cuLaunchKernel``'s signature that runs kernel ``name`` of a
    CUDA text on the CPU (compiled as C with ``RD_HOST_SHIM``): it unpacks the parameter block as the driver would,
    each parameter from its address in the kernel's order (state count, arrays' addresses, the by-value struct,
    outputs), and runs every thread of the grid. Keep the library alive while the address is used."""
    import re

    from robodyn.native.build import compile_library

    signature = re.search(rf"RD_KERNEL void {name}\((.*?)\) {{", source).group(1)
    types = [p.strip().rsplit(" ", 1)[0].replace("__restrict__", "").strip() for p in signature.split(",")]
    unpack = ", ".join(f"*({t} *)params[{k}]" for k, t in enumerate(types))
    launch = f"""
int rd_test_launch(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                   unsigned shared_memory, void *stream, void **params, void **extra) {{
    (void)f; (void)gy; (void)gz; (void)by; (void)bz; (void)shared_memory; (void)stream; (void)extra;
    blockDim.x = bx;
    for (unsigned b = 0; b < gx; ++b)
        for (unsigned t = 0; t < bx; ++t) {{
            blockIdx.x = b; threadIdx.x = t;
            {name}({unpack});
        }}
    return 0;
}}
"""
    ffi, lib, _ = compile_library("#define RD_HOST_SHIM\n" + source + launch, "int rd_test_launch(void *, unsigned, "
                                  "unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *, void **, "
                                  "void **);")
    return int(ffi.cast("uintptr_t", lib.rd_test_launch)), lib
