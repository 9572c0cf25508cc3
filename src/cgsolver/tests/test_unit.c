/* test_unit.c - unit tests for cgsolver (own tiny harness).  Run from the
 * tests directory (data files are found under data/).  Prints one final
 * line "N passed, M failed"; exit status 0 iff M == 0.  The kernels' and
 * solvers' tests are in test_unit_solve.c. */
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
#include "unit.h"

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

int g_pass, g_fail;

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

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    test_options();
    test_partition();
    test_stencil();
    test_mmio();
    test_vecops();
    test_chunks();
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
