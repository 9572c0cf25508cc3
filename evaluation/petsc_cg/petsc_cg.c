/* petsc_cg.c - PETSc KSPCG (no preconditioner) on the problems cgsolver solves.
 *
 * Two problem sources, both identical to cgsolver's (src/cgsolver/README.md):
 *
 *   -n N [-stencil 7|27]   generated 3-D Poisson on an N x N x N grid,
 *                          Dirichlet, unscaled (6 / -1, or 26 / -1),
 *                          lexicographic order g = i + N(j + N k),
 *                          b = A x* with cgsolver's manufactured x*;
 *   -matrix FILE.mtx       Matrix Market coordinate real|integer
 *                          symmetric|general, duplicates summed, b = A*ones.
 *
 * The right-hand side is computed here, row by row, in cgsolver's own
 * summation order (entries sorted by column, each row summed sequentially
 * from zero), so b is bit-identical to
 * cgsolver's and both solvers start from the same system.  Rows are split in
 * contiguous blocks exactly as cgsolver splits them (the first N mod p ranks
 * get one more row).
 *
 * Solver: KSPCG, PCNONE, x0 = 0, KSPSetNormType(KSP_NORM_UNPRECONDITIONED),
 * KSPSetTolerances(rtol = -tol, abstol = 0, dtol = default, maxit).  With
 * x0 = 0 PETSc's default test (KSPConvergedDefault) then stops at
 * ||r_k||_2 <= tol * ||b||_2, r_k being CG's recurrence residual -- the
 * same test and norm as cgsolver's (it also checks the true residual at the
 * end).  KSPSetFromOptions is called last, so -ksp_* options still apply.
 *
 * Timing: KSPSetUp is done first; only KSPSolve is timed (barrier before,
 * slowest rank's time).  Afterwards (untimed) the true residual
 * ||b - A x|| / ||b||, the error against x* and ||x||_2 are computed.
 *
 * Output (rank 0): a human summary, one line "PETSC_CG_JSON: {...}" and
 * "PETSC_CG VERIFICATION SUCCESSFUL" (converged and true residual <= 2 tol)
 * or "PETSC_CG VERIFICATION FAILED" (exit 2).  Bad input: exit 1.
 */
#include <petscksp.h>

#include "mtx_rows.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* ---- cgsolver's problem definition (kept in step with src/cgsolver/stencil.c) ---- */

static uint64_t splitmix64(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* Manufactured exact solution at global row gid of an n^3 grid. */
static double exact_solution(int64_t n, int64_t gid)
{
    const uint64_t seed = 20240601ULL;
    int64_t i = gid % n, j = (gid / n) % n, k = gid / (n * n);
    double x = (double)(i + 1) / (double)(n + 1);
    double y = (double)(j + 1) / (double)(n + 1);
    double z = (double)(k + 1) / (double)(n + 1);
    double smooth = sin(M_PI * x) * sin(2.0 * M_PI * y) * sin(3.0 * M_PI * z);
    double u = (double)(splitmix64((uint64_t)gid ^ seed) >> 11) * 0x1.0p-53;
    return 1.0 + smooth + 0.25 * u;
}

/* Row gid of the n^3 stencil matrix, columns ascending; returns the length. */
static int stencil_row(int64_t n, int points, int64_t gid, PetscInt *cols, double *vals)
{
    const int64_t nxy = n * n;
    const int64_t i = gid % n, j = (gid / n) % n, k = gid / nxy;
    const int full = points == 27;
    int e = 0;
    for (int dk = -1; dk <= 1; dk++) {
        if (k + dk < 0 || k + dk >= n)
            continue;
        for (int dj = -1; dj <= 1; dj++) {
            if (j + dj < 0 || j + dj >= n)
                continue;
            for (int di = -1; di <= 1; di++) {
                if (i + di < 0 || i + di >= n)
                    continue;
                int dist = (di != 0) + (dj != 0) + (dk != 0);
                if (!full && dist > 1)
                    continue;
                cols[e] = (PetscInt)(gid + di + n * dj + nxy * dk);
                vals[e] = dist == 0 ? (full ? 26.0 : 6.0) : -1.0;
                e++;
            }
        }
    }
    return e;
}

/* One row of A*x in cgsolver's summation order (spmv.c, chunks.h): every
 * row summed sequentially from zero in column order. */
static double row_dot(int len, const double *vals, const double *xv)
{
    double s = 0.0;
    for (int k = 0; k < len; k++)
        s += vals[k] * xv[k];
    return s;
}

/* ---- driver ---- */

static const struct {
    char name;
    int n;
} CLASSES[] = {{'S', 16}, {'W', 32}, {'A', 64}, {'B', 128}, {'C', 192}, {'D', 256}};

int main(int argc, char **argv)
{
    PetscCall(PetscInitialize(&argc, &argv, NULL,
                              "petsc_cg: PETSc KSPCG (PCNONE) on cgsolver's problems\n"
                              "  -n N | -class S..D [-stencil 7|27] | -matrix FILE.mtx\n"
                              "  -tol 1e-8 -maxit 10000\n"));
    MPI_Comm comm = PETSC_COMM_WORLD;
    PetscMPIInt rank, size;
    PetscCallMPI(MPI_Comm_rank(comm, &rank));
    PetscCallMPI(MPI_Comm_size(comm, &size));

    PetscInt n = 0, stencil = 7, maxit = 10000;
    PetscReal tol = 1e-8;
    char matrix[PETSC_MAX_PATH_LEN] = "", cls[8] = "";
    PetscBool has_matrix = PETSC_FALSE, has_class = PETSC_FALSE, has_n = PETSC_FALSE;
    PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, &has_n));
    PetscCall(PetscOptionsGetString(NULL, NULL, "-class", cls, sizeof(cls), &has_class));
    PetscCall(PetscOptionsGetInt(NULL, NULL, "-stencil", &stencil, NULL));
    PetscCall(PetscOptionsGetInt(NULL, NULL, "-maxit", &maxit, NULL));
    PetscCall(PetscOptionsGetReal(NULL, NULL, "-tol", &tol, NULL));
    PetscCall(
        PetscOptionsGetString(NULL, NULL, "-matrix", matrix, sizeof(matrix), &has_matrix));

    char err[1200] = "";
    if (has_class) {
        int found = 0;
        for (size_t c = 0; c < sizeof(CLASSES) / sizeof(CLASSES[0]); c++)
            if (cls[0] == CLASSES[c].name && cls[1] == '\0') {
                found = 1;
                if (!has_n)
                    n = CLASSES[c].n;
            }
        if (!found)
            snprintf(err, sizeof(err), "unknown class '%s' (S W A B C D)", cls);
    }
    if (!has_matrix && !has_class && !has_n)
        n = 16;
    if (!err[0] && has_matrix && (has_n || has_class))
        snprintf(err, sizeof(err), "-matrix excludes -n / -class");
    if (!err[0] && !has_matrix && n < 2)
        snprintf(err, sizeof(err), "-n must be >= 2");
    if (!err[0] && stencil != 7 && stencil != 27)
        snprintf(err, sizeof(err), "-stencil must be 7 or 27");
    if (!err[0] && !(tol > 0.0 && tol < 1.0))
        snprintf(err, sizeof(err), "-tol must be in (0,1)");
    if (!err[0] && maxit < 1)
        snprintf(err, sizeof(err), "-maxit must be >= 1");

    /* Build the local rows (global column indices, sorted) and b, x*. */
    int64_t N = 0, r0 = 0, r1 = 0;
    PetscInt *rowptr = NULL, *cols = NULL;
    double *vals = NULL, *bl = NULL, *xs = NULL;
    int64_t nnz_local = 0;
    if (!err[0] && has_matrix) {
        triple *t = NULL;
        int64_t cnt = 0;
        if (read_mtx_rows(matrix, rank, size, &N, &r0, &r1, &t, &cnt, err, sizeof(err)) == 0) {
            const int64_t nl = r1 - r0;
            rowptr = calloc((size_t)nl + 1, sizeof(PetscInt));
            cols = malloc(sizeof(PetscInt) * (size_t)(cnt + 1));
            vals = malloc(sizeof(double) * (size_t)(cnt + 1));
            for (int64_t e = 0; e < cnt; e++) {
                rowptr[t[e].row - r0 + 1]++;
                cols[e] = (PetscInt)t[e].col;
                vals[e] = t[e].val;
            }
            for (int64_t r = 0; r < nl; r++)
                rowptr[r + 1] += rowptr[r];
            nnz_local = cnt;
            free(t);
            xs = malloc(sizeof(double) * (size_t)(nl + 1));
            for (int64_t r = 0; r < nl; r++)
                xs[r] = 1.0;
        }
    } else if (!err[0]) {
        N = (int64_t)n * n * n;
        const int64_t base = N / size, extra = N % size;
        r0 = rank * base + (rank < extra ? rank : extra);
        r1 = r0 + base + (rank < extra ? 1 : 0);
        const int64_t nl = r1 - r0;
        rowptr = calloc((size_t)nl + 1, sizeof(PetscInt));
        cols = malloc(sizeof(PetscInt) * (size_t)(nl * stencil + 1));
        vals = malloc(sizeof(double) * (size_t)(nl * stencil + 1));
        xs = malloc(sizeof(double) * (size_t)(nl + 1));
        for (int64_t r = 0; r < nl; r++) {
            int len = stencil_row(n, (int)stencil, r0 + r, cols + rowptr[r], vals + rowptr[r]);
            rowptr[r + 1] = rowptr[r] + len;
            xs[r] = exact_solution(n, r0 + r);
        }
        nnz_local = rowptr[nl];
    }
    int bad = err[0] != '\0', any_bad = 0;
    PetscCallMPI(MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, comm));
    if (any_bad) {
        int who = bad ? rank : size, root;
        PetscCallMPI(MPI_Allreduce(&who, &root, 1, MPI_INT, MPI_MIN, comm));
        PetscCallMPI(MPI_Bcast(err, (int)sizeof(err), MPI_CHAR, root, comm));
        if (rank == 0)
            fprintf(stderr, "petsc_cg: error: %s\n", err);
        free(rowptr);
        free(cols);
        free(vals);
        free(xs);
        PetscCall(PetscFinalize());
        return 1;
    }
    const PetscInt nl = (PetscInt)(r1 - r0);

    /* Exact x* values at the columns of the local rows, for b = A x*. */
    double t_setup0 = MPI_Wtime();
    bl = malloc(sizeof(double) * (size_t)(nl + 1));
    {
        double xv[64];
        for (PetscInt r = 0; r < nl; r++) {
            int len = (int)(rowptr[r + 1] - rowptr[r]);
            const PetscInt *c = cols + rowptr[r];
            const double *v = vals + rowptr[r];
            if (len <= 64) {
                for (int k = 0; k < len; k++)
                    xv[k] = has_matrix ? 1.0 : exact_solution(n, c[k]);
                bl[r] = row_dot(len, v, xv);
            } else {
                double s = 0.0; /* long rows: sequential, as cgsolver's generic loop */
                for (int k = 0; k < len; k++)
                    s += v[k] * (has_matrix ? 1.0 : exact_solution(n, c[k]));
                bl[r] = s;
            }
        }
    }

    /* Matrix: MPIAIJ (SEQAIJ on one rank) with exact preallocation. */
    Mat A;
    PetscInt *dnz = malloc(sizeof(PetscInt) * (size_t)(nl + 1));
    PetscInt *onz = malloc(sizeof(PetscInt) * (size_t)(nl + 1));
    for (PetscInt r = 0; r < nl; r++) {
        dnz[r] = onz[r] = 0;
        for (PetscInt e = rowptr[r]; e < rowptr[r + 1]; e++) {
            if (cols[e] >= r0 && cols[e] < r1)
                dnz[r]++;
            else
                onz[r]++;
        }
    }
    PetscCall(MatCreate(comm, &A));
    PetscCall(MatSetSizes(A, nl, nl, (PetscInt)N, (PetscInt)N));
    PetscCall(MatSetType(A, MATAIJ));
    PetscCall(MatSeqAIJSetPreallocation(A, 0, dnz));
    PetscCall(MatMPIAIJSetPreallocation(A, 0, dnz, 0, onz));
    for (PetscInt r = 0; r < nl; r++) {
        PetscInt grow = (PetscInt)(r0 + r);
        PetscCall(MatSetValues(A, 1, &grow, rowptr[r + 1] - rowptr[r], cols + rowptr[r],
                               vals + rowptr[r], INSERT_VALUES));
    }
    PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatSetOption(A, MAT_SYMMETRIC, PETSC_TRUE));
    free(dnz);
    free(onz);
    free(cols);
    free(vals);

    Vec b, x, xstar, tmp;
    PetscCall(MatCreateVecs(A, &x, &b));
    PetscCall(VecDuplicate(x, &xstar));
    PetscCall(VecDuplicate(x, &tmp));
    {
        PetscScalar *pb, *px;
        PetscCall(VecGetArray(b, &pb));
        PetscCall(VecGetArray(xstar, &px));
        for (PetscInt r = 0; r < nl; r++) {
            pb[r] = bl[r];
            px[r] = xs[r];
        }
        PetscCall(VecRestoreArray(b, &pb));
        PetscCall(VecRestoreArray(xstar, &px));
    }
    free(bl);
    free(xs);
    PetscCall(VecSet(x, 0.0));

    KSP ksp;
    PC pc;
    PetscCall(KSPCreate(comm, &ksp));
    PetscCall(KSPSetOperators(ksp, A, A));
    PetscCall(KSPSetType(ksp, KSPCG));
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCSetType(pc, PCNONE));
    PetscCall(KSPSetNormType(ksp, KSP_NORM_UNPRECONDITIONED));
    PetscCall(KSPSetTolerances(ksp, tol, 0.0, PETSC_DEFAULT, maxit));
    PetscCall(KSPSetInitialGuessNonzero(ksp, PETSC_FALSE));
    PetscCall(KSPSetFromOptions(ksp));
    PetscCall(KSPSetUp(ksp));
    double setup_time = MPI_Wtime() - t_setup0;

    PetscCallMPI(MPI_Barrier(comm));
    double t0 = MPI_Wtime();
    PetscCall(KSPSolve(ksp, b, x));
    double t_local = MPI_Wtime() - t0, t_solve = 0.0;
    PetscCallMPI(MPI_Allreduce(&t_local, &t_solve, 1, MPI_DOUBLE, MPI_MAX, comm));

    /* Untimed checks. */
    PetscInt its;
    KSPConvergedReason reason;
    PetscReal rnorm, bnorm, trnorm, xnorm, xsnorm, enorm;
    KSPNormType ntype;
    PetscReal rtol_used, atol_used, dtol_used;
    PetscInt maxit_used;
    PetscCall(KSPGetIterationNumber(ksp, &its));
    PetscCall(KSPGetConvergedReason(ksp, &reason));
    PetscCall(KSPGetResidualNorm(ksp, &rnorm));
    PetscCall(KSPGetNormType(ksp, &ntype));
    PetscCall(KSPGetTolerances(ksp, &rtol_used, &atol_used, &dtol_used, &maxit_used));
    PetscCall(VecNorm(b, NORM_2, &bnorm));
    PetscCall(MatMult(A, x, tmp));
    PetscCall(VecAYPX(tmp, -1.0, b)); /* tmp = b - A x */
    PetscCall(VecNorm(tmp, NORM_2, &trnorm));
    PetscCall(VecNorm(x, NORM_2, &xnorm));
    PetscCall(VecNorm(xstar, NORM_2, &xsnorm));
    PetscCall(VecAXPY(xstar, -1.0, x)); /* xstar = x* - x */
    PetscCall(VecNorm(xstar, NORM_2, &enorm));
    MatInfo info;
    PetscCall(MatGetInfo(A, MAT_GLOBAL_SUM, &info));
    const double nnz = info.nz_used;
    (void)nnz_local;

    /* Model bytes per iteration of PETSc's KSPCG loop with PCNONE and the
     * unpreconditioned norm, counted with cgsolver's convention (each array
     * read or written once per kernel, no write-allocate): MatMult
     * 12 nnz + 4 (N + p) + 16 N; VecAYPX 24 N, VecXDot 16 N, 2 VecAXPY 48 N,
     * VecNorm 8 N, PCApply = VecCopy 16 N, VecXDot 16 N. */
    const double bytes_iter = 12.0 * nnz + 4.0 * ((double)N + size) + 16.0 * (double)N +
                              128.0 * (double)N;
    const double rel_true = trnorm / bnorm, rel_rec = rnorm / bnorm;
    const int ok = reason > 0 && rel_true <= 2.0 * tol;
    const char *ntype_name = ntype == KSP_NORM_UNPRECONDITIONED ? "unpreconditioned"
                             : ntype == KSP_NORM_PRECONDITIONED ? "preconditioned"
                             : ntype == KSP_NORM_NATURAL        ? "natural"
                                                                : "none";
    if (rank == 0) {
        char prob[PETSC_MAX_PATH_LEN + 64];
        if (has_matrix)
            snprintf(prob, sizeof(prob), "%s", matrix);
        else
            snprintf(prob, sizeof(prob), "generated");
        printf("petsc_cg - PETSc %d.%d.%d KSPCG, PCNONE\n", PETSC_VERSION_MAJOR,
               PETSC_VERSION_MINOR, PETSC_VERSION_SUBMINOR);
        if (has_matrix)
            printf("  problem      : %s, b = A*ones\n", matrix);
        else
            printf("  problem      : generated 3-D Poisson, %d-point, grid %dx%dx%d, b = A x*\n",
                   (int)stencil, (int)n, (int)n, (int)n);
        printf("  matrix       : %lld rows, %.0f nonzeros, %d ranks\n", (long long)N, nnz,
               (int)size);
        printf("  convergence  : ||r_k||_2 <= %g ||b||_2 (norm %s, rtol %g, atol %g), x0 = 0\n",
               tol, ntype_name, (double)rtol_used, (double)atol_used);
        printf("  iterations   : %d (reason %s)\n", (int)its, KSPConvergedReasons[reason]);
        printf("  residual     : recurrence %.3e, true ||b-Ax||/||b|| %.3e\n", rel_rec,
               rel_true);
        printf("  error        : ||x-x*||/||x*|| %.3e, ||x|| %.10g\n", enorm / xsnorm, xnorm);
        printf("  time         : KSPSolve %.4f s (%.3f ms/iteration), setup %.3f s\n", t_solve,
               its > 0 ? 1e3 * t_solve / its : 0.0, setup_time);
        printf("  bandwidth    : %.3f GB/s (model %.1f MB/iteration, cgsolver's convention)\n",
               its > 0 ? bytes_iter * its / t_solve * 1e-9 : 0.0, bytes_iter * 1e-6);
        printf("PETSC_CG_JSON: {\"petsc_version\":\"%d.%d.%d\",\"ranks\":%d,\"problem\":\"%s\","
               "\"grid_n\":%d,\"stencil\":%d,\"rows\":%lld,\"nnz\":%.0f,\"tol\":%.17g,"
               "\"maxit\":%d,\"norm_type\":\"%s\",\"iterations\":%d,\"reason\":\"%s\","
               "\"converged\":%s,\"final_residual\":%.9g,\"true_residual\":%.9g,"
               "\"error\":%.9g,\"solution_norm\":%.12g,\"bnorm\":%.17g,\"time_s\":%.9g,"
               "\"setup_time_s\":%.9g,\"time_per_iter_s\":%.9g,\"bytes_per_iter\":%.0f,"
               "\"bandwidth_gbs\":%.6g,\"verified\":%s}\n",
               PETSC_VERSION_MAJOR, PETSC_VERSION_MINOR, PETSC_VERSION_SUBMINOR, (int)size, prob,
               has_matrix ? 0 : (int)n, has_matrix ? 0 : (int)stencil, (long long)N, nnz, tol,
               (int)maxit_used, ntype_name, (int)its, KSPConvergedReasons[reason],
               reason > 0 ? "true" : "false", rel_rec, rel_true, enorm / xsnorm, xnorm, bnorm,
               t_solve, setup_time, its > 0 ? t_solve / its : 0.0, bytes_iter,
               its > 0 ? bytes_iter * its / t_solve * 1e-9 : 0.0, ok ? "true" : "false");
        printf("PETSC_CG VERIFICATION %s\n", ok ? "SUCCESSFUL" : "FAILED");
        fflush(stdout);
    }

    PetscCall(KSPDestroy(&ksp));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&b));
    PetscCall(VecDestroy(&xstar));
    PetscCall(VecDestroy(&tmp));
    PetscCall(MatDestroy(&A));
    free(rowptr);
    PetscCall(PetscFinalize());
    return ok ? 0 : 2;
}
