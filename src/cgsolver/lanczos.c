/* lanczos.c - Ritz values of the CG Lanczos matrix by Sturm-sequence
 * bisection (O(k) per step, robust, no LAPACK needed). */
#include "lanczos.h"
#include "common.h"

#include <math.h>

/* Number of eigenvalues of the tridiagonal (d, e) smaller than x. */
static int sturm_count(const double *d, const double *e, int k, double x)
{
    int cnt = 0;
    double q = 1.0;
    for (int j = 0; j < k; j++) {
        double off = j > 0 ? e[j - 1] * e[j - 1] : 0.0;
        q = d[j] - x - (j > 0 ? off / q : 0.0);
        if (q == 0.0)
            q = -1e-300;
        if (q < 0.0)
            cnt++;
    }
    return cnt;
}

static double bisect(const double *d, const double *e, int k, int index, double lo, double hi)
{
    /* smallest x with count(x) > index, i.e. eigenvalue number 'index' */
    for (int it = 0; it < 200 && hi - lo > 1e-15 * fmax(fabs(lo), fabs(hi)); it++) {
        double mid = 0.5 * (lo + hi);
        if (sturm_count(d, e, k, mid) > index)
            hi = mid;
        else
            lo = mid;
    }
    return 0.5 * (lo + hi);
}

int lanczos_extremes(const double *alpha, const double *beta, int k, double *lmin, double *lmax)
{
    if (k < 1)
        return -1;
    double *d = cg_xmalloc(sizeof(double) * (size_t)k);
    double *e = cg_xmalloc(sizeof(double) * (size_t)k);
    for (int j = 0; j < k; j++) {
        d[j] = 1.0 / alpha[j] + (j > 0 ? beta[j] / alpha[j - 1] : 0.0);
        e[j] = j + 1 < k ? sqrt(beta[j + 1]) / alpha[j] : 0.0;
    }
    /* Gershgorin interval */
    double lo = INFINITY, hi = -INFINITY;
    for (int j = 0; j < k; j++) {
        double rad = (j > 0 ? fabs(e[j - 1]) : 0.0) + fabs(e[j]);
        lo = fmin(lo, d[j] - rad);
        hi = fmax(hi, d[j] + rad);
    }
    *lmin = bisect(d, e, k, 0, lo, hi);
    *lmax = bisect(d, e, k, k - 1, lo, hi);
    cg_free(d);
    cg_free(e);
    return 0;
}
