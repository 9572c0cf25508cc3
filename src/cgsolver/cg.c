/* cg.c - classic and pipelined CG with residual replacement on stagnation
 * of the true residual. */
#include "cg.h"
#include "common.h"
#include "lanczos.h"
#include "mpi_stats.h"
#include "spmv.h"
#include "vecops.h"

#include <math.h>
#include <string.h>

typedef struct {
    double *alpha, *beta;
    int n, cap, frozen;
} lanczos_log;

static void lz_add(lanczos_log *l, double a, double b)
{
    if (l->frozen || l->n >= l->cap)
        return;
    l->alpha[l->n] = a;
    l->beta[l->n] = b;
    l->n++;
}

static void probe_at(cg_probe *pr, int iterations)
{
    if (!pr || !pr->fn || pr->every <= 0 || iterations % pr->every != 0)
        return;
    mpi_counts before = g_mpi_counts, used;
    double t0 = MPI_Wtime();
    pr->fn(pr->arg);
    pr->time += MPI_Wtime() - t0;
    mpi_counts_diff(&g_mpi_counts, &before, &used);
    mpi_counts_add(&pr->counts, &used);
}

static void allreduce_sum(const double *in, double *out, int n, dist_csr *A, perf_stats *ps)
{
    double t0 = MPI_Wtime();
    cgm_allreduce(in, out, n, MPI_DOUBLE, MPI_SUM, A->comm);
    ps->t_reduce += MPI_Wtime() - t0;
}

double true_residual_norm(dist_csr *A, const double *b, double *x, double *tmp, perf_stats *ps)
{
    spmv(A, x, tmp, NULL, ps, NULL);
    double t0 = MPI_Wtime();
    double s = 0.0;
    const int n = A->nlocal;
    CG_OMP(parallel for schedule(static) reduction(+:s))
    for (int i = 0; i < n; i++) {
        double d = b[i] - tmp[i];
        s += d * d;
    }
    if (ps) {
        ps->t_vector += MPI_Wtime() - t0;
        ps->flops += 3.0 * (double)A->nglobal;
        ps->bytes += 16.0 * (double)A->nglobal;
    }
    double g = 0.0;
    double t1 = MPI_Wtime();
    cgm_allreduce(&s, &g, 1, MPI_DOUBLE, MPI_SUM, A->comm);
    if (ps)
        ps->t_reduce += MPI_Wtime() - t1;
    return sqrt(g);
}

/* Returns 1 if the true residual meets tol (else a restart is wanted). */
static int true_residual_ok(dist_csr *A, const double *b, double *x, double *tmp,
                            const cg_options *o, cg_result *res)
{
    double tr = true_residual_norm(A, b, x, tmp, &res->perf) / res->bnorm;
    return tr <= o->tol;
}

/* End of one CG cycle (classic and pipelined alike): on a breakdown, or
 * when the true residual does not confirm the recurrence, the caller restarts
 * from the true residual; returns 1 when the solve is over. */
static int cycle_over(dist_csr *A, const double *b, double *x, double *work,
                      const cg_options *o, cg_result *res, double rel, int cycle)
{
    if (res->breakdown && cycle < CG_MAX_RESTARTS && res->iterations < o->maxit) {
        /* Loss of positivity / orthogonality (e.g. stagnation near
         * machine precision): restart from the true residual. */
        res->breakdown = 0;
        res->restarts++;
        return 0;
    }
    res->converged = rel <= o->tol && !res->breakdown;
    if (!res->converged || res->iterations >= o->maxit || cycle >= CG_MAX_RESTARTS)
        return 1;
    if (true_residual_ok(A, b, x, work, o, res))
        return 1;
    res->restarts++;
    return 0;
}

static void classic(dist_csr *A, const double *b, double *x, const cg_options *o,
                    cg_probe *probe, cg_result *res, lanczos_log *lz)
{
    const int n = A->nlocal, len = csr_vec_len(A);
    const double N = (double)A->nglobal;
    const double *dinv = o->precond == PC_JACOBI ? A->inv_diag : NULL;
    const int jac = dinv != NULL;
    perf_stats *ps = &res->perf;
    double *r = cg_xcalloc((size_t)len, sizeof(double));
    double *p = cg_xcalloc((size_t)len, sizeof(double));
    double *q = cg_xcalloc((size_t)len, sizeof(double));
    int x_is_zero = 1;
    for (int i = 0; i < n; i++)
        if (x[i] != 0.0) {
            x_is_zero = 0;
            break;
        }

    for (int cycle = 0;; cycle++) {
        double loc[2], glob[2], t0;
        if (!x_is_zero || cycle > 0)
            spmv(A, x, q, NULL, ps, NULL);
        t0 = MPI_Wtime();
        cg_classic_init(n, b, (!x_is_zero || cycle > 0) ? q : NULL, r, p, dinv, loc);
        ps->t_vector += MPI_Wtime() - t0;
        ps->flops += N * (jac ? 6.0 : 5.0);
        ps->bytes += 8.0 * N * (3 + jac + (x_is_zero && cycle == 0 ? 0 : 1));
        allreduce_sum(loc, glob, 2, A, ps);
        double rr = glob[0], rz = glob[1];
        double rel = sqrt(rr) / res->bnorm, beta_cur = 0.0;
        if (cycle == 0)
            res->res0 = rel;
        res->res_final = rel;

        while (rel > o->tol && res->iterations < o->maxit) {
            double pq_loc, pq;
            spmv(A, p, q, &pq_loc, ps, NULL);
            allreduce_sum(&pq_loc, &pq, 1, A, ps);
            if (!(pq > 0.0) || !isfinite(pq)) {
                res->breakdown = 1;
                break;
            }
            double alpha = rz / pq;
            t0 = MPI_Wtime();
            cg_classic_update(n, alpha, x, p, r, q, dinv, loc);
            ps->t_vector += MPI_Wtime() - t0;
            ps->flops += N * cg_classic_update_flops(jac);
            ps->bytes += N * cg_classic_update_bytes(jac);
            allreduce_sum(loc, glob, 2, A, ps);
            res->iterations++;
            probe_at(probe, res->iterations);
            double beta = glob[1] / rz;
            lz_add(lz, alpha, beta_cur); /* beta_cur formed the current p */
            beta_cur = beta;
            rr = glob[0];
            rz = glob[1];
            rel = sqrt(rr) / res->bnorm;
            res->res_final = rel;
            if (!isfinite(rel)) {
                res->breakdown = 1;
                break;
            }
            if (rel <= o->tol)
                break;
            t0 = MPI_Wtime();
            cg_classic_direction(n, beta, p, r, dinv);
            ps->t_vector += MPI_Wtime() - t0;
            ps->flops += N * cg_classic_direction_flops(jac);
            ps->bytes += N * cg_classic_direction_bytes(jac);
        }
        lz->frozen = 1;
        if (cycle_over(A, b, x, q, o, res, rel, cycle))
            break;
    }
    cg_free(r);
    cg_free(p);
    cg_free(q);
}

static void pipelined(dist_csr *A, const double *b, double *x, const cg_options *o,
                      cg_probe *probe, cg_result *res, lanczos_log *lz)
{
    const int n = A->nlocal, len = csr_vec_len(A);
    const double N = (double)A->nglobal;
    const double *dinv = o->precond == PC_JACOBI ? A->inv_diag : NULL;
    const int jac = dinv != NULL;
    perf_stats *ps = &res->perf;
    double *r = cg_xcalloc((size_t)len, sizeof(double));
    double *w = cg_xcalloc((size_t)len, sizeof(double));
    double *nv = cg_xcalloc((size_t)len, sizeof(double));
    double *z = cg_xcalloc((size_t)len, sizeof(double));
    double *s = cg_xcalloc((size_t)len, sizeof(double));
    double *p = cg_xcalloc((size_t)len, sizeof(double));
    double *m = jac ? cg_xcalloc((size_t)len, sizeof(double)) : NULL;
    double *spmv_in = jac ? m : w; /* m = M^{-1} w */
    int x_is_zero = 1;
    for (int i = 0; i < n; i++)
        if (x[i] != 0.0) {
            x_is_zero = 0;
            break;
        }

    for (int cycle = 0;; cycle++) {
        double loc[3], glob[3], t0, t1;
        int k = 0;
        /* r = b - A x */
        if (!x_is_zero || cycle > 0) {
            spmv(A, x, nv, NULL, ps, NULL);
            t0 = MPI_Wtime();
            for (int i = 0; i < n; i++)
                r[i] = b[i] - nv[i];
            ps->flops += N;
            ps->bytes += 24.0 * N;
        } else {
            t0 = MPI_Wtime();
            memcpy(r, b, sizeof(double) * (size_t)n);
            ps->bytes += 16.0 * N;
        }
        /* u = M^{-1} r (kept in m temporarily), w = A u, delta = (u, w) */
        double *u = r;
        if (jac) {
            for (int i = 0; i < n; i++)
                m[i] = dinv[i] * r[i];
            u = m;
            ps->flops += N;
            ps->bytes += 24.0 * N;
        }
        memset(z, 0, sizeof(double) * (size_t)n);
        memset(s, 0, sizeof(double) * (size_t)n);
        memset(p, 0, sizeof(double) * (size_t)n);
        ps->t_vector += MPI_Wtime() - t0;
        spmv(A, u, w, &loc[1], ps, NULL);
        t0 = MPI_Wtime();
        cg_pipe_init(n, r, w, m, dinv, loc);
        ps->t_vector += MPI_Wtime() - t0;
        ps->flops += N * (jac ? 4.0 : 2.0);
        ps->bytes += 8.0 * N * (jac ? 4 : 1);

        MPI_Request req;
        t0 = MPI_Wtime();
        cgm_iallreduce(loc, glob, 3, MPI_DOUBLE, MPI_SUM, A->comm, &req);
        ps->t_reduce += MPI_Wtime() - t0;

        double gamma_old = 0.0, alpha_old = 0.0, rel = INFINITY;
        for (;;) {
            /* n = A m, overlapped with the reduction in flight */
            spmv(A, spmv_in, nv, NULL, ps, &req);
            t0 = MPI_Wtime();
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            ps->t_reduce += MPI_Wtime() - t0;
            if (k > 0)
                probe_at(probe, res->iterations);
            double gamma = glob[0], delta = glob[1];
            rel = sqrt(glob[2]) / res->bnorm;
            if (cycle == 0 && k == 0)
                res->res0 = rel;
            res->res_final = rel;
            if (!isfinite(rel)) {
                res->breakdown = 1;
                break;
            }
            if (rel <= o->tol || res->iterations >= o->maxit)
                break;
            double alpha, beta;
            if (k == 0) {
                beta = 0.0;
                alpha = gamma / delta;
            } else {
                beta = gamma / gamma_old;
                alpha = gamma / (delta - beta * gamma / alpha_old);
            }
            if (!(alpha > 0.0) || !isfinite(alpha)) {
                res->breakdown = 1;
                break;
            }
            lz_add(lz, alpha, beta);
            t1 = MPI_Wtime();
            cg_pipe_update(n, alpha, beta, x, r, w, m, p, s, z, nv, dinv, loc);
            ps->t_vector += MPI_Wtime() - t1;
            ps->flops += N * cg_pipe_update_flops(jac);
            ps->bytes += N * cg_pipe_update_bytes(jac);
            t1 = MPI_Wtime();
            cgm_iallreduce(loc, glob, 3, MPI_DOUBLE, MPI_SUM, A->comm, &req);
            ps->t_reduce += MPI_Wtime() - t1;
            res->iterations++;
            k++;
            gamma_old = gamma;
            alpha_old = alpha;
        }
        lz->frozen = 1;
        if (cycle_over(A, b, x, nv, o, res, rel, cycle))
            break;
    }
    cg_free(r);
    cg_free(w);
    cg_free(nv);
    cg_free(z);
    cg_free(s);
    cg_free(p);
    cg_free(m);
}

void cg_solve(dist_csr *A, const double *b, double *x, const cg_options *o, cg_probe *probe,
              cg_result *res)
{
    memset(res, 0, sizeof(*res));
    if (probe) {
        probe->time = 0.0;
        memset(&probe->counts, 0, sizeof(probe->counts));
    }
    lanczos_log lz;
    lz.cap = o->maxit < 100000 ? (int)o->maxit + 1 : 100000;
    lz.alpha = cg_xmalloc(sizeof(double) * (size_t)lz.cap);
    lz.beta = cg_xcalloc((size_t)lz.cap + 1, sizeof(double));
    lz.n = 0;
    lz.frozen = 0;

    MPI_Barrier(A->comm);
    cgm_count_other();
    double t0 = MPI_Wtime();
    double bb_loc = vec_dot(A->nlocal, b, b), bb = 0.0;
    allreduce_sum(&bb_loc, &bb, 1, A, &res->perf);
    res->bnorm = sqrt(bb);
    if (res->bnorm == 0.0) {
        /* b = 0: the solution is x = 0. */
        memset(x, 0, sizeof(double) * (size_t)A->nlocal);
        res->converged = 1;
        res->bnorm = 1.0;
    } else if (o->variant == CG_PIPELINED) {
        pipelined(A, b, x, o, probe, res, &lz);
    } else {
        classic(A, b, x, o, probe, res, &lz);
    }
    res->time_solve = MPI_Wtime() - t0 - (probe ? probe->time : 0.0);

    if (lz.n >= 1) {
        res->ritz_n = lz.n;
        lanczos_extremes(lz.alpha, lz.beta, lz.n, &res->ritz_min, &res->ritz_max);
    }
    cg_free(lz.alpha);
    cg_free(lz.beta);
}
