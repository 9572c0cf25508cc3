/* mtx_rows.c - the rows of a Matrix Market file that one rank of petsc_cg
 * owns, split in contiguous blocks as cgsolver splits them. */
#include "mtx_rows.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>



static int cmp_triple(const void *pa, const void *pb)
{
    const triple *a = pa, *b = pb;
    if (a->row != b->row)
        return (a->row > b->row) - (a->row < b->row);
    return (a->col > b->col) - (a->col < b->col);
}

/* Reads FILE, keeps the entries of rows [r0, r1) (both triangles of a
 * symmetric file), sorted by (row, col) with duplicates summed.  Returns 0,
 * or -1 with a message in err. */
int read_mtx_rows(const char *path, int rank, int size, int64_t *n_out, int64_t *r0_out,
                         int64_t *r1_out, triple **out, int64_t *nout, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "cannot open matrix file '%s'", path);
        return -1;
    }
    char line[1024], obj[64], fmt[64], field[64], sym[64];
    if (!fgets(line, sizeof(line), f) ||
        sscanf(line, "%%%%MatrixMarket %63s %63s %63s %63s", obj, fmt, field, sym) != 4 ||
        strcmp(fmt, "coordinate") != 0 ||
        (strcmp(field, "real") != 0 && strcmp(field, "integer") != 0 &&
         strcmp(field, "double") != 0) ||
        (strcmp(sym, "symmetric") != 0 && strcmp(sym, "general") != 0)) {
        snprintf(err, errlen,
                 "'%s': need a '%%%%MatrixMarket matrix coordinate real|integer "
                 "symmetric|general' file",
                 path);
        fclose(f);
        return -1;
    }
    const int symmetric = strcmp(sym, "symmetric") == 0;
    long long nr = 0, nc = 0, ne = 0;
    for (;;) {
        if (!fgets(line, sizeof(line), f)) {
            snprintf(err, errlen, "'%s': missing size line", path);
            fclose(f);
            return -1;
        }
        if (line[0] == '%' || line[0] == '\n')
            continue;
        if (sscanf(line, "%lld %lld %lld", &nr, &nc, &ne) != 3 || nr <= 0 || nr != nc ||
            ne < 0) {
            snprintf(err, errlen, "'%s': bad size line (square matrix required)", path);
            fclose(f);
            return -1;
        }
        break;
    }
    const int64_t n = nr;
    const int64_t base = n / size, extra = n % size;
    const int64_t r0 = rank * base + (rank < extra ? rank : extra);
    const int64_t r1 = r0 + base + (rank < extra ? 1 : 0);
    int64_t cap = 1024, cnt = 0, seen = 0;
    triple *t = malloc(sizeof(triple) * (size_t)cap);
    while (fgets(line, sizeof(line), f)) {
        if (line[0] == '%' || line[0] == '\n')
            continue;
        long long i, j;
        double v;
        if (sscanf(line, "%lld %lld %lf", &i, &j, &v) != 3 || i < 1 || j < 1 || i > n ||
            j > n || !isfinite(v)) {
            snprintf(err, errlen, "'%s': malformed or out-of-range entry: %s", path, line);
            free(t);
            fclose(f);
            return -1;
        }
        seen++;
        for (int mirror = 0; mirror < 1 + (symmetric && i != j); mirror++) {
            int64_t row = (mirror ? j : i) - 1, col = (mirror ? i : j) - 1;
            if (row < r0 || row >= r1)
                continue;
            if (cnt == cap) {
                cap *= 2;
                t = realloc(t, sizeof(triple) * (size_t)cap);
            }
            t[cnt].row = row;
            t[cnt].col = col;
            t[cnt].val = v;
            cnt++;
        }
    }
    fclose(f);
    if (seen != ne) {
        snprintf(err, errlen, "'%s': %lld entries read, %lld declared", path, (long long)seen,
                 ne);
        free(t);
        return -1;
    }
    qsort(t, (size_t)cnt, sizeof(triple), cmp_triple);
    int64_t m = 0;
    for (int64_t e = 0; e < cnt; e++) {
        if (m > 0 && t[m - 1].row == t[e].row && t[m - 1].col == t[e].col)
            t[m - 1].val += t[e].val;
        else
            t[m++] = t[e];
    }
    *n_out = n;
    *r0_out = r0;
    *r1_out = r1;
    *out = t;
    *nout = m;
    return 0;
}
