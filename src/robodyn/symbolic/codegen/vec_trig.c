typedef unsigned long long rd_u4 __attribute__((vector_size(4 * sizeof(double))));
typedef long long rd_i4 __attribute__((vector_size(4 * sizeof(double))));
RD_ALWAYS_INLINE rd_v4 rd_v4ksin(rd_v4 r, rd_v4 z) {
    return r + r * z * (-1.66666666666666324348e-01 + z * (8.33333333332248946124e-03 + z * (-1.98412698298579493134e-04
           + z * (2.75573137070700676789e-06 + z * (-2.50507602534068634195e-08 + z * 1.58969099521155010221e-10)))));
}
RD_ALWAYS_INLINE rd_v4 rd_v4kcos(rd_v4 z) {
    rd_v4 hz = 0.5 * z, w = 1.0 - hz;
    return w + (((1.0 - w) - hz) + z * z * (4.16666666666666019037e-02 + z * (-1.38888888888741095749e-03
           + z * (2.48015872894767294178e-05 + z * (-2.75573143513906633035e-07 + z * (2.08757232129817482790e-09
           + z * -1.13596475577881948265e-11))))));
}
/* x = k pi/2 + r as rd_reduce; k as integers, and the kernels' values on r */
RD_ALWAYS_INLINE rd_u4 rd_v4reduce(rd_v4 x, rd_v4 *s, rd_v4 *c) {
    const double magic = 6755399441055744.0;
    rd_v4 k = (x * 0.63661977236758134308 + magic) - magic;
    rd_v4 r = ((x - k * 1.57079632673412561417e+00) - k * 6.07710050630396597660e-11) - k * 2.02226624871116645580e-21;
    rd_v4 z = r * r;
    *s = rd_v4ksin(r, z);
    *c = rd_v4kcos(z);
    return (rd_u4)__builtin_convertvector(k, rd_i4);
}
RD_ALWAYS_INLINE rd_v4 rd_v4pick(rd_u4 odd, rd_v4 a, rd_v4 b) {  /* a where odd, else b */
    return (rd_v4)(((rd_u4)a & odd) | ((rd_u4)b & ~odd));
}
RD_ALWAYS_INLINE rd_v4 rd_v4sin_(rd_v4 x) {
    rd_v4 s, c;
    rd_u4 n = rd_v4reduce(x, &s, &c), odd = (rd_u4)((n & 1) != 0);
    return (rd_v4)((rd_u4)rd_v4pick(odd, c, s) ^ ((n & 2) << 62));
}
RD_ALWAYS_INLINE rd_v4 rd_v4cos_(rd_v4 x) {
    rd_v4 s, c;
    rd_u4 n = rd_v4reduce(x, &s, &c), odd = (rd_u4)((n & 1) != 0);
    return (rd_v4)((rd_u4)rd_v4pick(odd, s, c) ^ (((n + 1) & 2) << 62));
}
