/* robodyn generic kernels: the recursive algorithms for any robot, compiled once per machine.
 *
 * Every algorithm evaluates blocks of RD_LANES = 4 states side by side: each state-dependent scalar of the
 * recursion is a GCC/Clang vector of 4 doubles (one lane per state), so that the compiler computes the states
 * with SIMD instructions (an x86-64-v4, x86-64-v3 or AVX2 clone is selected at load time where the CPU has it).  Lane
 * arithmetic is IEEE element by element, so a state's result does not depend on its lane or block.  A last,
 * partial block repeats its last state in the unused lanes, whose results are not stored.  The robot is plain data
 * (rd_model).  Frames are numbered 0..nf-1 here (frame j of Khalil & Dombre is index j-1) and
 * parent[i] = a(j) - 1, -1 for the base.  Vectors of one frame are expressed in that frame, about its
 * origin O_j.  Spatial 6-vectors and 6x6 matrices are in robodyn's [linear; angular] order, as everywhere in
 * robodyn: twists [v; ω], wrenches [f; m] (the caller's wrench rows are read as they are), spatial inertias
 * [[M 1, -M̂S], [M̂S, J]] about O_j (Khalil & Dombre [9.23b]: joint axis a_j = [σ_j z; σ̄_j z]).
 *
 * This file is robodyn's one hand-written port of its recursions: the Python component recursions
 * (robodyn.dynamics.newton_euler, composite, recursive, derivatives) are the statement of each equation, and
 * tests/test_native.py and tests/test_perf_kernels.py compare every kernel here with them on random serial and
 * branched robots with prismatic and fixed frames (1e-12).  The customized models of rd.compile are not written
 * here: they are generated from the traced recursions.
 *
 * Frame transform (Khalil-Kleinfinger):  a(j)T_j = Rot(z,g) Trans(z,b) Rot(x,al) Trans(x,d) Rot(z,th) Trans(z,r)
 *   with the constant part RA = Rz(g) Rx(al), pA = (d cos g, d sin g, b) given by the caller:
 *   R = a(j)R_j = RA Rz(th),   p = a(j)P_j = pA + r RA e3.
 *
 * Threads: the blocks of a call are shared by the calling thread and helper threads started for the call
 * (POSIX threads, built with -DRD_THREADS -pthread; serial otherwise): see rd_run.
 *
 * The library is the CPython extension module RD_MODULE (its name carries a hash of this source):
 *   model(ints, doubles) -> capsule        the robot (see rd_py_model)
 *   batch(capsule, kind, threads, friction, q, qd, x, g, wrench, out, trig) -> code   many states, GIL released
 *   single(capsule, kind, a, b, c, g, out, trig) -> code                               one state, low latency
 *   floating(capsule, kind, q, v, x, g, tol, out[, threads, trig]) -> code       one free-flyer state (or many)
 *   kinematics(capsule, kind, threads, frame, q, qd, qdd, point, out) -> code    kinematics, one state or many
 *   kinematics_one(capsule, kind, part, wrap, q[, qd, qdd, frame, point]) -> result or None   one state
 *   task_space(capsule, threads, q, qd, frame, point, m, rows, damping, rcond, g, out) -> code
 *   empty(shape) -> float64 array from the pool of result blocks (rd_pool; with NumPy's headers only)
 *   pool(release) -> (blocks, bytes) kept by the pool; when release is true, they are returned to the system */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#ifdef RD_NUMPY   /* NumPy's headers found: single states read NumPy arrays without the buffer protocol */
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define NPY_TARGET_VERSION NPY_2_0_API_VERSION   /* the memory handlers of rd_pool (NumPy >= 1.22) */
#include <numpy/arrayobject.h>
#undef I   /* <complex.h>'s imaginary unit, which NumPy's headers pull in: the kernels name an inertia I */
#endif
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#if defined(__x86_64__)
#include <emmintrin.h>
#endif

#if !defined(__GNUC__)
#error "robodyn's generic kernels use GCC/Clang vector extensions"
#endif
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

#ifdef RD_THREADS
#include <pthread.h>
#endif
#ifndef RD_MODULE
#define RD_MODULE rdgeneric
#endif
#define RD_CAT2(a, b) a##b
#define RD_CAT(a, b) RD_CAT2(a, b)
#define RD_STR2(a) #a
#define RD_STR(a) RD_STR2(a)

/* RD_CLONES: every kernel's clones.  x86-64-v4 (AVX-512VL: 32 vector registers, in which a block's batch of
 * vectors stays instead of going through the stack, and broadcast operands; on an Intel Xeon with AVX-512 the
 * inverse and forward dynamics 14-20 % faster than in the x86-64-v3 clone, a free flyer's single-state rnea and aba
 * 10-17 %; on Zen 4 within 3 % for those, the derivatives 10-20 % faster, the inertia matrix 4-9 %), x86-64-v3
 * (AVX2, FMA), AVX2, and the default.  GCC 11 and later name the x86-64 levels in target_clones.  The clones do the
 * same 4-lane IEEE operations in their order, so the same bits on every clone: GCC contracts no a * b + c into an
 * FMA in ISO C mode (-std=c99), where Clang would, hence GCC only; the only FMA are libm_sincos_body's own.
 * RD_LIBM_LANES: the kernels compute trig="exact" in lanes (libm_sincos_body) where libm_sincos_check passes, which
 * on x86-64 needs a clone with FMA (x86-64-v3 or v4).  RD_ARCH = 4 or 3 (robodyn.native: the level of the machine
 * that builds the library, which only it loads) keeps that one clone: a fifth of the first build's time, the same
 * code where it runs (rd_arch_check refuses the library on a CPU without that level). */
#if defined(__x86_64__) && defined(__linux__) && !defined(__clang__) && __GNUC__ >= 11
#if RD_ARCH == 4
#define RD_CLONES __attribute__((target("arch=x86-64-v4")))
#elif RD_ARCH == 3
#define RD_CLONES __attribute__((target("arch=x86-64-v3")))
#else
#define RD_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "avx2", "default")))
#endif
#define RD_LIBM_LANES 1
#elif defined(__x86_64__) && defined(__linux__)
#define RD_CLONES __attribute__((target_clones("avx2", "default")))
#define RD_LIBM_LANES 0
#elif defined(__aarch64__)
#define RD_CLONES
#define RD_LIBM_LANES 1
#else
#define RD_CLONES
#define RD_LIBM_LANES 0
#endif
#define RD_INLINE static inline __attribute__((always_inline))

#define RD_LANES 4
typedef double real __attribute__((vector_size(RD_LANES * sizeof(double))));
typedef long long lmask __attribute__((vector_size(RD_LANES * sizeof(double))));

/* results of a block / of a call */
#define RD_NONFINITE (-2)
#define RD_NOMEM (-3)
#define RD_INPUT (-4)   /* NaN or inf in an input of a batch (rd_py_batch): the caller's checked path explains it */

typedef struct {
    int nf, n;
    const int *parent;   /* nf: 0-based antecedent index, -1 = base */
    const int *sigma;    /* nf: 0 revolute, 1 prismatic, 2 fixed */
    const int *joint;    /* nf: index of the joint variable, -1 for a fixed frame */
    const double *RA;    /* nf*9, row-major */
    const double *pA;    /* nf*3 */
    const double *theta; /* nf */
    const double *sc;    /* nf*2: sin θ, cos θ of a frame whose θ is constant (prismatic, fixed; once per model) */
    const double *com;   /* nf*12: each link's inertia about its centre of mass (row-major, 9) and centre MS / M (3),
                          * in R_j; J and 0 where M = 0 (centres_of_mass, once per model; link_in_base) */
    const double *r;     /* nf */
    const double *J;     /* nf*9 inertia tensor about O_j in R_j, row-major */
    const double *MS;    /* nf*3 */
    const double *M;     /* nf */
    const double *Ia;    /* nf */
    const double *Fc, *Fv, *Foff;   /* n: friction of [9.26]-[9.28] */
    const double *Fst, *kst, *Bst;  /* n: its Stribeck term (none where Fst = 0) */
    int chain;           /* 1: a serial chain (parent[i] = i - 1): every pair of joints is on one path */
    int trig;            /* of one call: 1 for trig="fast" (vsincos_fast), set by the entry on its copy of this struct */
    int virtual;         /* 1: frames 0..5 are a free flyer's virtual joints (virtual_frames, checked once per model) */
    const int *axes;     /* nf*3: where RA is a signed permutation (α, γ multiples of π/2), column j of RA is
                          * ±e_k, axes[3i + j] = k (+ 3 for -); else axes[3i] = -1 (frame_axes, once per model) */
    const int *rows;     /* a tree's rows of A from RD_TREE_ROWS joints (tree_runs, once per model), else NULL: row r's
                          * runs of columns at rows + rows[r] .. rows + rows[r + 1], each (kind, end): 0 zero, 1 an
                          * ancestor joint's column, 2 a descendant's, 3 the diagonal */
    const double *sc_state;   /* nf*2: sin, cos of every frame's θ (+ q) for the one state of a single call
                               * (state_sincos, set on rd_one_sincos's copy of this struct), else NULL */
} rd_model;

/* One call: `count` states; sample s of q, qd, x at + s*n; gravity at g + s*g_stride; wrenches (nf, 6) per
 * state or NULL; out per state at + s*out_size.  friction: add (rnea) / subtract (aba) Γ_f, or write the
 * friction columns (regressor). */
typedef struct {
    const rd_model *m;
    long count;
    const double *q, *qd, *x, *g, *wrench;
    long g_stride, cols;
    double *out;
    int friction;
} rd_job;

/* ---- lanes -------------------------------------------------------------------------------------------- */
RD_INLINE real splat(double x) { real v = {x, x, x, x}; return v; }
RD_INLINE real vabs(real x) {
    lmask m = {0x7fffffffffffffffLL, 0x7fffffffffffffffLL, 0x7fffffffffffffffLL, 0x7fffffffffffffffLL};
    return (real)((lmask)x & m);
}
RD_INLINE real vsqrt(real x) {
    real r;
    for (int l = 0; l < RD_LANES; l++) r[l] = sqrt(x[l]);
    return r;
}
RD_INLINE real vsign(real x) {   /* sign(x) lane by lane: comparisons give -1 (true) or 0 */
    return __builtin_convertvector(x < 0.0, real) - __builtin_convertvector(x > 0.0, real);
}

/* in[k][l] = a[s_l * stride + k] for k < width, s_l = s0 + l clamped to the last state */
RD_INLINE void load_lanes(const double *a, long s0, long count, long stride, int width, real *in) {
    const double *row[RD_LANES];
    for (int l = 0; l < RD_LANES; l++) row[l] = a + (s0 + l < count ? s0 + l : count - 1) * stride;
    for (int k = 0; k < width; k++) {
        real v = {row[0][k], row[1][k], row[2][k], row[3][k]};
        in[k] = v;
    }
}
#if defined(__clang__)
#define RD_SHUFFLE(a, b, i, j, k, l) __builtin_shufflevector(a, b, i, j, k, l)
#else
#define RD_SHUFFLE(a, b, i, j, k, l) __builtin_shuffle(a, b, (lmask){i, j, k, l})
#endif
/* the 4 x 4 transpose of v[0..3] (lane l of v[k] -> element k of o[l]) */
RD_INLINE void transpose4(const real *v, real *o) {
    real t0 = RD_SHUFFLE(v[0], v[1], 0, 4, 2, 6), t1 = RD_SHUFFLE(v[0], v[1], 1, 5, 3, 7);
    real t2 = RD_SHUFFLE(v[2], v[3], 0, 4, 2, 6), t3 = RD_SHUFFLE(v[2], v[3], 1, 5, 3, 7);
    o[0] = RD_SHUFFLE(t0, t2, 0, 1, 4, 5); o[1] = RD_SHUFFLE(t1, t3, 0, 1, 4, 5);
    o[2] = RD_SHUFFLE(t0, t2, 2, 3, 6, 7); o[3] = RD_SHUFFLE(t1, t3, 2, 3, 6, 7);
}
/* Results that reach RD_STREAM bytes in a call go to memory, not to a cache, and the full blocks write them with
 * non-temporal stores (put_head's `stream`), which write a line without fetching it first: a block's 4 x 4 tiles
 * into four states' rows (tile_put, store_lanes) reach 17 GB/s with ordinary stores, 33 with these (Zen 4, one
 * core; the inertia matrix of a humanoid of 38 joints 1.27 -> 0.92 us per state).  Smaller results stay in the
 * cache, where the caller reads them next.  The same values either way: only how they are written differs.
 * deriv_block keeps ordinary stores: it adds F_v to the results it has stored.  fdd_block stores whole rows, a
 * part (n x n) at a time from its lanes, which strips of columns written as they came did not (half lines: each
 * line fetched before its first half was written, and a non-temporal store of a half line sent to memory on its
 * own). */
#define RD_STREAM (8L << 20)
#if defined(__x86_64__)   /* SSE2's non-temporal stores, which every clone has; rd_task_blocks fences them */
#define RD_NT 1
RD_INLINE void stream1(double *dst, double x) {
    long long bits;
    memcpy(&bits, &x, sizeof bits);
    _mm_stream_si64((long long *)dst, bits);
}
RD_INLINE void stream2(double *dst, double x, double y) { _mm_stream_pd(dst, _mm_set_pd(y, x)); }
#else
#define RD_NT 0
RD_INLINE void stream1(double *dst, double x) { *dst = x; }
RD_INLINE void stream2(double *dst, double x, double y) { dst[0] = x; dst[1] = y; }
#endif
/* 1 when the results of `job`, `size` doubles a state, are written with non-temporal stores */
RD_INLINE int streams(const rd_job *job, long size) {
    return RD_NT && job->count * size >= RD_STREAM / (long)sizeof(double);
}
/* streams() for the results whose stores bound their kernel (the inertia matrix, the regressor), except where the
 * states' results lie a multiple of RD_ALIAS doubles (2 kB) apart: four streams of non-temporal stores at addresses
 * equal modulo 2 kB reach about half their rate, and ordinary stores do better (this Zen 4, one core, the inertia
 * matrix of n = 16, 32, 48, 64, 80, 96, 128 joints: 0.91, 0.62, 0.65, 0.52, 0.62, 0.51, 0.47 of the time with
 * non-temporal stores; n = 24, 25, 40, 56, 72, 100: 1.08-1.25 of it, the streams' usual gain; the regressor of 16
 * and 32 joints 0.84-0.87, 0.63-0.64).  The forward dynamics' derivatives, bound by their arithmetic, keep the
 * streams there (ordinary stores 0.97-1.08 of their time at n = 16, 32, 48). */
#define RD_ALIAS 256
RD_INLINE int streams_unaliased(const rd_job *job, long size) {
    return streams(job, size) && size % RD_ALIAS != 0;
}
/* the first `width` (1 to 4) entries of u at dst (8-byte aligned): one or two moves, no loop over lanes; with
 * `stream`, non-temporal stores, by pairs from a 16-byte boundary */
RD_INLINE void put_head(double *dst, real u, int width, int stream) {
    if (stream) {
        int k = (uintptr_t)dst & 15 ? 1 : 0;
        if (k) stream1(dst, u[0]);
        for (; k + 2 <= width; k += 2) stream2(dst + k, u[k], u[k + 1]);
        if (k < width) stream1(dst + k, u[k]);
        return;
    }
    if (width == 4) {
        memcpy(dst, &u, sizeof u);
        return;
    }
    if (width == 1) {
        dst[0] = u[0];
        return;
    }
    memcpy(dst, &u, 2 * sizeof(double));
    if (width == 3) dst[2] = u[2];
}
/* the 4 x 4 transpose of the first `width` (1 to 3) vectors of v, its rows' first `width` entries stored at the
 * 4 rows from dst, `stride` apart (the last columns of a full block of states: shuffles and one or two moves a
 * state instead of a scalar store an entry) */
RD_INLINE void put_columns(double *dst, long stride, int width, const real *v, int stream) {
    real p[4], u[4];
    for (int t = 0; t < 4; t++) p[t] = t < width ? v[t] : splat(0.0);
    transpose4(p, u);
    for (int l = 0; l < RD_LANES; l++) put_head(dst + l * stride, u[l], width, stream);
}
/* a[s_l * stride + k] = v[k][l] for the states of the block; a full block is transposed 4 x 4 at a time (vector
 * shuffles, whole-row stores; `stream`: non-temporal ones), the large results (inertia matrix, regressor) being
 * bound by this store */
RD_INLINE void store_lanes(double *a, long s0, long count, long stride, long width, const real *v, int stream) {
    long k = 0;
    if (s0 + RD_LANES <= count) {
        double *r0 = a + s0 * stride;
        for (; k + 4 <= width; k += 4) {
            real o[4];
            transpose4(v + k, o);
            for (int l = 0; l < RD_LANES; l++) put_head(r0 + l * stride + k, o[l], 4, stream);
        }
        if (k < width) {
            put_columns(r0 + k, stride, (int)(width - k), v + k, stream);
            return;
        }
    }
    for (int l = 0; l < RD_LANES && s0 + l < count; l++) {
        double *row = a + (s0 + l) * stride;
        for (long j = k; j < width; j++) row[j] = v[j][l];
    }
}
/* A tile v of one row of results (4 columns from c0, width of them) into the block's states' rows at `row` (a
 * state's row every `size` doubles), transposed 4 x 4 for a full block and tile (`stream`: non-temporal stores);
 * acc gathers v * 0 (the finiteness check) */
RD_INLINE void tile_put(double *row, long size, int c0, int width, long lanes, const real *v, real *acc, int stream) {
    if (width == 4)   /* acc indexed by constants only, so that it stays in registers (a variable index kept it in
                       * memory: each tile's sums waited on the last tile's stores, 9 % of a humanoid's matrix) */
        for (int t = 0; t < 4; t++) acc[t] += v[t] * 0.0;
    else
        for (int t = 0; t < width; t++) acc[0] += v[t] * 0.0;
    if (width == 4 && lanes == RD_LANES) {
        real u[4];
        transpose4(v, u);
        for (int l = 0; l < RD_LANES; l++) put_head(row + l * size + c0, u[l], 4, stream);
    } else if (lanes == RD_LANES)
        put_columns(row + c0, size, width, v, stream);
    else
        for (int l = 0; l < lanes; l++)
            for (int t = 0; t < width; t++) row[l * size + c0 + t] = v[t][l];
}
/* 0 in every lane when every value is finite (x * 0 is NaN for ±inf and NaN) */
RD_INLINE int all_finite(const real *v, long width) {
    real acc[8] = {{0}, {0}, {0}, {0}, {0}, {0}, {0}, {0}};   /* eight sums: one chain would wait on every add */
    long k = 0;
    for (; k + 8 <= width; k += 8)
        for (int t = 0; t < 8; t++) acc[t] += v[k + t] * 0.0;
    for (; k < width; k++) acc[0] += v[k] * 0.0;
    real all = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
    return all[0] == 0.0 && all[1] == 0.0 && all[2] == 0.0 && all[3] == 0.0;
}

/* trig="fast": sin and cos of the 4 lanes at once, within 1 ulp of the correctly rounded values for |x| ≤
 * RD_TRIG_RANGE (docs/scaling.md gives the measured error); other lanes (NaN, ±inf, larger |x|) take the C library's.
 * The argument is reduced by π/2 as fdlibm's __ieee754_rem_pio2 for |x| < 2^20 π/2: n = rint(x 2/π), then
 * y + e = x − n π/2 with π/2 = P1 + P2 + P3 + P4 (33, 33, 33 and 53 bits: n Pk is exact for |n| ≤ 2^20, x − n P1
 * exact by Sterbenz's lemma, the rest summed by Knuth's TwoSum, ~2^-100 relative even where x is within 2^-60 of a
 * multiple of π/2); then fdlibm's minimax kernels __kernel_sin / __kernel_cos of y + e on [-π/4, π/4] (FreeBSD's
 * k_sin.c / k_cos.c, < 1 ulp) and the quadrant n mod 4.  Element-wise lane arithmetic (no FMA: -std=c99 keeps
 * contraction off) and choices made from each lane's own x, so a state's value does not depend on its lane. */
#define RD_TRIG_RANGE 0x1.921fb54442d18p+20   /* 2^20 π/2 */
typedef unsigned long long ulanes __attribute__((vector_size(RD_LANES * sizeof(double))));
/* m ? a : b lane by lane (m from a comparison); x with its sign flipped where m */
RD_INLINE real pick(lmask m, real a, real b) { return (real)(((ulanes)a & (ulanes)m) | ((ulanes)b & ~(ulanes)m)); }
RD_INLINE real flip(real x, lmask m) { return (real)((ulanes)x ^ ((ulanes)m & 0x8000000000000000ULL)); }
/* sin and cos of y + n π/2 from sp = sin y and cp = cos y, n mod 4 in the low bits of each lane of n */
RD_INLINE void quadrant(lmask n, real sp, real cp, real *s, real *c) {
    lmask odd = -(n & 1);
    *s = flip(pick(odd, cp, sp), -((n >> 1) & 1));
    *c = flip(pick(odd, sp, cp), -(((n + 1) >> 1) & 1));
}
RD_INLINE real two_sum(real a, real b, real *err) {   /* a + b = sum + *err exactly, for any magnitudes */
    real sum = a + b, bb = sum - a;
    *err = (a - (sum - bb)) + (b - bb);
    return sum;
}
RD_INLINE void vsincos_fast(real x, real *s, real *c) {
    const double P1 = 0x1.921fb544p+0, P2 = 0x1.0b4611a6p-34, P3 = 0x1.3198a2ep-69, P4 = 0x1.b839a252049c1p-104;
    real t = x * 0x1.45f306dc9c883p-1 + 0x1.8p52;   /* x 2/π + 1.5 2^52: n in the low bits of the mantissa */
    real n = t - 0x1.8p52;
    real e2, e3, e;
    real r = two_sum(x - n * P1, -(n * P2), &e2);
    r = two_sum(r, -(n * P3), &e3);
    real y = two_sum(r, (e2 + e3) - n * P4, &e);
    /* __kernel_sin(y, e, 1), __kernel_cos(y, e) */
    real z = y * y, w = z * z, v = z * y;
    real rs = 0x1.111111110f8a6p-7 + z * (-0x1.a01a019c161d5p-13 + z * 0x1.71de357b1fe7dp-19)
              + z * w * (-0x1.ae5e68a2b9cebp-26 + z * 0x1.5d93a5acfd57cp-33);
    real ks = y - ((z * (0.5 * e - v * rs) - e) - v * -0x1.5555555555549p-3);
    real rc = z * (0x1.555555555554cp-5 + z * (-0x1.6c16c16c15177p-10 + z * 0x1.a01a019cb159p-16))
              + w * w * (-0x1.27e4f809c52adp-22 + z * (0x1.1ee9ebdb4b1c4p-29 + z * -0x1.8fae9be8838d4p-37));
    real hz = 0.5 * z, one_hz = 1.0 - hz;
    real kc = one_hz + (((1.0 - one_hz) - hz) + (z * rc - y * e));
    real us, uc;
    quadrant((lmask)t, ks, kc, &us, &uc);
    /* |x| < 2^-27: sin x = x (−0 kept), cos x = 1, as fdlibm and the C library */
    lmask tiny = vabs(x) < 0x1p-27;
    *s = pick(tiny, x, us);
    *c = pick(tiny, splat(1.0), uc);
    lmask far = ~(vabs(x) <= RD_TRIG_RANGE);   /* beyond the reduction's range, or NaN: the C library */
    if (far[0] | far[1] | far[2] | far[3])
        for (int l = 0; l < RD_LANES; l++)
            if (far[l]) { (*s)[l] = sin(x[l]); (*c)[l] = cos(x[l]); }
}

/* trig="exact": the C library's sin and cos of 4 lanes at once, equal to its values bit for bit.  GNU libc (2.28
 * and later) computes them by the IBM Accurate Mathematical Library's algorithm (Ziv): |x| < 0.855469 from x itself,
 * |x| < 2.426265 from π/2 − |x| = (hp0 − |x|) + hp1, larger |x| from x − n π/2 (n = rint(2x/π), π/2 split in four
 * parts) and the quadrant n mod 4; then sin (x + dx) either by its Taylor polynomial (|x| < 0.126) or, as cos (x +
 * dx) always, from the nearest X_k = k/128 by the addition formulas, with sin X_k and cos X_k to 106 bits
 * (libm_sincos_table: each a double and its remainder, the correctly rounded values; the C library's own table
 * differs from them in the last bit of some remainders, which moves a result only where it lies within 2^-106 of a
 * rounding boundary) and short polynomials of x − X_k.  The operations are the C library's, in its order, with the
 * products fused into the following sum exactly where its build for processors with FMA fuses them (the one x86-64
 * processors with FMA and AVX2 run, and AArch64's).  That the lanes match the C library here is checked once, when
 * the module loads (libm_sincos_check); where they do not (another C library or version, no FMA), each lane calls
 * sin and cos. */
/* sin X_k, its remainder, cos X_k, its remainder; k = 0 .. 109 (a row of 4 is one aligned vector load) */
static const double libm_sincos_table[440] __attribute__((aligned(32))) = {
    0.0, 0.0, 0x1.0000000000000p+0, 0.0,
    0x1.fffeaaaaeeeefp-8, -0x1.e45e2ec67b77cp-62, 0x1.fffc000155552p-1, 0x1.f4a01a0196daep-55,
    0x1.fffaaaaeeeed5p-7, -0x1.2ab639a9f0776p-63, 0x1.fff000155549fp-1, 0x1.28a28a03a5ef3p-55,
    0x1.7ff7001033255p-6, 0x1.efe2b51527336p-64, 0x1.ffdc006bff7e6p-1, 0x1.ae6dae86977bdp-55,
    0x1.ffeaaaeeee86fp-6, -0x1.cd406fb224ae2p-60, 0x1.ffc00155527d3p-1, -0x1.3b54492d89b5bp-55,
    0x1.3feb2b12d45d5p-5, 0x1.4ec54203d1c11p-60, 0x1.ff9c03414a7bap-1, 0x1.991f4be6c59bfp-57,
    0x1.7fdc01032fba9p-5, -0x1.599bdf46e997ap-59, 0x1.ff7006bfdf99fp-1, -0x1.8b3b560648d5fp-56,
    0x1.bfc6d78586dacp-5, 0x1.8e4fd03dbf236p-62, 0x1.ff3c0c8103a31p-1, 0x1.4856dbddc0e66p-56,
    0x1.ffaaaeeed4edbp-5, -0x1.2d16d32684b69p-59, 0x1.ff0015549f4d3p-1, 0x1.328387b99426fp-55,
    0x1.1fc343d808befp-4, -0x1.f3d32e6f3be4fp-58, 0x1.febc222a8ef9fp-1, 0x1.7934934f54c77p-58,
    0x1.3facb12d1755bp-4, -0x1.921915299468bp-58, 0x1.fe7034129ef6fp-1, -0x1.cbf4337c96f97p-57,
    0x1.5f911fd10b737p-4, -0x1.0184f02be9102p-58, 0x1.fe1c4c3c873ebp-1, -0x1.5a9c9057c4a02p-60,
    0x1.7f701032550e4p-4, 0x1.afc2d1800501ap-60, 0x1.fdc06bf7e6b9bp-1, 0x1.31902b535f8dbp-55,
    0x1.9f4902d55d1f9p-4, 0x1.2696d7eac1dc1p-58, 0x1.fd5c94b43e000p-1, -0x1.2e768cb4f92f9p-57,
    0x1.bf1b78568391dp-4, 0x1.e91841dea4cc8p-58, 0x1.fcf0c800e99b1p-1, 0x1.ea3d786d186acp-57,
    0x1.dee6f16c1cce6p-4, -0x1.50f8e2fb71673p-59, 0x1.fc7d078d1bc88p-1, 0x1.075d2447db685p-55,
    0x1.feaaeee86ee36p-4, -0x1.afcb2bcc6f03bp-59, 0x1.fc015527d5bd3p-1, 0x1.b68f35094efb8p-55,
    0x1.0f3378ddd71d1p-3, 0x1.d8468724f0f9ep-57, 0x1.fb7db2bfe0695p-1, 0x1.21dadf4f65ab1p-55,
    0x1.1f0d3d7afceafp-3, -0x1.6ef95099769a5p-57, 0x1.faf22263c4bd3p-1, -0x1.52ace133a2769p-58,
    0x1.2ee285e4ab88fp-3, -0x1.e4d0f05dee058p-57, 0x1.fa5ea641c36f2p-1, 0x1.04da6ed17cc7cp-59,
    0x1.3eb312c5d66cbp-3, 0x1.47d666b66cb91p-57, 0x1.f9c340a7cc428p-1, 0x1.c5b6b063b7462p-55,
    0x1.4e7ea4dc5f27bp-3, 0x1.949db2ac072fcp-58, 0x1.f91ff40374d01p-1, -0x1.7d03f4d3a9e4cp-57,
    0x1.5e44fcfa126f3p-3, -0x1.6f443063f89b6p-57, 0x1.f874c2e1eecf6p-1, -0x1.c6514e1332b16p-55,
    0x1.6e05dc05a4d4cp-3, -0x1.32c5c8b81c919p-66, 0x1.f7c1afeffde24p-1, -0x1.8f55bc47540b1p-56,
    0x1.7dc102fbaf2b5p-3, 0x1.5ab50e23c97c3p-59, 0x1.f706bdf9ece1cp-1, -0x1.698c80c36dcb4p-55,
    0x1.8d7632efaa944p-3, -0x1.20fa262cbb953p-57, 0x1.f643efeb82acdp-1, 0x1.6b00ac1fe28acp-56,
    0x1.9d252d0cec312p-3, 0x1.9c43d80b1137dp-58, 0x1.f57948cff6797p-1, 0x1.e3a0d3e03b1d4p-57,
    0x1.accdb297a0765p-3, -0x1.9883b57d6cdeap-58, 0x1.f4a6cbd1e3a79p-1, 0x1.13df0edaebb57p-55,
    0x1.bc6f84edc6199p-3, 0x1.9c1a56a7b0cabp-57, 0x1.f3cc7c3b3d16ep-1, -0x1.21a3ad28a3494p-57,
    0x1.cc0a6588289a3p-3, -0x1.868d09bc87c6bp-57, 0x1.f2ea5d753ffedp-1, 0x1.cc4215f56d583p-55,
    0x1.db9e15fb5a5d0p-3, -0x1.32e20d6cc6fc2p-57, 0x1.f20073086649fp-1, 0x1.b940416c1984bp-56,
    0x1.eb2a57f8ae5a3p-3, -0x1.0be06af572cebp-57, 0x1.f10ec09c5873bp-1, 0x1.d9072762c1283p-55,
    0x1.faaeed4f31577p-3, -0x1.15d88508e32b8p-57, 0x1.f01549f7deea1p-1, 0x1.d3c1e99e5cafdp-55,
    0x1.0515cbf65155cp-2, -0x1.9b8c29dfd8ec7p-56, 0x1.ef141300d2f26p-1, -0x1.2aa1b08ded372p-55,
    0x1.0cd00cef36436p-2, -0x1.9fb0a0c93e2b4p-56, 0x1.ee0b1fbc0f11cp-1, -0x1.bfd2380bbc3b1p-59,
    0x1.14861aa94ddebp-2, -0x1.be881b5b615a4p-57, 0x1.ecfa744d5efa1p-1, -0x1.56d0a4af541d0p-58,
    0x1.1c37d64c6b876p-2, 0x1.46076fe0dcff4p-56, 0x1.ebe214f76efa8p-1, -0x1.02f9f12ba543ep-55,
    0x1.23e52111aaf36p-2, -0x1.4f080334eff18p-56, 0x1.eac2061bbaf4fp-1, 0x1.2c1d53e94658dp-57,
    0x1.2b8ddc43eb49fp-2, 0x1.1553899f2d807p-57, 0x1.e99a4c3a7cd83p-1, -0x1.2264b1bc53ce8p-55,
    0x1.3331e94049f87p-2, 0x1.e0cb6b40c302cp-56, 0x1.e86aebf29a9edp-1, 0x1.9397afdbb58a7p-55,
    0x1.3ad129769d3d8p-2, 0x1.03d550487839ap-63, 0x1.e733ea0193d40p-1, -0x1.6428b3546ce13p-55,
    0x1.426b7e69ee697p-2, -0x1.f09c75705c59fp-56, 0x1.e5f54b436e9d0p-1, 0x1.7eb0fd02fc8bcp-55,
    0x1.4a00c9b0f3d20p-2, 0x1.823ba6bb08eadp-56, 0x1.e4af14b2a449cp-1, -0x1.68ca02e8a6833p-55,
    0x1.5190ecf68a77ap-2, 0x1.b357155eef0f3p-56, 0x1.e3614b680d6a5p-1, -0x1.27793aa015237p-56,
    0x1.591bc9fa2f597p-2, 0x1.7c74bac3fe0cbp-57, 0x1.e20bf49acd6c1p-1, -0x1.660aec7ef636bp-58,
    0x1.60a1429078775p-2, 0x1.b1fd80ba89133p-58, 0x1.e0af15a03dbcep-1, 0x1.fe8e702771ae6p-58,
    0x1.682138a38d7f7p-2, -0x1.d889202444aadp-56, 0x1.df4ab3ebd875ep-1, -0x1.e2d8a7e6736c4p-55,
    0x1.6f9b8e33a0255p-2, 0x1.42bc14ee9da0dp-56, 0x1.ddded50f228d6p-1, -0x1.e80c8d42ba2bfp-57,
    0x1.7710255764214p-2, -0x1.6ead7314bb6cep-57, 0x1.dc6b7eb995912p-1, 0x1.4b364776dcd35p-58,
    0x1.7e7ee03c86d4ep-2, -0x1.b63bcdabf5af2p-56, 0x1.daf0b6b888e83p-1, 0x1.a249e2b5e5ceap-55,
    0x1.85e7a12826949p-2, 0x1.8a40e9b5face0p-56, 0x1.d96e82f71a9dcp-1, 0x1.ff61bd5d2039dp-55,
    0x1.8d4a4a774992fp-2, 0x1.44a02ea766326p-56, 0x1.d7e4e97e17b4ap-1, -0x1.3b770352bed94p-57,
    0x1.94a6be9f546c5p-2, -0x1.69ce13e683f58p-56, 0x1.d653f073e4040p-1, -0x1.76236434bec37p-55,
    0x1.9bfce02e80510p-2, 0x1.09e39a320b0a4p-56, 0x1.d4bb9e1c619e0p-1, 0x1.f34bb77858f61p-55,
    0x1.a34c91cc50ccap-2, -0x1.a310e3b50cecdp-58, 0x1.d31bf8d8d7c06p-1, 0x1.e60dd3089cbddp-56,
    0x1.aa95b63a09277p-2, -0x1.6293eb13c0381p-57, 0x1.d1750727d94f0p-1, 0x1.0d52b1ec1a48ep-55,
    0x1.b1d8305321617p-2, -0x1.ae242cb99f519p-56, 0x1.cfc6cfa52ad9fp-1, 0x1.8b5b5508f2a0dp-55,
    0x1.b913e30dbac43p-2, -0x1.e38ad2f6c3ff1p-56, 0x1.ce115909a82e5p-1, 0x1.1f139bb31109ap-55,
    0x1.c048b17b140a3p-2, 0x1.19fe6757e9fa7p-57, 0x1.cc54aa2b2972ep-1, 0x1.4ee162ba83a98p-57,
    0x1.c7767ec7fd19ep-2, -0x1.eb14d1a3d5826p-58, 0x1.ca90c9fc67d0bp-1, -0x1.46a81485e3462p-57,
    0x1.ce9d2e3d4a51fp-2, -0x1.2fc8a12dae298p-57, 0x1.c8c5bf8ce1a84p-1, 0x1.ab3d1a1590123p-56,
    0x1.d5bca34047661p-2, 0x1.28a44a75fc29cp-56, 0x1.c6f39208be53bp-1, -0x1.741dbfbaadb42p-55,
    0x1.dcd4c15329c9ap-2, 0x1.0d4c6e171fd9ap-56, 0x1.c51a48b8b175ep-1, -0x1.1bbb43b9aa880p-57,
    0x1.e3e56c1582a69p-2, -0x1.0a4821099f88fp-58, 0x1.c339eb01ddd81p-1, -0x1.caaf5ee82c5c0p-55,
    0x1.eaee8744b05f0p-2, -0x1.789b43c9b027dp-58, 0x1.c1528065b7d50p-1, -0x1.892111312e828p-55,
    0x1.f1eff6bc4f97bp-2, 0x1.17212f8a7525cp-56, 0x1.bf641081e7536p-1, 0x1.b7bd71628a9a1p-55,
    0x1.f8e99e76abc97p-2, 0x1.9d950af2d00a3p-58, 0x1.bd6ea310294f5p-1, 0x1.31bbcc88c109dp-56,
    0x1.ffdb628d2f57ap-2, 0x1.f4a992e905b6ap-57, 0x1.bb723fe630f32p-1, 0x1.72bd2452d0a39p-56,
    0x1.0362939c69955p-1, -0x1.2d8cd78397b01p-55, 0x1.b96eeef58840ep-1, 0x1.45a3cc78fade0p-58,
    0x1.06d3686946e5bp-1, 0x1.3f5ae4538ff1bp-55, 0x1.b764b84b704c2p-1, -0x1.f5848c21b389bp-55,
    0x1.0a4021e9e1001p-1, -0x1.6f643a13914f6p-55, 0x1.b553a410c104ep-1, 0x1.8ff7947027a15p-58,
    0x1.0da8b26b5672ep-1, -0x1.a58def0bee909p-55, 0x1.b33bba89c8948p-1, 0x1.ea6a51d1f6ca9p-55,
    0x1.110d0c4b69c3bp-1, 0x1.d918998809981p-55, 0x1.b11d04162a4c6p-1, 0x1.1dd561efbc0c2p-56,
    0x1.146d21f8b7f82p-1, 0x1.bf9535e2739a8p-56, 0x1.aef78930bd275p-1, -0x1.f836279746f94p-56,
    0x1.17c8e5f2eedb0p-1, 0x1.35e57102e2488p-57, 0x1.accb526f69de5p-1, 0x1.8fb6a8dd6b6ccp-55,
    0x1.1b204acb02fddp-1, -0x1.f190c70cbb5fep-58, 0x1.aa98688308913p-1, -0x1.b83d607cd5072p-63,
    0x1.1e7343236574cp-1, 0x1.22a3fa4f41d5ap-56, 0x1.a85ed4373e02dp-1, 0x1.9be06385ec792p-57,
    0x1.21c1c1b0394cfp-1, 0x1.e5b324b23aa31p-58, 0x1.a61e9e72586afp-1, 0x1.58330e2fd453fp-55,
    0x1.250bb93788bbbp-1, 0x1.ea3d02457bccep-56, 0x1.a3d7d0352bdcfp-1, -0x1.68dbaeca19669p-55,
    0x1.28511c917a067p-1, -0x1.01df1d9a16b70p-55, 0x1.a18a729aee445p-1, 0x1.95e25736c0357p-60,
    0x1.2b91dea88421ep-1, -0x1.fa371db216ab0p-55, 0x1.9f368ed912f85p-1, -0x1.1d200c5791606p-55,
    0x1.2ecdf279a3082p-1, 0x1.d3557e0e7e37ep-55, 0x1.9cdc2e3f25e5cp-1, 0x1.3f99112993f62p-55,
    0x1.32054b148bc4fp-1, 0x1.f6b42095a135bp-55, 0x1.9a7b5a36a6514p-1, 0x1.722cfcc9fa7a9p-55,
    0x1.3537db9be0367p-1, 0x1.b327e7af040f0p-57, 0x1.98141c42e1310p-1, 0x1.d1ff80488f08dp-55,
    0x1.386597456282bp-1, -0x1.10fada93b07a8p-56, 0x1.95a67e00cb1fdp-1, -0x1.0befda21f862dp-55,
    0x1.3b8e715a2840ap-1, -0x1.97653a7d2f07ap-56, 0x1.93328926d9e92p-1, -0x1.bb77003600cdap-55,
    0x1.3eb25d36cd53ap-1, -0x1.be570e1570fc0p-58, 0x1.90b84784ddaf7p-1, -0x1.0feb10ab93b87p-56,
    0x1.41d14e4ba6790p-1, 0x1.4608fd287ecf5p-55, 0x1.8e37c303d9ad1p-1, -0x1.463a4b53d4bf8p-57,
    0x1.44eb381cf386bp-1, -0x1.3ed6c1e6a5505p-55, 0x1.8bb105a5dc900p-1, 0x1.863e03e9474c1p-55,
    0x1.48000e431159fp-1, -0x1.b194a7463ed10p-55, 0x1.89241985d871fp-1, 0x1.c48d9c413ed84p-55,
    0x1.4b0fc46aab761p-1, 0x1.0da05738cc59cp-61, 0x1.869108d77a6c6p-1, 0x1.338ffe2bfe9ddp-56,
    0x1.4e1a4e54ed51bp-1, -0x1.a492f89b7c76ap-55, 0x1.83f7dde701ca0p-1, -0x1.152cf609bc6e8p-59,
    0x1.511f9fd7b351cp-1, -0x1.5c0e861c48831p-55, 0x1.8158a31916d5dp-1, -0x1.de8b90b8228dep-57,
    0x1.541facddbb724p-1, 0x1.232c28520d391p-56, 0x1.7eb362eaa1488p-1, 0x1.a1d65a4a5959fp-58,
    0x1.571a6966d59b3p-1, 0x1.c843b4d0fb197p-58, 0x1.7c0827f09e54fp-1, -0x1.c73d6d72aee68p-57,
    0x1.5a0fc98813a12p-1, -0x1.d82e2b7d4227bp-55, 0x1.7956fcd7f6543p-1, -0x1.ab276e9d45ae4p-55,
    0x1.5cffc16bf8f0dp-1, 0x1.96cb370eb578ap-55, 0x1.769fec655211fp-1, -0x1.827d5cf8c68c5p-57,
    0x1.5fea4552a9e57p-1, 0x1.0b6cef7ee20b7p-55, 0x1.73e30174efba1p-1, -0x1.5d3ae3d94ad5fp-57,
    0x1.62cf49921ac79p-1, -0x1.edd9855b6241ap-55, 0x1.712046fa77678p-1, 0x1.425b0a5029c81p-55,
    0x1.65aec2963e755p-1, 0x1.126f96b71053cp-55, 0x1.6e57c800cf55ep-1, 0x1.60286dedbd0a6p-55,
    0x1.6888a4e134b2fp-1, -0x1.6b7d37644d5e6p-55, 0x1.6b898fa9efb5dp-1, 0x1.15ac786ccf4b2p-56,
    0x1.6b5ce50b7821ap-1, -0x1.5d5158f702e0fp-57, 0x1.68b5a92eb6253p-1, -0x1.9a91ad985f89cp-55,
    0x1.6e2b77c40bde1p-1, -0x1.0e729857fad53p-56, 0x1.65dc1fdeb8cbap-1, -0x1.97c1b47337c77p-58,
    0x1.70f451d0a8c40p-1, 0x1.97ede3885770dp-57, 0x1.62fcff20191c7p-1, 0x1.d9143895756efp-57,
    0x1.73b7680dea578p-1, -0x1.2248306dc12a2p-56, 0x1.6018526f563dfp-1, 0x1.46ca5e0e432d0p-55,
    0x1.7674af6f7b524p-1, 0x1.e9d3f94ac84a8p-56, 0x1.5d2e255f1f17ap-1, 0x1.0314104c8892bp-55,
    0x1.792c1d0041d52p-1, -0x1.abf05eeb354ebp-55, 0x1.5a3e839824077p-1, 0x1.428aa2759be62p-55,
    0x1.7bdda5e28b3c2p-1, 0x1.ad1197ccd0392p-59, 0x1.574978d8e83f2p-1, 0x1.f4714af282d23p-55,
    0x1.7e893f5037959p-1, 0x1.0eefbaa650c4cp-55, 0x1.544f10f592ca5p-1, -0x1.e7ae8e6c7a62fp-55,
    0x1.812ede9ae4ba4p-1, -0x1.7830adf402ddap-55, 0x1.514f57d7bf3dap-1, 0x1.47a108073c259p-56
};
/* the polynomials of sin h and cos h − 1 about a table point, |h| ≤ 1/256 */
static const double libm_sn3 = -0x1.5555555555515p-3, libm_sn5 = 0x1.11110e829872fp-7, libm_cs2 = 0x1p-1,
                    libm_cs4 = -0x1.5555555555535p-5, libm_cs6 = 0x1.6c16bedd9e239p-10;
/* a b + c rounded once (an FMA instruction in the x86-64-v3 and v4 clones and on AArch64) */
RD_INLINE real fmadd(real a, real b, real c) {
    real r;
    for (int l = 0; l < RD_LANES; l++) r[l] = __builtin_fma(a[l], b[l], c[l]);
    return r;
}
/* the table's rows k of the lanes, as 4 vectors: sin X_k, its remainder, cos X_k, its remainder; u = 1.5 2^45 + |x|
 * holds k = rint(128 |x|) in its low bits; lanes with |x| ≥ 0.85546875 (which do not use the table) read row 0 */
RD_INLINE void libm_sincos_rows(real ax, real u, real *row) {
    ulanes k = ((ulanes)u & 0xffffffffULL) & (ulanes)(ax < 0x1.b6p-1);
    real v[4];
    memcpy(&v[0], libm_sincos_table + 4 * k[0], sizeof(real));
    memcpy(&v[1], libm_sincos_table + 4 * k[1], sizeof(real));
    memcpy(&v[2], libm_sincos_table + 4 * k[2], sizeof(real));
    memcpy(&v[3], libm_sincos_table + 4 * k[3], sizeof(real));
    transpose4(v, row);
}
/* sin (x + dx) for |x| < 0.855469, dx ≪ x; row: libm_sincos_rows of |x| */
RD_INLINE real libm_sin_part(real x, real dx, const real *row) {
    const double s1 = -0x1.5555555555555p-3, s2 = 0x1.1111111110ecep-7, s3 = -0x1.a01a019db08b8p-13,
                 s4 = 0x1.71de27b9a7ed9p-19, s5 = -0x1.addffc2fcdf59p-26;
    real xx = x * x;
    real p = fmadd(fmadd(fmadd(fmadd(splat(s5), xx, splat(s4)), xx, splat(s3)), xx, splat(s2)), xx,
                  splat(s1));
    real taylor = x + fmadd(fmadd(p, x, -(0.5 * dx)), xx, dx);
    real ax = vabs(x), u = 0x1.8p45 + ax;
    real h = ax - (u - 0x1.8p45), hh = h * h;
    dx = flip(dx, x <= 0.0);
    real s = h + fmadd(h * hh, fmadd(hh, splat(libm_sn5), splat(libm_sn3)), dx);
    real c = fmadd(h, dx, hh * fmadd(hh, fmadd(hh, splat(libm_cs6), splat(libm_cs4)), splat(libm_cs2)));
    real cor = fmadd(row[2], s, fmadd(-row[0], c, fmadd(s, row[3], row[1])));
    real table = flip(vabs(row[0] + cor), x < 0.0);   /* copysign: row[0] + cor > 0 */
    return pick(ax < 0.126, taylor, table);
}
/* cos (x + dx) for |x| < 0.855469, dx ≪ x; row: libm_sincos_rows of |x| */
RD_INLINE real libm_cos_part(real x, real dx, const real *row) {
    real ax = vabs(x), u = 0x1.8p45 + ax;
    real h = (ax - (u - 0x1.8p45)) + flip(dx, x < 0.0), hh = h * h;
    real s = fmadd(h * hh, fmadd(hh, splat(libm_sn5), splat(libm_sn3)), h);
    real c = hh * fmadd(hh, fmadd(hh, splat(libm_cs6), splat(libm_cs4)), splat(libm_cs2));
    real cor = fmadd(-row[0], s, fmadd(-row[2], c, fmadd(-s, row[1], row[3])));
    return row[2] + cor;
}
/* The C library's sin(x) and cos(x): one sin part and one cos part a lane, of x − n π/2 and quadrant n.  |x| <
 * 0.855469: x itself, n = 0.  |x| < 2.426265: π/2 − |x| = y + hp1 (a + da normalised), n = 1 (x > 0) or 3, where the
 * C library's copysign(cos part (y, hp1), x) and sin part (a, da) are the quadrant's, the parts being odd and even.
 * Beyond: x − n π/2 = b + db to 136 bits, n = rint(2x/π) in the low bits of t. */
RD_INLINE void libm_sincos_body(const double *xp, double *sp, double *cp) {
    const double hp0 = 0x1.921fb54442d18p0, hp1 = 0x1.1a62633145c07p-54, toint = 0x1.8p52;
    real x;
    memcpy(&x, xp, sizeof x);
    real ax = vabs(x);
    lmask small = ax < 0x1.b6p-1, mid = (ax < 0x1.368fdp+1) & ~small, pos = x > 0.0;
    real y = hp0 - ax, a = y + hp1, da = (y - a) + hp1;
    real t = pick(small, splat(toint), fmadd(x, splat(0x1.45f306dc9c883p-1), splat(toint)));
    real xn = t - toint;   /* 0 where small: then b = x, db = 0 exactly */
    real r = fmadd(-xn, splat(-0x1.dde973cp-27), fmadd(-xn, splat(0x1.921fb58p0), x));
    real t2 = fmadd(-xn, splat(-0x1.cb3b398p-55), r);
    real db = fmadd(-xn, splat(-0x1.cb3b398p-55), r - t2);
    real b = fmadd(-xn, splat(-0x1.d747f23e32ed7p-83), t2);
    db = db + fmadd(-xn, splat(-0x1.d747f23e32ed7p-83), t2 - b);
    real xs = pick(mid, flip(a, pos), b), xc = pick(mid, flip(y, pos), b), row_s[4], row_c[4];
    /* the sin and cos parts' table rows: the same rows where |xs| and |xc| give the same k (all but a lane in
     * about 10^13 of the middle range, where y and a = y + hp1 differ), fetched once */
    real as = vabs(xs), ac = vabs(xc), us = 0x1.8p45 + as, uc = 0x1.8p45 + ac;
    libm_sincos_rows(as, us, row_s);
    lmask same = ((ulanes)us == (ulanes)uc) & ((as < 0x1.b6p-1) == (ac < 0x1.b6p-1));
    if (same[0] & same[1] & same[2] & same[3])
        memcpy(row_c, row_s, sizeof row_c);
    else
        libm_sincos_rows(ac, uc, row_c);
    real S = libm_sin_part(xs, pick(mid, flip(da, pos), db), row_s);
    real C = libm_cos_part(xc, pick(mid, flip(splat(hp1), pos), db), row_c);
    real s, c;
    quadrant(((lmask)t & ~mid) | ((3 + 2 * pos) & mid), S, C, &s, &c);
    s = pick(ax < 0x1p-26, x, s);            /* sin x = x */
    c = pick(ax < 0x1p-27, splat(1.0), c);   /* cos x = 1 */
    memcpy(sp, &s, sizeof s);
    memcpy(cp, &c, sizeof c);
    lmask far = ~(ax < 0x1.921fbp+26);   /* |x| ≥ 105414350, ±inf, NaN: the C library's own reduction */
    if (far[0] | far[1] | far[2] | far[3])
        for (int l = 0; l < RD_LANES; l++)
            if (far[l]) { sp[l] = sin(xp[l]); cp[l] = cos(xp[l]); }
}
/* 1 where libm_sincos_body gives the C library's values here and runs on FMA instructions (libm_sincos_check, when
 * the module loads) */
static int libm_sincos_on;

/* sin and cos of every lane: the C library's values, which NumPy's np.sin / np.cos give, so that the kernels follow
 * robodyn's NumPy path to the last bit in the trigonometry: by libm_sincos_body where libm_sincos_on (one state
 * too, in every lane: a state's values then come from the same instructions in a batch and alone, whatever the
 * check at load time could not see), else one call of sin and cos for one angle in every lane (a single state),
 * else a call per lane.  With `fast` (trig="fast" of a call, rd_model.trig), vsincos_fast's polynomial instead. */
RD_INLINE void vsincos(real x, int fast, real *s, real *c) {
    if (fast) {
        vsincos_fast(x, s, c);
        return;
    }
    if (RD_LIBM_LANES && libm_sincos_on) {
        double xs[RD_LANES];
        memcpy(xs, &x, sizeof xs);
        libm_sincos_body(xs, (double *)s, (double *)c);
        return;
    }
    if (x[1] == x[0] && x[2] == x[0] && x[3] == x[0]) {
        *s = splat(sin(x[0]));
        *c = splat(cos(x[0]));
        return;
    }
    for (int l = 0; l < RD_LANES; l++) { (*s)[l] = sin(x[l]); (*c)[l] = cos(x[l]); }
}

/* ---- 3-vectors of lanes ------------------------------------------------------------------------------- */
RD_INLINE void cross(const real *a, const real *b, real *out) {
    real x = a[1] * b[2] - a[2] * b[1], y = a[2] * b[0] - a[0] * b[2], z = a[0] * b[1] - a[1] * b[0];
    out[0] = x; out[1] = y; out[2] = z;
}
RD_INLINE void ccross(const double *a, const real *b, real *out) {        /* constant a */
    real x = a[1] * b[2] - a[2] * b[1], y = a[2] * b[0] - a[0] * b[2], z = a[0] * b[1] - a[1] * b[0];
    out[0] = x; out[1] = y; out[2] = z;
}
RD_INLINE void mat_vec(const real *A, const real *v, real *out) {         /* out = A v */
    real x = A[0] * v[0] + A[1] * v[1] + A[2] * v[2];
    real y = A[3] * v[0] + A[4] * v[1] + A[5] * v[2];
    real z = A[6] * v[0] + A[7] * v[1] + A[8] * v[2];
    out[0] = x; out[1] = y; out[2] = z;
}
RD_INLINE void cmat_vec(const double *A, const real *v, real *out) {      /* constant A */
    real x = A[0] * v[0] + A[1] * v[1] + A[2] * v[2];
    real y = A[3] * v[0] + A[4] * v[1] + A[5] * v[2];
    real z = A[6] * v[0] + A[7] * v[1] + A[8] * v[2];
    out[0] = x; out[1] = y; out[2] = z;
}
RD_INLINE void mat_t_vec(const real *A, const real *v, real *out) {       /* out = A^T v */
    real x = A[0] * v[0] + A[3] * v[1] + A[6] * v[2];
    real y = A[1] * v[0] + A[4] * v[1] + A[7] * v[2];
    real z = A[2] * v[0] + A[5] * v[1] + A[8] * v[2];
    out[0] = x; out[1] = y; out[2] = z;
}
/* out = A B and A B^T (3x3); out is neither A nor B (written directly: a copy through a temporary compiled to a
 * slow string move, 8 % of a free flyer's inertia matrix) */
RD_INLINE void mat_mul(const real *A, const real *B, real *out) {
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            out[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
}
RD_INLINE void mat_mul_t(const real *A, const real *B, real *out) {
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            out[3 * i + j] = A[3 * i] * B[3 * j] + A[3 * i + 1] * B[3 * j + 1] + A[3 * i + 2] * B[3 * j + 2];
}

/* a(j)R_j v and its transpose's for a frame whose RA is a signed permutation (rd_model.axes): a(j)R_j = RA Rot(z, θ)
 * has then one row z with a single entry ±1 (column 2) and two rows with zero in column 2, so 5 products instead of
 * 9.  The products left out are of exact zeros, whose sums change no finite value: the same bits as mat_vec and
 * mat_t_vec (the sign of a zero aside).  z = frame_z(m, i), -1 where RA is not a permutation (mat_vec's 9 then). */
RD_INLINE int frame_z(const rd_model *m, int i) { return m->axes[3 * i] >= 0 ? m->axes[3 * i + 2] % 3 : -1; }
RD_INLINE void frame_vec(int z, const real *A, const real *v, real *out) {   /* out = A v */
    real x, y, w;
    switch (z) {
    case 0: x = A[2] * v[2]; y = A[3] * v[0] + A[4] * v[1]; w = A[6] * v[0] + A[7] * v[1]; break;
    case 1: x = A[0] * v[0] + A[1] * v[1]; y = A[5] * v[2]; w = A[6] * v[0] + A[7] * v[1]; break;
    case 2: x = A[0] * v[0] + A[1] * v[1]; y = A[3] * v[0] + A[4] * v[1]; w = A[8] * v[2]; break;
    default: mat_vec(A, v, out); return;
    }
    out[0] = x; out[1] = y; out[2] = w;
}
RD_INLINE void frame_t_vec(int z, const real *A, const real *v, real *out) {   /* out = A^T v */
    real x, y, w;
    switch (z) {
    case 0: x = A[3] * v[1] + A[6] * v[2]; y = A[4] * v[1] + A[7] * v[2]; w = A[2] * v[0]; break;
    case 1: x = A[0] * v[0] + A[6] * v[2]; y = A[1] * v[0] + A[7] * v[2]; w = A[5] * v[1]; break;
    case 2: x = A[0] * v[0] + A[3] * v[1]; y = A[1] * v[0] + A[4] * v[1]; w = A[8] * v[2]; break;
    default: mat_t_vec(A, v, out); return;
    }
    out[0] = x; out[1] = y; out[2] = w;
}
/* out = A M and M Aᵀ by frame_vec: mat_mul and mat_mul_t's bits, the zero products left out */
RD_INLINE void frame_mul(int z, const real *A, const real *M, real *out) {
    for (int j = 0; j < 3; j++) {
        real v[3] = {M[j], M[3 + j], M[6 + j]}, t[3];
        frame_vec(z, A, v, t);
        out[j] = t[0]; out[3 + j] = t[1]; out[6 + j] = t[2];
    }
}
RD_INLINE void frame_mul_t(int z, const real *M, const real *A, real *out) {
    for (int i = 0; i < 3; i++) frame_vec(z, A, M + 3 * i, out + 3 * i);
}

/* sin and cos of frame i's θ (+ qi on a revolute frame) */
RD_INLINE void joint_sincos(const rd_model *m, int i, real qi, real *s, real *c) {
    if (m->sc_state) {   /* one state: computed before the block (state_sincos) */
        *s = splat(m->sc_state[2 * i]);
        *c = splat(m->sc_state[2 * i + 1]);
    } else if (m->sigma[i] == 0)
        vsincos(m->theta[i] + qi, m->trig, s, c);
    else {   /* the same C library values, computed once when the model was packed */
        *s = splat(m->sc[2 * i]);
        *c = splat(m->sc[2 * i + 1]);
    }
}
/* a(j)R_j and a(j)P_j of frame i for joint value qi (ignored on fixed frames). */
RD_INLINE void frame_transform(const rd_model *m, int i, real qi, real *R, real *p) {
    const double *RA = m->RA + 9 * i, *pA = m->pA + 3 * i;
    real r = m->sigma[i] == 1 ? m->r[i] + qi : splat(m->r[i]);
    real c, s;
    joint_sincos(m, i, qi, &s, &c);
    for (int row = 0; row < 3; row++) {
        R[3 * row] = c * RA[3 * row] + s * RA[3 * row + 1];
        R[3 * row + 1] = -s * RA[3 * row] + c * RA[3 * row + 1];
        R[3 * row + 2] = splat(RA[3 * row + 2]);
        p[row] = pA[row] + r * RA[3 * row + 2];
    }
}
/* 0T_i of frame i for joint value qi from its antecedent's 0T_a (R0a, P0a; NULL: the base), as
 * 0R_i = (0R_a RA) Rot(z, θ) and 0P_i = 0P_a + 0R_a (pA + r RA e3): 0R_a RA is a permutation of 0R_a's columns with
 * signs where RA is one (rd_model.axes), instead of a product of 3 x 3 matrices (45 operations of about 250 a frame
 * of the inertia matrix) */
RD_INLINE void base_transform(const rd_model *m, int i, real qi, const real *R0a, const real *P0a, real *R0i,
                              real *P0i) {
    const double *RA = m->RA + 9 * i, *pA = m->pA + 3 * i;
    const int *ax = m->axes + 3 * i;
    real r = m->sigma[i] == 1 ? m->r[i] + qi : splat(m->r[i]);
    real c, s, B[9], p[3];
    joint_sincos(m, i, qi, &s, &c);
    for (int row = 0; row < 3; row++) {
        for (int j = 0; j < 3; j++)
            B[3 * row + j] = !R0a ? splat(RA[3 * row + j])
                           : ax[0] >= 0 ? (ax[j] < 3 ? R0a[3 * row + ax[j]] : -R0a[3 * row + ax[j] - 3])
                           : R0a[3 * row] * RA[j] + R0a[3 * row + 1] * RA[3 + j] + R0a[3 * row + 2] * RA[6 + j];
        p[row] = pA[row] + r * RA[3 * row + 2];
    }
    for (int row = 0; row < 3; row++) {
        R0i[3 * row] = c * B[3 * row] + s * B[3 * row + 1];
        R0i[3 * row + 1] = -s * B[3 * row] + c * B[3 * row + 1];
        R0i[3 * row + 2] = B[3 * row + 2];
    }
    if (!R0a)
        memcpy(P0i, p, sizeof p);
    else
        for (int row = 0; row < 3; row++)
            P0i[row] = P0a[row] + (R0a[3 * row] * p[0] + R0a[3 * row + 1] * p[1] + R0a[3 * row + 2] * p[2]);
}
/* s_i, the unit twist [v; ω] of joint i in R_0 about O_0 from 0R_i and 0P_i of its frame: [0P_i × z_i; z_i]
 * revolute, [z_i; 0] prismatic (z_i = 0R_i e3); written entry by entry, as a memcpy of z's lanes became a 64-byte
 * move that waited on the 32-byte stores of 0R_i just made (no store forwarding; 5 % of the n = 6 inertia matrix) */
RD_INLINE void joint_axis(const rd_model *m, int i, const real *R0i, const real *P0i, real *s) {
    real z[3] = {R0i[2], R0i[5], R0i[8]};
    int revolute = m->sigma[i] == 0;
    if (revolute) cross(P0i, z, s);
    for (int c = 0; c < 3; c++) {
        s[revolute ? 3 + c : c] = z[c];
        if (!revolute) s[3 + c] = splat(0.0);
    }
}
RD_INLINE real joint_value(const rd_model *m, int i, const real *Q) {
    return m->joint[i] >= 0 ? Q[m->joint[i]] : splat(0.0);
}
/* Γ_f = F_c sign(q̇) + F_v q̇ + F_off + (F_st − F_c) sign(q̇) exp(−k_st |q̇|^B_st) [9.26]-[9.28], the Stribeck term
 * where F_st ≠ 0: robodyn.model.friction.friction_law, operation for operation (tests/test_native.py) */
RD_INLINE real friction_of(const rd_model *m, int k, real qd) {
    real s = vsign(qd);
    real tau = m->Fc[k] * s + m->Fv[k] * qd + m->Foff[k];
    if (m->Fst[k] != 0.0) {
        real e;
        for (int l = 0; l < RD_LANES; l++) e[l] = exp(-m->kst[k] * pow(fabs(qd[l]), m->Bst[k]));
        tau += (m->Fst[k] - m->Fc[k]) * s * e;
    }
    return tau;
}

/* Forward recursion [9.84]-[9.90]: w, wd, Vd of frame i from its antecedent's (V̇_0 = -g, [9.80]) and its R, p. */
RD_INLINE void forward_frame(const rd_model *m, int i, const real *QD, const real *QDD, const real *G, const real *R,
                             const real *p, real *w, real *wd, real *Vd) {
    int a = m->parent[i], k = m->joint[i];
    const real *Ri = R + 9 * i, *pi = p + 3 * i;
    real *wi = w + 3 * i, *wdi = wd + 3 * i, *Vdi = Vd + 3 * i;
    real zero[3] = {{0}, {0}, {0}}, minus_g[3] = {-G[0], -G[1], -G[2]};
    const real *wa = a >= 0 ? w + 3 * a : zero, *wda = a >= 0 ? wd + 3 * a : zero,
               *Vda = a >= 0 ? Vd + 3 * a : minus_g;
    real t[3], u[3];
    cross(wda, pi, t); cross(wa, pi, u); cross(wa, u, u);           /* U_a P_j = ω̇ × P + ω × (ω × P) */
    for (int c = 0; c < 3; c++) t[c] += Vda[c] + u[c];
    int z = frame_z(m, i);
    frame_t_vec(z, Ri, t, Vdi);                                      /* [9.86] */
    frame_t_vec(z, Ri, wa, wi);                                      /* jω_{a(j)} */
    frame_t_vec(z, Ri, wda, wdi);
    if (m->sigma[i] == 0) {                                          /* [9.84], [9.85] */
        wdi[0] += wi[1] * QD[k]; wdi[1] -= wi[0] * QD[k]; wdi[2] += QDD[k];
        wi[2] += QD[k];
    } else if (m->sigma[i] == 1) {                                   /* [9.86]: q̈ z + 2 ω × q̇ z */
        Vdi[0] += 2.0 * wi[1] * QD[k]; Vdi[1] -= 2.0 * wi[0] * QD[k]; Vdi[2] += QDD[k];
    }
}
/* w, wd, Vd of every frame. */
RD_INLINE void forward_recursion(const rd_model *m, const real *Q, const real *QD, const real *QDD, const real *G,
                                 real *R, real *p, real *w, real *wd, real *Vd) {
    for (int i = 0; i < m->nf; i++) {
        frame_transform(m, i, joint_value(m, i, Q), R + 9 * i, p + 3 * i);
        forward_frame(m, i, QD, QDD, G, R, p, w, wd, Vd);
    }
}

/* Backward recursion [9.91]-[9.93]: the wrenches f, mo of every link (about O_j in R_j) summed from the leaves
 * to the base (children have larger indices), and each joint's torque, its axis component [9.93] (+ Ia q̈ when
 * QDD is given); frames first..nf-1 (0: all of them). */
RD_INLINE void backward_recursion(const rd_model *m, int first, const real *R, const real *p, real *f, real *mo,
                                  const real *QDD, real *T) {
    for (int i = m->nf - 1; i >= first; i--) {
        int a = m->parent[i], k = m->joint[i];
        real *fi = f + 3 * i, *mi = mo + 3 * i;
        if (k >= 0) T[k] = (m->sigma[i] == 0 ? mi[2] : fi[2]) + (QDD ? m->Ia[i] * QDD[k] : splat(0.0));
        if (a >= 0) {
            real Rf[3], Rm[3], pf[3];
            int z = frame_z(m, i);
            frame_vec(z, R + 9 * i, fi, Rf); frame_vec(z, R + 9 * i, mi, Rm); cross(p + 3 * i, Rf, pf);
            for (int c = 0; c < 3; c++) { f[3 * a + c] += Rf[c]; mo[3 * a + c] += Rm[c] + pf[c]; }
        }
    }
}

/* Link wrench of frame i [9.88], [9.89] from its ω, ω̇, V̇ (+ the caller's wrench on the environment, read
 * into E): F = M V̇ + ω̇ × MS + ω × (ω × MS), N = J ω̇ + ω × (J ω) + MS × V̇ into f, mo.  MSv, wMS = ω × MS and
 * Jw = J ω are returned for the caller to reuse. */
RD_INLINE void link_wrench(const rd_job *job, long s0, int i, const real *wi, const real *wdi, const real *vdi,
                           real *E, real *f, real *mo, real *MSv, real *wMS, real *Jw) {
    const rd_model *m = job->m;
    const double *J = m->J + 9 * i, *MS = m->MS + 3 * i;
    real t[3], u[3], v[3];
    for (int c = 0; c < 3; c++) MSv[c] = splat(MS[c]);
    cross(wi, MSv, wMS); cross(wi, wMS, u); cross(wdi, MSv, t);       /* [9.88] */
    for (int c = 0; c < 3; c++) f[3 * i + c] = m->M[i] * vdi[c] + t[c] + u[c];
    cmat_vec(J, wi, Jw); cross(wi, Jw, u); cmat_vec(J, wdi, t); ccross(MS, vdi, v);   /* [9.89] */
    for (int c = 0; c < 3; c++) mo[3 * i + c] = t[c] + u[c] + v[c];
    if (job->wrench) {
        load_lanes(job->wrench + 6 * i, s0, job->count, 6 * (long)m->nf, 6, E);
        for (int c = 0; c < 3; c++) { f[3 * i + c] += E[c]; mo[3 * i + c] += E[3 + c]; }
    }
}

/* The Newton-Euler recursion over frames first..nf-1 (their antecedents' ω, ω̇, V̇ at hand): transforms, forward
 * recursion with each link's wrench, backward recursion into the joints' torques T (rigid + Ia q̈). */
RD_INLINE void rnea_frames(const rd_job *job, long s0, int first, const real *Q, const real *QD, const real *QDD,
                           const real *G, real *R, real *p, real *w, real *wd, real *Vd, real *f, real *mo, real *T,
                           real *E) {
    const rd_model *m = job->m;
    /* the transforms first: the C library's sin and cos, calls after which no vector register is kept, do not
     * split the recursion */
    for (int i = first; i < m->nf; i++) frame_transform(m, i, joint_value(m, i, Q), R + 9 * i, p + 3 * i);
    for (int i = first; i < m->nf; i++) {   /* each link's wrench while its ω, ω̇, V̇ are at hand */
        real MSv[3], wMS[3], Jw[3];
        forward_frame(m, i, QD, QDD, G, R, p, w, wd, Vd);
        link_wrench(job, s0, i, w + 3 * i, wd + 3 * i, Vd + 3 * i, E, f, mo, MSv, wMS, Jw);
    }
    backward_recursion(m, first, R, p, f, mo, QDD, T);
}

/* Newton-Euler inverse dynamics [9.84]-[9.94]: Γ_rigid + Ia q̈ (+ Γ_f with friction). */
static long rnea_work(const rd_model *m) { return 27 * (long)m->nf + 4 * (long)m->n + 3 + 6; }
RD_CLONES static int rnea_block(const rd_job *job, long s0, real *W) {
    const rd_model *m = job->m;
    int nf = m->nf, n = m->n;
    real *R = W, *p = R + 9 * nf, *w = p + 3 * nf, *wd = w + 3 * nf, *Vd = wd + 3 * nf, *f = Vd + 3 * nf,
         *mo = f + 3 * nf, *Q = mo + 3 * nf, *QD = Q + n, *QDD = QD + n, *T = QDD + n, *G = T + n, *E = G + 3;
    load_lanes(job->q, s0, job->count, n, n, Q);
    load_lanes(job->qd, s0, job->count, n, n, QD);
    load_lanes(job->x, s0, job->count, n, n, QDD);
    load_lanes(job->g, s0, job->count, job->g_stride, 3, G);
    rnea_frames(job, s0, 0, Q, QD, QDD, G, R, p, w, wd, Vd, f, mo, T, E);
    if (job->friction)
        for (int k = 0; k < n; k++) T[k] += friction_of(m, k, QD[k]);
    store_lanes(job->out, s0, job->count, n, n, T, streams(job, n));
    return all_finite(T, n) ? 0 : RD_NONFINITE;
}

/* A free flyer's inverse dynamics on its augmented robot (robodyn.dynamics.floating, module notes: six virtual
 * joints at zero, then the robot; rd_floating_model checks that shape), one state of Pinocchio's conventions per
 * lane: q (n + 1) = [base position, quaternion (x, y, z, w), joints], v = q̇ and x = a (n), g (3) in the world
 * frame.  At zero every virtual frame's rotation is the permutation P = Rz(π/2) Rx(π/2) and its origin O_0, so the
 * recursion through them reduces to what is written here, operation for operation the numbers of rnea_block on
 * the virtual state that robodyn.dynamics.floating makes (no sine, no zero-inertia link): frame 6 (index 5, R_0)
 * gets ω = ω_0, ω̇ and V̇ from q̈_a = a + the virtual joints' velocity products and g_0 = ^0R_w g, and the six
 * virtual joints' forces are f and m of frame 6 (the base wrench [f_0; m_0] in R_0). */
#define RD_VIRTUAL 6
static int rd_floating_model(const rd_model *m) {   /* virtual_frames' shape (rd_model.virtual), no friction there */
    if (!m->virtual) return 0;
    for (int k = 0; k < RD_VIRTUAL; k++)
        if (m->Fc[k] != 0 || m->Fv[k] != 0 || m->Foff[k] != 0 || m->Fst[k] != 0) return 0;
    return 1;
}
static long floating_rnea_work(const rd_model *m) { return rnea_work(m) + 1; }
/* g_0 = ^0R_w g: gravity G (world frame) in R_0, R of the free flyer's quaternion Qf[3..6] (x, y, z, w)
 * normalised, R^T g in rd_py_floating's scalar arithmetic, operation for operation */
RD_INLINE void base_gravity(const real *Qf, const real *G, real *g0) {
    real norm = vsqrt(Qf[3] * Qf[3] + Qf[4] * Qf[4] + Qf[5] * Qf[5] + Qf[6] * Qf[6]);
    real qx = Qf[3] / norm, qy = Qf[4] / norm, qz = Qf[5] / norm, qw = Qf[6] / norm;
    g0[0] = (1 - 2 * (qy * qy + qz * qz)) * G[0] + 2 * (qx * qy + qz * qw) * G[1] + 2 * (qx * qz - qy * qw) * G[2];
    g0[1] = 2 * (qx * qy - qz * qw) * G[0] + (1 - 2 * (qx * qx + qz * qz)) * G[1] + 2 * (qy * qz + qx * qw) * G[2];
    g0[2] = 2 * (qx * qz + qy * qw) * G[0] + 2 * (qy * qz - qx * qw) * G[1] + (1 - 2 * (qx * qx + qy * qy)) * G[2];
}
RD_CLONES static int floating_rnea_block(const rd_job *job, long s0, real *W) {
    const rd_model *m = job->m;
    int nf = m->nf, n = m->n, b = RD_VIRTUAL - 1;
    real *R = W, *p = R + 9 * nf, *w = p + 3 * nf, *wd = w + 3 * nf, *Vd = wd + 3 * nf, *f = Vd + 3 * nf,
         *mo = f + 3 * nf, *Qf = mo + 3 * nf, *QD = Qf + n + 1, *QDD = QD + n, *T = QDD + n, *G = T + n, *E = G + 3;
    const real *Q = Qf + 1;   /* the joints' q_k at Q[k], k >= RD_VIRTUAL */
    load_lanes(job->q, s0, job->count, n + 1, n + 1, Qf);
    load_lanes(job->qd, s0, job->count, n, n, QD);
    load_lanes(job->x, s0, job->count, n, n, QDD);
    load_lanes(job->g, s0, job->count, job->g_stride, 3, G);
    real g0[3];
    base_gravity(Qf, G, g0);
    const real *u = QD, *o = QD + 3;
    real a0 = QDD[0] + (o[1] * u[2] - o[2] * u[1]), a1 = QDD[1] + (o[2] * u[0] - o[0] * u[2]),
         a2 = QDD[2] + (o[0] * u[1] - o[1] * u[0]);                  /* q̈_a: + ω_0 × v_0 */
    real a3 = QDD[3] - o[1] * o[2], a4 = QDD[4] + o[0] * o[2], a5 = QDD[5] - o[0] * o[1];
    real *wb = w + 3 * b, *wdb = wd + 3 * b, *Vdb = Vd + 3 * b;
    wb[0] = o[0]; wb[1] = o[1]; wb[2] = o[2];
    wdb[0] = a3 + o[1] * o[2]; wdb[1] = a4 - o[0] * o[2]; wdb[2] = o[0] * o[1] + a5;   /* [9.85] over joints 4-6 */
    Vdb[0] = a0 - g0[0]; Vdb[1] = a1 - g0[1]; Vdb[2] = a2 - g0[2];
    real MSv[3], wMS[3], Jw[3];
    link_wrench(job, s0, b, wb, wdb, Vdb, E, f, mo, MSv, wMS, Jw);
    rnea_frames(job, s0, RD_VIRTUAL, Q, QD, QDD, G, R, p, w, wd, Vd, f, mo, T, E);
    for (int c = 0; c < 3; c++) { T[c] = f[3 * b + c]; T[3 + c] = mo[3 * b + c]; }
    if (job->friction)
        for (int k = RD_VIRTUAL; k < n; k++) T[k] += friction_of(m, k, QD[k]);
    store_lanes(job->out, s0, job->count, n, n, T, streams(job, n));
    return all_finite(T, n) ? 0 : RD_NONFINITE;
}

/* Gravity torques Q(q) [9.8]: the Newton-Euler recursion at rest, where ω = ω̇ = 0 leaves V̇_j = jR_a V̇_a
 * (V̇_0 = -g), F_j = M_j V̇_j and N_j = MS_j × V̇_j. */
static long gravity_work(const rd_model *m) { return 21 * (long)m->nf + 2 * (long)m->n + 6; }
RD_CLONES static int gravity_block(const rd_job *job, long s0, real *W) {
    const rd_model *m = job->m;
    int nf = m->nf, n = m->n;
    real *R = W, *p = R + 9 * nf, *Vd = p + 3 * nf, *f = Vd + 3 * nf, *mo = f + 3 * nf, *Q = mo + 3 * nf,
         *T = Q + n, *G = T + n;
    load_lanes(job->q, s0, job->count, n, n, Q);
    load_lanes(job->g, s0, job->count, job->g_stride, 3, G);
    real minus_g[3] = {-G[0], -G[1], -G[2]};
    for (int i = 0; i < nf; i++) {
        int a = m->parent[i];
        frame_transform(m, i, joint_value(m, i, Q), R + 9 * i, p + 3 * i);
        frame_t_vec(frame_z(m, i), R + 9 * i, a >= 0 ? Vd + 3 * a : minus_g, Vd + 3 * i);
        for (int c = 0; c < 3; c++) f[3 * i + c] = m->M[i] * Vd[3 * i + c];
        ccross(m->MS + 3 * i, Vd + 3 * i, mo + 3 * i);
    }
    backward_recursion(m, 0, R, p, f, mo, NULL, T);
    store_lanes(job->out, s0, job->count, n, n, T, streams(job, n));
    return all_finite(T, n) ? 0 : RD_NONFINITE;
}

/* Inertia matrix by composite links (Khalil & Dombre Appendix 8; Featherstone's CRBA), Ia on the diagonal, with
 * every quantity in R_0 about O_0 (Featherstone, "Rigid Body Dynamics Algorithms", §6.2, the composite-rigid-body
 * algorithm in base coordinates).  Each link's inertia is moved to R_0 about O_0 once (the rotation and the
 * parallel-axis shift of [9.12]), independently of the others, and the composite link of a subtree is then a plain
 * sum of its links' (a frame without inertia, such as a free flyer's virtual frames, costs nothing); moving each
 * composite into its antecedent's frame instead chains every shift on the one before, link after link.  The
 * wrench of a unit acceleration of joint k on its composite link is w_k = I_k s_k, and A_jk = s_j^T w_k for
 * every ancestor joint j, with s_j = [P_j × z_j; z_j] (revolute) or [z_j; 0] (prismatic): six products per pair
 * instead of carrying the wrench frame by frame. */
/* A block of one state writes its pairs straight into its result (crba_lanes).  Otherwise a serial chain of
 * RD_CHAIN_ROWS joints or more writes A row by row (chain_rows), and so does a tree of RD_TREE_ROWS
 * joints or more (tree_rows), without the (n x n) buffer of lanes; below, the buffer is faster (a chain of 6, 7
 * joints: by 0-3 % against chain_rows' one product per pair too; a tree of 25: by 2-7 %, its buffer of 20 kB in the
 * first-level cache) and its 4 x 4 tiles cover n². */
#define RD_CHAIN_ROWS 8
#define RD_TREE_ROWS 26
RD_INLINE int crba_rows(const rd_model *m) { return m->rows || (m->chain && m->n >= RD_CHAIN_ROWS); }
/* + 1: a free flyer's q (floating_crba_block); then a tree's row (n), a chain's upper triangle (chain_rows) or the
 * buffer of lanes (n x n) */
static long crba_work(const rd_model *m) {
    long n = m->n;
    return 34 * (long)m->nf + 2 * n + 1 + (m->rows ? n : crba_rows(m) ? n * (n - 1) / 2 : n * n);
}
/* the most 64-byte lines of results a block fetches before its stores (crba_block): 20 kB, within a core's first
 * level of 32 kB beside the work; larger blocks (n > 25) gained nothing, or lost up to 5 % */
#define RD_PREFETCH 320
/* A_jk = s_j^T w_k: the axis s_j of joint j (R_0, about O_0) on the wrench w_k of a unit acceleration of joint k */
RD_INLINE real joint_product(const real *s, const real *w) {
    return s[0] * w[0] + s[1] * w[1] + s[2] * w[2] + s[3] * w[3] + s[4] * w[4] + s[5] * w[5];
}
/* entry (r, c), r < c, of a chain's upper triangle kept column by column in P (chain_rows): column c's r entries
 * side by side, so that row c reads its first c entries, A_cr = A_rc, as one run */
RD_INLINE long upper_entry(int r, int c) { return (long)c * (c - 1) / 2 + r; }
/* entries c0 .. c0 + width - 1 of row r of a chain's A: A_rc = s_r^T w_c (c > r, kept in P for row c), D_r, and
 * the entries c < r from P */
RD_INLINE void chain_entries(int r, int c0, int width, const real *S, const real *Wr, const real *D, real *P,
                             real *v) {
    for (int t = 0; t < width; t++) {
        int c = c0 + t;
        if (c < r)
            v[t] = P[upper_entry(c, r)];
        else if (c > r)
            P[upper_entry(r, c)] = v[t] = joint_product(S + 6 * r, Wr + 6 * c);
        else
            v[t] = D[r];
    }
}
/* A of a serial chain (every earlier joint an ancestor) written row by row straight into the results: four
 * columns of a row for the 4 states at a time, transposed 4 x 4 and stored into each state's row, in the order of
 * the output.  Row r computes its entries right of the diagonal, s_r^T w_c, and keeps them in the upper triangle P
 * (n (n - 1) / 2 lanes of the work buffer), where row c reads back its entries left of the diagonal: one product
 * a pair.  P is written column-major so that those reads are one run; its scattered writes cost less than the
 * second product (this Zen 4, one core, B/A: n = 100 0.88-0.89, 400 0.85; n = 12 and 25 within the noise).  Same
 * products, same bits as the single state's pairs. */
RD_INLINE int chain_rows(double *out, long s0, long count, int n, const real *S, const real *Wr, const real *D,
                          real *P, int stream) {
    long nn = (long)n * n, lanes = count - s0 < RD_LANES ? count - s0 : RD_LANES;
    double *o = out + s0 * nn;
    real acc[4] = {{0}, {0}, {0}, {0}};   /* four sums: one would chain every addition of the row */
    for (int r = 0; r < n; r++) {
        const real *sr = S + 6 * r, *left = P + upper_entry(0, r);
        double *row = o + (long)r * n;
        int c0 = 0;
        for (; c0 + 4 <= n; c0 += 4) {   /* whole tiles of 4 columns: left of, right of or across the diagonal */
            real v[4];
            if (c0 + 4 <= r)
                for (int t = 0; t < 4; t++) v[t] = left[c0 + t];
            else if (c0 > r)
                for (int t = 0; t < 4; t++) P[upper_entry(r, c0 + t)] = v[t] = joint_product(sr, Wr + 6 * (c0 + t));
            else
                chain_entries(r, c0, 4, S, Wr, D, P, v);
            tile_put(row, nn, c0, 4, lanes, v, acc, stream);
        }
        if (c0 < n) {   /* the last n % 4 columns */
            real v[4];
            chain_entries(r, c0, n - c0, S, Wr, D, P, v);
            tile_put(row, nn, c0, n - c0, lanes, v, acc, stream);
        }
    }
    real all = acc[0] + acc[1] + acc[2] + acc[3];
    return all[0] == 0.0 && all[1] == 0.0 && all[2] == 0.0 && all[3] == 0.0 ? 0 : RD_NONFINITE;
}
/* A of a tree written row by row straight into the results, as chain_rows does: row r of lanes at `row` (n) from
 * its runs (rd_model.rows), A_rc = s_c^T w_r where c is an ancestor of r, s_r^T w_c where r is one of c, D_r, and 0
 * between branches (the products of the buffer path, so the same bits), then stored four columns at a time.  nv:
 * a free flyer's virtual joints at zero (crba_block), whose entries are A_vk = A_kv = w_k[v] (virtual_frames). */
RD_INLINE int tree_rows(const rd_model *m, double *out, long s0, long count, int nv, const real *S, const real *Wr,
                        const real *D, real *row, int stream) {
    int n = m->n;
    long nn = (long)n * n, lanes = count - s0 < RD_LANES ? count - s0 : RD_LANES;
    double *o = out + s0 * nn;
    real acc[4] = {{0}, {0}, {0}, {0}};
    for (int r = 0; r < n; r++) {
        const real *sr = S + 6 * r, *wr = Wr + 6 * r;
        int c = 0;
        if (r < nv) {   /* a virtual joint: every other joint is its descendant */
            for (; c < r; c++) row[c] = wr[c];
            for (row[c++] = D[r]; c < n; c++) row[c] = Wr[6 * c + r];
        } else {
            for (; c < nv; c++) row[c] = wr[c];
            for (const int *run = m->rows + m->rows[r], *end = m->rows + m->rows[r + 1]; run < end; run += 2) {
                int stop = run[1];
                switch (run[0]) {
                case 0: for (; c < stop; c++) row[c] = splat(0.0); break;
                case 1: for (; c < stop; c++) row[c] = joint_product(S + 6 * c, wr); break;
                case 2: for (; c < stop; c++) row[c] = joint_product(sr, Wr + 6 * c); break;
                default: row[c++] = D[r];
                }
            }
        }
        double *dst = o + (long)r * n;
        for (c = 0; c + 4 <= n; c += 4) tile_put(dst, nn, c, 4, lanes, row + c, acc, stream);
        if (c < n) tile_put(dst, nn, c, n - c, lanes, row + c, acc, stream);
    }
    real all = acc[0] + acc[1] + acc[2] + acc[3];
    return all[0] == 0.0 && all[1] == 0.0 && all[2] == 0.0 && all[3] == 0.0 ? 0 : RD_NONFINITE;
}
/* index of entry (r, c), r <= c, of a symmetric 3 x 3 matrix kept as its upper triangle xx xy xz yy yz zz */
RD_INLINE int upper_index(int r, int c) { return 3 * r - r * (r + 1) / 2 + c; }
RD_INLINE int symmetric_index(int r, int c) { return r <= c ? upper_index(r, c) : upper_index(c, r); }
/* 1 when link i has no inertia (M, MS, J all zero; a link with mass answers at the first test) */
RD_INLINE int massless(const rd_model *m, int i) {
    if (m->M[i] != 0.0) return 0;
    for (int c = 0; c < 3; c++) if (m->MS[3 * i + c] != 0.0) return 0;
    for (int c = 0; c < 9; c++) if (m->J[9 * i + c] != 0.0) return 0;
    return 1;
}
/* The inertia of link i in R_0 about O_0 into C = [J upper triangle (6), MS (3), M], with R = 0R_i, p = 0P_i:
 * from its inertia J_c about its centre of mass g = MS / M (rd_model.com), c = p + R g, J_0 = R J_c Rᵀ +
 * M (|c|² 1 - c cᵀ) and MS_0 = M c [9.12]; a link without mass (J_c = J), J_0 = R J Rᵀ - p̂ĥ - ĥp̂ with
 * h = R MS (âb̂ = b aᵀ - (a·b) 1) and MS_0 = h.  The centre-of-mass form takes about 120 operations where the
 * shift of J about O_i takes 150, the links' moves independent of each other either way. */
RD_INLINE void link_in_base(const rd_model *m, int i, const real *R, const real *p, real *C) {
    const double *MS = m->MS + 3 * i, *Jc = m->com + 12 * i, *g = Jc + 9, M = m->M[i];
    real RJ[9], h[3];
    for (int r = 0; r < 3; r++) {
        for (int c = 0; c < 3; c++)
            RJ[3 * r + c] = R[3 * r] * Jc[c] + R[3 * r + 1] * Jc[3 + c] + R[3 * r + 2] * Jc[6 + c];
        h[r] = M != 0.0 ? p[r] + (R[3 * r] * g[0] + R[3 * r + 1] * g[1] + R[3 * r + 2] * g[2])
                        : R[3 * r] * MS[0] + R[3 * r + 1] * MS[1] + R[3 * r + 2] * MS[2];
    }
    if (M != 0.0) {   /* h is c */
        real Mc[3] = {M * h[0], M * h[1], M * h[2]}, cc = M * (h[0] * h[0] + h[1] * h[1] + h[2] * h[2]);
        for (int r = 0; r < 3; r++)
            for (int c = r; c < 3; c++) {
                real jr = RJ[3 * r] * R[3 * c] + RJ[3 * r + 1] * R[3 * c + 1] + RJ[3 * r + 2] * R[3 * c + 2];
                real t = jr - Mc[r] * h[c];
                C[upper_index(r, c)] = r == c ? t + cc : t;
            }
        for (int c = 0; c < 3; c++) C[6 + c] = Mc[c];
    } else {
        real ph = p[0] * h[0] + p[1] * h[1] + p[2] * h[2];
        for (int r = 0; r < 3; r++)
            for (int c = r; c < 3; c++) {
                real jr = RJ[3 * r] * R[3 * c] + RJ[3 * r + 1] * R[3 * c + 1] + RJ[3 * r + 2] * R[3 * c + 2];
                real t = jr - h[r] * p[c] - p[r] * h[c];
                C[upper_index(r, c)] = r == c ? t + 2.0 * ph : t;
            }
        for (int c = 0; c < 3; c++) C[6 + c] = h[c];
    }
    C[9] = splat(M);
}
/* w = I s for the composite inertia C (as link_in_base's) and the twist s = [v; ω] (R_0, about O_0):
 * [M v + ω × MS; MS × v + J ω] (ω = 0 for a prismatic joint: [M v; MS × v]) */
RD_INLINE void composite_wrench(const real *C, const real *s, int revolute, real *w) {
    const real *h = C + 6, *v = s, *o = s + 3;
    real M = C[9], hv[3];
    cross(h, v, hv);
    if (revolute) {
        real oh[3];
        cross(o, h, oh);
        for (int r = 0; r < 3; r++) {
            w[r] = M * v[r] + oh[r];
            w[3 + r] = hv[r] + (C[symmetric_index(r, 0)] * o[0] + C[symmetric_index(r, 1)] * o[1]
                                + C[symmetric_index(r, 2)] * o[2]);
        }
    } else
        for (int r = 0; r < 3; r++) { w[r] = M * v[r]; w[3 + r] = hv[r]; }
}
/* 1 when frames 0..5 are a free flyer's 6 virtual joints (robodyn.dynamics.floating.augmented_robot: prismatic
 * along x, y, z of R_0, then revolute about them, through O_0; γ = α = π/2, so that each RA is the cyclic
 * permutation below, exact in the packed model) at zero in every lane, frames 0..4 without inertia and every other
 * frame below frame 5: then 0T_5 = 1 exactly, s_v = [e_v; 0] / [0; e_v], and A_vk = s_v^T w_k is w_k[v] (what the
 * six products give, with their exact 0 and 1), so the virtual frames need neither transforms nor products. */
static int virtual_frames(const rd_model *m) {   /* the model's part, once per model (rd_model.virtual) */
    static const double cyclic[9] = {0, 0, 1, 1, 0, 0, 0, 1, 0};
    if (m->nf < RD_VIRTUAL || m->n < RD_VIRTUAL) return 0;
    for (int i = 0; i < RD_VIRTUAL; i++) {
        if (m->parent[i] != i - 1 || m->joint[i] != i || m->sigma[i] != (i < 3) || m->theta[i] != 0.0
            || m->r[i] != 0.0 || m->Ia[i] != 0.0 || (i < RD_VIRTUAL - 1 && !massless(m, i)))
            return 0;
        for (int c = 0; c < 9; c++) if (m->RA[9 * i + c] != cyclic[c]) return 0;
        for (int c = 0; c < 3; c++) if (m->pA[3 * i + c] != 0.0) return 0;
    }
    for (int i = RD_VIRTUAL; i < m->nf; i++) if (m->parent[i] < RD_VIRTUAL - 1) return 0;
    return 1;
}
RD_INLINE int virtual_base(const rd_model *m, const real *Q) {   /* the block's part: the virtual joints at zero */
    if (!m->virtual) return 0;
    for (int i = 0; i < RD_VIRTUAL; i++)
        for (int l = 0; l < RD_LANES; l++) if (Q[i][l] != 0.0) return 0;
    return 1;
}
/* A of the block's states whose q are at W + 34 nf + n + 1 (crba_block, floating_crba_block) */
RD_INLINE int crba_lanes(const rd_job *job, long s0, real *W) {
    const rd_model *m = job->m;
    int nf = m->nf, n = m->n;
    /* Cb: the composite links in R_0 about O_0, 10 per frame (link_in_base) */
    real *Cb = W, *R0 = Cb + 10 * nf, *P0 = R0 + 9 * nf, *S = P0 + 3 * nf, *Wr = S + 6 * nf, *D = Wr + 6 * nf,
         *Q = D + n + 1, *A = Q + n;
    int nv = virtual_base(m, Q) ? RD_VIRTUAL : 0, b = RD_VIRTUAL - 1;   /* a free flyer's virtual joints: b is R_0 */
    if (nv) {
        for (int c = 0; c < 9; c++) R0[9 * b + c] = splat(c % 4 == 0 ? 1.0 : 0.0);
        for (int c = 0; c < 3; c++) P0[3 * b + c] = splat(0.0);
        for (int k = 0; k < RD_VIRTUAL; k++)
            for (int c = 0; c < 6; c++) S[6 * k + c] = splat(c == k ? 1.0 : 0.0);   /* [e_k; 0], [0; e_k-3] */
        for (int i = 0; i < b; i++) memset(Cb + 10 * i, 0, 10 * sizeof(real));
        if (massless(m, b))
            memset(Cb + 10 * b, 0, 10 * sizeof(real));
        else
            link_in_base(m, b, R0 + 9 * b, P0 + 3 * b, Cb + 10 * b);
    }
    /* a block's results of up to RD_PREFETCH lines are fetched into the cache, line by line, while its frames are
     * computed: the stores at the end then find them there instead of waiting on memory one after another */
    const char *next = (const char *)(job->out + s0 * (long)n * n);
    long lines = (long)RD_LANES * n * n / 8, done = 0;
    int stream = streams_unaliased(job, (long)n * n);   /* no fetching of lines written whole without it */
    if (stream || job->count - s0 < RD_LANES || lines > RD_PREFETCH) lines = 0;
    for (int i = nv; i < nf; i++) {
        int a = m->parent[i], k = m->joint[i];
        real *R0i = R0 + 9 * i, *P0i = P0 + 3 * i;
        if (lines)   /* no division per frame where nothing is prefetched (n > 25, a partial block) */
            for (long e = lines * (i + 1 - nv) / (nf - nv); done < e; done++)
                __builtin_prefetch(next + 64 * done, 1, 3);
        base_transform(m, i, joint_value(m, i, Q), a < 0 ? NULL : R0 + 9 * a, a < 0 ? NULL : P0 + 3 * a, R0i, P0i);
        if (massless(m, i))
            memset(Cb + 10 * i, 0, 10 * sizeof(real));
        else
            link_in_base(m, i, R0i, P0i, Cb + 10 * i);
        if (k >= 0) joint_axis(m, i, R0i, P0i, S + 6 * k);   /* S and Wr by joint */
    }
    /* from the leaves to the base (children have larger indices): the composite link of the subtree of i is
     * complete when i is reached; its joint's wrench is taken, then it is summed into a(i) */
    for (int i = nf - 1; i >= 0; i--) {
        int a = m->parent[i], k = m->joint[i];
        const real *C = Cb + 10 * i;
        if (k >= 0) {
            composite_wrench(C, S + 6 * k, m->sigma[i] == 0, Wr + 6 * k);
            D[k] = joint_product(S + 6 * k, Wr + 6 * k) + m->Ia[i];
        }
        if (a >= 0)
            for (int c = 0; c < 10; c++) Cb[10 * a + c] += C[c];
    }
    if (job->count - s0 == 1) {   /* one state (a single call, a batch's last): lane 0 straight into its result */
        double *o = job->out + s0 * (long)n * n;
        if (!m->chain) memset(o, 0, sizeof(double) * (size_t)n * n);
        /* x - x is 0 for a finite x, NaN for ±inf and NaN: a bitwise or of the comparisons (one cycle), not a
         * sum (a floating addition's latency per product) */
        lmask bad = {0, 0, 0, 0};
        for (int i = 0; i < nf; i++) {
            int k = m->joint[i];
            if (k < 0) continue;
            o[k * n + k] = D[k][0];
            bad |= D[k] - D[k] != 0.0;
            for (int j = m->parent[i]; j >= nv; j = m->parent[j]) {
                int kj = m->joint[j];
                if (kj < 0) continue;
                real v = joint_product(S + 6 * kj, Wr + 6 * k);
                o[kj * n + k] = o[k * n + kj] = v[0];
                bad |= v - v != 0.0;
            }
            for (int v = 0; v < nv && v < k; v++) {   /* A_vk = s_v^T w_k = w_k[v] */
                real w = Wr[6 * k + v];
                o[v * n + k] = o[k * n + v] = w[0];
                bad |= w - w != 0.0;
            }
        }
        return bad[0] ? RD_NONFINITE : 0;
    }
    if (m->rows) return tree_rows(m, job->out, s0, job->count, nv, S, Wr, D, A, stream);
    if (crba_rows(m)) return chain_rows(job->out, s0, job->count, n, S, Wr, D, A, stream);
    /* a chain's every entry is written below; a tree's joints on different branches keep the zeros the buffer
     * started with (rd_task_blocks zeroes it for this kind, once for all its blocks: each block writes the same
     * pairs, those of a joint and its ancestors; a memset a block was 4 % of a quadruped's matrix) */
    for (int i = 0; i < nf; i++) {
        int k = m->joint[i];
        if (k < 0) continue;
        A[k * n + k] = D[k];
        for (int j = m->parent[i]; j >= nv; j = m->parent[j]) {   /* every ancestor joint: A_jk = s_j^T w_k */
            int kj = m->joint[j];
            if (kj < 0) continue;
            A[kj * n + k] = A[k * n + kj] = joint_product(S + 6 * kj, Wr + 6 * k);
        }
        for (int v = 0; v < nv && v < k; v++) A[v * n + k] = A[k * n + v] = Wr[6 * k + v];   /* s_v^T w_k */
    }
    store_lanes(job->out, s0, job->count, (long)n * n, (long)n * n, A, stream);
    return all_finite(A, (long)n * n) ? 0 : RD_NONFINITE;
}

RD_CLONES static int crba_block(const rd_job *job, long s0, real *W) {
    int n = job->m->n;
    load_lanes(job->q, s0, job->count, n, n, W + 34 * (long)job->m->nf + n + 1);
    return crba_lanes(job, s0, W);
}
/* A free flyer's inertia matrix on its augmented robot (virtual_frames) at its states q (n + 1) = [base position,
 * quaternion (x, y, z, w), joints]: the augmented q is q without its first 7 entries after 6 zeros (the virtual
 * joints at zero: robodyn.dynamics.floating), here q read one vector earlier with the 6 zeros written over
 * q[1..6], so that the joints fall at their places. */
RD_CLONES static int floating_crba_block(const rd_job *job, long s0, real *W) {
    int n = job->m->n;
    real *Qf = W + 34 * (long)job->m->nf + n;
    load_lanes(job->q, s0, job->count, n + 1, n + 1, Qf);
    for (int k = 1; k <= RD_VIRTUAL; k++) Qf[k] = splat(0.0);
    return crba_lanes(job, s0, W);
}

/* ---- spatial algebra for the articulated-body algorithm, [linear; angular] ----------------------------- */
/* 𝕋ᵀ I 𝕋 for 𝕋 = ^j𝕋_{a(j)} [9.120]: I = [[C, Bᵀ], [B, A]] (6x6 row-major, about O_j in R_j; C linear, B the
 * angular-linear block, A angular) expressed about O_a in R_a, added to out.  Rotation: A, B, C -> R A Rᵀ,
 * R B Rᵀ, R C Rᵀ; shift by p: A - B p̂ + p̂ Bᵀ - p̂ C p̂, B + p̂ C, C.  A and C are symmetric: only their upper
 * triangles are computed. */
RD_INLINE void inertia_to_parent(int z, const real *I, const real *R, const real *p, real *out) {
    real A[9], B[9], C[9], T[9];
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) {
            A[3 * r + c] = I[6 * (r + 3) + 3 + c]; B[3 * r + c] = I[6 * (r + 3) + c]; C[3 * r + c] = I[6 * r + c];
        }
    frame_mul(z, R, A, T); frame_mul_t(z, T, R, A);
    frame_mul(z, R, B, T); frame_mul_t(z, T, R, B);
    frame_mul(z, R, C, T); frame_mul_t(z, T, R, C);
    /* (p̂ M)_rc = p_{r+1} M_{r+2,c} - p_{r+2} M_{r+1,c} (indices mod 3); (M p̂)_r = M_r × p for row M_r */
    real PC[9], BP[9], PBt[9], PCP[9];
    for (int c = 0; c < 3; c++) {
        PC[c] = p[1] * C[6 + c] - p[2] * C[3 + c];
        PC[3 + c] = p[2] * C[c] - p[0] * C[6 + c];
        PC[6 + c] = p[0] * C[3 + c] - p[1] * C[c];
    }
    for (int r = 0; r < 3; r++) {
        const real *Br = B + 3 * r, *Pr = PC + 3 * r;
        BP[3 * r] = Br[1] * p[2] - Br[2] * p[1]; BP[3 * r + 1] = Br[2] * p[0] - Br[0] * p[2];
        BP[3 * r + 2] = Br[0] * p[1] - Br[1] * p[0];
        PCP[3 * r] = Pr[1] * p[2] - Pr[2] * p[1]; PCP[3 * r + 1] = Pr[2] * p[0] - Pr[0] * p[2];
        PCP[3 * r + 2] = Pr[0] * p[1] - Pr[1] * p[0];
    }
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) PBt[3 * r + c] = -BP[3 * c + r];   /* p̂ Bᵀ = -(B p̂)ᵀ since p̂ᵀ = -p̂ */
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) {
            real b = B[3 * r + c] + PC[3 * r + c];
            out[6 * (r + 3) + c] += b;
            out[6 * c + 3 + r] += b;
            if (c < r) continue;
            real a = A[3 * r + c] - BP[3 * r + c] + PBt[3 * r + c] - PCP[3 * r + c];
            out[6 * (r + 3) + 3 + c] += a;
            out[6 * r + c] += C[3 * r + c];
            if (c > r) { out[6 * (c + 3) + 3 + r] += a; out[6 * c + r] += C[3 * r + c]; }
        }
}
/* Wrench [f; m] about O_j in R_j -> about O_a in R_a, ^j𝕋_{a(j)}ᵀ F [9.119]: f_a = R f, m_a = R m + p × R f. */
RD_INLINE void force_to_parent(int z, const real *F, const real *R, const real *p, real *out) {
    real f[3], n[3], pf[3];
    frame_vec(z, R, F, f); frame_vec(z, R, F + 3, n); cross(p, f, pf);
    for (int c = 0; c < 3; c++) { out[c] += f[c]; out[3 + c] += n[c] + pf[c]; }
}
/* Twist [v; ω] about O_a in R_a -> about O_j in R_j, ^j𝕋_{a(j)} V [9.121]: v_j = Rᵀ (v + ω × p), ω_j = Rᵀ ω. */
RD_INLINE void motion_from_parent(int z, const real *V, const real *R, const real *p, real *out) {
    real t[3];
    cross(V + 3, p, t);
    for (int c = 0; c < 3; c++) t[c] += V[c];
    frame_t_vec(z, R, t, out); frame_t_vec(z, R, V + 3, out + 3);
}
RD_INLINE void inertia_times(const real *I, const real *v, real *out) {
    for (int r = 0; r < 6; r++) {
        real s = I[6 * r] * v[0];
        for (int c = 1; c < 6; c++) s += I[6 * r + c] * v[c];
        out[r] = s;
    }
}

/* Articulated-body forward dynamics (Featherstone's ABA; Khalil & Dombre §9.7.2 [9.100]-[9.124] is the same
 * recursion in their notation).  The torque is Γ - Γ_f with friction (Γ_f subtracted here, [9.106]).  The joint
 * axis a_j is entry 2 (prismatic, v_z) or 5 (revolute, ω_z) of a 6-vector [9.23b]. */
/* + 1: a free flyer's q (floating_aba_block) */
static long aba_work(const rd_model *m) { return 82 * (long)m->nf + 4 * (long)m->n + 3 + 6 + 1; }
/* q̈ of the block's states whose q, q̇, τ and g are at W + 80 nf + 1 (aba_block, floating_aba_block); `floating`:
 * a free flyer's augmented robot, whose first six results become a = q̈_a minus the virtual joints' velocity
 * products (rd_virtual_products, operation for operation) */
RD_INLINE int aba_lanes(const rd_job *job, long s0, real *W, int floating) {
    const rd_model *m = job->m;
    int nf = m->nf, n = m->n, status = 0;
    real *R = W, *p = R + 9 * nf, *v = p + 3 * nf, *c = v + 6 * nf, *IA = c + 6 * nf, *pA = IA + 36 * nf,
         *U = pA + 6 * nf, *D = U + 6 * nf, *u = D + nf, *acc = u + nf, *Q = acc + 6 * nf + 1, *QD = Q + n,
         *TAU = QD + n, *X = TAU + n, *G = X + n, *E = G + 3;
    if (job->friction)
        for (int k = 0; k < n; k++) TAU[k] -= friction_of(m, k, QD[k]);
    for (int i = 0; i < nf; i++) {
        int a = m->parent[i], k = m->joint[i];
        real *Ri = R + 9 * i, *pi = p + 3 * i, *vi = v + 6 * i, *ci = c + 6 * i, *Ii = IA + 36 * i;
        frame_transform(m, i, joint_value(m, i, Q), Ri, pi);
        if (a >= 0) motion_from_parent(frame_z(m, i), v + 6 * a, Ri, pi, vi); else memset(vi, 0, 6 * sizeof(real));
        memset(ci, 0, 6 * sizeof(real));
        if (k >= 0) {
            real qdk = QD[k];
            if (m->sigma[i] == 0) {   /* c = v ×m (a q̇) = [v × z q̇; ω × z q̇] */
                ci[0] = vi[1] * qdk; ci[1] = -vi[0] * qdk;
                ci[3] = vi[4] * qdk; ci[4] = -vi[3] * qdk;
                vi[5] += qdk;
            } else {                  /* [ω × z q̇; 0] */
                ci[0] = vi[4] * qdk; ci[1] = -vi[3] * qdk;
                vi[2] += qdk;
            }
        }
        /* rigid-body spatial inertia [[M 1, -M̂S], [M̂S, J]] about O_j */
        const double *J = m->J + 9 * i, *h = m->MS + 3 * i;
        double H[9] = {0, -h[2], h[1], h[2], 0, -h[0], -h[1], h[0], 0};
        for (int r = 0; r < 3; r++)
            for (int cc = 0; cc < 3; cc++) {
                Ii[6 * r + cc] = splat(r == cc ? m->M[i] : 0.0);
                Ii[6 * r + 3 + cc] = splat(H[3 * cc + r]);
                Ii[6 * (r + 3) + cc] = splat(H[3 * r + cc]);
                Ii[6 * (r + 3) + 3 + cc] = splat(J[3 * r + cc]);
            }
        /* bias pA = v ×* (I v) = [ω × f; ω × n + v × f] for I v = [f; n], + the wrench [f; m] by the link on
         * the environment as given */
        real Iv[6], *pa = pA + 6 * i, t[3], t2[3];
        inertia_times(Ii, vi, Iv);
        cross(vi + 3, Iv, pa);
        cross(vi + 3, Iv + 3, t); cross(vi, Iv, t2);
        for (int r = 0; r < 3; r++) pa[3 + r] = t[r] + t2[r];
        if (job->wrench) {
            load_lanes(job->wrench + 6 * i, s0, job->count, 6 * (long)nf, 6, E);
            for (int r = 0; r < 6; r++) pa[r] += E[r];
        }
    }
    for (int i = nf - 1; i >= 0; i--) {
        int a = m->parent[i], k = m->joint[i];
        real *Ii = IA + 36 * i, *pa = pA + 6 * i, *ci = c + 6 * i, Ic[6];
        if (k >= 0) {
            int axis = m->sigma[i] == 0 ? 5 : 2;
            real *Ui = U + 6 * i;
            for (int r = 0; r < 6; r++) Ui[r] = Ii[6 * r + axis];
            real Dk = Ui[axis] + m->Ia[i];
            real scale = vabs(Ii[0]) + vabs(Ii[7]) + vabs(Ii[14]) + vabs(Ii[21]) + vabs(Ii[28]) + vabs(Ii[35]) + m->Ia[i];
            lmask ok = (Dk > 1e-13 * scale) & (Dk > 0.0);
            if (!status && !(ok[0] && ok[1] && ok[2] && ok[3])) status = k + 1;
            u[i] = TAU[k] - pa[axis];
            D[i] = 1.0 / Dk;  /* kept as 1/D: one division per joint */
            real Ud[6];
            for (int r = 0; r < 6; r++) Ud[r] = Ui[r] * D[i];
            for (int r = 0; r < 6; r++)
                for (int cc = 0; cc < 6; cc++) Ii[6 * r + cc] -= Ud[r] * Ui[cc];
            inertia_times(Ii, ci, Ic);
            for (int r = 0; r < 6; r++) pa[r] += Ic[r] + Ud[r] * u[i];
        }
        if (a >= 0) {
            int z = frame_z(m, i);
            inertia_to_parent(z, Ii, R + 9 * i, p + 3 * i, IA + 36 * a);
            force_to_parent(z, pa, R + 9 * i, p + 3 * i, pA + 6 * a);
        }
    }
    real base[6] = {-G[0], -G[1], -G[2], {0}, {0}, {0}};   /* V̇_0 = [-g; 0] [9.80] */
    for (int i = 0; i < nf; i++) {
        int a = m->parent[i], k = m->joint[i];
        real *ai = acc + 6 * i;
        motion_from_parent(frame_z(m, i), a >= 0 ? acc + 6 * a : base, R + 9 * i, p + 3 * i, ai);
        for (int r = 0; r < 6; r++) ai[r] += c[6 * i + r];
        if (k >= 0) {
            const real *Ui = U + 6 * i;
            real Ua = Ui[0] * ai[0];
            for (int r = 1; r < 6; r++) Ua += Ui[r] * ai[r];
            real x = (u[i] - Ua) * D[i];
            X[k] = x;
            ai[m->sigma[i] == 0 ? 5 : 2] += x;
        }
    }
    if (status) return status;
    if (floating) {
        const real *o = QD + 3;
        X[0] -= o[1] * QD[2] - o[2] * QD[1]; X[1] -= o[2] * QD[0] - o[0] * QD[2]; X[2] -= o[0] * QD[1] - o[1] * QD[0];
        X[3] += o[1] * o[2]; X[4] -= o[0] * o[2]; X[5] += o[0] * o[1];
    }
    store_lanes(job->out, s0, job->count, n, n, X, streams(job, n));
    return all_finite(X, n) ? 0 : RD_NONFINITE;
}
RD_CLONES static int aba_block(const rd_job *job, long s0, real *W) {
    int n = job->m->n;
    real *Q = W + 80 * (long)job->m->nf + 1;
    load_lanes(job->q, s0, job->count, n, n, Q);
    load_lanes(job->qd, s0, job->count, n, n, Q + n);
    load_lanes(job->x, s0, job->count, n, n, Q + 2 * n);
    load_lanes(job->g, s0, job->count, job->g_stride, 3, Q + 4 * n);
    return aba_lanes(job, s0, W, 0);
}
/* A free flyer's forward dynamics on its augmented robot (rd_floating_model): q (n + 1) = [base position,
 * quaternion (x, y, z, w), joints], v (n), τ (n) = [base wrench in R_0 about O_0; joint torques], g (3) in the
 * world frame, as rd_py_floating's one state: the virtual joints at zero (q read one vector earlier, zeros written
 * over its q[1..6] as in floating_crba_block), gravity in R_0 (base_gravity), a from q̈_a (aba_lanes). */
RD_CLONES static int floating_aba_block(const rd_job *job, long s0, real *W) {
    int n = job->m->n;
    real *Qf = W + 80 * (long)job->m->nf, *Q = Qf + 1, G[3];
    load_lanes(job->q, s0, job->count, n + 1, n + 1, Qf);
    load_lanes(job->qd, s0, job->count, n, n, Q + n);
    load_lanes(job->x, s0, job->count, n, n, Q + 2 * n);
    load_lanes(job->g, s0, job->count, job->g_stride, 3, G);
    base_gravity(Qf, G, Q + 4 * n);
    for (int k = 1; k <= RD_VIRTUAL; k++) Qf[k] = splat(0.0);
    return aba_lanes(job, s0, W, 1);
}

/* Regressor of the standard parameters (Khalil & Dombre [9.36]): row k of state s at out + (s n + k) cols,
 * 11 columns per frame (XX XY XZ YY YZ ZZ MX MY MZ M Ia), then with friction Fc Fv Foff per joint.
 * Link i's wrench is [F; N] = Φ_i K_i ([9.88]-[9.89]); the block of joint k and link i (i in the subtree of k)
 * is s_ki^T Φ_i with s_ki = [v; ω], the motion of O_i in R_i for a unit velocity of joint k, the others 0.  Each
 * row is made whole in lanes, zeros included, and stored as the inertia matrix's are (store_lanes, whole rows,
 * non-temporal for large batches), into any result array: the caller's zeroed array that only the non-zero blocks
 * were written into cost a pass of zeros (or fresh pages zeroed by the system) and scalar stores (n = 100:
 * 157 -> 130 us per state). */
/* R p w wd Vd (21 nf), Phi (60 nf), s (6 nf), Q QD QDD (3 n), G (3), a row (11 nf + 3 n), `inside` (nf bytes) */
static long regressor_work(const rd_model *m) { return 99 * (long)m->nf + 6 * (long)m->n + 3; }
RD_CLONES static int regressor_block(const rd_job *job, long s0, real *W) {
    const rd_model *m = job->m;
    int nf = m->nf, n = m->n;
    long cols = job->cols, size = (long)n * cols;
    real *R = W, *p = R + 9 * nf, *w = p + 3 * nf, *wd = w + 3 * nf, *Vd = wd + 3 * nf, *Phi = Vd + 3 * nf,
         *sv = Phi + 60 * nf, *Q = sv + 6 * nf, *QD = Q + n, *QDD = QD + n, *G = QDD + n, *Y = G + 3;
    char *inside = (char *)(Y + 11 * nf + 3 * n);
    int stream = streams_unaliased(job, size);
    load_lanes(job->q, s0, job->count, n, n, Q);
    load_lanes(job->qd, s0, job->count, n, n, QD);
    load_lanes(job->x, s0, job->count, n, n, QDD);
    load_lanes(job->g, s0, job->count, job->g_stride, 3, G);
    forward_recursion(m, Q, QD, QDD, G, R, p, w, wd, Vd);
    real check = splat(0.0);
    for (int i = 0; i < nf; i++) {
        const real *wi = w + 3 * i, *wdi = wd + 3 * i, *Vdi = Vd + 3 * i;
        real *P = Phi + 60 * i;   /* rows F (3) then N (3); columns XX XY XZ YY YZ ZZ MX MY MZ M */
        real z = splat(0.0);
        for (int r = 0; r < 3; r++) for (int col = 0; col < 6; col++) P[10 * r + col] = z;
        /* N = J ω̇ + ω × (J ω) for a unit entry of J: columns XX XY XZ YY YZ ZZ */
        real w0 = wi[0], w1 = wi[1], w2 = wi[2];
        real E[6][3] = {{w0, z, z}, {w1, w0, z}, {w2, z, w0}, {z, w1, z}, {z, w2, w1}, {z, z, w2}};
        real Ed[6][3] = {{wdi[0], z, z}, {wdi[1], wdi[0], z}, {wdi[2], z, wdi[0]}, {z, wdi[1], z},
                         {z, wdi[2], wdi[1]}, {z, z, wdi[2]}};
        for (int col = 0; col < 6; col++) {
            real u2[3];
            cross(wi, E[col], u2);
            for (int r = 0; r < 3; r++) P[10 * (3 + r) + col] = Ed[col][r] + u2[r];
        }
        /* F = ω̇ × MS + ω × (ω × MS), N = MS × V̇ for a unit MS along e_col */
        real wdw[3][3] = {{z, wdi[2], -wdi[1]}, {-wdi[2], z, wdi[0]}, {wdi[1], -wdi[0], z}};   /* ω̇ × e_col */
        for (int col = 0; col < 3; col++) {
            real e[3] = {z, z, z}, u2[3], v2[3];
            e[col] = splat(1.0);
            cross(wi, e, u2); cross(wi, u2, u2); cross(e, Vdi, v2);
            for (int r = 0; r < 3; r++) { P[10 * r + 6 + col] = wdw[col][r] + u2[r]; P[10 * (3 + r) + 6 + col] = v2[r]; }
        }
        for (int r = 0; r < 3; r++) { P[10 * r + 9] = Vdi[r]; P[10 * (3 + r) + 9] = z; }
    }
    for (int kf = 0; kf < nf; kf++) {
        int k = m->joint[kf];
        if (k < 0) continue;
        memset(inside, 0, (size_t)nf);
        memset(Y, 0, (size_t)(11 * kf) * sizeof(real));   /* the frames before kf: none in its subtree */
        for (int i = kf; i < nf; i++) {
            real *si = sv + 6 * i, *y = Y + 11 * i;
            if (i == kf) {
                memset(si, 0, 6 * sizeof(real));
                if (m->sigma[i] == 0) si[5] = splat(1.0); else si[2] = splat(1.0);   /* [v; ω] */
            } else {
                int a = m->parent[i];
                if (a < kf || !inside[a]) {
                    memset(y, 0, 11 * sizeof(real));
                    continue;
                }
                real *sa = sv + 6 * a, t[3];
                cross(sa + 3, p + 3 * i, t);
                for (int c2 = 0; c2 < 3; c2++) t[c2] += sa[c2];
                frame_t_vec(frame_z(m, i), R + 9 * i, t, si);
                frame_t_vec(frame_z(m, i), R + 9 * i, sa + 3, si + 3);
            }
            inside[i] = 1;
            const real *P = Phi + 60 * i;
            for (int col = 0; col < 10; col++) {
                real x = si[0] * P[col];
                for (int r = 1; r < 6; r++) x += si[r] * P[10 * r + col];
                y[col] = x;
                check += x * 0.0;
            }
            y[10] = i == kf ? QDD[k] : splat(0.0);
        }
        if (job->friction) {
            real *f = Y + 11 * nf;
            memset(f, 0, (size_t)(3 * n) * sizeof(real));
            f[3 * k] = vsign(QD[k]);
            f[3 * k + 1] = QD[k];
            f[3 * k + 2] = splat(1.0);
        }
        store_lanes(job->out + (long)k * cols, s0, job->count, size, cols, Y, stream);
    }
    return all_finite(&check, 1) ? 0 : RD_NONFINITE;
}

/* Derivatives ∂Γ/∂q, ∂Γ/∂q̇ of the Newton-Euler inverse dynamics [9.84]-[9.94] (with friction: its slope F_v
 * on the diagonal of ∂Γ/∂q̇; I_a q̈ depends on neither) by Carpentier and Mansard's analytical derivatives of the
 * recursion ("Analytical derivatives of rigid body dynamics algorithms", RSS 2018), in the closed form of Singh,
 * Russell and Wensing ("Efficient analytical derivatives of rigid-body dynamics using spatial vector algebra",
 * RA-L 2022): one forward and one backward pass over the frames, then two 6-vector products per entry.  Every
 * spatial quantity is expressed in R_0 about O_0 ([linear; angular], as the rest of this file): the joint axis
 * S_j = [P_j × z_j; z_j] (revolute) or [z_j; 0] (prismatic), the link's twist v_j = v_a + S_j q̇_j and spatial
 * acceleration a_j = a_a + S_j q̈_j + Ψ̇_j q̇_j (a_0 = [-g; 0], [9.80]) with Ψ̇_j = v_a × S_j and
 * Ψ̈_j = a_a × S_j + v_a × Ψ̇_j, its inertia I_j, wrench f_j = I_j a_j + v_j ×* I_j v_j (+ the caller's wrench)
 * and İ_j = v_j ×* I_j − I_j v_j × (the rate of I_j, an inertia of mass 0).  The sums over the subtree of frame j
 * (composite I^C, İ^C, momentum h^C = Σ I v and wrench F^C, plain sums in R_0) give, for joint k and each joint j
 * on its path from the base (j ≼ k), with t1 = I^C S_k, t4 = İ^C S_k − S_k ×* h^C,
 * t2 = 2 I^C Ψ̇_k + İ^C S_k + S_k ×* h^C, t3 = S_k ×* F^C + I^C Ψ̈_k + İ^C Ψ̇_k + Ψ̇_k ×* h^C:
 *   ∂Γ_j/∂q_k = S_j·t3,  ∂Γ_j/∂q̇_k = S_j·t2,  ∂Γ_k/∂q_j = Ψ̈_j·t1 + Ψ̇_j·t4,  ∂Γ_k/∂q̇_j = Ψ̇_j·2t1 + S_j·t4
 * (the other entries are 0).  O(n) vector work per frame and O(n²) products, where differentiating the recursion
 * along each of the 2n directions carried tangents through every frame.  robodyn.dynamics.derivatives (dual
 * numbers through robodyn.dynamics.newton_euler.rnea_components) is the independent reference
 * (tests/test_perf_kernels.py).  Out per state: (2, n, n), [0][j][k] = ∂Γ_j/∂q_k, [1][j][k] = ∂Γ_j/∂q̇_k. */
/* per frame in deriv_block's buffer: R0 (9), P0 (3), v, a, S, Ψ̇, Ψ̈ (6 each), then the subtree's sums: mass,
 * first moment h (3), rotational inertia about O_0 (6: xx yy zz xy xz yz), İ's ḣ (3) and J̇ (6), h^C, F^C (6),
 * and the link's own mass, h, J (10: read by the articulated inertias of fdd_block_articulated only, which asks
 * deriv_passes for them) */
#define RD_DFRAME 83
#define RD_DJOINT 48   /* per joint: S, Ψ̇, Ψ̈ and the terms t1, 2 t1, t2, t3, t4 of its entries (deriv_terms) */
#define RD_TROWS 2     /* the rows of a tile of entries on a chain (deriv_tile; 4 was slower) */
enum { RD_D_R0 = 0, RD_D_P0 = 9, RD_D_V = 12, RD_D_A = 18, RD_D_S = 24, RD_D_PD = 30, RD_D_PDD = 36, RD_D_M = 42,
       RD_D_H = 43, RD_D_J = 46, RD_D_DH = 52, RD_D_DJ = 55, RD_D_HC = 61, RD_D_FC = 67, RD_D_OWN = 73 };
static long deriv_work(const rd_model *m) {
    long n = m->n;
    return RD_DFRAME * (long)m->nf + RD_DJOINT * n + 3 * n + 9 + (m->chain ? (RD_TROWS - 1) * (n + 3) : 2 * n * n);
}
RD_INLINE void twist_cross(const real *a, const real *b, real *out) {   /* a × b of twists: [ω×v_b + v×ω_b; ω×ω_b] */
    real t[3], u[3];
    cross(a + 3, b, t); cross(a, b + 3, u); cross(a + 3, b + 3, out + 3);
    for (int c = 0; c < 3; c++) out[c] = t[c] + u[c];
}
RD_INLINE void wrench_cross(const real *a, const real *f, real *out) {    /* a ×* f: [ω×f; v×f + ω×m] */
    real t[3], u[3];
    cross(a, f, t); cross(a + 3, f + 3, u); cross(a + 3, f, out);
    for (int c = 0; c < 3; c++) out[3 + c] = t[c] + u[c];
}
/* [[m 1, -ĥ], [ĥ, J]] x for J symmetric (xx yy zz xy xz yz): [m x_v + x_ω × h; h × x_v + J x_ω] (m = NULL: 0) */
RD_INLINE void rigid_times(const real *mass, const real *h, const real *J, const real *x, real *out) {
    real t[3], u[3];
    cross(x + 3, h, t); cross(h, x, u);
    for (int c = 0; c < 3; c++) out[c] = mass ? *mass * x[c] + t[c] : t[c];
    out[3] = u[0] + (J[0] * x[3] + J[3] * x[4] + J[4] * x[5]);
    out[4] = u[1] + (J[3] * x[3] + J[1] * x[4] + J[5] * x[5]);
    out[5] = u[2] + (J[4] * x[3] + J[5] * x[4] + J[2] * x[5]);
}
RD_INLINE real deriv_dot(const real *a, const real *b) {
    return (a[0] * b[0] + a[1] * b[1] + a[2] * b[2]) + (a[3] * b[3] + a[4] * b[4] + a[5] * b[5]);
}
/* Frame i's pass from the base: its pose in R_0, axis, twist, acceleration, Ψ̇, Ψ̈, and its own inertia, İ,
 * momentum and wrench as the first terms of its subtree's sums (B: its RD_DFRAME vectors, Ba its antecedent's) */
RD_INLINE void deriv_forward(const rd_job *job, long s0, int i, const real *Q, const real *QD, const real *QDD,
                             const real *G, real *E, real *B, const real *Ba) {
    const rd_model *m = job->m;
    int k = m->joint[i];
    real *R0 = B + RD_D_R0, *P0 = B + RD_D_P0, *v = B + RD_D_V, *acc = B + RD_D_A, *S = B + RD_D_S,
         *Pd = B + RD_D_PD, *Pdd = B + RD_D_PDD;
    real zero6[6] = {{0}, {0}, {0}, {0}, {0}, {0}}, a0[6] = {-G[0], -G[1], -G[2], {0}, {0}, {0}};
    const real *va = Ba ? Ba + RD_D_V : zero6, *aa = Ba ? Ba + RD_D_A : a0;
    base_transform(m, i, joint_value(m, i, Q), Ba ? Ba + RD_D_R0 : NULL, Ba ? Ba + RD_D_P0 : NULL, R0, P0);
    if (k >= 0) {
        real t[6];
        joint_axis(m, i, R0, P0, S);
        twist_cross(va, S, Pd); twist_cross(aa, S, Pdd); twist_cross(va, Pd, t);
        for (int c = 0; c < 6; c++) {
            Pdd[c] += t[c];
            v[c] = va[c] + S[c] * QD[k];
            acc[c] = (aa[c] + S[c] * QDD[k]) + Pd[c] * QD[k];
        }
    } else
        for (int c = 0; c < 6; c++) { v[c] = va[c]; acc[c] = aa[c]; }
    /* I in R_0 about O_0 (link_in_base [9.12]): M, h = MS_0 and J_O as xx yy zz xy xz yz */
    static const int order[6] = {0, 3, 5, 1, 2, 4};   /* those entries of link_in_base's upper triangle, */
    static const int rows[6] = {0, 1, 2, 0, 0, 1}, cols[6] = {0, 1, 2, 1, 2, 2};   /* at these rows and columns */
    real C[10], *h = B + RD_D_H, *JO = B + RD_D_J;
    link_in_base(m, i, R0, P0, C);
    real mass = C[9];
    B[RD_D_M] = mass;
    for (int c = 0; c < 3; c++) h[c] = C[6 + c];
    for (int e = 0; e < 6; e++) JO[e] = C[order[e]];
    /* İ: ḣ = M v_O + ω × h, J̇ = ω̂ J_O − J_O ω̂ + 2 (h·v_O) 1 − v_O hᵀ − h v_Oᵀ */
    real *dh = B + RD_D_DH, *dJ = B + RD_D_DJ, X[9], w[3] = {v[3], v[4], v[5]};
    cross(w, h, dh);
    for (int c = 0; c < 3; c++) dh[c] += mass * v[c];
    for (int c = 0; c < 3; c++) {   /* column c of ω̂ J_O */
        real Jc[3] = {JO[c == 0 ? 0 : c == 1 ? 3 : 4], JO[c == 0 ? 3 : c == 1 ? 1 : 5], JO[c == 0 ? 4 : c == 1 ? 5 : 2]}, x[3];
        cross(w, Jc, x);
        X[c] = x[0]; X[3 + c] = x[1]; X[6 + c] = x[2];
    }
    real hv = 2.0 * (h[0] * v[0] + h[1] * v[1] + h[2] * v[2]);
    for (int e = 0; e < 6; e++) {
        int r = rows[e], c = cols[e];
        dJ[e] = (X[3 * r + c] + X[3 * c + r]) - (v[r] * h[c] + h[r] * v[c]);
        if (e < 3) dJ[e] += hv;
    }
    real *hC = B + RD_D_HC, *FC = B + RD_D_FC, Ia[6], t[6];
    rigid_times(&mass, h, JO, v, hC);
    rigid_times(&mass, h, JO, acc, Ia);
    wrench_cross(v, hC, t);
    for (int c = 0; c < 6; c++) FC[c] = Ia[c] + t[c];
    if (job->wrench) {   /* the caller's wrench [f; m] at O_j in R_j, into R_0 about O_0 */
        real Ef[3], Em[3], Pf[3];
        load_lanes(job->wrench + 6 * i, s0, job->count, 6 * (long)m->nf, 6, E);
        mat_vec(R0, E, Ef); mat_vec(R0, E + 3, Em); cross(P0, Ef, Pf);
        for (int c = 0; c < 3; c++) { FC[c] += Ef[c]; FC[3 + c] += Em[c] + Pf[c]; }
    }
}
/* Joint k's terms (frame i, its subtree's sums complete) into its RD_DJOINT vectors T: S, Ψ̇, Ψ̈, t1, 2 t1, t2, t3,
 * t4 (the equations above deriv_work) */
enum { RD_T_S = 0, RD_T_PD = 6, RD_T_PDD = 12, RD_T_1 = 18, RD_T_12 = 24, RD_T_2 = 30, RD_T_3 = 36, RD_T_4 = 42 };
RD_INLINE void deriv_terms(const real *B, real *T) {
    const real *S = B + RD_D_S, *Pd = B + RD_D_PD, *Pdd = B + RD_D_PDD;
    const real *mass = B + RD_D_M, *h = B + RD_D_H, *JO = B + RD_D_J, *dh = B + RD_D_DH, *dJ = B + RD_D_DJ,
               *hC = B + RD_D_HC, *FC = B + RD_D_FC;
    real mu[6], Ds[6], IPd[6], IPdd[6], DPd[6], SF[6], PdH[6], *t1 = T + RD_T_1;
    rigid_times(mass, h, JO, S, t1);
    rigid_times(mass, h, JO, Pd, IPd);
    rigid_times(mass, h, JO, Pdd, IPdd);
    rigid_times(NULL, dh, dJ, S, Ds);
    rigid_times(NULL, dh, dJ, Pd, DPd);
    wrench_cross(S, hC, mu); wrench_cross(S, FC, SF); wrench_cross(Pd, hC, PdH);
    for (int c = 0; c < 6; c++) {
        T[RD_T_S + c] = S[c]; T[RD_T_PD + c] = Pd[c]; T[RD_T_PDD + c] = Pdd[c];
        T[RD_T_12 + c] = 2.0 * t1[c];
        T[RD_T_2 + c] = (2.0 * IPd[c] + Ds[c]) + mu[c];
        T[RD_T_3 + c] = (SF[c] + IPdd[c]) + (DPd[c] + PdH[c]);
        T[RD_T_4 + c] = Ds[c] - mu[c];
    }
}
/* Entry (r, c) of ∂Γ/∂q (part 0) or ∂Γ/∂q̇ (part 1) for joints r, c on one path: r ≼ c by S_r·t3_c, S_r·t2_c,
 * else Ψ̈_c·t1_r + Ψ̇_c·t4_r, Ψ̇_c·2t1_r + S_c·t4_r (Tr, Tc: the joints' terms; c ≼ r when below is set) */
RD_INLINE real deriv_entry(int part, int below, const real *Tr, const real *Tc) {
    if (!below) return deriv_dot(Tr + RD_T_S, Tc + (part ? RD_T_2 : RD_T_3));
    return part ? deriv_dot(Tc + RD_T_PD, Tr + RD_T_12) + deriv_dot(Tc + RD_T_S, Tr + RD_T_4)
                : deriv_dot(Tc + RD_T_PDD, Tr + RD_T_1) + deriv_dot(Tc + RD_T_PD, Tr + RD_T_4);
}
/* D[i][t] = A_i[a] B_t[0] + A_i[a + 1] B_t[1] + A_i[a + 2] B_t[2] (summed left to right, as deriv_dot's halves) for
 * RD_TROWS rows' vectors A_i + a and four columns' B_t = B + RD_DJOINT t: each loaded vector serves RD_TROWS or 4
 * products, the sums stay in registers */
RD_INLINE void deriv_halves(const real *const *A, int a, const real *B, real (*D)[4]) {
    for (int k = 0; k < 3; k++) {
        real ak[RD_TROWS];
        for (int i = 0; i < RD_TROWS; i++) ak[i] = A[i][a + k];
        for (int t = 0; t < 4; t++) {
            real b = B[RD_DJOINT * t + k];
            for (int i = 0; i < RD_TROWS; i++) D[i][t] = k ? D[i][t] + ak[i] * b : ak[i] * b;
        }
    }
}
/* v[i][t] = deriv_dot(A_i + a, B_t) */
RD_INLINE void deriv_dots(const real *const *A, int a, const real *B, real (*v)[4]) {
    real lo[RD_TROWS][4], hi[RD_TROWS][4];
    deriv_halves(A, a, B, lo);
    deriv_halves(A, a + 3, B + 3, hi);
    for (int i = 0; i < RD_TROWS; i++)
        for (int t = 0; t < 4; t++) v[i][t] = lo[i][t] + hi[i][t];
}
/* Entries (r + i, c0 .. c0 + 3) into v[i] (i < RD_TROWS) of part `part` on a serial chain (joint j ≺ k for j < k;
 * columns from c0 + width on left 0; rows from n on repeat row n - 1): the deriv_entry of each, whole tiles below
 * or above the diagonal by deriv_dots */
RD_INLINE void deriv_tile(int part, int r, int c0, int width, int n, const real *T, real (*v)[4]) {
    const real *Ti[RD_TROWS], *Tc = T + RD_DJOINT * (long)c0;
    int last = r + RD_TROWS - 1 < n ? r + RD_TROWS - 1 : n - 1;
    for (int i = 0; i < RD_TROWS; i++) Ti[i] = T + RD_DJOINT * (long)(r + i < n ? r + i : n - 1);
    if (width == 4 && c0 >= last)   /* S_r·t3_c, S_r·t2_c */
        deriv_dots(Ti, RD_T_S, Tc + (part ? RD_T_2 : RD_T_3), v);
    else if (width == 4 && c0 + 4 <= r) {   /* Ψ̈_c·t1_r + Ψ̇_c·t4_r, Ψ̇_c·2t1_r + S_c·t4_r */
        real v2[RD_TROWS][4];
        deriv_dots(Ti, part ? RD_T_12 : RD_T_1, Tc + (part ? RD_T_PD : RD_T_PDD), v);
        deriv_dots(Ti, RD_T_4, Tc + (part ? RD_T_S : RD_T_PD), v2);
        for (int i = 0; i < RD_TROWS; i++)
            for (int t = 0; t < 4; t++) v[i][t] += v2[i][t];
    } else
        for (int i = 0; i < RD_TROWS; i++) {
            int ri = r + i < n ? r + i : n - 1;
            for (int t = 0; t < 4; t++)
                v[i][t] = t < width ? deriv_entry(part, c0 + t < ri, Ti[i], Tc + RD_DJOINT * t) : splat(0.0);
        }
}
/* Part `part` of a serial chain's results, RD_TROWS rows by four columns at a time; the other rows' tiles wait in
 * `next` (RD_TROWS - 1 rows of n + 3 vectors) until the first row is stored, so that each state's output is
 * written in its order */
RD_INLINE void deriv_part(int part, double *out, long s0, long lanes, int n, const real *T, real *next, real *acc) {
    long nn = (long)n * n, size = 2 * nn, stride = n + 3;
    for (int r = 0; r < n; r += RD_TROWS) {
        double *row = out + s0 * size + part * nn + (long)r * n;
        for (int c0 = 0; c0 < n; c0 += 4) {
            int width = n - c0 < 4 ? n - c0 : 4;
            real v[RD_TROWS][4];
            deriv_tile(part, r, c0, width, n, T, v);
            tile_put(row, size, c0, width, lanes, v[0], acc, 0);
            for (int i = 1; i < RD_TROWS; i++)
                for (int t = 0; t < 4; t++) next[(i - 1) * stride + c0 + t] = v[i][t];
        }
        for (int i = 1; i < RD_TROWS && r + i < n; i++)
            for (int c0 = 0; c0 < n; c0 += 4)
                tile_put(row + (long)i * n, size, c0, n - c0 < 4 ? n - c0 : 4, lanes, next + (i - 1) * stride + c0,
                         acc, 0);
    }
}
/* A serial chain: both matrices straight into the results, each tile transposed 4 x 4 into each state's rows (as
 * chain_rows does for the inertia matrix): one sequential write of the output, no (2, n, n) buffer of lanes to
 * transpose afterwards. */
RD_INLINE int deriv_rows(double *out, long s0, long count, int n, const real *T, real *next) {
    long lanes = count - s0 < RD_LANES ? count - s0 : RD_LANES;
    real acc[4] = {{0}, {0}, {0}, {0}};
    deriv_part(0, out, s0, lanes, n, T, next, acc);
    deriv_part(1, out, s0, lanes, n, T, next, acc);
    real all = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    return all[0] == 0.0 && all[1] == 0.0 && all[2] == 0.0 && all[3] == 0.0 ? 0 : RD_NONFINITE;
}
/* The entries of every joint k with each joint j ≼ k from the joints' terms T: both matrices of ∂Γ into the
 * (2, n, n) lanes DT by deriv_entry and, with A, the lower triangle of the composite-link inertia matrix
 * A_kj = S_j·t1_k = S_jᵀ I^C_k S_k (I_ak on its diagonal); the entries of joints on different branches are not
 * written */
RD_INLINE void deriv_pairs(const rd_model *m, const real *T, real *A, real *DT) {
    int n = m->n;
    long nn = (long)n * n;
    for (int i = 0; i < m->nf; i++) {
        int k = m->joint[i];
        if (k < 0) continue;
        const real *Tk = T + RD_DJOINT * (long)k;
        for (int f = i; f >= 0; f = m->parent[f]) {   /* every joint j ≼ k */
            int j = m->joint[f];
            if (j < 0) continue;
            const real *Tj = T + RD_DJOINT * (long)j;
            if (A) A[(long)k * n + j] = deriv_dot(Tj + RD_T_S, Tk + RD_T_1);
            DT[(long)j * n + k] = deriv_entry(0, 0, Tj, Tk);
            DT[nn + (long)j * n + k] = deriv_entry(1, 0, Tj, Tk);
            if (j != k) {
                DT[(long)k * n + j] = deriv_entry(0, 1, Tk, Tj);
                DT[nn + (long)k * n + j] = deriv_entry(1, 1, Tk, Tj);
            }
        }
        if (A) A[(long)k * n + k] += m->Ia[i];
    }
}
/* A branched robot: the entries of every joint k with each joint j ≼ k into the (2, n, n) lanes DT, the others
 * zero, then stored */
RD_INLINE int deriv_tree(const rd_model *m, long s0, long count, const real *T, real *DT, double *out) {
    long nn = (long)m->n * m->n;
    for (long e = 0; e < 2 * nn; e++) DT[e] = splat(0.0);
    deriv_pairs(m, T, NULL, DT);
    store_lanes(out, s0, count, 2 * nn, 2 * nn, DT, 0);
    return all_finite(DT, 2 * nn) ? 0 : RD_NONFINITE;
}

/* Both passes on four states (their frames' RD_DFRAME vectors at W, then each joint's RD_DJOINT terms); with `own`
 * each link's own inertia kept at RD_D_OWN before the subtree's sums */
RD_INLINE void deriv_passes(const rd_job *job, long s0, int own, real *W) {
    const rd_model *m = job->m;
    int nf = m->nf, n = m->n;
    real *T = W + RD_DFRAME * (long)nf, *Q = T + RD_DJOINT * (long)n, *QD = Q + n, *QDD = QD + n, *G = QDD + n,
         *E = G + 3;
    load_lanes(job->q, s0, job->count, n, n, Q);
    load_lanes(job->qd, s0, job->count, n, n, QD);
    load_lanes(job->x, s0, job->count, n, n, QDD);
    load_lanes(job->g, s0, job->count, job->g_stride, 3, G);
    for (int i = 0; i < nf; i++) {
        int a = m->parent[i];
        real *B = W + RD_DFRAME * (long)i;
        deriv_forward(job, s0, i, Q, QD, QDD, G, E, B, a >= 0 ? W + RD_DFRAME * (long)a : NULL);
        if (own)
            for (int c = 0; c < 10; c++) B[RD_D_OWN + c] = B[RD_D_M + c];
    }
    for (int i = nf - 1; i >= 0; i--) {
        int a = m->parent[i];
        const real *B = W + RD_DFRAME * (long)i;
        if (m->joint[i] >= 0) deriv_terms(B, T + RD_DJOINT * (long)m->joint[i]);
        if (a < 0) continue;
        real *Ba = W + RD_DFRAME * (long)a;
        for (int c = RD_D_M; c < RD_D_OWN; c++) Ba[c] += B[c];   /* the subtree's sums, all in R_0 */
    }
}
/* Four states in the lanes (a single state fills them with copies: the same operations, the same bits). */
RD_CLONES static int deriv_block(const rd_job *job, long s0, real *W) {
    const rd_model *m = job->m;
    int n = m->n;
    long nn = (long)n * n;
    real *T = W + RD_DFRAME * (long)m->nf, *DT = T + RD_DJOINT * (long)n + 3 * n + 9;
    deriv_passes(job, s0, 0, W);
    int code = m->chain ? deriv_rows(job->out, s0, job->count, n, T, DT) : deriv_tree(m, s0, job->count, T, DT, job->out);
    if (job->friction)   /* ∂Γ_f/∂q̇ of [9.26]-[9.28] without the Stribeck term, away from q̇ = 0: F_v */
        for (long s = s0; s < s0 + RD_LANES && s < job->count; s++)
            for (int k = 0; k < n; k++) job->out[s * 2 * nn + nn + (long)k * n + k] += m->Fv[k];
    return code;
}

/* Derivatives of the direct dynamics q̈ = A⁻¹(Γ − Γ_f − H) [9.96]: differentiating A(q) q̈ + H(q, q̇) = Γ − Γ_f
 * at the computed q̈ gives ∂q̈/∂q = −A⁻¹ ∂Γ/∂q|_q̈, ∂q̈/∂q̇ = −A⁻¹ ∂Γ/∂q̇|_q̈ (with friction, its slope F_v
 * included) and ∂q̈/∂Γ = A⁻¹.  One block runs the articulated-body recursion (q̈, friction subtracted
 * when asked), then deriv_block's two passes at that q̈, whose terms give ∂Γ and, by A_kj = S_j·t1_k, the
 * composite-link inertia matrix; below RD_FDD_ABA joints a Cholesky factorisation A = L Lᵀ per lane and 3n
 * triangular solves, from RD_FDD_ABA on 3n solves by the articulated-body recursion.  Out per state (3, n, n). */
/* Columns r0 .. r0 + RD_RHS - 1 of -A⁻¹ ∂Γ/∂q, -A⁻¹ ∂Γ/∂q̇, A⁻¹ (column r % n of part r / n; those from 3n on
 * 0) by L y = b, Lᵀ x = y, L in the lower triangle of A with 1/L_jj on its diagonal.  The columns go side by side,
 * each through the operations of its own solve in their order: one chain of dependent additions per column would
 * wait on the adder's latency at every term (n = 100: 4x slower); RD_RHS of them always, so that they stay in
 * registers.  The columns of A⁻¹ start at row r0 - 2n of L y = b (b and y are 0 above it).  y: row i of the
 * columns at y + RD_RHS i. */
#define RD_RHS 8
RD_INLINE void fdd_solve(const real *A, const real *DT, int n, int r0, real *y) {
    long nn = (long)n * n;
    int k0 = r0 >= 2 * n ? r0 - 2 * n : 0;
    for (int i = 0; i < k0; i++)
        for (int c = 0; c < RD_RHS; c++) y[RD_RHS * i + c] = splat(0.0);
    for (int i = k0; i < n; i++) {   /* L y = b */
        real t[RD_RHS];
        for (int c = 0; c < RD_RHS; c++) {
            int r = r0 + c, part = r / n, col = r % n;
            t[c] = part < 2 ? -DT[part * nn + (long)i * n + col] : splat(part == 2 && i == col ? 1.0 : 0.0);
        }
        for (int k = k0; k < i; k++) {
            real aik = A[i * n + k];
            for (int c = 0; c < RD_RHS; c++) t[c] -= aik * y[RD_RHS * k + c];
        }
        for (int c = 0; c < RD_RHS; c++) y[RD_RHS * i + c] = t[c] * A[i * n + i];
    }
    for (int i = n - 1; i >= 0; i--) {   /* Lᵀ x = y */
        real t[RD_RHS];
        for (int c = 0; c < RD_RHS; c++) t[c] = y[RD_RHS * i + c];
        for (int k = i + 1; k < n; k++) {
            real aki = A[k * n + i];
            for (int c = 0; c < RD_RHS; c++) t[c] -= aki * y[RD_RHS * k + c];
        }
        for (int c = 0; c < RD_RHS; c++) y[RD_RHS * i + c] = t[c] * A[i * n + i];
    }
}
/* From RD_FDD_ABA joints on, A⁻¹ is applied by the articulated-body recursion (fdd_articulated, O(n) per column,
 * O(n²) in all) instead of the Cholesky factor's triangular solves (O(n²) per column, O(n³) in all).  Since the
 * recursion's results are stored whole rows at a time, the two meet between 22 and 25 joints (Intel, one core:
 * n = 22 7.1 against 7.8 µs a state, n = 25 10.1–10.5 against 9.9–10.0, n = 28 12.6–12.8 against 10.2–11.8) */
#define RD_FDD_ABA 24
#define RD_ARHS 4   /* columns side by side in fdd_articulated */
static long fdd_work(const rd_model *m) {
    long n = m->n, nn = n * n, nf = m->nf, most = aba_work(m), d = deriv_work(m);
    most = d > most ? d : most;
    /* the rows of q̈ (4 n doubles: n vectors), then I^A per frame, U and 1/D per joint, X, p / a, flags
     * and a part's n x n results (fdd_block_articulated) or A, ∂Γ, out as lanes, y of fdd_solve */
    if (n >= RD_FDD_ABA) return most + n + 36 * nf + 7 * n + RD_ARHS * n + 6 * RD_ARHS * nf + nf + 1 + nn;
    return most + n + nn + 2 * nn + 3 * nn + RD_RHS * n + 1;
}
/* The lower triangle of A and both matrices of ∂Γ as lanes from the joints' terms T (deriv_pairs; F_v on the
 * diagonal of ∂Γ/∂q̇ with friction); the entries of joints on different branches are 0 */
RD_INLINE void fdd_matrices(const rd_model *m, const real *T, int friction, real *A, real *DT) {
    int n = m->n;
    long nn = (long)n * n;
    if (!m->chain) {
        for (long e = 0; e < nn; e++) A[e] = splat(0.0);
        for (long e = 0; e < 2 * nn; e++) DT[e] = splat(0.0);
    }
    deriv_pairs(m, T, A, DT);
    if (friction)
        for (int k = 0; k < n; k++) DT[nn + (long)k * n + k] += m->Fv[k];
}
/* fdd_articulated's two passes on a branched robot: p and a of every frame in P (6 RD_ARHS vectors per frame) */
RD_INLINE void fdd_branches(const rd_model *m, const real *T, const real *UD, real *X, real *P) {
    int nf = m->nf;
    long w6 = 6 * RD_ARHS;
    for (long e = 0; e < w6 * nf; e++) P[e] = splat(0.0);
    for (int i = nf - 1; i >= 0; i--) {
        int a = m->parent[i], k = m->joint[i];
        real *pi = P + w6 * i, *pa = a >= 0 ? P + w6 * a : NULL;
        if (k >= 0) {
            const real *S = T + RD_DJOINT * (long)k + RD_T_S, *U = UD + 7 * (long)k;
            real *x = X + RD_ARHS * (long)k;
            for (int c = 0; c < RD_ARHS; c++) {
                real u = x[c] - deriv_dot(S, pi + 6 * c);
                x[c] = u;
                if (!pa) continue;
                real s = u * U[6];
                for (int e = 0; e < 6; e++) pa[6 * c + e] += pi[6 * c + e] + U[e] * s;
            }
        } else if (pa)
            for (long e = 0; e < w6; e++) pa[e] += pi[e];
    }
    for (int i = 0; i < nf; i++) {   /* P now holds the accelerations a */
        int a = m->parent[i], k = m->joint[i];
        real *ai = P + w6 * i;
        const real *aa = a >= 0 ? P + w6 * a : NULL;
        if (k >= 0) {
            const real *S = T + RD_DJOINT * (long)k + RD_T_S, *U = UD + 7 * (long)k;
            real *x = X + RD_ARHS * (long)k;
            for (int c = 0; c < RD_ARHS; c++) {
                real y = (aa ? x[c] - deriv_dot(U, aa + 6 * c) : x[c]) * U[6];
                x[c] = y;
                for (int e = 0; e < 6; e++) ai[6 * c + e] = aa ? aa[6 * c + e] + S[e] * y : S[e] * y;
            }
        } else
            for (long e = 0; e < w6; e++) ai[e] = aa ? aa[e] : splat(0.0);
    }
}
/* The right-hand sides b of columns col0 .. col0 + width - 1 of part `part` (-∂Γ/∂q, -∂Γ/∂q̇, 1) into X (row j
 * of the RD_ARHS columns at X + RD_ARHS j; the columns from width on 0).  The entries of ∂Γ come from the joints'
 * terms T (deriv_tile on a chain, deriv_entry on a branched robot), the friction slope F_v on the diagonal of
 * ∂Γ/∂q̇.  in: nf flags. */
RD_INLINE void fdd_rhs(const rd_job *job, const real *T, int part, int col0, int width, int *in, real *X) {
    const rd_model *m = job->m;
    int n = m->n, nf = m->nf;
    for (long e = 0; e < RD_ARHS * (long)n; e++) X[e] = splat(0.0);
    if (part == 2) {
        for (int c = 0; c < width; c++) X[RD_ARHS * (long)(col0 + c) + c] = splat(1.0);
        return;
    }
    if (m->chain) {
        for (int j = 0; j < n; j += RD_TROWS)
            for (int c0 = 0; c0 < width; c0 += 4) {
                int w = width - c0 < 4 ? width - c0 : 4;
                real v[RD_TROWS][4];
                deriv_tile(part, j, col0 + c0, w, n, T, v);
                for (int i = 0; i < RD_TROWS && j + i < n; i++)
                    for (int t = 0; t < w; t++) {
                        if (part == 1 && job->friction && col0 + c0 + t == j + i) v[i][t] += m->Fv[j + i];
                        X[RD_ARHS * (long)(j + i) + c0 + t] = -v[i][t];
                    }
            }
        return;
    }
    for (int c = 0; c < width; c++) {
        int col = col0 + c, kf = -1;
        for (int i = 0; i < nf; i++) {   /* in[i]: frame i at or below joint col's frame */
            if (m->joint[i] == col) kf = i;
            in[i] = i == kf || (i > kf && kf >= 0 && m->parent[i] >= 0 && in[m->parent[i]]);
        }
        const real *Tc = T + RD_DJOINT * (long)col;
        for (int i = 0; i < nf; i++) {
            int j = m->joint[i];
            if (j < 0) continue;
            if (i > kf && in[i]) X[RD_ARHS * (long)j + c] = -deriv_entry(part, 1, T + RD_DJOINT * (long)j, Tc);
        }
        for (int f = kf; f >= 0; f = m->parent[f]) {   /* the joints j ≼ col */
            int j = m->joint[f];
            if (j < 0) continue;
            real e = deriv_entry(part, 0, T + RD_DJOINT * (long)j, Tc);
            if (part == 1 && j == col && job->friction) e += m->Fv[col];
            X[RD_ARHS * (long)j + c] = -e;
        }
    }
}
/* Columns col0 .. col0 + RD_ARHS - 1 of part `part` of -A⁻¹ ∂Γ/∂q, -A⁻¹ ∂Γ/∂q̇, A⁻¹ from their right-hand sides
 * in X (fdd_rhs), in place, by the articulated-body recursion with neither velocity nor gravity (Featherstone,
 * "Rigid Body Dynamics Algorithms", §7.3), in R_0 about O_0 (no frame changes): from the leaves
 * u_j = b_j − S_j·p_j and p_a += p_j + U_j u_j / D_j, then from the base x_j = (u_j − U_j·a_a) / D_j,
 * a_j = a_a + S_j x_j.  The RD_ARHS columns go side by side (independent chains of operations), each through the
 * operations of its own recursion.  P: the p / a of every frame of a branched robot, 6 RD_ARHS nf vectors. */
RD_INLINE void fdd_articulated(const rd_model *m, const real *T, const real *UD, int part, int col0, int width,
                               real *X, real *P) {
    if (!m->chain) {
        fdd_branches(m, T, UD, X, P);
        return;
    }
    /* one child each: p and a run down and up the chain (fixed frames pass them on); the columns of A⁻¹ start
     * at their last joint (b and p are 0 below it) */
    int nf = m->nf, last = nf - 1;
    if (part == 2)
        while (last > 0 && m->joint[last] != col0 + width - 1) last--;
    real p[6 * RD_ARHS];
    for (int e = 0; e < 6 * RD_ARHS; e++) p[e] = splat(0.0);
    for (int i = last; i >= 0; i--) {
        int k = m->joint[i];
        if (k < 0) continue;
        const real *S = T + RD_DJOINT * (long)k + RD_T_S, *U = UD + 7 * (long)k;
        real *x = X + RD_ARHS * (long)k;
        for (int c = 0; c < RD_ARHS; c++) {
            real u = x[c] - deriv_dot(S, p + 6 * c), s = u * U[6];
            x[c] = u;
            for (int e = 0; e < 6; e++) p[6 * c + e] += U[e] * s;
        }
    }
    for (int e = 0; e < 6 * RD_ARHS; e++) p[e] = splat(0.0);
    for (int i = 0; i < nf; i++) {
        int k = m->joint[i];
        if (k < 0) continue;
        const real *S = T + RD_DJOINT * (long)k + RD_T_S, *U = UD + 7 * (long)k;
        real *x = X + RD_ARHS * (long)k;
        for (int c = 0; c < RD_ARHS; c++) {
            real *a = p + 6 * c, y = (x[c] - deriv_dot(U, a)) * U[6];
            x[c] = y;
            for (int e = 0; e < 6; e++) a[e] += S[e] * y;
        }
    }
}
/* Columns col0 .. col0 + width - 1 of a part (X: row j at X + RD_ARHS j) into that part's lanes B (row j at
 * B + n j), whence store_lanes writes each state's whole rows; acc gathers x * 0 (the finiteness check) */
RD_INLINE void fdd_keep(int n, int col0, int width, const real *X, real *B, real *acc) {
    for (int j = 0; j < n; j++)
        for (int c = 0; c < width; c++) {
            real x = X[RD_ARHS * (long)j + c];
            acc[c] += x * 0.0;
            B[(long)j * n + col0 + c] = x;
        }
}
/* Both fdd_blocks' first steps: q̈ of the block's states by aba_block (a job of their own, q̈ into rows of doubles
 * after the larger of both passes' buffers, n vectors), then deriv_passes at that q̈ (own: as there); *rest: the
 * buffer after those rows.  aba_block's code (0: q̈ computed). */
RD_INLINE int fdd_passes(const rd_job *job, long s0, int own, real *W, real **rest) {
    const rd_model *m = job->m;
    int n = m->n;
    long most = aba_work(m), d = deriv_work(m);
    most = d > most ? d : most;
    double *QDDr = (double *)(W + most);
    *rest = W + most + n;
    rd_job sub = *job;
    sub.count = job->count - s0 < RD_LANES ? job->count - s0 : RD_LANES;
    sub.q = job->q + s0 * n; sub.qd = job->qd + s0 * n; sub.x = job->x + s0 * n;
    sub.g = job->g + s0 * job->g_stride;
    sub.wrench = job->wrench ? job->wrench + s0 * 6 * (long)m->nf : NULL;
    sub.out = QDDr;
    int code = aba_block(&sub, 0, W);
    if (code) return code;
    sub.x = QDDr;
    deriv_passes(&sub, 0, own, W);
    return 0;
}
/* fdd_block from RD_FDD_ABA joints: q̈ by aba_block, the terms of ∂Γ at q̈ (deriv_passes), the articulated
 * inertias I^A_j = I_j + Σ_children (I^A_c − U_c U_cᵀ / D_c), U_j = I^A_j S_j, D_j = S_jᵀ U_j + I_aj (in R_0,
 * 6 x 6 row-major), then fdd_articulated on the 3n columns */
RD_INLINE int fdd_block_articulated(const rd_job *job, long s0, real *W) {
    const rd_model *m = job->m;
    int n = m->n, nf = m->nf;
    real *IA;
    int code = fdd_passes(job, s0, 1, W, &IA);
    if (code) return code;
    real *UD = IA + 36 * (long)nf, *X = UD + 7 * (long)n, *P = X + RD_ARHS * (long)n;
    int *in = (int *)(P + 6 * RD_ARHS * (long)nf);
    const real *T = W + RD_DFRAME * (long)nf;
    for (int i = 0; i < nf; i++) {   /* each link's own inertia [[M 1, -ĥ], [ĥ, J]] */
        const real *own = W + RD_DFRAME * (long)i + RD_D_OWN, *h = own + 1, *J = own + 4;
        real *I = IA + 36 * (long)i, z = splat(0.0);
        real rows[36] = {own[0], z, z, z, h[2], -h[1],
                         z, own[0], z, -h[2], z, h[0],
                         z, z, own[0], h[1], -h[0], z,
                         z, -h[2], h[1], J[0], J[3], J[4],
                         h[2], z, -h[0], J[3], J[1], J[5],
                         -h[1], h[0], z, J[4], J[5], J[2]};
        for (int e = 0; e < 36; e++) I[e] = rows[e];
    }
    for (int i = nf - 1; i >= 0; i--) {
        int a = m->parent[i], k = m->joint[i];
        real *I = IA + 36 * (long)i, *Ia = a >= 0 ? IA + 36 * (long)a : NULL;
        if (k < 0) {
            if (Ia) for (int e = 0; e < 36; e++) Ia[e] += I[e];
            continue;
        }
        const real *S = T + RD_DJOINT * (long)k + RD_T_S;
        real *U = UD + 7 * (long)k;
        for (int r = 0; r < 6; r++) U[r] = deriv_dot(I + 6 * r, S);
        U[6] = 1.0 / (deriv_dot(S, U) + m->Ia[i]);
        if (Ia)
            for (int r = 0; r < 6; r++) {
                real s = U[r] * U[6];
                for (int c = 0; c < 6; c++) Ia[6 * r + c] += I[6 * r + c] - s * U[c];
            }
    }
    /* a part's columns gathered in lanes, then stored row by row: strips of four columns stored as they came
     * wrote half lines of every row, each line fetched from memory before its first half was written (n = 100:
     * 143 -> 91 us per state) */
    real acc[RD_ARHS] = {{0}, {0}, {0}, {0}}, *B = P + 6 * RD_ARHS * (long)nf + nf + 1;
    long nn = (long)n * n;
    int stream = streams(job, 3 * nn);
    for (int part = 0; part < 3; part++) {
        for (int col0 = 0; col0 < n; col0 += RD_ARHS) {
            int width = n - col0 < RD_ARHS ? n - col0 : RD_ARHS;
            fdd_rhs(job, T, part, col0, width, in, X);
            fdd_articulated(m, T, UD, part, col0, width, X, P);
            fdd_keep(n, col0, width, X, B, acc);
        }
        store_lanes(job->out + part * nn, s0, job->count, 3 * nn, nn, B, stream);
    }
    return all_finite(acc, RD_ARHS) ? 0 : RD_NONFINITE;
}
RD_CLONES static int fdd_block(const rd_job *job, long s0, real *W) {
    if (job->m->n >= RD_FDD_ABA) return fdd_block_articulated(job, s0, W);
    const rd_model *m = job->m;
    int n = m->n;
    long nn = (long)n * n, count = job->count - s0 < RD_LANES ? job->count - s0 : RD_LANES;
    real *A;
    int code = fdd_passes(job, s0, 0, W, &A);
    if (code) return code;
    real *DT = A + nn, *OUT = DT + 2 * nn, *y = OUT + 3 * nn;
    fdd_matrices(m, W + RD_DFRAME * (long)m->nf, job->friction, A, DT);
    for (int j = 0; j < n; j++) {   /* A = L Lᵀ, L in the lower triangle of A; its diagonal kept as 1/L_jj */
        real s = A[j * n + j];
        for (int k = 0; k < j; k++) s -= A[j * n + k] * A[j * n + k];
        real inv = 1.0 / vsqrt(s);
        A[j * n + j] = inv;
        int i = j + 1;
        for (; i + RD_RHS <= n; i += RD_RHS) {   /* RD_RHS rows side by side: independent chains of additions */
            real t[RD_RHS];
            for (int c = 0; c < RD_RHS; c++) t[c] = A[(i + c) * n + j];
            for (int k = 0; k < j; k++) {
                real ajk = A[j * n + k];
                for (int c = 0; c < RD_RHS; c++) t[c] -= A[(i + c) * n + k] * ajk;
            }
            for (int c = 0; c < RD_RHS; c++) A[(i + c) * n + j] = t[c] * inv;
        }
        for (; i < n; i++) {
            real t = A[i * n + j];
            for (int k = 0; k < j; k++) t -= A[i * n + k] * A[j * n + k];
            A[i * n + j] = t * inv;
        }
    }
    if (count == 1) {   /* one state: L is the same in every lane, four right-hand sides side by side instead */
        double *out = job->out + s0 * 3 * nn;
        for (int r0 = 0; r0 < 3 * n; r0 += RD_LANES) {
            for (int i = 0; i < n; i++) {   /* L y = b, the operations of the loop below lane by lane */
                real t;
                for (int l = 0; l < RD_LANES; l++) {
                    int r = r0 + l < 3 * n ? r0 + l : 3 * n - 1, part = r / n, col = r % n;
                    t[l] = part < 2 ? -DT[part * nn + (long)i * n + col][0] : (i == col ? 1.0 : 0.0);
                }
                for (int k = 0; k < i; k++) t -= A[i * n + k] * y[k];
                y[i] = t * A[i * n + i];
            }
            for (int i = n - 1; i >= 0; i--) {
                real t = y[i];
                for (int k = i + 1; k < n; k++) t -= A[k * n + i] * y[k];
                y[i] = t * A[i * n + i];
            }
            for (int l = 0; l < RD_LANES && r0 + l < 3 * n; l++) {
                int r = r0 + l, part = r / n, col = r % n;
                for (int i = 0; i < n; i++) out[part * nn + (long)i * n + col] = y[i][l];
            }
        }
        int finite = 1;
        for (long k = 0; k < 3 * nn; k++) finite &= out[k] - out[k] == 0.0;
        return finite ? 0 : RD_NONFINITE;
    }
    for (int r0 = 0; r0 < 3 * n; r0 += RD_RHS) {
        fdd_solve(A, DT, n, r0, y);
        for (int c = 0; c < RD_RHS && r0 + c < 3 * n; c++) {
            int r = r0 + c, part = r / n, col = r % n;
            for (int i = 0; i < n; i++) OUT[part * nn + (long)i * n + col] = y[RD_RHS * i + c];
        }
    }
    store_lanes(job->out, s0, job->count, 3 * nn, 3 * nn, OUT, streams(job, 3 * nn));
    return all_finite(OUT, 3 * nn) ? 0 : RD_NONFINITE;
}

/* ---- kinematics: frame poses, the frame Jacobian, J̇q̇, link velocities and accelerations ----------------
 * The statements of robodyn.kinematics (base_poses, jacobian, jacobian_dot_qd, link_velocities,
 * link_accelerations) on lanes; tests/test_native_kinematics.py compares them with those NumPy functions on
 * random serial and branched robots with prismatic and fixed frames (1e-12).  A kinematics job carries the
 * frame and the point of a Jacobian after the rd_job every block receives (rd_kin_job starts with it). */
typedef struct {
    rd_job job;
    int frame;            /* 0-based frame of the Jacobian / J̇q̇ */
    const double *point;  /* a point fixed to that frame, coordinates in it: (3,) for every state or (count, 3);
                             NULL for its origin */
    long point_stride;    /* 0 (one point) or 3 */
} rd_kin_job;

/* ^0R_i = ^0R_a ^aR_i and ^0P_i = ^0P_a + ^0R_a ^aP_i of frame i (a its antecedent; R_0, P_0 at the base),
 * from its a(i)R_i, a(i)P_i (R, p). */
RD_INLINE void base_pose(const rd_model *m, int i, const real *R, const real *p, real *R0, real *P0) {
    int a = m->parent[i];
    real *Ri = R0 + 9 * i, *Pi = P0 + 3 * i;
    if (a < 0) {
        memcpy(Ri, R, 9 * sizeof(real));
        memcpy(Pi, p, 3 * sizeof(real));
        return;
    }
    real t[3];
    mat_mul(R0 + 9 * a, R, Ri);
    mat_vec(R0 + 9 * a, p, t);
    for (int c = 0; c < 3; c++) Pi[c] = P0[3 * a + c] + t[c];
}
/* ^0R_i, ^0P_i of frames 0..last */
RD_INLINE void base_poses_to(const rd_model *m, int last, const real *Q, real *R0, real *P0) {
    for (int i = 0; i <= last; i++) {
        int a = m->parent[i];
        base_transform(m, i, joint_value(m, i, Q), a < 0 ? NULL : R0 + 9 * a, a < 0 ? NULL : P0 + 3 * a,
                       R0 + 9 * i, P0 + 3 * i);
    }
}
/* The point of the job in R_0 (pt) and its coordinates s in R_frame, rotated: R0_j s (Rs); O_frame without one. */
RD_INLINE void job_point(const rd_kin_job *kj, long s0, const real *R0j, const real *P0j, real *Rs, real *pt) {
    real s[3] = {{0}, {0}, {0}};
    if (kj->point) load_lanes(kj->point, kj->point_stride ? s0 : 0, kj->point_stride ? kj->job.count : 1,
                              kj->point_stride, 3, s);
    mat_vec(R0j, s, Rs);
    for (int c = 0; c < 3; c++) pt[c] = kj->point ? P0j[c] + Rs[c] : P0j[c];
}

/* Frame poses ^0T_j of every frame, out per state (nf, 4, 4), written state by state from ^0R_j, ^0P_j (the
 * constant last rows included) rather than through a (nf, 4, 4) buffer of lanes: a quarter of the stores. */
static long poses_work(const rd_model *m) { return 12 * (long)m->nf + m->n; }
RD_CLONES static int poses_block(const rd_job *job, long s0, real *W) {
    const rd_model *m = job->m;
    int nf = m->nf, n = m->n;
    real *R0 = W, *P0 = R0 + 9 * nf, *Q = P0 + 3 * nf;
    load_lanes(job->q, s0, job->count, n, n, Q);
    base_poses_to(m, nf - 1, Q, R0, P0);
    for (int l = 0; l < RD_LANES && s0 + l < job->count; l++) {
        double *T = job->out + (s0 + l) * 16 * (long)nf;
        for (int i = 0; i < nf; i++, T += 16) {
            const real *R = R0 + 9 * i, *P = P0 + 3 * i;
            T[0] = R[0][l]; T[1] = R[1][l]; T[2] = R[2][l]; T[3] = P[0][l];
            T[4] = R[3][l]; T[5] = R[4][l]; T[6] = R[5][l]; T[7] = P[1][l];
            T[8] = R[6][l]; T[9] = R[7][l]; T[10] = R[8][l]; T[11] = P[2][l];
            T[12] = T[13] = T[14] = 0.0;
            T[15] = 1.0;
        }
    }
    return all_finite(R0, 12 * (long)nf) ? 0 : RD_NONFINITE;
}

/* Geometric Jacobian of a frame (or a point of it) in R_0, out per state (6, n) row-major: column k of joint
 * frame f on the path to the base [z_f × (p − P_f); z_f] (revolute) or [z_f; 0] (prismatic), else 0. */
static long jacobian_work(const rd_model *m) { return 12 * (long)m->nf + 7 * (long)m->n; }
RD_CLONES static int jacobian_block(const rd_job *job, long s0, real *W) {
    const rd_kin_job *kj = (const rd_kin_job *)job;
    const rd_model *m = job->m;
    int nf = m->nf, n = m->n, j = kj->frame;
    real *R0 = W, *P0 = R0 + 9 * nf, *Jac = P0 + 3 * nf, *Q = Jac + 6 * n;
    load_lanes(job->q, s0, job->count, n, n, Q);
    base_poses_to(m, j, Q, R0, P0);
    real Rs[3], pt[3];
    job_point(kj, s0, R0 + 9 * j, P0 + 3 * j, Rs, pt);
    for (long e = 0; e < 6 * (long)n; e++) Jac[e] = splat(0.0);
    for (int f = j; f >= 0; f = m->parent[f]) {
        int k = m->joint[f];
        if (k < 0) continue;
        real z[3] = {R0[9 * f + 2], R0[9 * f + 5], R0[9 * f + 8]}, d[3], v[3];
        if (m->sigma[f] == 0) {
            for (int c = 0; c < 3; c++) d[c] = pt[c] - P0[3 * f + c];
            cross(z, d, v);
            for (int c = 0; c < 3; c++) { Jac[c * n + k] = v[c]; Jac[(3 + c) * n + k] = z[c]; }
        } else {
            for (int c = 0; c < 3; c++) Jac[c * n + k] = z[c];
        }
    }
    store_lanes(job->out, s0, job->count, 6 * (long)n, 6 * (long)n, Jac, streams(job, 6 * (long)n));
    return all_finite(Jac, 6 * (long)n) ? 0 : RD_NONFINITE;
}

/* J̇ q̇ of a frame (or a point s of it): the forward recursion [9.84]-[9.87] with q̈ = 0 and g = 0, then
 * a = V̇_j + ω̇_j × s + ω_j × (ω_j × s) and [R0_j a; R0_j ω̇_j], out per state (6,). */
static long jdq_work(const rd_model *m) { return 36 * (long)m->nf + 3 * (long)m->n + 3 + 6; }
RD_CLONES static int jdq_block(const rd_job *job, long s0, real *W) {
    const rd_kin_job *kj = (const rd_kin_job *)job;
    const rd_model *m = job->m;
    int nf = m->nf, n = m->n, j = kj->frame;
    real *R = W, *p = R + 9 * nf, *w = p + 3 * nf, *wd = w + 3 * nf, *Vd = wd + 3 * nf, *R0 = Vd + 3 * nf,
         *P0 = R0 + 9 * nf, *Q = P0 + 3 * nf, *QD = Q + n, *QDD = QD + n, *G = QDD + n, *OUT = G + 3;
    load_lanes(job->q, s0, job->count, n, n, Q);
    load_lanes(job->qd, s0, job->count, n, n, QD);
    for (int k = 0; k < n; k++) QDD[k] = splat(0.0);
    for (int c = 0; c < 3; c++) G[c] = splat(0.0);
    forward_recursion(m, Q, QD, QDD, G, R, p, w, wd, Vd);
    for (int i = 0; i <= j; i++) base_pose(m, i, R + 9 * i, p + 3 * i, R0, P0);
    real acc[3], t[3], u[3];
    const real *wj = w + 3 * j, *wdj = wd + 3 * j;
    for (int c = 0; c < 3; c++) acc[c] = Vd[3 * j + c];
    if (kj->point) {
        real s[3];
        load_lanes(kj->point, kj->point_stride ? s0 : 0, kj->point_stride ? job->count : 1, kj->point_stride, 3, s);
        cross(wdj, s, t); cross(wj, s, u); cross(wj, u, u);
        for (int c = 0; c < 3; c++) acc[c] += t[c] + u[c];
    }
    mat_vec(R0 + 9 * j, acc, OUT);
    mat_vec(R0 + 9 * j, wdj, OUT + 3);
    store_lanes(job->out, s0, job->count, 6, 6, OUT, streams(job, 6));
    return all_finite(OUT, 6) ? 0 : RD_NONFINITE;
}

/* Link velocities and accelerations in R_j: ω_j, V_j ([9.17]-[9.18]: V_j = jA_a (V_a + ω_a × aP_j) + σ_j q̇_j
 * a_j), ω̇_j, V̇_j ([9.84]-[9.87], g = 0), out per state (4, nf, 3). */
static long links_work(const rd_model *m) { return 27 * (long)m->nf + 3 * (long)m->n + 3; }
RD_CLONES static int links_block(const rd_job *job, long s0, real *W) {
    const rd_model *m = job->m;
    int nf = m->nf, n = m->n;
    real *R = W, *p = R + 9 * nf, *OUT = p + 3 * nf, *Q = OUT + 12 * nf, *QD = Q + n, *QDD = QD + n, *G = QDD + n;
    real *w = OUT, *V = w + 3 * nf, *wd = V + 3 * nf, *Vd = wd + 3 * nf;
    load_lanes(job->q, s0, job->count, n, n, Q);
    load_lanes(job->qd, s0, job->count, n, n, QD);
    load_lanes(job->x, s0, job->count, n, n, QDD);
    for (int c = 0; c < 3; c++) G[c] = splat(0.0);
    forward_recursion(m, Q, QD, QDD, G, R, p, w, wd, Vd);
    for (int i = 0; i < nf; i++) {
        int a = m->parent[i];
        real t[3] = {{0}, {0}, {0}};
        if (a >= 0) {
            cross(w + 3 * a, p + 3 * i, t);
            for (int c = 0; c < 3; c++) t[c] += V[3 * a + c];
        }
        frame_t_vec(frame_z(m, i), R + 9 * i, t, V + 3 * i);
        if (m->sigma[i] == 1) V[3 * i + 2] += QD[m->joint[i]];
    }
    store_lanes(job->out, s0, job->count, 12 * (long)nf, 12 * (long)nf, OUT, streams(job, 12 * (long)nf));
    return all_finite(OUT, 12 * (long)nf) ? 0 : RD_NONFINITE;
}

/* J̇ of the frame Jacobian (or of a point s of the frame), out per state (6, n) row-major: with ω_f and ṗ_f the
 * angular velocity and the velocity of O_f in R_0 (ω_f = ω_a + σ̄_f q̇_f z_f, ṗ_f = ṗ_a + ω_a × (p_f − p_a) +
 * σ_f q̇_f z_f, [9.17]-[9.18] in base axes) and ż_f = ω_f × z_f, column k of joint frame f on the path is
 * [ż_f × (p − p_f) + z_f × (ṗ − ṗ_f); ż_f] (revolute) or [ż_f; 0] (prismatic), ṗ = ṗ_j + ω_j × R0_j s. */
static long jdot_work(const rd_model *m) { return 18 * (long)m->nf + 8 * (long)m->n; }
RD_CLONES static int jdot_block(const rd_job *job, long s0, real *W) {
    const rd_kin_job *kj = (const rd_kin_job *)job;
    const rd_model *m = job->m;
    int nf = m->nf, n = m->n, j = kj->frame;
    real *R0 = W, *P0 = R0 + 9 * nf, *w = P0 + 3 * nf, *v = w + 3 * nf, *Jd = v + 3 * nf, *Q = Jd + 6 * n,
         *QD = Q + n;
    load_lanes(job->q, s0, job->count, n, n, Q);
    load_lanes(job->qd, s0, job->count, n, n, QD);
    for (int i = 0; i <= j; i++) {
        real d[3], t[3];
        int a = m->parent[i], k = m->joint[i];
        base_transform(m, i, joint_value(m, i, Q), a < 0 ? NULL : R0 + 9 * a, a < 0 ? NULL : P0 + 3 * a, R0 + 9 * i,
                       P0 + 3 * i);
        real *wi = w + 3 * i, *vi = v + 3 * i, z[3] = {R0[9 * i + 2], R0[9 * i + 5], R0[9 * i + 8]};
        for (int c = 0; c < 3; c++) wi[c] = vi[c] = splat(0.0);
        if (a >= 0) {
            for (int c = 0; c < 3; c++) d[c] = P0[3 * i + c] - P0[3 * a + c];
            cross(w + 3 * a, d, t);
            for (int c = 0; c < 3; c++) { wi[c] = w[3 * a + c]; vi[c] = v[3 * a + c] + t[c]; }
        }
        if (m->sigma[i] == 0) for (int c = 0; c < 3; c++) wi[c] += QD[k] * z[c];
        if (m->sigma[i] == 1) for (int c = 0; c < 3; c++) vi[c] += QD[k] * z[c];
    }
    real Rs[3], pt[3], pd[3];
    job_point(kj, s0, R0 + 9 * j, P0 + 3 * j, Rs, pt);
    cross(w + 3 * j, Rs, pd);
    for (int c = 0; c < 3; c++) pd[c] += v[3 * j + c];
    for (long e = 0; e < 6 * (long)n; e++) Jd[e] = splat(0.0);
    for (int f = j; f >= 0; f = m->parent[f]) {
        int k = m->joint[f];
        if (k < 0) continue;
        real z[3] = {R0[9 * f + 2], R0[9 * f + 5], R0[9 * f + 8]}, zd[3], d[3], t[3], u[3];
        cross(w + 3 * f, z, zd);
        for (int c = 0; c < 3; c++) Jd[c * n + k] = zd[c];
        if (m->sigma[f] == 0) {
            for (int c = 0; c < 3; c++) { d[c] = pt[c] - P0[3 * f + c]; u[c] = pd[c] - v[3 * f + c]; }
            cross(zd, d, t); cross(z, u, d);
            for (int c = 0; c < 3; c++) { Jd[c * n + k] = t[c] + d[c]; Jd[(3 + c) * n + k] = zd[c]; }
        }
    }
    store_lanes(job->out, s0, job->count, 6 * (long)n, 6 * (long)n, Jd, streams(job, 6 * (long)n));
    return all_finite(Jd, 6 * (long)n) ? 0 : RD_NONFINITE;
}

/* ---- the driver: blocks of RD_LANES states over threads ------------------------------------------------ */
typedef int (*rd_block)(const rd_job *, long, real *);
static const rd_block rd_blocks[12] = {rnea_block, gravity_block, crba_block, aba_block, regressor_block, deriv_block,
                                       fdd_block, poses_block, jacobian_block, jdq_block, links_block, jdot_block};
static long rd_work(int kind, const rd_model *m) {
    switch (kind) {
    case 0: return rnea_work(m);
    case 1: return gravity_work(m);
    case 2: return crba_work(m);
    case 3: return aba_work(m);
    case 4: return regressor_work(m);
    case 5: return deriv_work(m);
    case 7: return poses_work(m);
    case 8: return jacobian_work(m);
    case 9: return jdq_work(m);
    case 10: return links_work(m);
    case 11: return jdot_work(m);
    default: return fdd_work(m);
    }
}

#include "parallel.h"

/* Blocks [b0, b1) of one kind with one work buffer (zeroed where the kind needs it: the inertia matrix, whose
 * buffer of lanes keeps the zeros between a tree's branches from block to block): the first problem met, in
 * rd_parallel's order (a singular joint k + 1, then RD_NOMEM, then RD_NONFINITE). */
typedef struct { const rd_job *job; rd_block block; size_t bytes; int zeroed; } rd_task;
static long rd_task_blocks(void *arg, long b0, long b1) {
    const rd_task *task = (const rd_task *)arg;
    char *raw = task->zeroed ? calloc(task->bytes + 32, 1) : malloc(task->bytes + 32);   /* aligned below: 32 bytes */
    if (!raw) return RD_NOMEM;
    real *work = (real *)(((size_t)raw + 31) & ~(size_t)31);
    long code = 0;
    for (long b = b0; b < b1; b++) code = rd_first_code(code, task->block(task->job, b * RD_LANES, work));
#if RD_NT
    _mm_sfence();   /* the non-temporal stores of put_head, visible before the caller joins this thread */
#endif
    free(raw);
    return code;
}

/* Run `block` (`work`: its work buffer in lanes, zeroed at the start for the inertia matrix's blocks: `zeroed`) or
 * rd_run's kind (0 inverse dynamics, 1 gravity, 2 inertia matrix, 3 direct dynamics, 4 regressor, 5
 * inverse-dynamics derivatives, 6 direct-dynamics derivatives) on every state of the job with up to `threads`
 * threads (fewer when each would get less than about 2000 frame-states, where starting a thread costs more than it
 * saves).  Returns 0; k + 1 for the first singular joint k met (direct
 * dynamics); RD_NOMEM; RD_NONFINITE when a result is NaN/inf. */
static int rd_run_block(rd_block block, long work, const rd_job *job, int threads, int zeroed) {
    long useful = job->count * (job->m->nf > 0 ? job->m->nf : 1) / 2000;
    rd_task task = {job, block, sizeof(real) * (size_t)(work + 1), zeroed};
    long code = rd_parallel(rd_task_blocks, &task, (job->count + RD_LANES - 1) / RD_LANES,
                            threads < useful ? threads : (int)useful, 1);
    return code == -1 ? RD_NOMEM : (int)code;
}
/* rd_run_block of one of rd_blocks' kinds (floating_rnea_block, not one of them, calls rd_run_block itself) */
static int rd_run(int kind, const rd_job *job, int threads) {
    return rd_run_block(rd_blocks[kind], rd_work(kind, job->m), job, threads, kind == 2);
}

/* ---- CPython module ------------------------------------------------------------------------------------
 * model(ints, doubles) -> capsule: ints = [nf, n, parent(nf), sigma(nf), joint(nf)] (int32), doubles = [RA(9nf),
 * pA(3nf), theta(nf), r(nf), J(9nf), MS(3nf), M(nf), Ia(nf), Fc(n), Fv(n), Foff(n), Fst(n), kst(n), Bst(n)]
 * (float64), copied.
 * batch(capsule, kind, threads, friction, q, qd, x, g, wrench, out, trig) -> code: count states (out's length
 * divided by the size of one result); q, qd, x C-contiguous float64 (count, n) buffers (qd, x: None when the
 * kind does not use them); g (3,) for every state or (count, 3); wrench None or (count, nf, 6) [f; m]; out
 * writable, (count, n), (count, n, n), (count, n, cols) (regressor: cols = 11 nf, + 3 n with friction) or (count, 2, n, n) (inverse-dynamics derivatives, friction: F_v added to ∂Γ/∂q̇) or (count, 3, n, n)
 * (direct-dynamics derivatives, friction: subtracted from x as in kind 3, its slope F_v included).  The GIL is
 * released while the states are computed.  Returns rd_run's code, -1 for inconsistent buffers, RD_INPUT (-4)
 * where an input (q, qd, x, g, wrench) holds NaN or inf (checked first, nothing written).  trig: true for
 * trig="fast", the sines and cosines of the joint angles by vsincos_fast (rd_model.trig), false for the C library's.
 * single(capsule, kind, a, b, c, g, out, trig) -> 0, or nonzero when the general path must run (ROBODYN_NATIVE=0 or a
 * buffer of another type or size: -1; NaN/inf in an argument or in the result: -2; a singular joint: k + 1).
 * kind 0: inverse dynamics (q, qd, qdd) with friction and Ia; 1: gravity torques (q; b, c ignored);
 * 2: inertia matrix (q; b, c ignored), out n*n; 3: direct dynamics (q, qd, tau) with friction; 5: ∂Γ/∂q and
 * ∂Γ/∂q̇ of the inverse dynamics with friction (q, qd, qdd), out 2*n*n; 6: ∂q̈/∂q, ∂q̈/∂q̇, ∂q̈/∂Γ = A⁻¹ of
 * the direct dynamics with friction (q, qd, tau), out 3*n*n. */
#define RD_STACK_WORK 32768
typedef struct { rd_model m; int *ints, *rows, *axes; double *doubles, *sc, *com; } rd_packed;

/* rd_model.rows of a tree: for each joint r, the kind of each column c (ancestor, descendant, itself, other
 * branch; frames are numbered after their antecedents), run-length coded; NULL when out of memory.  A model's
 * memory comes from Python's raw allocator (thread-safe, no GIL needed): tracemalloc counts it, and a test can
 * make it fail (_testcapi.set_nomemory). */
static int *tree_runs(const rd_model *m) {
    int n = m->n, nf = m->nf, size = n + 1, *frame = PyMem_RawMalloc(sizeof(int) * (size_t)(n + 1)),
        *kind = PyMem_RawCalloc((size_t)nf + 1, sizeof(int)), *rows = NULL;
    for (int pass = 0; pass < 2 && frame && kind; pass++) {   /* 0: count the runs, 1: write them */
        if (pass) { rows = PyMem_RawMalloc(sizeof(int) * (size_t)size); if (!rows) break; }
        for (int i = 0; i < nf; i++) if (m->joint[i] >= 0) frame[m->joint[i]] = i;
        int at = n + 1;
        for (int r = 0; r < n; r++) {
            int fr = frame[r];
            for (int i = 0; i < nf; i++) kind[i] = i == fr ? 3 : i > fr && m->parent[i] >= 0
                                                   && (m->parent[i] == fr || kind[m->parent[i]] == 2) ? 2 : 0;
            for (int a = m->parent[fr]; a >= 0; a = m->parent[a]) kind[a] = 1;
            if (pass) rows[r] = at;
            for (int c = 0; c < n; c++) {
                int k = kind[frame[c]];
                if (c + 1 < n && kind[frame[c + 1]] == k && k != 3) continue;
                if (pass) { rows[at] = k; rows[at + 1] = c + 1; }
                at += 2;
            }
        }
        if (pass) rows[n] = at; else size = at;
    }
    PyMem_RawFree(frame); PyMem_RawFree(kind);
    return rows;
}
#define RD_CAPSULE "robodyn.rd_model"   /* the name of the capsule that holds an rd_packed */

/* rd_model.axes: for each frame, the row k and sign of the one non-zero entry of each column of RA where RA is
 * a signed permutation (entries exactly 0 and ±1: _arrays_of snaps them), else -1 in the first */
static void frame_axes(const rd_model *m, int *axes) {
    for (int i = 0; i < m->nf; i++) {
        const double *RA = m->RA + 9 * i;
        int *ax = axes + 3 * i;
        for (int j = 0; j < 3; j++) {
            int k = -1, ones = 0, zeros = 0;
            for (int row = 0; row < 3; row++) {
                double v = RA[3 * row + j];
                zeros += v == 0.0;
                if (v == 1.0 || v == -1.0) { ones++; k = row + (v < 0.0 ? 3 : 0); }
            }
            ax[j] = ones == 1 && zeros == 2 ? k : -1;
        }
        if (ax[0] < 0 || ax[1] < 0 || ax[2] < 0) ax[0] = -1;
    }
}
/* rd_model.com: J_c = J - M (|g|² 1 - g gᵀ), the inertia about the centre of mass g = MS / M [9.12] (row-major,
 * from J's upper triangle), then g; J and 0 for a link without mass */
static void centres_of_mass(const rd_model *m, double *com) {
    for (int i = 0; i < m->nf; i++) {
        const double *J = m->J + 9 * i, *MS = m->MS + 3 * i, M = m->M[i];
        double *Jc = com + 12 * i, *g = Jc + 9, gg = 0.0;
        if (M == 0.0) {
            memcpy(Jc, J, 9 * sizeof(double));
            memset(g, 0, 3 * sizeof(double));
            continue;
        }
        for (int c = 0; c < 3; c++) { g[c] = MS[c] / M; gg += g[c] * g[c]; }
        for (int r = 0; r < 3; r++)
            for (int c = r; c < 3; c++)
                Jc[3 * r + c] = Jc[3 * c + r] = J[3 * r + c] - M * ((r == c ? gg : 0.0) - g[r] * g[c]);
    }
}
static void rd_packed_free(rd_packed *p) {
    if (p) {
        PyMem_RawFree(p->ints); PyMem_RawFree(p->rows); PyMem_RawFree(p->axes); PyMem_RawFree(p->doubles);
        PyMem_RawFree(p->sc); PyMem_RawFree(p->com);
    }
    PyMem_RawFree(p);
}
static void rd_capsule_free(PyObject *cap) {
    rd_packed_free((rd_packed *)PyCapsule_GetPointer(cap, RD_CAPSULE));
}

/* The robot in an entry's first argument, or NULL (no Python error left set) when the entry got other than `count`
 * arguments or no robot: the entries then answer -1 and the caller's general path runs. */
static rd_packed *rd_entry_model(PyObject *const *args, Py_ssize_t nargs, Py_ssize_t count) {
    if (nargs != count) return NULL;
    rd_packed *p = (rd_packed *)PyCapsule_GetPointer(args[0], RD_CAPSULE);
    if (!p) PyErr_Clear();
    return p;
}

static PyObject *rd_py_model(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    Py_buffer bi, bd;
    if (nargs != 2) { PyErr_SetString(PyExc_TypeError, "model(ints, doubles)"); return NULL; }
    if (PyObject_GetBuffer(args[0], &bi, PyBUF_C_CONTIGUOUS) != 0) return NULL;
    if (PyObject_GetBuffer(args[1], &bd, PyBUF_C_CONTIGUOUS) != 0) { PyBuffer_Release(&bi); return NULL; }
    /* the sizes are checked before anything is allocated: a failure after them is out of memory */
    int nf = -1, n = -1;
    if (bi.len >= 2 * (Py_ssize_t)sizeof(int)) {
        memcpy(&nf, bi.buf, sizeof(int)); memcpy(&n, (const char *)bi.buf + sizeof(int), sizeof(int));
    }
    if (!(nf >= 0 && n >= 0 && bi.len == (Py_ssize_t)sizeof(int) * (2 + 3 * (Py_ssize_t)nf)
          && bd.len == (Py_ssize_t)sizeof(double) * (28 * (Py_ssize_t)nf + 6 * (Py_ssize_t)n))) {
        PyBuffer_Release(&bi); PyBuffer_Release(&bd);
        PyErr_SetString(PyExc_ValueError, "model(): inconsistent buffers");
        return NULL;
    }
    rd_packed *p = PyMem_RawCalloc(1, sizeof(rd_packed));
    int ok = p != NULL;
    if (ok) {
        p->ints = PyMem_RawMalloc(bi.len); p->doubles = PyMem_RawMalloc(bd.len > 0 ? bd.len : 1);
        p->sc = PyMem_RawMalloc(sizeof(double) * (2 * (size_t)nf + 1));
        p->axes = PyMem_RawMalloc(sizeof(int) * (3 * (size_t)nf + 1));
        p->com = PyMem_RawMalloc(sizeof(double) * (12 * (size_t)nf + 1));
        ok = p->ints && p->doubles && p->sc && p->axes && p->com;
    }
    if (ok) {
        memcpy(p->ints, bi.buf, bi.len); memcpy(p->doubles, bd.buf, bd.len);
        double *d = p->doubles;
        p->m.nf = nf; p->m.n = n;
        p->m.parent = p->ints + 2; p->m.sigma = p->ints + 2 + nf; p->m.joint = p->ints + 2 + 2 * nf;
        p->m.RA = d; p->m.pA = d + 9 * nf; p->m.theta = d + 12 * nf; p->m.r = d + 13 * nf;
        p->m.J = d + 14 * nf; p->m.MS = d + 23 * nf; p->m.M = d + 26 * nf; p->m.Ia = d + 27 * nf;
        p->m.Fc = d + 28 * nf; p->m.Fv = p->m.Fc + n; p->m.Foff = p->m.Fv + n;
        p->m.Fst = p->m.Foff + n; p->m.kst = p->m.Fst + n; p->m.Bst = p->m.kst + n;
        p->m.chain = 1;
        for (int i = 0; i < nf; i++) p->m.chain &= p->m.parent[i] == i - 1;
        p->m.virtual = virtual_frames(&p->m);
        int rows = !p->m.chain && n >= RD_TREE_ROWS;
        p->rows = rows ? tree_runs(&p->m) : NULL;
        p->m.rows = p->rows;
        ok = !rows || p->rows;
        for (int i = 0; ok && i < nf; i++) {
            p->sc[2 * i] = sin(p->m.theta[i]);
            p->sc[2 * i + 1] = cos(p->m.theta[i]);
        }
        p->m.sc = p->sc;
        frame_axes(&p->m, p->axes);
        p->m.axes = p->axes;
        centres_of_mass(&p->m, p->com);
        p->m.com = p->com;
    }
    PyBuffer_Release(&bi); PyBuffer_Release(&bd);
    PyObject *capsule = ok ? PyCapsule_New(p, RD_CAPSULE, rd_capsule_free) : NULL;
    if (!capsule) {
        rd_packed_free(p);
        return ok ? NULL : PyErr_NoMemory();   /* PyCapsule_New sets its own MemoryError */
    }
    return capsule;
}

/* a float64 buffer of `len` doubles (C-contiguous; writable for out), or none when obj is None and allowed */
static int rd_buffer(PyObject *obj, Py_buffer *b, int writable, int *held) {
    *held = 0;
    if (PyObject_GetBuffer(obj, b, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0)) != 0) {
        PyErr_Clear();
        return 0;
    }
    *held = 1;
    return b->itemsize == 8 && b->format != NULL && b->format[0] == 'd' && b->format[1] == 0;
}

/* 1 when a[0 .. n-1] are all finite: x * 0 is ±0 for a finite x, NaN for ±inf and NaN, so the sums stay 0 (four
 * sums of four lanes: at the speed of the loads, where a test per value ran at a value a cycle) */
RD_CLONES static int rd_all_finite(const double *a, long n) {
    real acc[4] = {{0}, {0}, {0}, {0}};
    long k = 0;
    for (; k + 16 <= n; k += 16)
        for (int t = 0; t < 4; t++) {
            real v;
            memcpy(&v, a + k + 4 * t, sizeof v);
            acc[t] += v * 0.0;
        }
    double rest = 0.0;
    for (; k < n; k++) rest += a[k] * 0.0;
    real all = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    return all[0] + all[1] + all[2] + all[3] + rest == 0.0;
}

static PyObject *rd_py_batch(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    rd_packed *p = rd_entry_model(args, nargs, 11);
    if (!p) return PyLong_FromLong(-1);
    long kind = PyLong_AsLong(args[1]), threads = PyLong_AsLong(args[2]);
    int friction = PyObject_IsTrue(args[3]), trig = PyObject_IsTrue(args[10]);
    if (PyErr_Occurred()) { PyErr_Clear(); return PyLong_FromLong(-1); }
    if (kind < 0 || kind > 6 || threads < 1 || friction < 0 || trig < 0) return PyLong_FromLong(-1);
    rd_model call = p->m;   /* the robot with this call's trigonometry */
    call.trig = trig;
    const rd_model *m = &call;
    long n = m->n, nf = m->nf, cols = 11 * nf + (friction ? 3 * n : 0);
    long per = kind == 2 ? n * n : kind == 4 ? n * cols : kind == 5 ? 2 * n * n : kind == 6 ? 3 * n * n : n;
    Py_buffer b[6];
    int held[6] = {0}, ok = 1;
    /* q qd x g wrench out */
    int dyn = kind == 0 || kind >= 3;
    int used[6] = {1, dyn, dyn, kind != 2, 1, 1};
    for (int i = 0; i < 6 && ok; i++) {
        PyObject *obj = args[4 + i];
        if (!used[i] || (i == 4 && obj == Py_None)) continue;
        ok = rd_buffer(obj, &b[i], i == 5, &held[i]);
    }
    long count = 0;
    if (ok) {
        long len_out = (long)(b[5].len / 8);
        count = per > 0 ? len_out / per : 0;
        ok = per > 0 ? count * per == len_out : len_out == 0;
        for (int i = 0; i < 3 && ok; i++)
            if (used[i]) ok = b[i].len / 8 == count * n;
        if (ok && used[3]) ok = b[3].len / 8 == 3 || b[3].len / 8 == 3 * count;
        if (ok && held[4]) ok = kind != 1 && kind != 2 && kind != 4 ? b[4].len / 8 == count * 6 * nf : 0;
    }
    int code = -1;
    if (ok) {
        rd_job job = {m, count, held[0] ? b[0].buf : NULL, held[1] ? b[1].buf : NULL, held[2] ? b[2].buf : NULL,
                      held[3] ? b[3].buf : NULL, held[4] ? b[4].buf : NULL,
                      held[3] && b[3].len / 8 != 3 ? 3 : 0, cols, b[5].buf, friction};
        Py_BEGIN_ALLOW_THREADS
        code = 0;
        for (int i = 0; i < 5 && code == 0; i++)
            if (held[i] && !rd_all_finite(b[i].buf, (long)(b[i].len / 8))) code = RD_INPUT;
        if (code == 0) code = rd_run((int)kind, &job, (int)threads);
        Py_END_ALLOW_THREADS
    }
    for (int i = 0; i < 6; i++) if (held[i]) PyBuffer_Release(&b[i]);
    return PyLong_FromLong(code);
}

/* The data of one argument of a single-state entry: float64, C-contiguous, `size` doubles (1-D for an input,
 * writable for the output), finite for an input. 0, or -1 (another type or size) / -2 (NaN or inf). A NumPy array
 * is read directly (a few ns); anything else through the buffer protocol (*held set: the caller releases b). */
static int rd_argument(PyObject *obj, Py_ssize_t size, int output, Py_buffer *b, int *held, double **data) {
#ifdef RD_NUMPY
    if (PyArray_CheckExact(obj)) {
        PyArrayObject *a = (PyArrayObject *)obj;
        int flags = NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED | (output ? NPY_ARRAY_WRITEABLE : 0);
        if (PyArray_TYPE(a) != NPY_DOUBLE || !PyArray_ISNOTSWAPPED(a) || !PyArray_CHKFLAGS(a, flags)
            || PyArray_SIZE(a) != size || (!output && PyArray_NDIM(a) != 1)) return -1;
        *data = (double *)PyArray_DATA(a);
        return output || rd_all_finite(*data, size) ? 0 : -2;
    }
#endif
    if (PyObject_GetBuffer(obj, b, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (output ? PyBUF_WRITABLE : 0)) != 0) {
        PyErr_Clear();
        return -1;
    }
    *held = 1;
    if (b->itemsize != 8 || b->format == NULL || b->format[0] != 'd' || b->format[1] != 0 || b->len != size * 8
        || (!output && b->ndim != 1)) return -1;
    *data = (double *)b->buf;
    return output || rd_all_finite(*data, size) ? 0 : -2;
}

/* One state of `kind`: a small robot's work buffer on the stack (no malloc, no thread driver), else rd_run. */
/* A work buffer of this thread for one state that does not fit on the stack, kept from call to call up to
 * RD_KEPT_WORK bytes: a fresh one (malloc, for 128 kB and more a new mapping and its page faults) cost more than
 * the whole computation (a free-flyer TALOS's inertia matrix: 134 kB). */
#define RD_KEPT_WORK (4L << 20)
static real *rd_kept_work(size_t bytes) {
    static __thread char *raw = NULL;
    static __thread size_t have = 0;
    if (bytes > have) {
        free(raw);
        raw = malloc(bytes + 32);
        have = raw ? bytes : 0;
        if (!raw) return NULL;
    }
    return (real *)(((size_t)raw + 31) & ~(size_t)31);
}
/* One state of `block` with `work` lanes of work buffer: on the stack, else in the thread's kept buffer, else
 * through rd_run_block (its own allocation) */
static int rd_one_block(rd_block block, long work, const rd_job *job) {
    size_t bytes = sizeof(real) * (size_t)(work + 1);
    if (bytes <= RD_STACK_WORK) {
        real stack[RD_STACK_WORK / sizeof(real)];
        return block(job, 0, stack);
    }
    real *kept = bytes <= RD_KEPT_WORK ? rd_kept_work(bytes) : NULL;
    return kept ? block(job, 0, kept) : rd_run_block(block, work, job, 1, 0);
}
/* sc[2i], sc[2i + 1]: the sine and cosine of frame i's θ (+ q_k on a revolute frame) at the one state q (n), as
 * joint_sincos gives them in a block; the revolute frames' angles four to a vector (vsincos computes each lane as
 * it would alone, so the bits of a batch's lanes), where a block of one state computes each angle in four lanes */
RD_CLONES static void state_sincos(const rd_model *m, const double *q, double *sc) {
    int idx[RD_LANES], k = 0;
    real x = splat(0.0);
    for (int i = 0; i <= m->nf; i++) {
        if (i < m->nf && m->sigma[i] != 0) {
            sc[2 * i] = m->sc[2 * i];
            sc[2 * i + 1] = m->sc[2 * i + 1];
            continue;
        }
        if (i < m->nf) {
            x[k] = m->theta[i] + (m->joint[i] >= 0 ? q[m->joint[i]] : 0.0);
            idx[k++] = i;
        }
        if (k == RD_LANES || (i == m->nf && k > 0)) {
            real s, c;
            vsincos(x, m->trig, &s, &c);
            for (int l = 0; l < k; l++) {
                sc[2 * idx[l]] = s[l];
                sc[2 * idx[l] + 1] = c[l];
            }
            k = 0;
        }
    }
}
/* the most frames whose sines and cosines rd_state_model computes first (on the stack, 16 bytes a frame) */
#define RD_STATE_FRAMES 512
/* `one`, a copy of m whose sc_state is sc filled by state_sincos at q; m itself where it carries its table already
 * (rd_task_state's five kernels at one q) or has more than RD_STATE_FRAMES frames */
static const rd_model *rd_state_model(const rd_model *m, const double *q, rd_model *one, double *sc) {
    if (m->sc_state || m->nf > RD_STATE_FRAMES) return m;
    *one = *m;
    state_sincos(m, q, sc);
    one->sc_state = sc;
    return one;
}
/* One state (job->count 1) of `block` with `work` lanes of work buffer, its frames' sines and cosines first at the
 * joint values q (n: job->q, or a free flyer's q + 1) by state_sincos, a quarter of the trigonometry the block
 * would do (a humanoid's inertia matrix: 30 % of the kernel), the same bits; kin: job is an rd_kin_job's. */
static int rd_one_sincos(rd_block block, long work, const rd_job *job, const double *q, int kin) {
    if (job->count != 1) return rd_one_block(block, work, job);
    double sc[2 * RD_STATE_FRAMES];
    rd_model one;
    rd_kin_job kj;
    if (kin) kj = *(const rd_kin_job *)job; else kj.job = *job;
    kj.job.m = rd_state_model(job->m, q, &one, sc);
    return rd_one_block(block, work, &kj.job);
}
static int rd_one_state(int kind, const rd_job *job) {   /* kinds 7 and above: the kinematics' rd_kin_job */
    return rd_one_sincos(rd_blocks[kind], rd_work(kind, job->m), job, job->q, kind >= 7);
}

/* 1 when the environment variable ROBODYN_NATIVE is 0 (blanks around it allowed): compiled code switched off,
 * read at every call of a single-state entry (os.environ writes through to the C environment) */
static int rd_switched_off(void) {
    const char *s = getenv("ROBODYN_NATIVE");
    if (!s) return 0;
    while (*s == ' ' || (*s >= '\t' && *s <= '\r')) ++s;
    if (*s++ != '0') return 0;
    while (*s == ' ' || (*s >= '\t' && *s <= '\r')) ++s;
    return *s == 0;
}

static PyObject *rd_py_single(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    rd_packed *p = rd_entry_model(args, nargs, 8);
    if (!p || rd_switched_off()) return PyLong_FromLong(-1);
    long kind = PyLong_AsLong(args[1]);
    int n = p->m.n, trig = PyObject_IsTrue(args[7]);
    if (trig < 0) { PyErr_Clear(); return PyLong_FromLong(-1); }
    const rd_model *m = &p->m;
    rd_model call;   /* trig="fast": the robot with the vector sincos */
    if (trig) { call = p->m; call.trig = 1; m = &call; }
    Py_ssize_t nn = (Py_ssize_t)n * n;
    Py_ssize_t sizes[5] = {n, n, n, 3, kind == 2 ? nn : kind == 5 ? 2 * nn : kind == 6 ? 3 * nn : n};
    int used[5] = {1, kind == 0 || kind == 3 || kind >= 5, kind == 0 || kind == 3 || kind >= 5, kind != 2, 1};
    Py_buffer b[5];
    int held[5] = {0};
    double *data[5] = {NULL, NULL, NULL, NULL, NULL};
    long code = kind >= 0 && kind <= 6 && kind != 4 ? 0 : -1;
    /* the arguments a kind does not read are not looked at */
    for (int i = 0; i < 5 && code == 0; ++i)
        if (used[i]) code = rd_argument(args[2 + i], sizes[i], i == 4, &b[i], &held[i], &data[i]);
    if (code == 0) {
        rd_job job = {m, 1, data[0], data[1], data[2], data[3], NULL, 0, 0, data[4], 1};
        code = rd_one_state((int)kind, &job);
    }
    for (int i = 0; i < 5; ++i) if (held[i]) PyBuffer_Release(&b[i]);
    return PyLong_FromLong(code);
}

/* floating(capsule, kind, q, v, x, g, tol, out) -> code: one state of a free-flyer robot (Pinocchio's conventions)
 * on the capsule of its augmented robot (6 virtual joints, then the n joints: robodyn.dynamics.floating, module
 * notes): q (n + 7) = [base position, quaternion (x, y, z, w), joints], v, x (n + 6), g (3,) in the world frame.
 * kind 0: inverse dynamics, x = a = [v̇_0, ω̇_0, q̈], out (n + 6); 2: inertia matrix (v, x, g not read), out
 * (n + 6)^2; 3: forward dynamics, x = τ, out a.  The same arithmetic as the Python single-state path: the
 * quaternion normalised (a norm off 1 by more than tol: -1), g turned into R_0, the virtual joints at zero, the
 * velocity products of the virtual joints added to or removed from their accelerations.  Codes as single's. */
#define RD_FLOATING_MAX 512

/* x[0:6] += sign × the velocity products of the virtual joints at v = [v_0, ω_0, ...]: q̈_a = a + them (sign 1),
 * a = q̈_a − them (sign −1); a multiplication by ±1 is exact, so both directions are the Python path's numbers. */
static void rd_virtual_products(const double *v, double sign, double *x) {
    const double *u = v, *o = v + 3;
    x[0] += sign * (o[1] * u[2] - o[2] * u[1]); x[1] += sign * (o[2] * u[0] - o[0] * u[2]);
    x[2] += sign * (o[0] * u[1] - o[1] * u[0]);
    x[3] -= sign * (o[1] * o[2]); x[4] += sign * (o[0] * o[2]); x[5] -= sign * (o[0] * o[1]);
}
/* floating(..., out, threads[, trig]): a batch of `count` free-flyer states (trig: true for trig="fast", as batch's),
 * C-contiguous float64: kinds 0 and 3, q (count, n + 7), v, x (count, n + 6) (x: a, τ), g (3,) or (count, 3), out
 * (count, n + 6); kind 2, q and out (count, n + 6, n + 6) (v, x, g not read); -1 where the robot, a buffer, a
 * quaternion's norm (off 1 by more than tol) or a value (NaN, inf) is not what floating_rnea_block,
 * floating_crba_block or floating_aba_block takes, else the block's code (a singular joint: k + 1). */
static long rd_floating_batch(rd_packed *p, long kind, double tol, int trig, PyObject *const *args) {
    long threads = PyLong_AsLong(args[8]);
    if (PyErr_Occurred()) { PyErr_Clear(); return -1; }
    rd_model call = p->m;   /* the robot with this call's trigonometry */
    call.trig = trig;
    int inertia = kind == 2;   /* v, x, g not read */
    if ((kind != 0 && kind != 3 && !inertia) || threads < 1 || !(inertia ? p->m.virtual : rd_floating_model(&p->m)))
        return -1;
    const rd_model *m = &call;
    long n = m->n, count = 0, per = inertia ? n * n : n;
    PyObject *objs[5] = {args[2], args[3], args[4], args[5], args[7]};
    Py_buffer b[5];
    int held[5] = {0}, ok = 1;
    for (int i = 0; i < 5 && ok; i++) ok = (inertia && i > 0 && i < 4) || rd_buffer(objs[i], &b[i], i == 4, &held[i]);
    if (ok) {
        count = (long)(b[4].len / 8) / per;
        ok = count > 0 && count * per == (long)(b[4].len / 8) && b[0].len / 8 == count * (n + 1)
             && (inertia || (b[1].len / 8 == count * n && b[2].len / 8 == count * n
                             && (b[3].len / 8 == 3 || b[3].len / 8 == 3 * count)));
    }
    long code = -1;
    if (ok) {
        const double *q = b[0].buf;
        rd_job job = {m, count, q, NULL, NULL, NULL, NULL, 0, 0, b[4].buf, 1};
        if (!inertia) {
            job.qd = b[1].buf; job.x = b[2].buf; job.g = b[3].buf;
            job.g_stride = b[3].len / 8 == 3 ? 0 : 3;
        }
        Py_BEGIN_ALLOW_THREADS
        code = rd_all_finite(q, count * (n + 1)) && (inertia || (rd_all_finite(job.qd, count * n)
               && rd_all_finite(job.x, count * n) && rd_all_finite(job.g, b[3].len / 8))) ? 0 : -1;
        for (long s = 0; s < count && code == 0; s++) {
            const double *e = q + s * (n + 1) + 3;
            if (!(fabs(sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2] + e[3] * e[3]) - 1.0) <= tol)) code = -1;
        }
        if (code == 0)
            code = inertia ? rd_run_block(floating_crba_block, crba_work(m), &job, (int)threads, 1)
                   : kind == 3 ? rd_run_block(floating_aba_block, aba_work(m), &job, (int)threads, 0)
                               : rd_run_block(floating_rnea_block, floating_rnea_work(m), &job, (int)threads, 0);
        Py_END_ALLOW_THREADS
    }
    for (int i = 0; i < 5; i++) if (held[i]) PyBuffer_Release(&b[i]);
    return code;
}
static PyObject *rd_py_floating(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    rd_packed *p = rd_entry_model(args, nargs, nargs == 10 ? 10 : nargs == 9 ? 9 : 8);
    if (!p || rd_switched_off()) return PyLong_FromLong(-1);
    long kind = PyLong_AsLong(args[1]);
    double tol = PyFloat_AsDouble(args[6]);
    int trig = nargs == 10 ? PyObject_IsTrue(args[9]) : 0;
    if (PyErr_Occurred() || trig < 0) { PyErr_Clear(); return PyLong_FromLong(-1); }
    if (nargs >= 9) return PyLong_FromLong(rd_floating_batch(p, kind, tol, trig, args));
    int na = p->m.n;
    long code = (kind == 0 || kind == 2 || kind == 3) && na >= 6 && na <= RD_FLOATING_MAX ? 0 : -1;
    Py_ssize_t sizes[5] = {na + 1, na, na, 3, kind == 2 ? (Py_ssize_t)na * na : na};
    int used[5] = {1, kind != 2, kind != 2, kind != 2, 1};
    PyObject *objs[5] = {args[2], args[3], args[4], args[5], args[7]};
    Py_buffer b[5];
    int held[5] = {0};
    double *data[5] = {NULL, NULL, NULL, NULL, NULL};
    for (int i = 0; i < 5 && code == 0; ++i)
        if (used[i]) code = rd_argument(objs[i], sizes[i], i == 4, &b[i], &held[i], &data[i]);
    double qa[RD_FLOATING_MAX], xa[RD_FLOATING_MAX], g0[3] = {0.0, 0.0, 0.0};
    const double *q = data[0], *v = data[1], *x = data[2];
    double qx = 0.0, qy = 0.0, qz = 0.0, qw = 1.0;
    if (code == 0) {
        double norm = sqrt(q[3] * q[3] + q[4] * q[4] + q[5] * q[5] + q[6] * q[6]);
        if (!(fabs(norm - 1.0) <= tol)) code = -1;   /* the general path names the quaternion */
        qx = q[3] / norm; qy = q[4] / norm; qz = q[5] / norm; qw = q[6] / norm;
    }
    /* floating_rnea_block takes q, v, x and g as they are: the augmented state below is for the other kinds */
    int direct = code == 0 && kind == 0 && rd_floating_model(&p->m);
    if (code == 0 && !direct) {
        for (int k = 0; k < 6; ++k) qa[k] = 0.0;
        for (int k = 6; k < na; ++k) qa[k] = q[k + 1];
        if (data[3]) {   /* ^0R_w g = R^T g, R of the quaternion */
            const double *g = data[3];
            g0[0] = (1 - 2 * (qy * qy + qz * qz)) * g[0] + 2 * (qx * qy + qz * qw) * g[1] + 2 * (qx * qz - qy * qw) * g[2];
            g0[1] = 2 * (qx * qy - qz * qw) * g[0] + (1 - 2 * (qx * qx + qz * qz)) * g[1] + 2 * (qy * qz + qx * qw) * g[2];
            g0[2] = 2 * (qx * qz + qy * qw) * g[0] + 2 * (qy * qz - qx * qw) * g[1] + (1 - 2 * (qx * qx + qy * qy)) * g[2];
        }
        if (x) for (int k = 0; k < na; ++k) xa[k] = x[k];
        if (kind == 0) rd_virtual_products(v, 1.0, xa);   /* q̈_a from a */
    }
    if (direct) {
        rd_job job = {&p->m, 1, q, v, x, data[3], NULL, 0, 0, data[4], 1};
        code = rd_one_sincos(floating_rnea_block, floating_rnea_work(&p->m), &job, q + 1, 0);   /* joint k: q[k + 1] */
    } else if (code == 0) {
        double *out = data[4];
        rd_job job = {&p->m, 1, qa, v, x ? xa : NULL, data[3] ? g0 : NULL, NULL, 0, 0, out, 1};
        code = rd_one_state((int)kind, &job);
        if (code == 0 && kind == 3) rd_virtual_products(v, -1.0, out);   /* a from q̈_a */
    }
    for (int i = 0; i < 5; ++i) if (held[i]) PyBuffer_Release(&b[i]);
    return PyLong_FromLong(code);
}

#ifdef RD_NUMPY
/* bound(slow, floating, cap, kind, g0, extra, shape, a, b, c, gravity[, out, friction, least, fast]) -> result:
 * the `run` of robodyn.native.bind and bind_floating with its first seven arguments bound (functools.partial), so
 * that one state costs no Python frame and no np.empty.  One state (`a` a 1-D ndarray; `out` None or an ndarray of
 * the result's `shape`; a free flyer's `fast` false) is the entry's single call into a new array or `out`:
 * floating(cap, kind, a, b, c, g, extra, res) for a free flyer (extra: the quaternion's tolerance), else
 * single(cap, kind, a, b, c, g, res, fast) with c = extra where extra is not None (the bias torques' q̈ = 0); g is
 * g0 where gravity is None.  The array is returned on success; anything else, and a call the entry declines, is
 * handed to `slow`, the Python run, with the same arguments, which decides as before. */
static PyObject *rd_py_bound(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    Py_ssize_t k = nargs - 7;
    if (k < 4 || k > 8 || !PyTuple_Check(args[6]) || PyTuple_GET_SIZE(args[6]) < 1 || PyTuple_GET_SIZE(args[6]) > 3) {
        PyErr_SetString(PyExc_TypeError, "bound(slow, floating, cap, kind, g0, extra, shape, a, b, c, gravity[, out, "
                                         "friction, least, fast])");
        return NULL;
    }
    PyObject *const *call = args + 7;
    PyObject *out = k > 4 ? call[4] : Py_None, *fast = k > 7 ? call[7] : Py_False;
    int floating = PyObject_IsTrue(args[1]), nd = (int)PyTuple_GET_SIZE(args[6]);
    if (floating < 0) return NULL;
    int one = PyArray_CheckExact(call[0]) && PyArray_NDIM((PyArrayObject *)call[0]) == 1;
    if (one && floating && fast != Py_False) {   /* a free flyer's trig="fast": its Python run makes a batch of one */
        int truth = PyObject_IsTrue(fast);
        if (truth < 0) return NULL;
        one = !truth;
    }
    npy_intp dims[3] = {0, 0, 0};
    for (int i = 0; i < nd && one; i++) {
        dims[i] = (npy_intp)PyLong_AsSsize_t(PyTuple_GET_ITEM(args[6], i));
        if (dims[i] < 0) one = 0;
    }
    if (PyErr_Occurred()) return NULL;
    if (one && out != Py_None) {
        one = PyArray_CheckExact(out) && PyArray_NDIM((PyArrayObject *)out) == nd;
        for (int i = 0; i < nd && one; i++) one = PyArray_DIMS((PyArrayObject *)out)[i] == dims[i];
    }
    if (one) {
        PyObject *res = out == Py_None ? PyArray_SimpleNew(nd, dims, NPY_DOUBLE) : Py_NewRef(out);
        if (!res) return NULL;
        PyObject *g = call[3] == Py_None ? args[4] : call[3], *status;
        if (floating) {
            PyObject *entry[8] = {args[2], args[3], call[0], call[1], call[2], g, args[5], res};
            status = rd_py_floating(NULL, entry, 8);
        } else {
            PyObject *entry[8] = {args[2], args[3], call[0], call[1], args[5] == Py_None ? call[2] : args[5], g, res,
                                  fast};
            status = rd_py_single(NULL, entry, 8);
        }
        long code = status ? PyLong_AsLong(status) : -1;
        Py_XDECREF(status);
        if (code == 0 && !PyErr_Occurred()) return res;
        Py_DECREF(res);
        if (PyErr_Occurred()) return NULL;
    }
    return PyObject_Vectorcall(args[0], call, (size_t)k, NULL);
}
#endif

/* kinematics(capsule, kind, threads, frame, q, qd, qdd, point, out) -> code: the kinematics kinds on one state
 * (threads = 0: 1-D inputs, NumPy arrays read directly, NaN/inf refused with -2) or on count states (threads >= 1:
 * (count, n) buffers, the GIL released).  kind 7: frame poses (q), out (nf, 4, 4); 8: the Jacobian of frame
 * `frame` (q, point), out (6, n); 9: its J̇q̇ (q, qd, point), out (6,); 10: link velocities and accelerations
 * (q, qd, qdd), out (4, nf, 3); 11: J̇ of the Jacobian of kind 8 (q, qd, point), out (6, n).  point: None, (3,)
 * or (count, 3).  Codes as batch's / single's (-1 also for ROBODYN_NATIVE=0 and a frame out of range). */
static long rd_kinematics_size(long kind, const rd_model *m) {
    long n = m->n, nf = m->nf;
    return kind == 7 ? 16 * nf : kind == 8 || kind == 11 ? 6 * n : kind == 9 ? 6 : kind == 10 ? 12 * nf : 0;
}
static PyObject *rd_py_kinematics(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    rd_packed *p = rd_entry_model(args, nargs, 9);
    if (!p || rd_switched_off()) return PyLong_FromLong(-1);
    long kind = PyLong_AsLong(args[1]), threads = PyLong_AsLong(args[2]), frame = PyLong_AsLong(args[3]);
    if (PyErr_Occurred()) { PyErr_Clear(); return PyLong_FromLong(-1); }
    const rd_model *m = &p->m;
    long n = m->n, nf = m->nf;
    long per = rd_kinematics_size(kind, m);
    int framed = kind == 8 || kind == 9 || kind == 11;
    int used[5] = {1, kind >= 9, kind == 10, framed && args[7] != Py_None, 1};
    long code = kind >= 7 && kind <= 11 && threads >= 0 && per > 0 ? 0 : -1;
    if (code == 0 && framed && (frame < 0 || frame >= nf)) code = -1;
    Py_buffer b[5];
    int held[5] = {0};
    double *data[5] = {NULL, NULL, NULL, NULL, NULL};
    long count = 1, point_stride = 0;
    if (threads == 0) {   /* one state */
        Py_ssize_t sizes[5] = {n, n, n, 3, per};
        for (int i = 0; i < 5 && code == 0; ++i)
            if (used[i]) code = rd_argument(args[4 + i], sizes[i], i == 4, &b[i], &held[i], &data[i]);
    } else {
        for (int i = 0; i < 5 && code == 0; ++i)
            if (used[i]) {
                code = rd_buffer(args[4 + i], &b[i], i == 4, &held[i]) ? 0 : -1;
                data[i] = (double *)b[i].buf;
            }
        if (code == 0) {
            long len_out = (long)(b[4].len / 8);
            count = len_out / per;
            if (count * per != len_out) code = -1;
            for (int i = 0; i < 3 && code == 0; ++i)
                if (used[i] && b[i].len / 8 != count * n) code = -1;
            if (code == 0 && used[3]) {
                point_stride = b[3].len / 8 == 3 ? 0 : 3;
                if (b[3].len / 8 != 3 && b[3].len / 8 != 3 * count) code = -1;
            }
        }
    }
    if (code == 0 && count > 0) {
        rd_kin_job kj = {{m, count, data[0], data[1], data[2], NULL, NULL, 0, 0, data[4], 0}, (int)frame, data[3],
                         point_stride};
        if (threads == 0) {
            code = rd_one_state((int)kind, &kj.job);
        } else {
            Py_BEGIN_ALLOW_THREADS
            code = rd_run((int)kind, &kj.job, (int)(threads < 4096 ? threads : 4096));
            Py_END_ALLOW_THREADS
        }
    }
    for (int i = 0; i < 5; ++i) if (held[i]) PyBuffer_Release(&b[i]);
    return PyLong_FromLong(code);
}

/* kinematics_one(capsule, kind, part, wrap, q[, qd, qdd, frame, point]) -> the result of one state, or None: the
 * kinds of `kinematics` (threads = 0) with the result allocated here (NumPy's C API), so that a call from Python
 * costs this entry and the kernel.  Kind 10 gives parts `part` and `part` + 1 of (ω, V, ω̇, V̇) as two new (nf, 3)
 * arrays in the tuple subclass `wrap` (a named tuple), qdd None read as zeros for part 0 (velocities do not depend
 * on it).  None for anything the general path must see: ROBODYN_NATIVE=0, arguments of another type or size,
 * NaN/inf in an argument or the result, a frame out of range, no NumPy headers at build time. */
static PyObject *rd_py_kinematics_one(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
#ifdef RD_NUMPY
    rd_packed *p = nargs >= 5 && nargs <= 9 ? rd_entry_model(args, nargs, nargs) : NULL;   /* 5 to 9 */
    if (!p || rd_switched_off()) Py_RETURN_NONE;
    long kind = PyLong_AsLong(args[1]), part = PyLong_AsLong(args[2]), frame = nargs > 7 ? PyLong_AsLong(args[7]) : 0;
    if (PyErr_Occurred()) { PyErr_Clear(); Py_RETURN_NONE; }
    const rd_model *m = &p->m;
    long n = m->n, nf = m->nf, per = rd_kinematics_size(kind, m);
    PyObject *in[4] = {args[4], nargs > 5 ? args[5] : Py_None, nargs > 6 ? args[6] : Py_None,
                       nargs > 8 ? args[8] : Py_None};
    PyTypeObject *wrap = (PyTypeObject *)args[3];
    int framed = kind == 8 || kind == 9 || kind == 11, zeros = kind == 10 && part == 0 && in[2] == Py_None;
    int used[4] = {1, kind >= 9, kind == 10 && !zeros, framed && in[3] != Py_None};
    int ok = per > 0 && (!framed || (frame >= 0 && frame < nf))
             && (kind != 10 || ((part == 0 || part == 2) && PyType_Check(args[3])
                                && PyType_IsSubtype(wrap, &PyTuple_Type)));
    Py_buffer b[4];
    int held[4] = {0};
    double *data[4] = {NULL, NULL, NULL, NULL};
    Py_ssize_t sizes[4] = {n, n, n, 3};
    for (int i = 0; i < 4 && ok; ++i)
        if (used[i]) ok = rd_argument(in[i], sizes[i], 0, &b[i], &held[i], &data[i]) == 0;
    PyObject *res = NULL;
    double *buf = NULL;
    if (ok) {
        npy_intp dims[3] = {kind == 7 ? nf : kind == 10 ? 4 : 6, kind == 7 ? 4 : kind == 10 ? nf : n,
                            kind == 7 ? 4 : 3};
        if (kind == 10) {   /* the four parts, then the two asked for copied out */
            buf = malloc(sizeof(double) * (size_t)(per + (zeros ? n : 0) + 1));
        } else {
            res = PyArray_SimpleNew(kind == 9 ? 1 : kind == 7 ? 3 : 2, dims, NPY_DOUBLE);
        }
        ok = buf || res;
        if (ok) {
            if (zeros) { data[2] = buf + per; for (long k = 0; k < n; k++) data[2][k] = 0.0; }
            rd_kin_job kj = {{m, 1, data[0], data[1], data[2], NULL, NULL, 0, 0,
                              buf ? buf : (double *)PyArray_DATA((PyArrayObject *)res), 0}, (int)frame, data[3], 0};
            ok = rd_one_state((int)kind, &kj.job) == 0;
        }
        if (ok && buf) {
            PyObject *two[2];
            for (int k = 0; k < 2; k++) {
                two[k] = PyArray_SimpleNew(2, dims + 1, NPY_DOUBLE);
                if (two[k]) memcpy(PyArray_DATA((PyArrayObject *)two[k]), buf + (part + k) * 3 * nf, 24 * (size_t)nf);
            }
            res = two[0] && two[1] ? wrap->tp_alloc(wrap, 2) : NULL;   /* as tuple.__new__(wrap, two) builds it */
            if (res) {
                PyTuple_SET_ITEM(res, 0, two[0]);
                PyTuple_SET_ITEM(res, 1, two[1]);
            } else {
                Py_XDECREF(two[0]); Py_XDECREF(two[1]);
            }
        }
    }
    free(buf);
    for (int i = 0; i < 4; ++i) if (held[i]) PyBuffer_Release(&b[i]);
    if (PyErr_Occurred()) PyErr_Clear();   /* out of memory here: the general path runs and says so */
    if (ok && res) return res;
    Py_XDECREF(res);
    Py_RETURN_NONE;
#else
    (void)args; (void)nargs;
    Py_RETURN_NONE;
#endif
}

/* ---- task space of one state (De Luca's M_r, n_r with the dynamically consistent pseudo-inverse) ---------
 * The dense algebra of robodyn.dynamics.task_space_dynamics on its kernel terms, for one state: the small
 * matrices are solved here because NumPy's per-call overhead, not the arithmetic, dominates at this size. */
#define RD_TASK_MAX 64   /* joints of the task-space entry (its buffers are on the stack) */
#define RD_TINY 2.2250738585072014e-308   /* the smallest normal double (NumPy's finfo(float).tiny) */

/* In place: the lower Cholesky factor L of the symmetric positive definite n x n S (row-major, lower triangle
 * read); 0, or -1 when S is not positive definite. */
static int rd_cholesky(double *S, int n) {
    for (int j = 0; j < n; j++) {
        double d = S[j * n + j];
        for (int k = 0; k < j; k++) d -= S[j * n + k] * S[j * n + k];
        if (!(d > 0.0)) return -1;
        d = sqrt(d);
        S[j * n + j] = d;
        for (int i = j + 1; i < n; i++) {
            double v = S[i * n + j];
            for (int k = 0; k < j; k++) v -= S[i * n + k] * S[j * n + k];
            S[i * n + j] = v / d;
        }
    }
    return 0;
}
/* x <- (L Lᵀ)⁻¹ x for the factor of rd_cholesky */
static void rd_cholesky_solve(const double *L, int n, double *x) {
    for (int i = 0; i < n; i++) {
        double v = x[i];
        for (int k = 0; k < i; k++) v -= L[i * n + k] * x[k];
        x[i] = v / L[i * n + i];
    }
    for (int i = n - 1; i >= 0; i--) {
        double v = x[i];
        for (int k = i + 1; k < n; k++) v -= L[k * n + i] * x[k];
        x[i] = v / L[i * n + i];
    }
}
/* The smallest and largest eigenvalue of the symmetric m x m S (m <= 6) by cyclic Jacobi rotations (Golub & Van
 * Loan §8.5), to the accuracy of the singularity test. */
static void rd_eigen_range(const double *S, int m, double *lo, double *hi) {
    double a[36], norm = 0.0;
    memcpy(a, S, sizeof(double) * (size_t)(m * m));
    for (int e = 0; e < m * m; e++) norm += a[e] * a[e];
    for (int sweep = 0; sweep < 60; sweep++) {
        double off = 0.0;
        for (int p = 0; p < m; p++)
            for (int q = p + 1; q < m; q++) off += a[p * m + q] * a[p * m + q];
        if (!(off > 1e-32 * norm)) break;
        for (int p = 0; p < m; p++)
            for (int q = p + 1; q < m; q++) {
                double apq = a[p * m + q];
                if (apq == 0.0) continue;
                double theta = (a[q * m + q] - a[p * m + p]) / (2.0 * apq);
                double t = (theta >= 0.0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1.0));
                double c = 1.0 / sqrt(t * t + 1.0), s = t * c;
                for (int k = 0; k < m; k++) {   /* columns p, q: S R */
                    double kp = a[k * m + p], kq = a[k * m + q];
                    a[k * m + p] = c * kp - s * kq;
                    a[k * m + q] = s * kp + c * kq;
                }
                for (int k = 0; k < m; k++) {   /* rows p, q: Rᵀ S R */
                    double pk = a[p * m + k], qk = a[q * m + k];
                    a[p * m + k] = c * pk - s * qk;
                    a[q * m + k] = s * pk + c * qk;
                }
            }
    }
    *lo = *hi = a[0];
    for (int k = 1; k < m; k++) {
        if (a[k * m + k] < *lo) *lo = a[k * m + k];
        if (a[k * m + k] > *hi) *hi = a[k * m + k];
    }
}

/* The task space of one state: J, J̇q̇ (the m task rows r of [v; ω] of kinds 8, 9, or a task map's J (m × n) and
 * J̇q̇ (m) given in Jin, Jdqin), A (composite links), H = Γ(q, q̇, 0) with friction and Q(q) from the kernels, then
 * A = L Lᵀ, X = A⁻¹ Jᵀ, Φ = J X (symmetrised), Λ = (Φ + λ² I)⁻¹ (symmetrised), J̄ = X Λ, μ = Λ (Xᵀ (H − Q) − J̇q̇),
 * p = Λ Xᵀ Q, N = I − Jᵀ J̄ᵀ.  out = [Λ (m²), μ (m), p (m), J (m n), J̇q̇ (m), J̄ (n m), N (n²)].  0; -4 when the
 * eigenvalue ratio of Φ is below rcond (λ = 0); -1 when A is not positive definite; -2 for a result that is not
 * finite. */
typedef struct {
    const rd_model *m;
    const double *q, *qd, *point, *g;
    long point_stride;
    int frame, nrows, r[6];   /* the task: m = nrows rows r[i] of [v; ω] of frame `frame` (Jin NULL) */
    double damping, rcond;
    double *out;
    const double *Jin, *Jdqin;   /* a task map's J (count, m, n) and J̇q̇ (count, m), or NULL */
} rd_task_job;
static long rd_task_size(int n, int m) { return (long)m * m + 3L * m + 2L * m * n + (long)n * n; }
static int rd_task_state(const rd_task_job *t, long s) {
    int n = t->m->n, m = t->nrows;
    const double *q = t->q + s * n, *qd = t->qd + s * n, *point = t->point ? t->point + s * t->point_stride : NULL;
    double sc[2 * RD_STATE_FRAMES];   /* the frames' sines and cosines at q, once for the five kernels below */
    rd_model one;
    const rd_model *md = rd_state_model(t->m, q, &one, sc);
    double *out = t->out + s * rd_task_size(n, m);
    double Jf[6 * RD_TASK_MAX], Jdqf[6], A[RD_TASK_MAX * RD_TASK_MAX], H[RD_TASK_MAX], G[RD_TASK_MAX],
           Z[RD_TASK_MAX], X[RD_TASK_MAX * 6], Phi[36], Lam[36], col[6], u[6], v[6];
    for (int k = 0; k < n; k++) Z[k] = 0.0;
    rd_kin_job jac = {{md, 1, q, NULL, NULL, NULL, NULL, 0, 0, Jf, 0}, t->frame, point, 0};
    rd_kin_job jdq = {{md, 1, q, qd, NULL, NULL, NULL, 0, 0, Jdqf, 0}, t->frame, point, 0};
    rd_job crba = {md, 1, q, NULL, NULL, NULL, NULL, 0, 0, A, 0};
    rd_job rnea = {md, 1, q, qd, Z, t->g, NULL, 0, 0, H, 1};
    rd_job grav = {md, 1, q, NULL, NULL, t->g, NULL, 0, 0, G, 0};
    int code = t->Jin ? 0 : rd_one_state(8, &jac.job);
    if (code == 0 && !t->Jin) code = rd_one_state(9, &jdq.job);
    if (code == 0) code = rd_one_state(2, &crba);
    if (code == 0) code = rd_one_state(0, &rnea);
    if (code == 0) code = rd_one_state(1, &grav);
    if (code != 0) return code;
    if (rd_cholesky(A, n) != 0) return -1;
    double *Lo = out, *mu = Lo + m * m, *p = mu + m, *J = p + m, *Jdq = J + m * n, *Jbar = Jdq + m, *N = Jbar + n * m;
    if (t->Jin) {
        memcpy(J, t->Jin + s * m * n, sizeof(double) * (size_t)(m * n));
        memcpy(Jdq, t->Jdqin + s * m, sizeof(double) * (size_t)m);
    } else {
        for (int i = 0; i < m; i++) {
            Jdq[i] = Jdqf[t->r[i]];
            for (int k = 0; k < n; k++) J[i * n + k] = Jf[t->r[i] * n + k];
        }
    }
    for (int i = 0; i < m; i++) {   /* column i of X = A⁻¹ Jᵀ */
        for (int k = 0; k < n; k++) Z[k] = J[i * n + k];
        rd_cholesky_solve(A, n, Z);
        for (int k = 0; k < n; k++) X[k * m + i] = Z[k];
    }
    for (int i = 0; i < m; i++)
        for (int l = 0; l < m; l++) {
            double w = 0.0;
            for (int k = 0; k < n; k++) w += J[i * n + k] * X[k * m + l];
            Phi[i * m + l] = w;
        }
    for (int i = 0; i < m; i++)
        for (int l = 0; l < i; l++) Phi[i * m + l] = Phi[l * m + i] = 0.5 * (Phi[i * m + l] + Phi[l * m + i]);
    if (t->damping == 0.0) {
        double lo, hi;
        rd_eigen_range(Phi, m, &lo, &hi);
        if (!(lo / (hi > RD_TINY ? hi : RD_TINY) >= t->rcond)) return -4;
    } else {
        for (int i = 0; i < m; i++) Phi[i * m + i] += t->damping * t->damping;
    }
    if (rd_cholesky(Phi, m) != 0) return -4;
    for (int l = 0; l < m; l++) {   /* Λ = Φ⁻¹, column by column, symmetrised */
        for (int i = 0; i < m; i++) col[i] = i == l;
        rd_cholesky_solve(Phi, m, col);
        for (int i = 0; i < m; i++) Lam[i * m + l] = col[i];
    }
    for (int i = 0; i < m; i++)
        for (int l = 0; l <= i; l++) Lo[i * m + l] = Lo[l * m + i] = 0.5 * (Lam[i * m + l] + Lam[l * m + i]);
    for (int i = 0; i < m; i++) {   /* Xᵀ (H − Q) − J̇q̇ and Xᵀ Q */
        double a = 0.0, c = 0.0;
        for (int k = 0; k < n; k++) { a += X[k * m + i] * (H[k] - G[k]); c += X[k * m + i] * G[k]; }
        u[i] = a - Jdq[i];
        v[i] = c;
    }
    for (int i = 0; i < m; i++) {
        double a = 0.0, c = 0.0;
        for (int l = 0; l < m; l++) { a += Lo[i * m + l] * u[l]; c += Lo[i * m + l] * v[l]; }
        mu[i] = a;
        p[i] = c;
    }
    for (int k = 0; k < n; k++)
        for (int l = 0; l < m; l++) {
            double a = 0.0;
            for (int i = 0; i < m; i++) a += X[k * m + i] * Lo[i * m + l];
            Jbar[k * m + l] = a;
        }
    for (int a = 0; a < n; a++)
        for (int c = 0; c < n; c++) {
            double w = a == c ? 1.0 : 0.0;
            for (int i = 0; i < m; i++) w -= J[i * n + a] * Jbar[c * m + i];
            N[a * n + c] = w;
        }
    return rd_all_finite(out, rd_task_size(n, m)) ? 0 : RD_NONFINITE;
}
static long rd_task_chunk(void *arg, long lo, long hi) {
    long code = 0;
    for (long s = lo; s < hi; s++) code = rd_first_code(code, rd_task_state((const rd_task_job *)arg, s));
    return code;
}

/* task_space(capsule, threads, q, qd, frame, point, m, rows, damping, rcond, g, out, J, Jdq) -> code: rd_task_state
 * on one state (threads = 0: 1-D q, qd (n,), point None or (3,), J None or (m n,), Jdq None or (m,), NumPy arrays
 * read directly, NaN/inf refused with -2) or on count states (threads >= 1: q, qd (count, n), point None, (3,) or
 * (count, 3), J None or (count, m n), Jdq None or (count, m), the GIL released; each state by the same
 * instructions, so a batch equals its states one by one bit for bit); g (3,).  The task: J and Jdq (a task map's;
 * frame, point and rows unused) or, both None, rows = Σ r_i 8^i, the m rows r_i of frame `frame` (or of point).
 * Codes as rd_task_state's (the first met in a batch), -1 for unusable buffers or ROBODYN_NATIVE=0: the caller's
 * general path then computes or explains. */
static PyObject *rd_py_task_space(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    rd_packed *pk = rd_entry_model(args, nargs, 14);
    if (!pk || rd_switched_off()) return PyLong_FromLong(-1);
    const rd_model *md = &pk->m;
    long threads = PyLong_AsLong(args[1]), frame = PyLong_AsLong(args[4]), m = PyLong_AsLong(args[6]),
         rows = PyLong_AsLong(args[7]);
    double damping = PyFloat_AsDouble(args[8]), rcond = PyFloat_AsDouble(args[9]);
    if (PyErr_Occurred()) { PyErr_Clear(); return PyLong_FromLong(-1); }
    int n = md->n, mapped = args[12] != Py_None;
    long code = n >= 1 && n <= RD_TASK_MAX && m >= 1 && m <= 6 && m <= n && threads >= 0 && damping >= 0.0
                && (mapped ? args[13] != Py_None && args[5] == Py_None : frame >= 0 && frame < md->nf) ? 0 : -1;
    rd_task_job t = {md, NULL, NULL, NULL, NULL, 0, (int)frame, (int)m, {0}, damping, rcond, NULL, NULL, NULL};
    for (int i = 0; i < 6; i++) t.r[i] = (int)((rows >> (3 * i)) & 7);
    for (int i = 0; i < m && code == 0 && !mapped; i++) if (t.r[i] > 5) code = -1;
    long size = code ? 0 : rd_task_size(n, (int)m), count = 1;
    PyObject *objs[7] = {args[2], args[3], args[5], args[10], args[11], args[12], args[13]};
    int used[7] = {1, 1, args[5] != Py_None, 1, 1, mapped, mapped};
    Py_buffer b[7];
    int held[7] = {0};
    double *data[7] = {NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    if (threads == 0) {
        Py_ssize_t sizes[7] = {n, n, 3, 3, size, m * n, m};
        for (int i = 0; i < 7 && code == 0; ++i)
            if (used[i]) code = rd_argument(objs[i], sizes[i], i == 4, &b[i], &held[i], &data[i]);
    } else {
        for (int i = 0; i < 7 && code == 0; ++i)
            if (used[i]) {
                code = rd_buffer(objs[i], &b[i], i == 4, &held[i]) ? 0 : -1;
                data[i] = (double *)b[i].buf;
            }
        if (code == 0) {
            count = (long)(b[4].len / 8) / size;
            if (count * size != (long)(b[4].len / 8) || b[0].len / 8 != count * n || b[1].len / 8 != count * n
                || b[3].len / 8 != 3) code = -1;
            if (code == 0 && used[2]) {
                t.point_stride = b[2].len / 8 == 3 ? 0 : 3;
                if (b[2].len / 8 != 3 && b[2].len / 8 != 3 * count) code = -1;
            }
            if (code == 0 && mapped && (b[5].len / 8 != count * m * n || b[6].len / 8 != count * m)) code = -1;
        }
    }
    if (code == 0 && count > 0) {
        t.q = data[0]; t.qd = data[1]; t.point = data[2]; t.g = data[3]; t.out = data[4];
        t.Jin = data[5]; t.Jdqin = data[6];
        if (threads == 0) {
            code = rd_task_state(&t, 0);
        } else {
            long useful = count * n / 200;   /* O(n³) per state: a thread pays from about 200 joint-states */
            int nt = (int)(threads < useful ? threads : useful);
            Py_BEGIN_ALLOW_THREADS
            code = rd_parallel(rd_task_chunk, &t, count, nt < 4096 ? nt : 4096, 1);
            Py_END_ALLOW_THREADS
        }
    }
    for (int i = 0; i < 7; ++i) if (held[i]) PyBuffer_Release(&b[i]);
    return PyLong_FromLong(code);
}

/* ---- the check of libm_sincos ---------------------------------------------------------------------------- */
/* Angle i of the check (0 ≤ i < RD_CHECK_ANGLES), every path of libm_sincos_body in both signs: each table point
 * k/128 and points between, the thresholds of its paths and their neighbours, the doubles nearest m π/2 and their
 * neighbours, and pseudo-random angles spread over each path's range */
#define RD_CHECK_ANGLES 8192
static double libm_check_angle(int i, unsigned long long *state) {
    static const double offset[8] = {0.0, 0.25, -0.25, 0.5, -0.5, 0.4999999, -0.4999999, 0.1};
    static const double edge[6] = {0x1p-27, 0x1p-26, 0.126, 0x1.b6p-1, 0x1.368fdp+1, 0x1.921fbp+26};
    static const double band[7] = {0.0, 0.13, 0.86, 2.43, 8.0, 1e3, 1.05e8};
    double sign = i % 2 ? -1.0 : 1.0;
    int j = i / 2;
    if (j < 880) return sign * ((j / 8 + offset[j % 8]) / 128.0);
    j -= 880;
    if (j < 42) {   /* the threshold, and 1, 2, 3 doubles above and below it */
        double x = edge[j / 7];
        for (int k = 0; k < (j % 7 + 1) / 2; k++) x = nextafter(x, j % 7 % 2 ? INFINITY : 0.0);
        return sign * x;
    }
    j -= 42;
    if (j < 1500) {
        double x = (j / 3 + 1) * 0x1.921fb54442d18p0;
        return sign * (j % 3 == 0 ? x : nextafter(x, (j % 3 == 1 ? 1.0 : -1.0) * INFINITY));
    }
    j -= 1500;
    *state ^= *state << 13; *state ^= *state >> 7; *state ^= *state << 17;   /* xorshift64 */
    double u = (double)(*state >> 11) * 0x1p-53, lo = band[j % 6], hi = band[j % 6 + 1];
    return sign * (lo + u * (hi - lo));
}
/* 1 where f gives the values of the C library's sin and cos (called through volatile pointers: not merged into
 * one sincos) bit for bit at every angle of libm_check_angle */
static int libm_sincos_matches(void (*f)(const double *, double *, double *)) {
    double (*volatile sin_f)(double) = sin, (*volatile cos_f)(double) = cos;
    unsigned long long state = 0x9e3779b97f4a7c15ULL;
    for (int i = 0; i < RD_CHECK_ANGLES; i += RD_LANES) {
        double x[RD_LANES], s[RD_LANES], c[RD_LANES];
        for (int l = 0; l < RD_LANES; l++) x[l] = libm_check_angle(i + l, &state);
        f(x, s, c);
        for (int l = 0; l < RD_LANES; l++) {
            double s0 = sin_f(x[l]), c0 = cos_f(x[l]);
            if (memcmp(&s0, &s[l], sizeof s0) || memcmp(&c0, &c[l], sizeof c0)) return 0;
        }
    }
    return 1;
}
RD_CLONES static void libm_sincos_lanes(const double *x, double *s, double *c) { libm_sincos_body(x, s, c); }
/* libm_sincos_on: the kernels' clone that runs here has FMA (x86-64: AVX2 and FMA, as the C library's build that
 * fuses needs; AArch64) and the lanes match the C library */
static void libm_sincos_check(void) {
#if RD_LIBM_LANES && defined(__x86_64__)
    __builtin_cpu_init();
    int usable = __builtin_cpu_supports("fma") && __builtin_cpu_supports("avx2");
#else
    int usable = RD_LIBM_LANES;
#endif
    libm_sincos_on = usable && libm_sincos_matches(libm_sincos_lanes);
}
/* How trig="exact" computes: "lanes" (libm_sincos_body) or "calls" (sin and cos per lane) */
static PyObject *rd_py_exact_trig(PyObject *self, PyObject *args) {
    (void)self; (void)args;
    return PyUnicode_FromString(libm_sincos_on ? "lanes" : "calls");
}

static PyObject *rd_py_threaded(PyObject *self, PyObject *args) {
    (void)self; (void)args;
#ifdef RD_THREADS
    Py_RETURN_TRUE;
#else
    Py_RETURN_FALSE;
#endif
}

#ifdef RD_NUMPY
/* ---- the pool of result blocks ---------------------------------------------------------------------------
 * A large result written into fresh memory pays the system's first touch of every page (a page fault, the page
 * zeroed), up to 1.5-2x the kernels' own time for the inertia matrix at 25-100 joints, whereas the same kernel
 * into a reused array does not.  So the results of robodyn's batches (rd_py_empty) are allocated through a NumPy
 * memory handler (NEP 49) that keeps up to RD_POOL_BLOCKS freed blocks of RD_POOL_MIN bytes or more, RD_POOL_BYTES in
 * all, and hands one of the same size to the next result: a loop over batches of one shape then writes into
 * memory already mapped.  Every block comes from NumPy's default handler and goes back to it; smaller ones are not
 * kept (the C library already reuses them).  Only robodyn's results go through it; no other array of the process. */
#define RD_POOL_MIN ((size_t)4 << 20)
#define RD_POOL_BLOCKS 4
#define RD_POOL_BYTES ((size_t)512 << 20)
typedef struct { void *p; size_t size; } rd_kept;
static struct {
    rd_kept kept[RD_POOL_BLOCKS];   /* the oldest first */
    size_t bytes;
    int count, lock;
    PyDataMem_Handler *base;   /* NumPy's default handler (its allocator and its free) */
    PyObject *capsule;         /* the handler below, as NumPy takes it */
} rd_pool;
static void rd_pool_lock(void) { while (__atomic_exchange_n(&rd_pool.lock, 1, __ATOMIC_ACQUIRE)) {} }
static void rd_pool_unlock(void) { __atomic_store_n(&rd_pool.lock, 0, __ATOMIC_RELEASE); }
/* the kept block i, taken out of the pool (under the lock) */
static rd_kept rd_pool_take(int i) {
    rd_kept k = rd_pool.kept[i];
    rd_pool.bytes -= k.size;
    rd_pool.count--;
    memmove(rd_pool.kept + i, rd_pool.kept + i + 1, (size_t)(rd_pool.count - i) * sizeof(rd_kept));
    return k;
}
static void rd_pool_give_back(const rd_kept *k, int count) {   /* to NumPy's handler, outside the lock */
    PyDataMemAllocator *a = &rd_pool.base->allocator;
    for (int i = 0; i < count; i++) a->free(a->ctx, k[i].p, k[i].size);
}
static void *rd_pool_malloc(void *ctx, size_t size) {
    (void)ctx;
    PyDataMemAllocator *a = &rd_pool.base->allocator;
    if (size >= RD_POOL_MIN) {
        void *p = NULL;
        rd_pool_lock();
        for (int i = rd_pool.count - 1; i >= 0 && !p; i--)   /* the latest first: its pages are the warmest */
            if (rd_pool.kept[i].size == size) p = rd_pool_take(i).p;
        rd_pool_unlock();
        if (p) return p;
    }
    return a->malloc(a->ctx, size);
}
static void *rd_pool_calloc(void *ctx, size_t nelem, size_t elsize) {
    (void)ctx;
    PyDataMemAllocator *a = &rd_pool.base->allocator;
    return a->calloc(a->ctx, nelem, elsize);
}
static void *rd_pool_realloc(void *ctx, void *ptr, size_t new_size) {
    (void)ctx;
    PyDataMemAllocator *a = &rd_pool.base->allocator;
    return a->realloc(a->ctx, ptr, new_size);
}
/* keeps the block when it is large, evicting the oldest ones as needed; the evicted are freed after the lock */
static void rd_pool_free(void *ctx, void *ptr, size_t size) {
    (void)ctx;
    rd_kept out[RD_POOL_BLOCKS + 1];
    int gone = 0;
    if (ptr && size >= RD_POOL_MIN && size <= RD_POOL_BYTES) {
        rd_pool_lock();
        while (rd_pool.count == RD_POOL_BLOCKS || rd_pool.bytes + size > RD_POOL_BYTES) out[gone++] = rd_pool_take(0);
        rd_pool.kept[rd_pool.count++] = (rd_kept){ptr, size};
        rd_pool.bytes += size;
        rd_pool_unlock();
    } else
        out[gone++] = (rd_kept){ptr, size};
    rd_pool_give_back(out, gone);
}
static PyDataMem_Handler rd_pool_handler = {
    "robodyn_result_pool", 1, {NULL, rd_pool_malloc, rd_pool_calloc, rd_pool_realloc, rd_pool_free}};
static int rd_pool_init(void) {
    PyObject *base = PyDataMem_GetHandler();   /* NumPy's default: no handler is set while robodyn is imported */
    if (!base) return -1;
    rd_pool.base = PyCapsule_GetPointer(base, "mem_handler");
    if (!rd_pool.base) return -1;   /* the capsule is kept (never released): the pool's blocks go back to it */
    rd_pool.capsule = PyCapsule_New(&rd_pool_handler, "mem_handler", NULL);
    return rd_pool.capsule ? 0 : -1;
}
/* empty(shape): a C-contiguous float64 array of that shape allocated through the pool */
static PyObject *rd_py_empty(PyObject *self, PyObject *shape) {
    (void)self;
    npy_intp dims[NPY_MAXDIMS];
    Py_ssize_t nd = PyTuple_Check(shape) ? PyTuple_GET_SIZE(shape) : -1;
    if (nd < 0 || nd > NPY_MAXDIMS) {
        PyErr_SetString(PyExc_TypeError, "empty: a tuple of at most NPY_MAXDIMS sizes");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < nd; i++) {
        dims[i] = (npy_intp)PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, i));
        if (dims[i] < 0) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "empty: negative size");
            return NULL;
        }
    }
    PyObject *old = PyDataMem_SetHandler(rd_pool.capsule);
    if (!old) return NULL;
    PyObject *array = PyArray_SimpleNew((int)nd, dims, NPY_DOUBLE);
    PyObject *ours = PyDataMem_SetHandler(old);   /* the caller's handler back, whatever the allocation gave */
    Py_DECREF(old);
    if (!ours) {
        Py_XDECREF(array);
        return NULL;
    }
    Py_DECREF(ours);
    return array;
}
/* pool(release): the blocks kept and their bytes; when release is true, every one goes back to NumPy's handler */
static PyObject *rd_py_pool(PyObject *self, PyObject *release) {
    (void)self;
    int drop = PyObject_IsTrue(release);
    if (drop < 0) return NULL;
    rd_kept out[RD_POOL_BLOCKS];
    int gone = 0;
    rd_pool_lock();
    int count = rd_pool.count;
    size_t bytes = rd_pool.bytes;
    while (drop && rd_pool.count) out[gone++] = rd_pool_take(0);
    rd_pool_unlock();
    rd_pool_give_back(out, gone);
    return Py_BuildValue("(in)", count, (Py_ssize_t)bytes);
}
#endif

static PyMethodDef rd_generic_methods[] = {
    {"model", (PyCFunction)(void (*)(void))rd_py_model, METH_FASTCALL, NULL},
    {"batch", (PyCFunction)(void (*)(void))rd_py_batch, METH_FASTCALL, NULL},
    {"single", (PyCFunction)(void (*)(void))rd_py_single, METH_FASTCALL, NULL},
    {"floating", (PyCFunction)(void (*)(void))rd_py_floating, METH_FASTCALL, NULL},
#ifdef RD_NUMPY
    {"bound", (PyCFunction)(void (*)(void))rd_py_bound, METH_FASTCALL, NULL},
#endif
    {"kinematics", (PyCFunction)(void (*)(void))rd_py_kinematics, METH_FASTCALL, NULL},
    {"kinematics_one", (PyCFunction)(void (*)(void))rd_py_kinematics_one, METH_FASTCALL, NULL},
    {"task_space", (PyCFunction)(void (*)(void))rd_py_task_space, METH_FASTCALL, NULL},
    {"threaded", rd_py_threaded, METH_NOARGS, NULL},
    {"exact_trig", rd_py_exact_trig, METH_NOARGS, NULL},
#ifdef RD_NUMPY
    {"empty", rd_py_empty, METH_O, NULL},
    {"pool", rd_py_pool, METH_O, NULL},
#endif
    {NULL, NULL, 0, NULL}};
static struct PyModuleDef rd_generic_module = {PyModuleDef_HEAD_INIT, RD_STR(RD_MODULE), NULL, -1,
                                               rd_generic_methods, NULL, NULL, NULL, NULL};
/* 0 where this CPU has the features of the one clone of an RD_ARCH build (those GCC 11 can test), else -1 with
 * ImportError set: such a library is never run here (robodyn.native then keeps its NumPy paths) */
static int rd_arch_check(void) {
#if defined(RD_ARCH) && RD_ARCH >= 3 && defined(__x86_64__) && !defined(__clang__)
    __builtin_cpu_init();
    int usable = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi")
                 && __builtin_cpu_supports("bmi2");
#if RD_ARCH >= 4
    usable = usable && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")
             && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq")
             && __builtin_cpu_supports("avx512cd");
#endif
    if (!usable) {
        PyErr_SetString(PyExc_ImportError, "built for x86-64-v" RD_STR(RD_ARCH) ", which this CPU lacks");
        return -1;
    }
#endif
    return 0;
}
PyMODINIT_FUNC RD_CAT(PyInit_, RD_MODULE)(void) {
    if (rd_arch_check() < 0) return NULL;
    libm_sincos_check();
#ifdef RD_NUMPY
    import_array();
    if (rd_pool_init() < 0) return NULL;
#endif
    return PyModule_Create(&rd_generic_module);
}
