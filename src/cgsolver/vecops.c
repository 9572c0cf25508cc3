/* vecops.c - fused vector kernels (see vecops.h). */
#include "vecops.h"
#include "common.h"

double vec_dot(int n, const double *restrict a, const double *restrict b)
{
    double s = 0.0;
    CG_OMP(parallel for schedule(static) reduction(+:s))
    for (int i = 0; i < n; i++)
        s += a[i] * b[i];
    return s;
}

void cg_classic_init(int n, const double *restrict b, const double *restrict q,
                     double *restrict r, double *restrict p, const double *restrict dinv,
                     double out[2])
{
    double rr = 0.0, rz = 0.0;
    CG_OMP(parallel for schedule(static) reduction(+:rr,rz))
    for (int i = 0; i < n; i++) {
        double ri = q ? b[i] - q[i] : b[i];
        double zi = dinv ? dinv[i] * ri : ri;
        r[i] = ri;
        p[i] = zi;
        rr += ri * ri;
        rz += ri * zi;
    }
    out[0] = rr;
    out[1] = rz;
}

void cg_classic_update(int n, double a, double *restrict x, const double *restrict p,
                       double *restrict r, const double *restrict q,
                       const double *restrict dinv, double out[2])
{
    double rr = 0.0, rz = 0.0;
    if (dinv) {
        CG_OMP(parallel for schedule(static) reduction(+:rr,rz))
        for (int i = 0; i < n; i++) {
            x[i] += a * p[i];
            double ri = r[i] - a * q[i];
            r[i] = ri;
            rr += ri * ri;
            rz += ri * ri * dinv[i];
        }
    } else {
        CG_OMP(parallel for schedule(static) reduction(+:rr))
        for (int i = 0; i < n; i++) {
            x[i] += a * p[i];
            double ri = r[i] - a * q[i];
            r[i] = ri;
            rr += ri * ri;
        }
        rz = rr;
    }
    out[0] = rr;
    out[1] = rz;
}

double cg_classic_update_flops(int jacobi) { return jacobi ? 9.0 : 6.0; }
/* reads x p r q (+dinv), writes x r */
double cg_classic_update_bytes(int jacobi) { return 8.0 * (jacobi ? 7 : 6); }

void cg_classic_direction(int n, double b, double *restrict p, const double *restrict r,
                          const double *restrict dinv)
{
    if (dinv) {
        CG_OMP(parallel for schedule(static))
        for (int i = 0; i < n; i++)
            p[i] = dinv[i] * r[i] + b * p[i];
    } else {
        CG_OMP(parallel for schedule(static))
        for (int i = 0; i < n; i++)
            p[i] = r[i] + b * p[i];
    }
}

double cg_classic_direction_flops(int jacobi) { return jacobi ? 3.0 : 2.0; }
/* reads r p (+dinv), writes p */
double cg_classic_direction_bytes(int jacobi) { return 8.0 * (jacobi ? 4 : 3); }

void cg_pipe_init(int n, const double *restrict r, const double *restrict w,
                  double *restrict m, const double *restrict dinv, double out[3])
{
    double g = 0.0, rr = 0.0;
    if (dinv) {
        CG_OMP(parallel for schedule(static) reduction(+:g,rr))
        for (int i = 0; i < n; i++) {
            double ri = r[i];
            rr += ri * ri;
            g += ri * ri * dinv[i];
            m[i] = dinv[i] * w[i];
        }
    } else {
        CG_OMP(parallel for schedule(static) reduction(+:rr))
        for (int i = 0; i < n; i++)
            rr += r[i] * r[i];
        g = rr;
    }
    out[0] = g;
    out[2] = rr;
}

void cg_pipe_update(int n, double a, double b, double *restrict x, double *restrict r,
                    double *restrict w, double *restrict m, double *restrict p,
                    double *restrict s, double *restrict z, const double *restrict nv,
                    const double *restrict dinv, double out[3])
{
    double g = 0.0, d = 0.0, rr = 0.0;
    if (dinv) {
        CG_OMP(parallel for schedule(static) reduction(+:g,d,rr))
        for (int i = 0; i < n; i++) {
            double zi = nv[i] + b * z[i];
            double si = w[i] + b * s[i];
            double pi = dinv[i] * r[i] + b * p[i];
            z[i] = zi;
            s[i] = si;
            p[i] = pi;
            x[i] += a * pi;
            double ri = r[i] - a * si;
            double wi = w[i] - a * zi;
            double ui = dinv[i] * ri;
            r[i] = ri;
            w[i] = wi;
            m[i] = dinv[i] * wi;
            g += ri * ui;
            d += wi * ui;
            rr += ri * ri;
        }
    } else {
        CG_OMP(parallel for schedule(static) reduction(+:g,d))
        for (int i = 0; i < n; i++) {
            double zi = nv[i] + b * z[i];
            double si = w[i] + b * s[i];
            double pi = r[i] + b * p[i];
            z[i] = zi;
            s[i] = si;
            p[i] = pi;
            x[i] += a * pi;
            double ri = r[i] - a * si;
            double wi = w[i] - a * zi;
            r[i] = ri;
            w[i] = wi;
            g += ri * ri;
            d += wi * ri;
        }
        rr = g;
    }
    out[0] = g;
    out[1] = d;
    out[2] = rr;
}

/* none: 6 axpy-type updates (12) + 2 dots (4) = 16;
 * jacobi: + p uses dinv*r (1) + u (1) + m (1) + third dot (2) = 21 */
double cg_pipe_update_flops(int jacobi) { return jacobi ? 21.0 : 16.0; }
/* none: reads nv z w s r p x, writes z s p x r w = 13;
 * jacobi: + read dinv, write m = 15 */
double cg_pipe_update_bytes(int jacobi) { return 8.0 * (jacobi ? 15 : 13); }
