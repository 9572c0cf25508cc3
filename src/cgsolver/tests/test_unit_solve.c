/* test_unit_solve.c - unit tests of the kernels, the SpMV's storage, the
 * solvers, the triad and the report. */
#include "cg.h"
#include "chunks.h"
#include "common.h"
#include "csr.h"
#include "lanczos.h"
#include "options.h"
#include "partition.h"
#include "problem.h"
#include "report.h"
#include "spmv.h"
#include "stencil.h"
#include "sysmem.h"
#include "triad.h"
#include "vecops.h"
#include "unit.h"

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

void test_vecops(void)
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

/* Tridiagonal rows (whose columns shift by one: chunks) with one row given an
 * extra entry: y must equal the rows summed sequentially, bit for bit. */
void test_chunks(void)
{
    enum { N = 40, ODD = 20 };
    int64_t *rp = cg_xmalloc(sizeof(int64_t) * (N + 1));
    int64_t *gcol = cg_xmalloc(sizeof(int64_t) * 4 * N);
    double *val = cg_xmalloc(sizeof(double) * 4 * N);
    int64_t e = 0;
    rp[0] = 0;
    for (int i = 0; i < N; i++) {
        if (i == ODD)
            gcol[e++] = 0;
        for (int j = i - 1; j <= i + 1; j++)
            if (j >= 0 && j < N)
                gcol[e++] = j;
        rp[i + 1] = e;
    }
    for (int64_t k = 0; k < e; k++)
        val[k] = 1.0 / (double)(k + 3);
    /* The reference, before csr_build takes the arrays. */
    double x[N], ref[N], y[N], refdot = 0.0;
    for (int i = 0; i < N; i++)
        x[i] = 1.0 + 0.1 * (double)((7 * i) % 11);
    for (int i = 0; i < N; i++) {
        double sum = 0.0;
        for (int64_t k = rp[i]; k < rp[i + 1]; k++)
            sum += val[k] * x[gcol[k]];
        ref[i] = sum;
        refdot += sum * x[i];
    }
    const int64_t nnz = e;
    dist_csr A;
    csr_build(&A, MPI_COMM_SELF, N, 0, N, rp, gcol, val);
    const chunk_matrix *M = &A.chunks;
    /* Rows 1-8, 9-16, 21-28 and 29-36 are chunks; 0, 17-20 and 37-39 single. */
    CHECK(M->chunked_rows == 32 && M->nblocks == 4 + 8, "chunks: %lld rows in chunks, %d blocks",
          (long long)M->chunked_rows, M->nblocks);
    CHECK(M->ncol == 4 * 3 + (nnz - 32 * 3), "chunks: %lld column indices stored",
          (long long)M->ncol);
    CHECK(A.col == NULL && A.val == NULL, "chunks: the CSR copy is freed");
    CHECK(spmv_model_bytes(&A) == 8.0 * (double)nnz + 4.0 * (double)M->ncol +
                                      16.0 * (double)M->nblocks + 16.0 * N,
          "chunks: model bytes are the stored bytes");
    double dot = 0.0;
    spmv(&A, x, y, &dot, NULL, NULL);
    int same = 1;
    for (int i = 0; i < N; i++)
        same &= y[i] == ref[i];
    CHECK(same, "chunks: y equals the rows summed in column order, bit for bit");
    CHECK(fabs(dot - refdot) <= 1e-13 * fabs(refdot), "chunks: fused dot %.17g vs %.17g", dot,
          refdot);
    csr_free(&A);
}

void test_lanczos(void)
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

void test_solvers(void)
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

void test_triad(void)
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

void test_report(void)
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
