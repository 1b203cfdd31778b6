/* robodyn generic kernels: the recursive algorithms for any robot, compiled once per machine.
 *
 * Every function evaluates one algorithm on a block of `count` states; the robot is plain data
 * (rd_model).  Frames are numbered 0..nf-1 here (frame j of Khalil & Dombre is index j-1) and
 * parent[i] = a(j) - 1, -1 for the base.  Vectors of one frame are expressed in that frame,
 * about its origin O_j.  Spatial 6-vectors inside this file are [angular; linear] (Featherstone's
 * order); the wrench rows given by the caller are robodyn's [f; m], converted where read.
 *
 * Frame transform (Khalil-Kleinfinger):  a(j)T_j = Rot(z,g) Trans(z,b) Rot(x,al) Trans(x,d) Rot(z,th) Trans(z,r)
 *   with the constant part RA = Rz(g) Rx(al), pA = (d cos g, d sin g, b) given by the caller:
 *   R = a(j)R_j = RA Rz(th),   p = a(j)P_j = pA + r RA e3.
 *
 * The functions return 0, or k + 1 when joint variable k is singular (articulated inertia <= 0).
 *
 * With -DRD_PYTHON the library is also the CPython module rdgeneric, whose single() evaluates one state from
 * 1-D float64 buffers with the friction of Khalil & Dombre [9.26]-[9.28] (no Stribeck term), for low-latency
 * single calls. */

#ifdef RD_PYTHON
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#endif
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int nf, n;
    const int *parent;   /* nf: 0-based antecedent index, -1 = base */
    const int *sigma;    /* nf: 0 revolute, 1 prismatic, 2 fixed */
    const int *joint;    /* nf: index of the joint variable, -1 for a fixed frame */
    const double *RA;    /* nf*9, row-major */
    const double *pA;    /* nf*3 */
    const double *theta; /* nf */
    const double *r;     /* nf */
    const double *J;     /* nf*9 inertia tensor about O_j in R_j, row-major */
    const double *MS;    /* nf*3 */
    const double *M;     /* nf */
    const double *Ia;    /* nf */
} rd_model;

/* ---- 3-vector helpers --------------------------------------------------------------------- */
static void cross(const double *a, const double *b, double *out) {
    double x = a[1] * b[2] - a[2] * b[1], y = a[2] * b[0] - a[0] * b[2], z = a[0] * b[1] - a[1] * b[0];
    out[0] = x; out[1] = y; out[2] = z;
}
static void mat_vec(const double *A, const double *v, double *out) {      /* out = A v */
    double x = A[0] * v[0] + A[1] * v[1] + A[2] * v[2];
    double y = A[3] * v[0] + A[4] * v[1] + A[5] * v[2];
    double z = A[6] * v[0] + A[7] * v[1] + A[8] * v[2];
    out[0] = x; out[1] = y; out[2] = z;
}
static void mat_t_vec(const double *A, const double *v, double *out) {    /* out = A^T v */
    double x = A[0] * v[0] + A[3] * v[1] + A[6] * v[2];
    double y = A[1] * v[0] + A[4] * v[1] + A[7] * v[2];
    double z = A[2] * v[0] + A[5] * v[1] + A[8] * v[2];
    out[0] = x; out[1] = y; out[2] = z;
}
static void mat_mul(const double *A, const double *B, double *out) {      /* out = A B (3x3) */
    double t[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            t[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
    memcpy(out, t, sizeof t);
}
static void mat_mul_t(const double *A, const double *B, double *out) {    /* out = A B^T */
    double t[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            t[3 * i + j] = A[3 * i] * B[3 * j] + A[3 * i + 1] * B[3 * j + 1] + A[3 * i + 2] * B[3 * j + 2];
    memcpy(out, t, sizeof t);
}
static void skew(const double *v, double *S) {
    S[0] = 0; S[1] = -v[2]; S[2] = v[1];
    S[3] = v[2]; S[4] = 0; S[5] = -v[0];
    S[6] = -v[1]; S[7] = v[0]; S[8] = 0;
}

/* a(j)R_j and a(j)P_j of frame i for joint value qi (ignored on fixed frames). */
static void frame_transform(const rd_model *m, int i, double qi, double *R, double *p) {
    const double *RA = m->RA + 9 * i, *pA = m->pA + 3 * i;
    double th = m->theta[i] + (m->sigma[i] == 0 ? qi : 0.0);
    double r = m->r[i] + (m->sigma[i] == 1 ? qi : 0.0);
    double c = cos(th), s = sin(th);
    for (int row = 0; row < 3; row++) {
        R[3 * row] = c * RA[3 * row] + s * RA[3 * row + 1];
        R[3 * row + 1] = -s * RA[3 * row] + c * RA[3 * row + 1];
        R[3 * row + 2] = RA[3 * row + 2];
        p[row] = pA[row] + r * RA[3 * row + 2];
    }
}

/* Forward recursion [9.84]-[9.90] for one state: w, wd, Vd of every frame (V̇_0 = -g, [9.80]). */
static void forward_recursion(const rd_model *m, const double *q, const double *qd, const double *qdd,
                              const double *g, double *R, double *p, double *w, double *wd, double *Vd) {
    for (int i = 0; i < m->nf; i++) {
        int a = m->parent[i], k = m->joint[i];
        double *Ri = R + 9 * i, *pi = p + 3 * i, *wi = w + 3 * i, *wdi = wd + 3 * i, *Vdi = Vd + 3 * i;
        frame_transform(m, i, k >= 0 ? q[k] : 0.0, Ri, pi);
        double wa[3] = {0, 0, 0}, wda[3] = {0, 0, 0}, Vda[3] = {-g[0], -g[1], -g[2]};
        if (a >= 0) {
            memcpy(wa, w + 3 * a, sizeof wa); memcpy(wda, wd + 3 * a, sizeof wda); memcpy(Vda, Vd + 3 * a, sizeof Vda);
        }
        double t[3], u[3];
        cross(wda, pi, t); cross(wa, pi, u); cross(wa, u, u);           /* U_a P_j = ω̇ × P + ω × (ω × P) */
        for (int c = 0; c < 3; c++) t[c] += Vda[c] + u[c];
        mat_t_vec(Ri, t, Vdi);                                           /* [9.86] */
        mat_t_vec(Ri, wa, wi);                                           /* jω_{a(j)} */
        mat_t_vec(Ri, wda, wdi);
        if (m->sigma[i] == 0) {                                          /* [9.84], [9.85] */
            wdi[0] += wi[1] * qd[k]; wdi[1] -= wi[0] * qd[k]; wdi[2] += qdd[k];
            wi[2] += qd[k];
        } else if (m->sigma[i] == 1) {                                   /* [9.86]: q̈ z + 2 ω × q̇ z */
            Vdi[0] += 2.0 * wi[1] * qd[k]; Vdi[1] -= 2.0 * wi[0] * qd[k]; Vdi[2] += qdd[k];
        }
    }
}

/* Backward recursion [9.91]-[9.93]: the wrenches f, mo of every link (about O_j in R_j) summed from the leaves
 * to the base (children have larger indices), and each joint's torque, its axis component [9.93] (+ Ia q̈ when
 * qdd is given). f and mo are overwritten with the wrenches transmitted by the joints. */
static void backward_recursion(const rd_model *m, const double *R, const double *p, double *f, double *mo,
                               const double *qdd, double *tau) {
    for (int i = m->nf - 1; i >= 0; i--) {
        int a = m->parent[i], k = m->joint[i];
        double *fi = f + 3 * i, *mi = mo + 3 * i;
        if (k >= 0) tau[k] = (m->sigma[i] == 0 ? mi[2] : fi[2]) + (qdd ? m->Ia[i] * qdd[k] : 0.0);
        if (a >= 0) {
            double Rf[3], Rm[3], pf[3];
            mat_vec(R + 9 * i, fi, Rf); mat_vec(R + 9 * i, mi, Rm); cross(p + 3 * i, Rf, pf);
            for (int c = 0; c < 3; c++) { f[3 * a + c] += Rf[c]; mo[3 * a + c] += Rm[c] + pf[c]; }
        }
    }
}

/* Newton-Euler inverse dynamics [9.84]-[9.94] without friction: tau = Γ_rigid + Ia q̈. */
int rd_rnea(const rd_model *m, long count, const double *q, const double *qd, const double *qdd,
            const double *g, long g_stride, const double *wrench, double *tau) {
    int nf = m->nf, n = m->n;
    double *work = malloc(sizeof(double) * 27 * (size_t)nf);
    if (!work) return -1;
    double *R = work, *p = R + 9 * nf, *w = p + 3 * nf, *wd = w + 3 * nf, *Vd = wd + 3 * nf,
           *f = Vd + 3 * nf, *mo = f + 3 * nf;
    for (long s = 0; s < count; s++) {
        const double *qs = q + s * n, *qds = qd + s * n, *qdds = qdd + s * n;
        forward_recursion(m, qs, qds, qdds, g + s * g_stride, R, p, w, wd, Vd);
        for (int i = 0; i < nf; i++) {
            const double *J = m->J + 9 * i, *MS = m->MS + 3 * i;
            double *wi = w + 3 * i, *wdi = wd + 3 * i, *Vdi = Vd + 3 * i, t[3], u[3];
            cross(wi, MS, u); cross(wi, u, u); cross(wdi, MS, t);          /* [9.88] */
            for (int c = 0; c < 3; c++) f[3 * i + c] = m->M[i] * Vdi[c] + t[c] + u[c];
            mat_vec(J, wi, u); cross(wi, u, u); mat_vec(J, wdi, t);        /* [9.89] */
            double v[3];
            cross(MS, Vdi, v);
            for (int c = 0; c < 3; c++) mo[3 * i + c] = t[c] + u[c] + v[c];
            if (wrench) {
                const double *e = wrench + (s * nf + i) * 6;
                for (int c = 0; c < 3; c++) { f[3 * i + c] += e[c]; mo[3 * i + c] += e[3 + c]; }
            }
        }
        backward_recursion(m, R, p, f, mo, qdds, tau + s * n);
    }
    free(work);
    return 0;
}

/* Gravity torques Q(q) [9.8]: the Newton-Euler recursion at rest, where ω = ω̇ = 0 leaves V̇_j = jR_a V̇_a
 * (V̇_0 = -g), F_j = M_j V̇_j and N_j = MS_j × V̇_j. */
int rd_gravity(const rd_model *m, long count, const double *q, const double *g, long g_stride, double *tau) {
    int nf = m->nf, n = m->n;
    double *work = malloc(sizeof(double) * 21 * (size_t)nf);
    if (!work) return -1;
    double *R = work, *p = R + 9 * nf, *Vd = p + 3 * nf, *f = Vd + 3 * nf, *mo = f + 3 * nf;
    for (long s = 0; s < count; s++) {
        const double *qs = q + s * n, *gs = g + s * g_stride;
        for (int i = 0; i < nf; i++) {
            int a = m->parent[i], k = m->joint[i];
            double minus_g[3] = {-gs[0], -gs[1], -gs[2]};
            frame_transform(m, i, k >= 0 ? qs[k] : 0.0, R + 9 * i, p + 3 * i);
            mat_t_vec(R + 9 * i, a >= 0 ? Vd + 3 * a : minus_g, Vd + 3 * i);
            for (int c = 0; c < 3; c++) f[3 * i + c] = m->M[i] * Vd[3 * i + c];
            cross(m->MS + 3 * i, Vd + 3 * i, mo + 3 * i);
        }
        backward_recursion(m, R, p, f, mo, NULL, tau + s * n);
    }
    free(work);
    return 0;
}

/* Composite-link inertia matrix (Khalil & Dombre Appendix 8; Featherstone's CRBA), Ia on the diagonal. */
int rd_crba(const rd_model *m, long count, const double *q, double *A) {
    int nf = m->nf, n = m->n;
    double *work = malloc(sizeof(double) * 25 * (size_t)nf);
    if (!work) return -1;
    double *R = work, *p = R + 9 * nf, *Jc = p + 3 * nf, *MSc = Jc + 9 * nf, *Mc = MSc + 3 * nf;
    for (long s = 0; s < count; s++) {
        const double *qs = q + s * n;
        double *As = A + s * n * n;
        memcpy(Jc, m->J, sizeof(double) * 9 * nf);
        memcpy(MSc, m->MS, sizeof(double) * 3 * nf);
        memcpy(Mc, m->M, sizeof(double) * nf);
        for (int i = 0; i < nf; i++) frame_transform(m, i, m->joint[i] >= 0 ? qs[m->joint[i]] : 0.0, R + 9 * i, p + 3 * i);
        for (int i = nf - 1; i >= 0; i--) {      /* composite link of the subtree of i, summed into a(i) */
            int a = m->parent[i];
            if (a < 0) continue;
            double *Ri = R + 9 * i, *pi = p + 3 * i, h[3], JR[9], Jr[9];
            mat_vec(Ri, MSc + 3 * i, h);                        /* R MS */
            mat_mul(Ri, Jc + 9 * i, JR); mat_mul_t(JR, Ri, Jr); /* R J R^T */
            double Mi = Mc[i], ph = pi[0] * h[0] + pi[1] * h[1] + pi[2] * h[2];
            double pp = pi[0] * pi[0] + pi[1] * pi[1] + pi[2] * pi[2];
            /* parallel-axis shift [9.12]: J - M p̂p̂ - p̂ĥ - ĥp̂ with âb̂ = b aᵀ - (a·b) 1 */
            for (int r = 0; r < 3; r++)
                for (int c = 0; c < 3; c++)
                    Jc[9 * a + 3 * r + c] += Jr[3 * r + c] - Mi * pi[r] * pi[c] - h[r] * pi[c] - pi[r] * h[c]
                                             + (r == c ? Mi * pp + 2.0 * ph : 0.0);
            for (int c = 0; c < 3; c++) MSc[3 * a + c] += h[c] + Mi * pi[c];
            Mc[a] += Mi;
        }
        for (int i = 0; i < nf; i++) {
            int k = m->joint[i];
            if (k < 0) continue;
            double F[3], N[3];
            const double *J = Jc + 9 * i, *h = MSc + 3 * i;
            if (m->sigma[i] == 0) {   /* unit ω̇ about z: F = z × MS, N = J z */
                F[0] = -h[1]; F[1] = h[0]; F[2] = 0.0;
                N[0] = J[2]; N[1] = J[5]; N[2] = J[8];
            } else {                  /* unit V̇ along z: F = M z, N = MS × z */
                F[0] = 0.0; F[1] = 0.0; F[2] = Mc[i];
                N[0] = h[1]; N[1] = -h[0]; N[2] = 0.0;
            }
            As[k * n + k] = (m->sigma[i] == 0 ? N[2] : F[2]) + m->Ia[i];
            for (int j = i; m->parent[j] >= 0; j = m->parent[j]) {   /* carry the wrench to each ancestor */
                double Rf[3], Rn[3], pf[3];
                mat_vec(R + 9 * j, F, Rf); mat_vec(R + 9 * j, N, Rn); cross(p + 3 * j, Rf, pf);
                for (int c = 0; c < 3; c++) { F[c] = Rf[c]; N[c] = Rn[c] + pf[c]; }
                int a = m->parent[j], ka = m->joint[a];
                if (ka >= 0) As[ka * n + k] = As[k * n + ka] = (m->sigma[a] == 0 ? N[2] : F[2]);
            }
        }
    }
    free(work);
    return 0;
}

/* ---- spatial algebra for the articulated-body algorithm, [angular; linear] ---------------- */
/* X^T I X for X = jX_{a(j)}: I (6x6 row-major, about O_j in R_j) expressed about O_a in R_a.
 * Rotation: blocks A, B, C -> R A R^T, R B R^T, R C R^T; shift by p: A - B p̂ + p̂ Bᵀ - p̂ C p̂, B + p̂ C, C. */
static void inertia_to_parent(const double *I, const double *R, const double *p, double *out) {
    double A[9], B[9], C[9], T[9], P[9];
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) {
            A[3 * r + c] = I[6 * r + c]; B[3 * r + c] = I[6 * r + 3 + c]; C[3 * r + c] = I[6 * (r + 3) + 3 + c];
        }
    mat_mul(R, A, T); mat_mul_t(T, R, A);
    mat_mul(R, B, T); mat_mul_t(T, R, B);
    mat_mul(R, C, T); mat_mul_t(T, R, C);
    skew(p, P);
    double BP[9], PBt[9], PC[9], PCP[9];
    mat_mul(B, P, BP);
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) PBt[3 * r + c] = P[3 * r] * B[3 * c] + P[3 * r + 1] * B[3 * c + 1] + P[3 * r + 2] * B[3 * c + 2];
    mat_mul(P, C, PC); mat_mul(PC, P, PCP);
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) {
            double a = A[3 * r + c] - BP[3 * r + c] + PBt[3 * r + c] - PCP[3 * r + c];
            double b = B[3 * r + c] + PC[3 * r + c];
            out[6 * r + c] += a;
            out[6 * r + 3 + c] += b;
            out[6 * (c + 3) + r] += b;
            out[6 * (r + 3) + 3 + c] += C[3 * r + c];
        }
}
/* Force [n; f] about O_j in R_j -> about O_a in R_a: f_a = R f, n_a = R n + p × R f. */
static void force_to_parent(const double *F, const double *R, const double *p, double *out) {
    double n[3], f[3], pf[3];
    mat_vec(R, F, n); mat_vec(R, F + 3, f); cross(p, f, pf);
    for (int c = 0; c < 3; c++) { out[c] += n[c] + pf[c]; out[3 + c] += f[c]; }
}
/* Motion [ω; v] about O_a in R_a -> about O_j in R_j: ω_j = Rᵀ ω, v_j = Rᵀ (v + ω × p). */
static void motion_from_parent(const double *V, const double *R, const double *p, double *out) {
    double t[3];
    cross(V, p, t);
    for (int c = 0; c < 3; c++) t[c] += V[3 + c];
    mat_t_vec(R, V, out); mat_t_vec(R, t, out + 3);
}
static void inertia_times(const double *I, const double *v, double *out) {
    for (int r = 0; r < 6; r++) {
        double s = 0.0;
        for (int c = 0; c < 6; c++) s += I[6 * r + c] * v[c];
        out[r] = s;
    }
}

/* Articulated-body forward dynamics (Featherstone's ABA; Khalil & Dombre §9.7.2 [9.100]-[9.124] is the same
 * recursion in their notation).  tau excludes friction (the caller subtracts Γ_f(q̇)). */
int rd_aba(const rd_model *m, long count, const double *q, const double *qd, const double *tau,
           const double *g, long g_stride, const double *wrench, double *qdd) {
    int nf = m->nf, n = m->n;
    double *work = malloc(sizeof(double) * 82 * (size_t)nf);
    if (!work) return -1;
    double *R = work, *p = R + 9 * nf, *v = p + 3 * nf, *c = v + 6 * nf, *IA = c + 6 * nf, *pA = IA + 36 * nf,
           *U = pA + 6 * nf, *D = U + 6 * nf, *u = D + nf, *acc = u + nf;
    int status = 0;
    for (long s = 0; s < count && !status; s++) {
        const double *qs = q + s * n, *qds = qd + s * n, *taus = tau + s * n, *gs = g + s * g_stride;
        for (int i = 0; i < nf; i++) {
            int a = m->parent[i], k = m->joint[i];
            double *Ri = R + 9 * i, *pi = p + 3 * i, *vi = v + 6 * i, *ci = c + 6 * i, *Ii = IA + 36 * i;
            frame_transform(m, i, k >= 0 ? qs[k] : 0.0, Ri, pi);
            if (a >= 0) motion_from_parent(v + 6 * a, Ri, pi, vi); else memset(vi, 0, 6 * sizeof(double));
            memset(ci, 0, 6 * sizeof(double));
            if (k >= 0) {
                double qdk = qds[k];
                if (m->sigma[i] == 0) {   /* c = v ×m (z q̇) */
                    ci[0] = vi[1] * qdk; ci[1] = -vi[0] * qdk;
                    ci[3] = vi[4] * qdk; ci[4] = -vi[3] * qdk;
                    vi[2] += qdk;
                } else {
                    ci[3] = vi[1] * qdk; ci[4] = -vi[0] * qdk;
                    vi[5] += qdk;
                }
            }
            /* rigid-body spatial inertia [[J, MŜ], [MŜᵀ, M 1]] about O_j */
            const double *J = m->J + 9 * i, *h = m->MS + 3 * i;
            double H[9];
            skew(h, H);
            memset(Ii, 0, 36 * sizeof(double));
            for (int r = 0; r < 3; r++)
                for (int cc = 0; cc < 3; cc++) {
                    Ii[6 * r + cc] = J[3 * r + cc];
                    Ii[6 * r + 3 + cc] = H[3 * r + cc];
                    Ii[6 * (r + 3) + cc] = H[3 * cc + r];
                }
            for (int r = 3; r < 6; r++) Ii[6 * r + r] = m->M[i];
            /* bias pA = v ×* (I v) + wrench by the link on the environment */
            double Iv[6], *pa = pA + 6 * i, t[3], t2[3];
            inertia_times(Ii, vi, Iv);
            cross(vi, Iv, t); cross(vi + 3, Iv + 3, t2);
            for (int r = 0; r < 3; r++) pa[r] = t[r] + t2[r];
            cross(vi, Iv + 3, pa + 3);
            if (wrench) {
                const double *e = wrench + (s * nf + i) * 6;
                for (int r = 0; r < 3; r++) { pa[r] += e[3 + r]; pa[3 + r] += e[r]; }
            }
        }
        for (int i = nf - 1; i >= 0; i--) {
            int a = m->parent[i], k = m->joint[i];
            double *Ii = IA + 36 * i, *pa = pA + 6 * i, *ci = c + 6 * i, Ic[6];
            if (k >= 0) {
                int axis = m->sigma[i] == 0 ? 2 : 5;
                double *Ui = U + 6 * i;
                for (int r = 0; r < 6; r++) Ui[r] = Ii[6 * r + axis];
                D[i] = Ui[axis] + m->Ia[i];
                double scale = fabs(Ii[0]) + fabs(Ii[7]) + fabs(Ii[14]) + fabs(Ii[21]) + fabs(Ii[28]) + fabs(Ii[35]) + m->Ia[i];
                if (!(D[i] > 1e-13 * scale) || !(D[i] > 0.0)) { status = k + 1; break; }
                u[i] = taus[k] - pa[axis];
                D[i] = 1.0 / D[i];  /* kept as 1/D: one division per joint */
                double Ud[6];
                for (int r = 0; r < 6; r++) Ud[r] = Ui[r] * D[i];
                for (int r = 0; r < 6; r++)
                    for (int cc = 0; cc < 6; cc++) Ii[6 * r + cc] -= Ud[r] * Ui[cc];
                inertia_times(Ii, ci, Ic);
                for (int r = 0; r < 6; r++) pa[r] += Ic[r] + Ud[r] * u[i];
            }
            if (a >= 0) {
                inertia_to_parent(Ii, R + 9 * i, p + 3 * i, IA + 36 * a);
                force_to_parent(pa, R + 9 * i, p + 3 * i, pA + 6 * a);
            }
        }
        if (status) break;
        for (int i = 0; i < nf; i++) {
            int a = m->parent[i], k = m->joint[i];
            double *ai = acc + 6 * i, base[6] = {0, 0, 0, -gs[0], -gs[1], -gs[2]};   /* V̇_0 = -g [9.80] */
            motion_from_parent(a >= 0 ? acc + 6 * a : base, R + 9 * i, p + 3 * i, ai);
            for (int r = 0; r < 6; r++) ai[r] += c[6 * i + r];
            if (k >= 0) {
                const double *Ui = U + 6 * i;
                double Ua = 0.0;
                for (int r = 0; r < 6; r++) Ua += Ui[r] * ai[r];
                double x = (u[i] - Ua) * D[i];
                qdd[s * n + k] = x;
                ai[m->sigma[i] == 0 ? 2 : 5] += x;
            }
        }
    }
    free(work);
    return status;
}

/* Regressor of the 10 standard parameters of every frame (Khalil & Dombre [9.36]): D[s, k, stride*i + c].
 * Link i's wrench is [F; N] = Φ_i K_i ([9.88]-[9.89]); the block of joint k and link i (i in the subtree of k)
 * is s_ki^T Φ_i with s_ki = [v; ω], the motion of O_i in R_i for a unit velocity of joint k.  The caller zeroes
 * D and fills the Ia and friction columns. */
int rd_regressor(const rd_model *m, long count, const double *q, const double *qd, const double *qdd,
                 const double *g, long g_stride, double *Dout, long stride) {
    int nf = m->nf, n = m->n;
    double *work = malloc(sizeof(double) * (81 + 6) * (size_t)nf + sizeof(double) * 15 * (size_t)nf);
    char *inside = malloc((size_t)nf);
    if (!work || !inside) { free(work); free(inside); return -1; }
    double *R = work, *p = R + 9 * nf, *w = p + 3 * nf, *wd = w + 3 * nf, *Vd = wd + 3 * nf,
           *Phi = Vd + 3 * nf, *sv = Phi + 60 * nf;
    for (long s = 0; s < count; s++) {
        forward_recursion(m, q + s * n, qd + s * n, qdd + s * n, g + s * g_stride, R, p, w, wd, Vd);
        for (int i = 0; i < nf; i++) {
            const double *wi = w + 3 * i, *wdi = wd + 3 * i, *Vdi = Vd + 3 * i;
            double *P = Phi + 60 * i;   /* rows F (3) then N (3); columns XX XY XZ YY YZ ZZ MX MY MZ M */
            memset(P, 0, 60 * sizeof(double));
            static const int idx[6][2] = {{0, 0}, {0, 1}, {0, 2}, {1, 1}, {1, 2}, {2, 2}};
            for (int col = 0; col < 6; col++) {      /* N = J ω̇ + ω × (J ω) for a unit entry of J */
                double E[9] = {0}, t[3], u2[3];
                E[3 * idx[col][0] + idx[col][1]] = 1.0; E[3 * idx[col][1] + idx[col][0]] = 1.0;
                mat_vec(E, wdi, t); mat_vec(E, wi, u2); cross(wi, u2, u2);
                for (int r = 0; r < 3; r++) P[10 * (3 + r) + col] = t[r] + u2[r];
            }
            for (int col = 0; col < 3; col++) {      /* F = ω̇ × MS + ω × (ω × MS), N = MS × V̇ */
                double e[3] = {0, 0, 0}, t[3], u2[3], v2[3];
                e[col] = 1.0;
                cross(wdi, e, t); cross(wi, e, u2); cross(wi, u2, u2); cross(e, Vdi, v2);
                for (int r = 0; r < 3; r++) { P[10 * r + 6 + col] = t[r] + u2[r]; P[10 * (3 + r) + 6 + col] = v2[r]; }
            }
            for (int r = 0; r < 3; r++) P[10 * r + 9] = Vdi[r];
        }
        double *Ds = Dout + s * n * stride;
        for (int kf = 0; kf < nf; kf++) {
            int k = m->joint[kf];
            if (k < 0) continue;
            memset(inside, 0, (size_t)nf);
            for (int i = kf; i < nf; i++) {
                double *si = sv + 6 * i;
                if (i == kf) {
                    memset(si, 0, 6 * sizeof(double));
                    if (m->sigma[i] == 0) si[5] = 1.0; else si[2] = 1.0;   /* [v; ω] */
                } else {
                    int a = m->parent[i];
                    if (a < kf || !inside[a]) continue;
                    double *sa = sv + 6 * a, t[3];
                    cross(sa + 3, p + 3 * i, t);
                    for (int c2 = 0; c2 < 3; c2++) t[c2] += sa[c2];
                    mat_t_vec(R + 9 * i, t, si);
                    mat_t_vec(R + 9 * i, sa + 3, si + 3);
                }
                inside[i] = 1;
                const double *P = Phi + 60 * i;
                double *row = Ds + k * stride + 11 * i;
                for (int col = 0; col < 10; col++) {
                    double x = 0.0;
                    for (int r = 0; r < 6; r++) x += si[r] * P[10 * r + col];
                    row[col] = x;
                }
            }
        }
    }
    free(work);
    free(inside);
    return 0;
}

#ifdef RD_PYTHON
/* ---- CPython entry for one state -------------------------------------------------------------------------
 * model(ints, doubles) -> capsule: ints = [nf, n, parent(nf), sigma(nf), joint(nf)] (int32), doubles = [RA(9nf),
 * pA(3nf), theta(nf), r(nf), J(9nf), MS(3nf), M(nf), Ia(nf), Fc(n), Fv(n), Foff(n)] (float64), copied.
 * single(capsule, kind, a, b, c, g, out) -> 0, or nonzero when the general path must run (a buffer of another
 * type or size: -1; NaN/inf in an argument or in the result: -2; a singular joint: k + 1).
 * kind 0: inverse dynamics (q, qd, qdd) with friction and Ia; 1: gravity torques (q; b, c ignored);
 * 2: inertia matrix (q; b, c ignored), out n*n; 3: direct dynamics (q, qd, tau) with friction. */
typedef struct { rd_model m; int *ints; double *doubles; const double *Fc, *Fv, *Foff; } rd_packed;

static void rd_capsule_free(PyObject *cap) {
    rd_packed *p = (rd_packed *)PyCapsule_GetPointer(cap, "robodyn.rd_model");
    if (p) { free(p->ints); free(p->doubles); free(p); }
}

static PyObject *rd_py_model(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    Py_buffer bi, bd;
    if (nargs != 2) { PyErr_SetString(PyExc_TypeError, "model(ints, doubles)"); return NULL; }
    if (PyObject_GetBuffer(args[0], &bi, PyBUF_C_CONTIGUOUS) != 0) return NULL;
    if (PyObject_GetBuffer(args[1], &bd, PyBUF_C_CONTIGUOUS) != 0) { PyBuffer_Release(&bi); return NULL; }
    rd_packed *p = calloc(1, sizeof(rd_packed));
    int ok = p != NULL && bi.len >= 2 * (Py_ssize_t)sizeof(int);
    if (ok) {
        p->ints = malloc(bi.len); p->doubles = malloc(bd.len > 0 ? bd.len : 1);
        ok = p->ints && p->doubles;
    }
    if (ok) {
        memcpy(p->ints, bi.buf, bi.len); memcpy(p->doubles, bd.buf, bd.len);
        int nf = p->ints[0], n = p->ints[1];
        ok = bi.len == (Py_ssize_t)sizeof(int) * (2 + 3 * nf)
             && bd.len == (Py_ssize_t)sizeof(double) * (28 * nf + 3 * n);
        if (ok) {
            double *d = p->doubles;
            p->m.nf = nf; p->m.n = n;
            p->m.parent = p->ints + 2; p->m.sigma = p->ints + 2 + nf; p->m.joint = p->ints + 2 + 2 * nf;
            p->m.RA = d; p->m.pA = d + 9 * nf; p->m.theta = d + 12 * nf; p->m.r = d + 13 * nf;
            p->m.J = d + 14 * nf; p->m.MS = d + 23 * nf; p->m.M = d + 26 * nf; p->m.Ia = d + 27 * nf;
            p->Fc = d + 28 * nf; p->Fv = p->Fc + n; p->Foff = p->Fv + n;
        }
    }
    PyBuffer_Release(&bi); PyBuffer_Release(&bd);
    if (!ok) {
        if (p) { free(p->ints); free(p->doubles); free(p); }
        PyErr_SetString(PyExc_ValueError, "model(): inconsistent buffers");
        return NULL;
    }
    return PyCapsule_New(p, "robodyn.rd_model", rd_capsule_free);
}

static int rd_all_finite(const double *a, long n) {
    int ok = 1;
    for (long k = 0; k < n; ++k) ok &= (a[k] - a[k] == 0.0);
    return ok;
}

static PyObject *rd_py_single(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 7) return PyLong_FromLong(-1);
    rd_packed *p = (rd_packed *)PyCapsule_GetPointer(args[0], "robodyn.rd_model");
    if (!p) { PyErr_Clear(); return PyLong_FromLong(-1); }
    long kind = PyLong_AsLong(args[1]);
    int n = p->m.n;
    Py_ssize_t sizes[5] = {n, n, n, 3, kind == 2 ? (Py_ssize_t)n * n : n};
    int used[5] = {1, kind == 0 || kind == 3, kind == 0 || kind == 3, kind != 2, 1};
    Py_buffer b[5];
    long code = 0;
    int got = 0;
    for (; got < 5; ++got) {
        int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (got == 4 ? PyBUF_WRITABLE : 0);
        if (PyObject_GetBuffer(args[2 + got], &b[got], flags) != 0) { PyErr_Clear(); code = -1; break; }
        if (!used[got]) continue;
        if (b[got].itemsize != 8 || b[got].format == NULL || b[got].format[0] != 'd' || b[got].format[1] != 0
            || b[got].len != sizes[got] * 8 || (got < 4 && b[got].ndim != 1)) { ++got; code = -1; break; }
        if (got < 4 && !rd_all_finite((const double *)b[got].buf, sizes[got])) { ++got; code = -2; break; }
    }
    if (code == 0) {
        const double *q = b[0].buf, *x = b[1].buf, *y = b[2].buf, *g = b[3].buf;
        double *out = b[4].buf;
        if (kind == 0) {
            code = rd_rnea(&p->m, 1, q, x, y, g, 0, NULL, out);
            for (int k = 0; k < n; ++k) out[k] += p->Fc[k] * (double)((x[k] > 0) - (x[k] < 0)) + p->Fv[k] * x[k] + p->Foff[k];
        } else if (kind == 1) {
            code = rd_gravity(&p->m, 1, q, g, 0, out);
        } else if (kind == 2) {
            memset(out, 0, sizeof(double) * (size_t)n * n);
            code = rd_crba(&p->m, 1, q, out);
        } else if (kind == 3) {
            double *rhs = malloc(sizeof(double) * (n > 0 ? n : 1));
            if (!rhs) code = -1;
            else {
                for (int k = 0; k < n; ++k)
                    rhs[k] = y[k] - (p->Fc[k] * (double)((x[k] > 0) - (x[k] < 0)) + p->Fv[k] * x[k] + p->Foff[k]);
                code = rd_aba(&p->m, 1, q, x, rhs, g, 0, NULL, out);
                free(rhs);
            }
        } else code = -1;
        if (code == 0 && !rd_all_finite(out, sizes[4])) code = -2;
    }
    for (int i = 0; i < got && i < 5; ++i) PyBuffer_Release(&b[i]);
    return PyLong_FromLong(code);
}

static PyMethodDef rd_generic_methods[] = {
    {"model", (PyCFunction)(void (*)(void))rd_py_model, METH_FASTCALL, NULL},
    {"single", (PyCFunction)(void (*)(void))rd_py_single, METH_FASTCALL, NULL},
    {NULL, NULL, 0, NULL}};
static struct PyModuleDef rd_generic_module = {PyModuleDef_HEAD_INIT, "rdgeneric", NULL, -1, rd_generic_methods,
                                               NULL, NULL, NULL, NULL};
PyMODINIT_FUNC PyInit_rdgeneric(void) { return PyModule_Create(&rd_generic_module); }
#endif
