/* test_unit.c - unit tests for cgsolver (own tiny harness).  Run from the
 * tests directory (data files are found under data/).  Prints one final
 * line "N passed, M failed"; exit status 0 iff M == 0. */
#include "cg.h"
#include "common.h"
#include "csr.h"
#include "lanczos.h"
#include "mmio_reader.h"
#include "options.h"
#include "partition.h"
#include "problem.h"
#include "report.h"
#include "spmv.h"
#include "sysmem.h"
#include "triad.h"
#include "stencil.h"
#include "vecops.h"

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static int g_pass, g_fail;

#define CHECK(cond, ...)                                                     \
    do {                                                                     \
        if (cond) {                                                          \
            g_pass++;                                                        \
        } else {                                                             \
            g_fail++;                                                        \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                      \
            printf(__VA_ARGS__);                                             \
            printf("\n");                                                    \
        }                                                                    \
    } while (0)

static int parse(cg_options *o, char *err, const char *a1, const char *a2, const char *a3)
{
    char *argv[5] = {"cgsolver", (char *)a1, (char *)a2, (char *)a3, NULL};
    int argc = 1 + (a1 != NULL) + (a2 != NULL) + (a3 != NULL);
    return options_parse(argc, argv, o, err, CG_ERRLEN);
}

static void test_options(void)
{
    cg_options o;
    char err[CG_ERRLEN];
    CHECK(parse(&o, err, NULL, NULL, NULL) == 0, "defaults parse");
    CHECK(o.cls == 'S' && o.n == 16 && o.stencil == 7 && o.variant == CG_CLASSIC &&
              o.precond == PC_NONE && !o.weak && o.tol == 1e-8 && o.matrix == NULL,
          "defaults");
    CHECK(class_grid_n('S') == 16 && class_grid_n('W') == 32 && class_grid_n('A') == 64 &&
              class_grid_n('B') == 128 && class_grid_n('C') == 192 && class_grid_n('D') == 256 &&
              class_grid_n('E') == -1,
          "class table");
    CHECK(parse(&o, err, "--class", "B", "--stencil=27") == 0 && o.n == 128 && o.stencil == 27,
          "class B, stencil 27");
    CHECK(parse(&o, err, "--variant", "pipelined", "--precond=jacobi") == 0 &&
              o.variant == CG_PIPELINED && o.precond == PC_JACOBI,
          "variant/precond");
    CHECK(parse(&o, err, "--n", "20", "--scaling=weak") == 0 && o.n == 20 && o.n_given && o.weak,
          "--n and weak");
    CHECK(parse(&o, err, "--tol", "1e-6", "--maxit=5") == 0 && o.tol == 1e-6 && o.maxit == 5,
          "tol/maxit");
    CHECK(parse(&o, err, "--help", NULL, NULL) == 0 && o.help, "--help");
    CHECK(parse(&o, err, "--class", "X", NULL) != 0 && strstr(err, "unknown class"), "bad class: %s", err);
    CHECK(parse(&o, err, "--frobnicate", NULL, NULL) != 0 && strstr(err, "unknown option"),
          "unknown option: %s", err);
    CHECK(parse(&o, err, "--stencil", "9", NULL) != 0, "bad stencil");
    CHECK(parse(&o, err, "--variant", "fast", NULL) != 0, "bad variant");
    CHECK(parse(&o, err, "--precond", "ilu", NULL) != 0, "bad precond");
    CHECK(parse(&o, err, "--scaling", "medium", NULL) != 0, "bad scaling");
    CHECK(parse(&o, err, "--tol", "2", NULL) != 0, "tol >= 1");
    CHECK(parse(&o, err, "--tol", "abc", NULL) != 0, "tol not a number");
    CHECK(parse(&o, err, "--maxit", "0", NULL) != 0, "maxit 0");
    CHECK(parse(&o, err, "--n", "1", NULL) != 0, "grid too small");
    CHECK(parse(&o, err, "--n", "12x", NULL) != 0, "grid not an integer");
    CHECK(parse(&o, err, "--class", NULL, NULL) != 0 && strstr(err, "needs a value"), "missing value");
    CHECK(parse(&o, err, "stray", NULL, NULL) != 0, "positional argument");
    CHECK(parse(&o, err, "--matrix", "a.mtx", "--scaling=weak") != 0, "matrix + weak");
}

static void test_partition(void)
{
    int ok = 1;
    for (int64_t n = 1; n < 60; n++)
        for (int p = 1; p <= n && p < 9; p++) {
            block_partition bp = bp_make(n, p);
            int64_t sum = 0;
            for (int r = 0; r < p; r++) {
                if (bp_start(&bp, r) != sum)
                    ok = 0;
                sum += bp_count(&bp, r);
                for (int64_t g = bp_start(&bp, r); g < bp_start(&bp, r + 1); g++)
                    if (bp_owner(&bp, g) != r)
                        ok = 0;
            }
            if (sum != n || bp_start(&bp, p) != n)
                ok = 0;
        }
    CHECK(ok, "block partition start/count/owner consistent");
}

/* Dense copy of a generated operator (small grids only). */
static double *dense_stencil(const stencil_grid *g)
{
    int64_t n = stencil_rows(g), *rp, *gc;
    double *v;
    stencil_generate(g, 0, (int)n, &rp, &gc, &v);
    double *D = calloc((size_t)(n * n), sizeof(double));
    for (int64_t i = 0; i < n; i++)
        for (int64_t e = rp[i]; e < rp[i + 1]; e++)
            D[i * n + gc[e]] += v[e];
    cg_free(rp);
    cg_free(gc);
    cg_free(v);
    return D;
}

static void test_stencil(void)
{
    for (int pts = 7; pts <= 27; pts += 20) {
        stencil_grid g = {5, 4, 3, pts};
        int64_t n = stencil_rows(&g), *rp, *gc;
        double *v;
        stencil_generate(&g, 0, (int)n, &rp, &gc, &v);
        CHECK(rp[n] == stencil_global_nnz(&g), "%d-point nnz %lld vs formula %lld", pts,
              (long long)rp[n], (long long)stencil_global_nnz(&g));
        int sorted = 1, diag_ok = 1;
        for (int64_t i = 0; i < n; i++)
            for (int64_t e = rp[i]; e < rp[i + 1]; e++) {
                if (e > rp[i] && gc[e] <= gc[e - 1])
                    sorted = 0;
                if (gc[e] == i && v[e] != (pts == 7 ? 6.0 : 26.0))
                    diag_ok = 0;
            }
        CHECK(sorted && diag_ok, "%d-point rows sorted, diagonal value", pts);
        /* A row range generated separately equals the same rows of the whole. */
        int64_t *rp2, *gc2;
        double *v2;
        stencil_generate(&g, 17, 11, &rp2, &gc2, &v2);
        int same = rp2[11] == rp[28] - rp[17];
        for (int64_t e = 0; same && e < rp2[11]; e++)
            same = gc2[e] == gc[rp[17] + e] && v2[e] == v[rp[17] + e];
        CHECK(same, "%d-point partial generation matches", pts);
        cg_free(rp);
        cg_free(gc);
        cg_free(v);
        cg_free(rp2);
        cg_free(gc2);
        cg_free(v2);

        double *D = dense_stencil(&g);
        int sym = 1;
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < n; j++)
                if (D[i * n + j] != D[j * n + i])
                    sym = 0;
        CHECK(sym, "%d-point operator symmetric", pts);
        /* The product of sines is the eigenvector of the smallest eigenvalue. */
        double lmin, lmax, num = 0.0, den = 0.0, res = 0.0;
        stencil_eig_bounds(&g, &lmin, &lmax);
        double *ev = malloc(sizeof(double) * (size_t)n);
        for (int64_t gid = 0; gid < n; gid++) {
            int64_t i = gid % g.nx, j = (gid / g.nx) % g.ny, k = gid / (g.nx * g.ny);
            ev[gid] = sin(M_PI * (i + 1) / (g.nx + 1)) * sin(M_PI * (j + 1) / (g.ny + 1)) *
                      sin(M_PI * (k + 1) / (g.nz + 1));
        }
        for (int64_t i = 0; i < n; i++) {
            double s = 0.0;
            for (int64_t j = 0; j < n; j++)
                s += D[i * n + j] * ev[j];
            res = fmax(res, fabs(s - lmin * ev[i]));
            num += s * ev[i];
            den += ev[i] * ev[i];
        }
        CHECK(res < 1e-12, "%d-point lambda_min eigenpair (residual %g)", pts, res);
        /* Rayleigh quotients of pseudo-random vectors stay inside [lmin, lmax]. */
        int inside = 1;
        srand(7);
        for (int t = 0; t < 20; t++) {
            for (int64_t i = 0; i < n; i++)
                ev[i] = (double)rand() / RAND_MAX - 0.5;
            num = den = 0.0;
            for (int64_t i = 0; i < n; i++) {
                double s = 0.0;
                for (int64_t j = 0; j < n; j++)
                    s += D[i * n + j] * ev[j];
                num += s * ev[i];
                den += ev[i] * ev[i];
            }
            if (num / den < lmin - 1e-12 || num / den > lmax + 1e-12)
                inside = 0;
        }
        CHECK(inside, "%d-point Rayleigh quotients inside analytic bounds", pts);
        if (pts == 7) {
            /* highest mode sin(n_d pi i/(n_d+1)) gives lambda_max */
            double r2 = 0.0;
            for (int64_t gid = 0; gid < n; gid++) {
                int64_t i = gid % g.nx, j = (gid / g.nx) % g.ny, k = gid / (g.nx * g.ny);
                ev[gid] = sin(M_PI * g.nx * (i + 1) / (g.nx + 1)) *
                          sin(M_PI * g.ny * (j + 1) / (g.ny + 1)) *
                          sin(M_PI * g.nz * (k + 1) / (g.nz + 1));
            }
            for (int64_t i = 0; i < n; i++) {
                double s = 0.0;
                for (int64_t j = 0; j < n; j++)
                    s += D[i * n + j] * ev[j];
                r2 = fmax(r2, fabs(s - lmax * ev[i]));
            }
            CHECK(r2 < 1e-12, "7-point lambda_max eigenpair (residual %g)", r2);
        }
        free(ev);
        free(D);
    }
    stencil_grid w;
    stencil_weak_grid(10, 4, 7, &w);
    CHECK(stencil_rows(&w) == 4 * 1000, "weak grid keeps n^3 rows per rank");
    stencil_grid s = {2, 2, 2, 7};
    CHECK(stencil_exact(&s, 3) == stencil_exact(&s, 3) && stencil_exact(&s, 3) > 0.0,
          "exact solution deterministic");
}

static void test_mmio(void)
{
    mm_matrix m;
    char err[CG_ERRLEN];
    int rc = mm_read_spd("data/poisson2d_10.mtx", &m, err, sizeof(err));
    CHECK(rc == 0, "read poisson2d_10: %s", rc ? err : "");
    if (rc == 0) {
        CHECK(m.n == 100 && m.nnz == 460 && m.symmetric_storage, "poisson2d_10 size %lld nnz %lld",
              (long long)m.n, (long long)m.nnz);
        int ok = 1;
        for (int64_t r = 0; r < m.n; r++) {
            double rowsum = 0.0;
            for (int64_t e = m.rowptr[r]; e < m.rowptr[r + 1]; e++) {
                rowsum += m.val[e];
                if (e > m.rowptr[r] && m.col[e] <= m.col[e - 1])
                    ok = 0;
            }
            if (rowsum < 0.0)
                ok = 0;
        }
        CHECK(ok, "poisson2d_10 rows sorted, diagonally dominant");
        mm_free(&m);
    }
    rc = mm_read_spd("data/sym_general_4.mtx", &m, err, sizeof(err));
    CHECK(rc == 0 && m.n == 4 && m.nnz == 10, "general-stored symmetric matrix accepted");
    if (rc == 0)
        mm_free(&m);

    static const struct {
        const char *file, *expect;
    } bad[] = {
        {"data/nonsym_4.mtx", "not symmetric"},
        {"data/not_positive_diag.mtx", "not positive"},
        {"data/missing_diag.mtx", "not positive"},
        {"data/not_matrix_market.txt", "not a Matrix Market file"},
        {"data/array_format.mtx", "format 'array'"},
        {"data/complex_field.mtx", "field 'complex'"},
        {"data/rectangular.mtx", "not square"},
        {"data/truncated.mtx", "file ends after"},
        {"data/bad_entry.mtx", "malformed entry"},
        {"data/out_of_range.mtx", "out of range"},
        {"data/empty.mtx", "empty"},
        {"data/does_not_exist.mtx", "cannot open"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        rc = mm_read_spd(bad[i].file, &m, err, sizeof(err));
        CHECK(rc != 0 && strstr(err, bad[i].expect) != NULL && strchr(err, '\n') == NULL,
              "%s rejected with '%s' (got rc=%d, '%s')", bad[i].file, bad[i].expect, rc, err);
    }
}

static void test_vecops(void)
{
    enum { N = 37 };
    double x[N], p[N], r[N], q[N], d[N], x2[N], r2[N], p2[N];
    for (int i = 0; i < N; i++) {
        x[i] = x2[i] = sin(i);
        p[i] = p2[i] = cos(i);
        r[i] = r2[i] = 0.1 * i;
        q[i] = 1.0 / (i + 1);
        d[i] = 0.5 + 0.01 * i;
    }
    double out[2], rr = 0.0, rz = 0.0;
    cg_classic_update(N, 0.3, x, p, r, q, d, out);
    for (int i = 0; i < N; i++) {
        x2[i] += 0.3 * p2[i];
        r2[i] -= 0.3 * q[i];
        rr += r2[i] * r2[i];
        rz += r2[i] * d[i] * r2[i];
    }
    double diff = 0.0;
    for (int i = 0; i < N; i++)
        diff = fmax(diff, fabs(x[i] - x2[i]) + fabs(r[i] - r2[i]));
    CHECK(diff < 1e-15 && fabs(out[0] - rr) < 1e-12 && fabs(out[1] - rz) < 1e-12,
          "classic fused update");
    cg_classic_direction(N, 0.7, p, r, d);
    diff = 0.0;
    for (int i = 0; i < N; i++)
        diff = fmax(diff, fabs(p[i] - (d[i] * r2[i] + 0.7 * p2[i])));
    CHECK(diff < 1e-15, "classic direction");
    CHECK(fabs(vec_dot(N, d, d) - vec_dot(N, d, d)) == 0.0 && vec_dot(N, d, d) > 0, "dot");
}

static void test_lanczos(void)
{
    /* CG on diag(1..5) from b = ones: the 5-step Lanczos matrix has exactly
     * the eigenvalues 1..5.  Coefficients computed by a serial CG here. */
    double lam[5] = {1, 2, 3, 4, 5}, x[5] = {0}, r[5], p[5], al[5], be[5];
    for (int i = 0; i < 5; i++)
        r[i] = p[i] = 1.0;
    double rr = 5.0;
    be[0] = 0.0;
    for (int k = 0; k < 5; k++) {
        double pq = 0.0;
        for (int i = 0; i < 5; i++)
            pq += p[i] * lam[i] * p[i];
        al[k] = rr / pq;
        double rn = 0.0;
        for (int i = 0; i < 5; i++) {
            x[i] += al[k] * p[i];
            r[i] -= al[k] * lam[i] * p[i];
            rn += r[i] * r[i];
        }
        if (k + 1 < 5) {
            be[k + 1] = rn / rr;
            for (int i = 0; i < 5; i++)
                p[i] = r[i] + be[k + 1] * p[i];
        }
        rr = rn;
    }
    double lo, hi;
    lanczos_extremes(al, be, 5, &lo, &hi);
    CHECK(fabs(lo - 1.0) < 1e-8 && fabs(hi - 5.0) < 1e-8, "Lanczos extremes %g %g", lo, hi);
}

/* Solve a small generated problem on MPI_COMM_WORLD; returns iterations. */
static int solve_generated(long n, int stencil, int variant, int precond)
{
    cg_options o;
    char err[CG_ERRLEN];
    char nbuf[32], sbuf[32];
    snprintf(nbuf, sizeof(nbuf), "--n=%ld", n);
    snprintf(sbuf, sizeof(sbuf), "--stencil=%d", stencil);
    parse(&o, err, nbuf, sbuf, NULL);
    o.variant = variant;
    o.precond = precond;
    problem pb;
    if (problem_setup(&o, MPI_COMM_WORLD, &pb, err, sizeof(err)) != 0) {
        CHECK(0, "problem_setup: %s", err);
        return -1;
    }
    int len = csr_vec_len(&pb.A);
    double *x = cg_xcalloc((size_t)len, sizeof(double));
    double *t = cg_xcalloc((size_t)len, sizeof(double));
    cg_result res;
    cg_solve(&pb.A, pb.b, x, &o, NULL, &res);
    double tr = true_residual_norm(&pb.A, pb.b, x, t, NULL) / res.bnorm;
    double e2 = 0.0, s2 = 0.0;
    for (int i = 0; i < pb.A.nlocal; i++) {
        e2 += (x[i] - pb.xstar[i]) * (x[i] - pb.xstar[i]);
        s2 += pb.xstar[i] * pb.xstar[i];
    }
    double eg[2], el[2] = {e2, s2};
    MPI_Allreduce(el, eg, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double err_rel = sqrt(eg[0] / eg[1]);
    CHECK(res.converged && tr <= o.tol && err_rel <= pb.kappa * tr,
          "n=%ld %d-pt %s %s: converged=%d true_res=%g err=%g bound=%g", n, stencil,
          variant_name(variant), precond_name(precond), res.converged, tr, err_rel,
          pb.kappa * tr);
    /* Ritz values lie inside the analytic spectrum (scaled by 1/diag for Jacobi). */
    double lmin, lmax, sc = precond == PC_JACOBI ? 1.0 / (stencil == 7 ? 6.0 : 26.0) : 1.0;
    stencil_eig_bounds(&pb.grid, &lmin, &lmax);
    CHECK(res.ritz_min >= lmin * sc * (1 - 1e-6) && res.ritz_max <= lmax * sc * (1 + 1e-6),
          "Ritz values [%g,%g] inside [%g,%g]", res.ritz_min, res.ritz_max, lmin * sc, lmax * sc);
    cg_free(x);
    cg_free(t);
    problem_free(&pb);
    return res.iterations;
}

static void count_probe(void *arg)
{
    int *calls = arg, one = 1, all;
    cgm_allreduce(&one, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    (*calls)++;
}

static void test_solvers(void)
{
    for (int st = 7; st <= 27; st += 20)
        for (long n = 5; n <= 12; n += 7) {
            int it[4];
            it[0] = solve_generated(n, st, CG_CLASSIC, PC_NONE);
            it[1] = solve_generated(n, st, CG_PIPELINED, PC_NONE);
            it[2] = solve_generated(n, st, CG_CLASSIC, PC_JACOBI);
            it[3] = solve_generated(n, st, CG_PIPELINED, PC_JACOBI);
            int ok = 1;
            for (int k = 1; k < 4; k++)
                if (abs(it[k] - it[0]) > 2)
                    ok = 0;
            CHECK(ok, "n=%ld %d-pt iteration counts agree: %d %d %d %d", n, st, it[0], it[1],
                  it[2], it[3]);
        }

    /* Matrix file, nonzero initial guess, and the iteration limit. */
    cg_options o;
    char err[CG_ERRLEN];
    parse(&o, err, "--matrix", "data/poisson2d_10.mtx", NULL);
    problem pb;
    int rc = problem_setup(&o, MPI_COMM_WORLD, &pb, err, sizeof(err));
    CHECK(rc == 0, "matrix problem setup: %s", err);
    if (rc == 0) {
        int len = csr_vec_len(&pb.A);
        double *x = cg_xcalloc((size_t)len, sizeof(double));
        cg_result res;
        for (int i = 0; i < pb.A.nlocal; i++)
            x[i] = 0.5;
        o.variant = CG_PIPELINED;
        cg_solve(&pb.A, pb.b, x, &o, NULL, &res);
        double e = 0.0;
        for (int i = 0; i < pb.A.nlocal; i++)
            e = fmax(e, fabs(x[i] - 1.0));
        CHECK(res.converged && e < 1e-6, "poisson2d_10 from x0=0.5: max error %g", e);
        /* A probe runs between iterations at the same iteration on every
         * rank; its MPI calls are its own, not the solve's. */
        for (int v = 0; v < 2; v++) {
            memset(x, 0, sizeof(double) * (size_t)len);
            o.variant = v ? CG_PIPELINED : CG_CLASSIC;
            int calls = 0;
            cg_probe probe = {.fn = count_probe, .arg = &calls, .every = 2};
            cg_solve(&pb.A, pb.b, x, &o, &probe, &res);
            CHECK(res.converged && calls == res.iterations / 2,
                  "%s: probe every 2 of %d iterations ran %d times", v ? "pipelined" : "classic",
                  res.iterations, calls);
            CHECK(probe.counts.allreduce == calls && probe.time >= 0 && res.time_solve >= 0,
                  "the probe's %lld allreduce calls are counted as its own",
                  probe.counts.allreduce);
        }
        memset(x, 0, sizeof(double) * (size_t)len);
        o.variant = CG_CLASSIC;
        o.maxit = 3;
        cg_solve(&pb.A, pb.b, x, &o, NULL, &res);
        CHECK(!res.converged && res.iterations == 3, "maxit respected (%d iterations)",
              res.iterations);
        cg_free(x);
        problem_free(&pb);
    }
    /* Grid with fewer rows than ranks is rejected (only testable with >1 rank
     * for the rank condition); a too-large grid fails the memory check. */
    parse(&o, err, "--n", "60000", NULL);
    rc = problem_setup(&o, MPI_COMM_WORLD, &pb, err, sizeof(err));
    CHECK(rc != 0 && strstr(err, "too large"), "memory check rejects n=60000: %s", err);
}

static void test_triad(void)
{
    triad t;
    triad_open(&t, MPI_COMM_WORLD, 0.0); /* the smallest arrays: quick under valgrind */
    CHECK(isnan(triad_median(&t)), "no triad pass: no median");
    triad_bracket(&t);
    CHECK(t.n == TRIAD_BRACKET, "one bracket: %d passes, got %d", TRIAD_BRACKET, t.n);
    for (int i = 0; i < TRIAD_MAX; i++)
        triad_pass(&t); /* the samples fill, then passes are skipped */
    CHECK(t.n == TRIAD_MAX, "at most %d passes, got %d", TRIAD_MAX, t.n);
    double lo = t.gbs[0], hi = t.gbs[0];
    for (int i = 0; i < t.n; i++) {
        CHECK(t.gbs[i] > 0 && isfinite(t.gbs[i]), "pass %d: %g GB/s", i, t.gbs[i]);
        lo = t.gbs[i] < lo ? t.gbs[i] : lo;
        hi = t.gbs[i] > hi ? t.gbs[i] : hi;
    }
    double m = triad_median(&t);
    CHECK(m >= lo && m <= hi, "median %g inside %g..%g", m, lo, hi);
    triad_close(&t);
    t.n = 3;
    t.gbs[0] = 3.0;
    t.gbs[1] = 1.0;
    t.gbs[2] = 2.0;
    CHECK(triad_median(&t) == 2.0, "median of 3,1,2 is 2");
}

static void test_report(void)
{
    run_report r;
    memset(&r, 0, sizeof(r));
    r.ranks = 2;
    r.threads = 1;
    r.cls = NULL;
    r.problem = "dir/we\"ird.mtx";
    r.scaling = "strong";
    r.variant = "classic";
    r.precond = "none";
    r.error = -1.0;
    r.kappa = NAN;
    r.verified = 1;
    r.time_s = 2.0;
    r.bytes = 4e9;
    r.triad_gbs = 2.5;
    r.llc_bytes = -1.0;
    r.memory_bound = 1;
    FILE *f = tmpfile();
    report_json(f, &r);
    rewind(f);
    char buf[8192];
    size_t len = fread(buf, 1, sizeof(buf) - 1, f);
    buf[len] = '\0';
    fclose(f);
    int lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += buf[i] == '\n';
    CHECK(strncmp(buf, "CGSOLVER_JSON: {", 16) == 0 && lines == 1 && buf[len - 2] == '}',
          "JSON is one prefixed line");
    static const char *keys[] = {"\"version\"", "\"ranks\"", "\"class\":null", "\"grid_n\"",
                                 "\"stencil\"", "\"problem\":\"dir/we\\\"ird.mtx\"",
                                 "\"scaling\"", "\"variant\"", "\"precond\"", "\"rows\"",
                                 "\"nnz\"", "\"iterations\"", "\"tol\"", "\"true_residual\"",
                                 "\"error\":null", "\"kappa\":null", "\"time_s\"", "\"gflops\"",
                                 "\"bandwidth_gbs\"", "\"time_spmv_s\"", "\"time_halo_s\"",
                                 "\"time_reduce_s\"", "\"time_vector_s\"", "\"mpi_share\"",
                                 "\"verified\":true", "\"mpi_counts\":{\"isend\"",
                                 "\"triad_gbs\":2.5", "\"bandwidth_triad_share\":0.8",
                                 "\"llc_bytes\":null", "\"memory_bound\":true"};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        CHECK(strstr(buf, keys[i]) != NULL, "JSON contains %s", keys[i]);
    CHECK(strstr(buf, "nan") == NULL && strstr(buf, "inf") == NULL, "JSON has no nan/inf");

    /* A problem that fits the cache: its share of the triad is no figure. */
    r.memory_bound = 0;
    r.llc_bytes = 32.0 * 1048576;
    f = tmpfile();
    report_json(f, &r);
    rewind(f);
    len = fread(buf, 1, sizeof(buf) - 1, f);
    buf[len] = '\0';
    fclose(f);
    CHECK(strstr(buf, "bandwidth_triad_share") == NULL, "no share of a cached solve");
    CHECK(strstr(buf, "\"memory_bound\":false") && strstr(buf, "\"llc_bytes\":33554432"),
          "the JSON says why: %s", buf);
    double llc = sysmem_llc_bytes();
    CHECK(llc < 0 || llc >= 4096.0, "last-level cache %g bytes, or unknown", llc);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    test_options();
    test_partition();
    test_stencil();
    test_mmio();
    test_vecops();
    test_lanczos();
    test_solvers();
    test_triad();
    test_report();
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        printf("%d passed, %d failed\n", g_pass, g_fail);
    MPI_Finalize();
    return g_fail == 0 ? 0 : 1;
}
