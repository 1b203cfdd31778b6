static inline double rd_reduce(double x, double *r) {
    const double magic = 6755399441055744.0;  /* 1.5 * 2^52: adding it rounds to an integer */
    double k = (x * 0.63661977236758134308 + magic) - magic;
    *r = ((x - k * 1.57079632673412561417e+00) - k * 6.07710050630396597660e-11) - k * 2.02226624871116645580e-21;
    return k;
}
static inline double rd_ksin(double r, double z) {
    return r + r * z * (-1.66666666666666324348e-01 + z * (8.33333333332248946124e-03 + z * (-1.98412698298579493134e-04
           + z * (2.75573137070700676789e-06 + z * (-2.50507602534068634195e-08 + z * 1.58969099521155010221e-10)))));
}
static inline double rd_kcos(double z) {
    double hz = 0.5 * z, w = 1.0 - hz;
    return w + (((1.0 - w) - hz) + z * z * (4.16666666666666019037e-02 + z * (-1.38888888888741095749e-03
           + z * (2.48015872894767294178e-05 + z * (-2.75573143513906633035e-07 + z * (2.08757232129817482790e-09
           + z * -1.13596475577881948265e-11))))));
}
static inline double rd_sin(double x) {
    if (!(fabs(x) < 1e5)) return sin(x);
    double r, k = rd_reduce(x, &r), z = r * r;
    long n = (long)k;
    double v = (n & 1) ? rd_kcos(z) : rd_ksin(r, z);
    return (n & 2) ? -v : v;
}
/* branch-free versions for the vectorized lanes (caller guarantees |x| < 1e5) */
static inline double rd_vsin(double x) {
    double r, k = rd_reduce(x, &r), z = r * r;
    long n = (long)k;
    double s = rd_ksin(r, z), c = rd_kcos(z), v = (n & 1) ? c : s;
    return (n & 2) ? -v : v;
}
static inline double rd_vcos(double x) {
    double r, k = rd_reduce(x, &r), z = r * r;
    long n = (long)k;
    double s = rd_ksin(r, z), c = rd_kcos(z), v = (n & 1) ? s : c;
    return ((n + 1) & 2) ? -v : v;
}
static inline double rd_cos(double x) {
    if (!(fabs(x) < 1e5)) return cos(x);
    double r, k = rd_reduce(x, &r), z = r * r;
    long n = (long)k;
    double v = (n & 1) ? rd_ksin(r, z) : rd_kcos(z);
    return ((n + 1) & 2) ? -v : v;
}
