"""Small batched 3-D vector helpers used by every recursive algorithm.

Vectors have shape (..., 3), rotation matrices (..., 3, 3); leading axes broadcast.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np


def mv(R: np.ndarray, v: np.ndarray) -> np.ndarray:
    """R v."""
    return np.einsum("...ij,...j->...i", R, v)


def mtv(R: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rᵀ v."""
    return np.einsum("...ji,...j->...i", R, v)


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a × b."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], -1)


def motion_cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Motion cross product a × b (..., 6) of twists [v; ω] × [u; η] = [ω × u + v × η; ω × η] (Featherstone)."""
    va, wa, vb, wb = a[..., :3], a[..., 3:], b[..., :3], b[..., 3:]
    return np.concatenate([cross(wa, vb) + cross(va, wb), cross(wa, wb)], -1)


def homogeneous(R: np.ndarray, p: np.ndarray) -> np.ndarray:
    """The homogeneous transform T = [[R, p], [0, 1]] (..., 4, 4) of a rotation R (..., 3, 3) and a position p
    (..., 3), their leading axes broadcast; of their dtype."""
    R, p = np.asarray(R), np.asarray(p)
    T = np.zeros(np.broadcast_shapes(R.shape[:-2], p.shape[:-1]) + (4, 4), np.result_type(R, p))
    T[..., :3, :3] = R
    T[..., :3, 3] = p
    T[..., 3, 3] = 1
    return T


def rot_x(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def rot_z(angle) -> np.ndarray:
    """Rot(z, angle) for a scalar or a (...,) array → (..., 3, 3)."""
    c, s = np.cos(angle), np.sin(angle)
    o, z = np.ones_like(c), np.zeros_like(c)
    return np.stack([np.stack([c, -s, z], -1), np.stack([s, c, z], -1), np.stack([z, z, o], -1)], -2)


# ---- scalar backends ----------------------------------------------------------------------------------------------
# The component-wise recursions below use only + − × / on their scalars; the few elementary functions they need come
# from a backend object, so that one algorithm runs on NumPy arrays, Python floats, traced JAX arrays or the
# recording scalars that generate the straight-line code of robodyn.compile (robodyn.dynamics.trace).


@dataclass(frozen=True)
class ScalarBackend:
    """Elementary functions for the component-wise recursions (one object per kind of scalar).

    Attributes
    ----------
    name : str
    cos, sin, exp, sign : callables of one scalar (or array) each.
    """

    name: str
    cos: Callable
    sin: Callable
    exp: Callable
    sign: Callable


#: NumPy arrays (and NumPy scalars).
NUMPY = ScalarBackend("numpy", np.cos, np.sin, np.exp, np.sign)
#: Python floats: the math module is ~10x cheaper per call than NumPy ufuncs on scalars.
FLOAT = ScalarBackend("float", math.cos, math.sin, math.exp, lambda x: 1.0 if x > 0 else (-1.0 if x < 0 else 0.0))


def backend_for(x) -> ScalarBackend:
    """The backend of a scalar: :data:`FLOAT` for a Python float, else :data:`NUMPY`."""
    return FLOAT if isinstance(x, float) else NUMPY


def jax_backend() -> ScalarBackend:
    """A backend on ``jax.numpy`` (imported here, so that robodyn does not need JAX): the recursions then trace
    under ``jax.jit``, ``jax.vmap`` and ``jax.grad``."""
    import jax.numpy as jnp

    return ScalarBackend("jax", jnp.cos, jnp.sin, jnp.exp, jnp.sign)


def _jax_entries(values, shape, dtype, barrier: bool = True) -> tuple:
    """The entries broadcast to ``shape``; on a GPU (and with ``barrier``) behind one
    ``jax.lax.optimization_barrier``.

    XLA's GPU code for a stacked array computes it element by element: each entry's thread then recomputes the
    terms that the entries share (the whole recursion, for the torques of Newton-Euler). Behind the barrier the
    entries are the outputs of one multi-output fusion, computed once per state, and the stack after it is a copy.
    H100, jax 0.11, 7-joint Panda in float64, states/s: inverse dynamics 1.36e9 -> 2.14e9, gravity torques
    2.2e9 -> 3.3e9, inertia matrix 1.6e8 -> 9.1e8."""
    import jax
    import jax.numpy as jnp

    entries = tuple(jnp.broadcast_to(jnp.asarray(v, dtype=dtype), shape) for v in values)
    return jax.lax.optimization_barrier(entries) if barrier and jax.default_backend() != "cpu" else entries


def jax_vector(values, like, barrier: bool = True):
    """n scalars as one array (..., n) with the batch axes and dtype of ``like``.

    On a GPU the n entries are stacked, behind an optimization barrier unless ``barrier`` is false
    (:func:`_jax_entries`).  On the CPU they are written entry by entry into zeros: XLA's CPU code for a stack of
    the n torques of one recursion (long expressions that share most of their terms) runs about 100x slower
    (jax 0.10: 5e3 instead of 1e6 states/s for a 7-joint inverse dynamics), with or without the barrier."""
    import jax
    import jax.numpy as jnp

    like = jnp.asarray(like)
    if jax.default_backend() != "cpu":
        return jnp.stack(_jax_entries(values, like.shape[:-1], like.dtype, barrier), -1)
    out = jnp.zeros(like.shape[:-1] + (len(values),), like.dtype)
    for k, v in enumerate(values):
        out = out.at[..., k].set(v)
    return out


def jax_rows(n: int, *arrays) -> tuple:
    """Joint arrays (..., n) as JAX arrays broadcast to one batch: (the first of them, and per array its n rows
    (...,), one per joint variable, for the component recursions)."""
    import jax.numpy as jnp

    arrays = jnp.broadcast_arrays(*(jnp.asarray(a) for a in arrays))
    return arrays[0], [[a[..., k] for k in range(n)] for a in arrays]


def jax_gravity(g) -> tuple:
    """g (3,) or (..., 3) as its three components (JAX arrays)."""
    import jax.numpy as jnp

    g = jnp.asarray(g)
    return g[..., 0], g[..., 1], g[..., 2]


def jax_matrix(rows, like):
    """Rows of scalars as one array (..., rows, columns), stacked (on a GPU behind an optimization barrier,
    :func:`_jax_entries`).  For the entries of A(q) and of the regressor, which share few terms, XLA's CPU code
    for a stack runs 2-5x faster than entry-wise writes."""
    import jax.numpy as jnp

    like = jnp.asarray(like)
    columns = len(rows[0]) if rows else 0
    flat = _jax_entries([v for row in rows for v in row], like.shape[:-1], like.dtype)
    return jnp.stack([jnp.stack(flat[r * columns:(r + 1) * columns], -1) for r in range(len(rows))], -2)


def quaternion_rows(x, y, z, w) -> tuple:
    """The rows of the rotation matrix of a unit quaternion (x, y, z, w), as nested 3-tuples of its entries:
    scalars or arrays of any backend (NumPy, JAX), so that every free-flyer path writes the rotation once."""
    return ((1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)),
            (2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)),
            (2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)))


def velocity_products(vx, vy, vz, wx, wy, wz) -> tuple:
    """The six components that the velocity products of a free flyer's virtual joints (three prismatic, then three
    revolute; robodyn.dynamics.floating notes) add to its acceleration [v̇_0, ω̇_0]: ω_0 × v_0 and
    −(ω_y ω_z, −ω_x ω_z, ω_x ω_y), on scalars or arrays of any backend."""
    return (wy * vz - wz * vy, wz * vx - wx * vz, wx * vy - wy * vx, -(wy * wz), wx * wz, -(wx * wy))


# ---- component-wise vectors ---------------------------------------------------------------------
# The recursive algorithms' inner loops work on vectors stored as 3-tuples of components, each a
# float (constant over the batch) or a 1-D array over the flattened batch.  Element-wise arithmetic on
# contiguous 1-D arrays is several times faster than einsum/stack on (..., 3) arrays, and constant
# components that are exactly zero (aligned axes, the base at rest) are skipped.


def _is_zero(x) -> bool:
    return type(x) is float and x == 0.0


def c_add(a, b):
    """a + b for scalars/arrays, skipping exact float zeros."""
    # _is_zero inlined here and below: these run thousands of times per call
    if type(a) is float and a == 0.0:
        return b
    if type(b) is float and b == 0.0:
        return a
    return a + b


def c_sub(a, b):
    """a − b for scalars/arrays, skipping exact float zeros."""
    if type(b) is float and b == 0.0:
        return a
    if type(a) is float and a == 0.0:
        return -b
    return a - b


def c_mul(a, b):
    """a b for scalars/arrays, skipping exact float zeros and ones."""
    if type(a) is float:
        if a == 0.0:
            return 0.0
        if a == 1.0:
            return b
    if type(b) is float:
        if b == 0.0:
            return 0.0
        if b == 1.0:
            return a
    return a * b


def c_div(a, b):
    """a / b for scalars/arrays, skipping an exact float zero numerator."""
    if type(a) is float and a == 0.0:
        return 0.0
    return a / b


#: the zero 3-vector of the component recursions
ZERO = (0.0, 0.0, 0.0)


def vadd(u, v):
    """u + v for component tuples."""
    return (c_add(u[0], v[0]), c_add(u[1], v[1]), c_add(u[2], v[2]))


def vsum(*vs):
    """u + v + ... for component tuples, summed left to right."""
    out = vs[0]
    for v in vs[1:]:
        out = vadd(out, v)
    return out


def vsub(u, v):
    """u − v for component tuples."""
    return (c_sub(u[0], v[0]), c_sub(u[1], v[1]), c_sub(u[2], v[2]))


def vscale(s, v):
    """s v for a scalar/array s and a component tuple v."""
    return (c_mul(s, v[0]), c_mul(s, v[1]), c_mul(s, v[2]))


def vcross(a, b):
    """a × b for component tuples."""
    a0, a1, a2 = a
    b0, b1, b2 = b
    return (
        c_sub(c_mul(a1, b2), c_mul(a2, b1)),
        c_sub(c_mul(a2, b0), c_mul(a0, b2)),
        c_sub(c_mul(a0, b1), c_mul(a1, b0)),
    )


def snap(C: np.ndarray, eps: float = 1e-15) -> tuple[tuple[float, ...], ...]:
    """A constant matrix as nested Python floats, with round-off around 0 and ±1 snapped to exact values
    (cos(π/2) = 6e-17 is a zero of the model) so that :func:`vmat` can skip those products."""
    def exact(x: float) -> float:
        return next((e for e in (0.0, 1.0, -1.0) if abs(x - e) < eps), x)

    return tuple(tuple(exact(float(x)) for x in row) for row in np.asarray(C, dtype=float))


def vmat(C, v):
    """C v for a constant (3, 3) matrix ``C`` given by :func:`snap` and a component tuple v."""
    return tuple(_dot(row, v) for row in C)


def mat_conjugate(C, M) -> list:
    """C M Cᵀ (rows) of a 3 × 3 matrix ``M`` (rows of component scalars) for a constant ``C`` of :func:`snap`."""
    cols = [vmat(C, (M[0][k], M[1][k], M[2][k])) for k in range(3)]
    return [vmat(C, tuple(cols[k][r] for k in range(3))) for r in range(3)]


def vmat_t(C, v):
    """Cᵀ v for a constant (3, 3) matrix ``C`` given by :func:`snap` and a component tuple v."""
    return tuple(_dot((C[0][i], C[1][i], C[2][i]), v) for i in range(3))


#: the values of a snapped cosine or sine of a multiple of π/2
UNIT_VALUES = (0.0, 1.0, -1.0)


def vzx(C, v):
    """C v for C = Rot(z, γ) Rot(x, α) given by :func:`snap` (the constant part of ^{a}A_j, Khalil & Dombre
    ch. 3) and a component tuple v.

    With both angles general, one planar rotation at a time (Khalil & Dombre's customized model, §9.6.2):
    8 products and 4 sums against the matrix's 8 and 5; otherwise as the matrix, whose 0 and ±1 entries fold.
    C[0][0], C[1][0] are cos γ, sin γ and C[2][1], C[2][2] sin α, cos α exactly.
    """
    cg, sg, sa, ca = C[0][0], C[1][0], C[2][1], C[2][2]
    if cg in UNIT_VALUES or ca in UNIT_VALUES:
        return vmat(C, v)
    v = (v[0], c_sub(c_mul(ca, v[1]), c_mul(sa, v[2])), c_add(c_mul(sa, v[1]), c_mul(ca, v[2])))
    return (c_sub(c_mul(cg, v[0]), c_mul(sg, v[1])), c_add(c_mul(sg, v[0]), c_mul(cg, v[1])), v[2])


def vzx_t(C, v):
    """Cᵀ v for C = Rot(z, γ) Rot(x, α) as in :func:`vzx`: Rot(z, γ)ᵀ then Rot(x, α)ᵀ when both are general."""
    cg, sg, sa, ca = C[0][0], C[1][0], C[2][1], C[2][2]
    if cg in UNIT_VALUES or ca in UNIT_VALUES:
        return vmat_t(C, v)
    v = (c_add(c_mul(cg, v[0]), c_mul(sg, v[1])), c_sub(c_mul(cg, v[1]), c_mul(sg, v[0])), v[2])
    return (v[0], c_add(c_mul(ca, v[1]), c_mul(sa, v[2])), c_sub(c_mul(ca, v[2]), c_mul(sa, v[1])))


def _dot(row, v):
    acc = 0.0
    for c, x in zip(row, v):
        if c == 0.0 or (type(x) is float and x == 0.0):
            continue
        term = x if c == 1.0 else (-x if c == -1.0 else c * x)
        acc = term if _is_zero(acc) else acc + term
    return acc


def vrz(c, s, v):
    """Rot(z, θ) v with c = cos θ, s = sin θ (scalars or arrays)."""
    if type(c) is float and c == 1.0 and _is_zero(s):
        return v
    return (c_sub(c_mul(c, v[0]), c_mul(s, v[1])), c_add(c_mul(s, v[0]), c_mul(c, v[1])), v[2])


def vrz_t(c, s, v):
    """Rot(z, θ)ᵀ v with c = cos θ, s = sin θ (scalars or arrays)."""
    if type(c) is float and c == 1.0 and _is_zero(s):
        return v
    return (c_add(c_mul(c, v[0]), c_mul(s, v[1])), c_sub(c_mul(c, v[1]), c_mul(s, v[0])), v[2])


def vdot(u, v):
    """u · v for component tuples."""
    return c_add(c_add(c_mul(u[0], v[0]), c_mul(u[1], v[1])), c_mul(u[2], v[2]))


# Symmetric 3×3 tensors (inertia tensors) as 6-tuples (xx, xy, xz, yy, yz, zz), the order of XX XY XZ YY YZ ZZ.


def sym_rows(J):
    """The three rows (= columns) of a symmetric tensor given by its six components."""
    xx, xy, xz, yy, yz, zz = J
    return (xx, xy, xz), (xy, yy, yz), (xz, yz, zz)


def sym_add(J, K):
    """J + K for 6-tuples."""
    return tuple(c_add(a, b) for a, b in zip(J, K))


def sym_sub(J, K):
    """J − K for 6-tuples."""
    return tuple(c_sub(a, b) for a, b in zip(J, K))


def sym_rotate(C, c, s, J):
    """A J Aᵀ for A = C Rot(z, θ) (C from :func:`snap`, c = cos θ, s = sin θ) and a symmetric 6-tuple J.

    A J Aᵀ = A (A J)ᵀ: the columns of A J are A times the columns of J, and column i of the result is A times
    row i of A J.
    """
    AJ = [vmat(C, vrz(c, s, col)) for col in sym_rows(J)]  # AJ[k] = column k of A J
    out = [vmat(C, vrz(c, s, (AJ[0][i], AJ[1][i], AJ[2][i]))) for i in range(3)]
    return out[0][0], out[0][1], out[0][2], out[1][1], out[1][2], out[2][2]


def sym_outer(u, v):
    """u vᵀ + v uᵀ as a 6-tuple."""
    return tuple(c_add(c_mul(u[a], v[b]), c_mul(v[a], u[b])) for a, b in UPPER)


#: (row, column) of the six components of a symmetric tensor, in the order (xx, xy, xz, yy, yz, zz).
UPPER = ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))


def frame_wrench(wr, i: int) -> tuple[tuple, tuple]:
    """(f_ej, m_ej) of frame index ``i`` from the flattened wrench rows ``wr`` ([f; m] per frame, 6 nf scalars)."""
    return (wr[6 * i], wr[6 * i + 1], wr[6 * i + 2]), (wr[6 * i + 3], wr[6 * i + 4], wr[6 * i + 5])




def sym_mv(S, v):
    """S v for a symmetric 6-tuple S and a component tuple v."""
    return tuple(vdot(row, v) for row in sym_rows(S))


# Khalil & Dombre's customized Newton–Euler forms (§9.5.3, §9.6.2): the angular-acceleration tensor ^jU_j and the
# Euler moment, built from the six products ω_k ω_l (Mata et al.'s Gibbs–Appell, eqs (10) and (12), use the same).


def dv_products(w):
    """The products DV_kl = ω_k ω_l of a component tuple ω, as a symmetric 3x3 (rows): six products, each made
    once (Khalil & Dombre's DV of the customized model, §9.6.2)."""
    dv = [[0.0] * 3 for _ in range(3)]
    for a, b in UPPER:
        dv[a][b] = dv[b][a] = c_mul(w[a], w[b])
    return dv


def label(name: str, j: int, values):
    """``values`` (a component tuple, or a tuple of rows), unchanged.  Components that can be named (the
    recording scalars of a customized model, :meth:`robodyn.dynamics.trace.Rec.name_as`) are named as Khalil &
    Dombre's listings do: ``{name}{k}{j}`` for component k of frame j (WI12 is component 1 of ^2ω_1),
    ``{name}{r}{c}{j}`` for a matrix (U123); numbers and arrays pass untouched."""
    for r, v in enumerate(values):
        entries = [(x, f"{r + 1}{c + 1}") for c, x in enumerate(v)] if type(v) is tuple else [(v, f"{r + 1}")]
        for x, at in entries:
            if hasattr(x, "name_as"):
                x.name_as(f"{name}{at}{j}")
    return values


def u_matrix(w, wd):
    """^jU_j = ^jω̂̇_j + ^jω̂_j ^jω̂_j, Khalil & Dombre [9.90], and the products DV = :func:`dv_products` (ω).

    Parameters
    ----------
    w, wd : component tuples ^jω_j (rad/s) and ^jω̇_j (rad/s²).

    Returns
    -------
    (U, dv) : U as three rows of components (1/s²), dv the symmetric 3x3 of products ω_k ω_l.

    ω̂ω̂ = ω ωᵀ − |ω|² 1, so U_aa = −(DV_bb + DV_cc) and U_ab = DV_ab ∓ ω̇_c: six products and nine sums, shared
    by [9.87] (U_a P_j), [9.88] (U_j MS_j) and [9.89] (:func:`euler_moment`), against six products for every
    ω × (ω × v) of the plain recursion.
    """
    dv = dv_products(w)
    U = ((c_sub(-dv[1][1], dv[2][2]), c_sub(dv[0][1], wd[2]), c_add(dv[0][2], wd[1])),
         (c_add(dv[0][1], wd[2]), c_sub(-dv[0][0], dv[2][2]), c_sub(dv[1][2], wd[0])),
         (c_sub(dv[0][2], wd[1]), c_add(dv[1][2], wd[0]), c_sub(-dv[0][0], dv[1][1])))
    return U, dv


def euler_moment(J, wd, dv, U):
    """^jJ_j ^jω̇_j + ^jω_j × (^jJ_j ^jω_j) ([9.89] without MS × V̇) in Khalil & Dombre's customized form.

    Component a, with (a, b, c) cyclic:

        J_aa ω̇_a − J_ab U_ca + J_ac U_ba + J_bc (DV_bb − DV_cc) + (J_cc − J_bb) DV_bc,

    since U_ca = ω_a ω_c − ω̇_b and U_ba = ω_a ω_b + ω̇_c [9.90]: five products at most (four when J_aa = 0, as
    for a grouped YY_j, Theorem 9.1), against the 24 of J ω̇ + ω × (J ω).  (Mata et al.'s vee(ΩE − (ΩE)ᵀ) of
    eq. (10), E = ½ tr(J) 1 − J, is the same expression.)

    Parameters
    ----------
    J : inertia tensor about O_j as three rows of constants (kg m²).
    wd : component tuple ^jω̇_j; dv, U : from :func:`u_matrix`.

    Returns
    -------
    component tuple (N m).
    """
    out = []
    for a in range(3):
        b, c = (a + 1) % 3, (a + 2) % 3
        t = c_sub(c_mul(J[a][a], wd[a]), c_mul(J[a][b], U[c][a]))
        t = c_add(t, c_mul(J[a][c], U[b][a]))
        if J[b][c] != 0.0:  # skip the difference DV_bb − DV_cc, not just its product
            t = c_add(t, c_mul(J[b][c], c_sub(dv[b][b], dv[c][c])))
        out.append(c_add(t, c_mul(J[c][c] - J[b][b], dv[b][c])))
    return tuple(out)


# General 3×3 matrices of components as tuples of three rows.


def mat_mv(M, v):
    """M v for a matrix of component rows."""
    return tuple(vdot(row, v) for row in M)


def mat_tmv(M, v):
    """Mᵀ v for a matrix of component rows."""
    return vadd(vadd(vscale(v[0], M[0]), vscale(v[1], M[1])), vscale(v[2], M[2]))


def mat_rotate(C, c, s, M):
    """A M Aᵀ for A = C Rot(z, θ) (as in :func:`sym_rotate`) and a matrix of component rows M."""
    AM = [vmat(C, vrz(c, s, col)) for col in zip(*M)]  # AM[k] = column k of A M
    # A (A M)ᵀ = (A M Aᵀ)ᵀ: A times row i of A M is row i of A M Aᵀ
    return tuple(vmat(C, vrz(c, s, (AM[0][i], AM[1][i], AM[2][i]))) for i in range(3))


def planar_symmetric(S, x, y, z, ss, cs, S2, C2, c, s):
    """R S Rᵀ for the planar rotation R by an angle (c, s) in the plane (x, y) (z its axis), S a dict
    {(a, b): value, a ≤ b}.  The invariants of a planar rotation (Kozłowski §4) give it in 8 products:
    m = s² (S_xx − S_yy) + sin 2θ S_xy, S'_xx = S_xx − m, S'_yy = S_yy + m,
    S'_xy = cs (S_xx − S_yy) + cos 2θ S_xy; (S_xz, S_yz) rotate as a vector; S_zz is unchanged."""
    def get(a, b):
        return S[(a, b) if a <= b else (b, a)]

    def put(out, a, b, v):
        out[(a, b) if a <= b else (b, a)] = v

    d = get(x, x) - get(y, y)
    xy = get(x, y)
    m = ss * d + S2 * xy
    out = dict(S)
    put(out, x, x, get(x, x) - m)
    put(out, y, y, get(y, y) + m)
    put(out, x, y, cs * d + C2 * xy)
    xz, yz = get(x, z), get(y, z)
    put(out, x, z, c * xz - s * yz)
    put(out, y, z, s * xz + c * yz)
    return out
