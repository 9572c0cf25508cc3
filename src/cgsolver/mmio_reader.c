/* mmio_reader.c - our own Matrix Market coordinate-format parser. */
#include "mmio_reader.h"
#include "common.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct {
    int64_t col;
    double val;
} mm_entry;

static int cmp_entry(const void *a, const void *b)
{
    int64_t x = ((const mm_entry *)a)->col, y = ((const mm_entry *)b)->col;
    return (x > y) - (x < y);
}

static int is_blank(const char *s)
{
    for (; *s; s++)
        if (!isspace((unsigned char)*s))
            return 0;
    return 1;
}

/* Parse a signed 64-bit integer token; advances *s. */
static int next_i64(char **s, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(*s, &end, 10);
    if (end == *s || errno != 0 || (*end != '\0' && !isspace((unsigned char)*end)))
        return -1;
    *out = (int64_t)v;
    *s = end;
    return 0;
}

static int next_double(char **s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(*s, &end);
    if (end == *s || (*end != '\0' && !isspace((unsigned char)*end)))
        return -1;
    if (errno == ERANGE && fabs(v) > 1.0) /* overflow; underflow to 0 is harmless */
        return -1;
    *out = v;
    *s = end;
    return 0;
}

void mm_free(mm_matrix *m)
{
    cg_free(m->rowptr);
    cg_free(m->col);
    cg_free(m->val);
    memset(m, 0, sizeof(*m));
}

#define FAIL(...)                                     \
    do {                                              \
        snprintf(err, errlen, __VA_ARGS__);           \
        goto fail;                                    \
    } while (0)

int mm_read_spd(const char *path, mm_matrix *m, char *err, size_t errlen)
{
    memset(m, 0, sizeof(*m));
    FILE *f = NULL;
    char *line = NULL;
    size_t cap = 0;
    int64_t *ri = NULL, *ci = NULL;
    double *vv = NULL;
    mm_entry *ent = NULL;
    int64_t lineno = 0;

    f = fopen(path, "r");
    if (!f)
        FAIL("cannot open matrix file '%s': %s", path, strerror(errno));

    /* Banner: %%MatrixMarket matrix coordinate <field> <symmetry> */
    if (getline(&line, &cap, f) < 0)
        FAIL("matrix file '%s' is empty (not a Matrix Market file)", path);
    lineno++;
    {
        char tok[5][64];
        int nt = sscanf(line, "%63s %63s %63s %63s %63s", tok[0], tok[1], tok[2], tok[3], tok[4]);
        if (nt < 1 || strcmp(tok[0], "%%MatrixMarket") != 0)
            FAIL("'%s' is not a Matrix Market file (missing %%%%MatrixMarket banner)", path);
        if (nt != 5)
            FAIL("'%s': malformed Matrix Market banner", path);
        if (strcasecmp(tok[1], "matrix") != 0)
            FAIL("'%s': unsupported Matrix Market object '%s' (expected matrix)", path, tok[1]);
        if (strcasecmp(tok[2], "coordinate") != 0)
            FAIL("'%s': unsupported Matrix Market format '%s' (expected coordinate)", path, tok[2]);
        if (strcasecmp(tok[3], "real") != 0 && strcasecmp(tok[3], "integer") != 0 &&
            strcasecmp(tok[3], "double") != 0)
            FAIL("'%s': unsupported Matrix Market field '%s' (expected real or integer)", path,
                 tok[3]);
        if (strcasecmp(tok[4], "symmetric") == 0)
            m->symmetric_storage = 1;
        else if (strcasecmp(tok[4], "general") == 0)
            m->symmetric_storage = 0;
        else
            FAIL("'%s': unsupported Matrix Market symmetry '%s' (expected symmetric or general)",
                 path, tok[4]);
    }

    /* Size line (after comments / blank lines). */
    int64_t nr = 0, nc = 0, nent = 0;
    for (;;) {
        if (getline(&line, &cap, f) < 0)
            FAIL("'%s': missing size line", path);
        lineno++;
        if (line[0] == '%' || is_blank(line))
            continue;
        char *s = line;
        if (next_i64(&s, &nr) || next_i64(&s, &nc) || next_i64(&s, &nent) || !is_blank(s))
            FAIL("'%s' line %lld: malformed size line (expected 'rows cols entries')", path,
                 (long long)lineno);
        break;
    }
    if (nr <= 0 || nc <= 0 || nent < 0)
        FAIL("'%s': invalid matrix size %lld x %lld with %lld entries", path, (long long)nr,
             (long long)nc, (long long)nent);
    if (nr != nc)
        FAIL("'%s': matrix is not square (%lld x %lld)", path, (long long)nr, (long long)nc);
    if (nr > INT32_MAX)
        FAIL("'%s': matrix too large (%lld rows)", path, (long long)nr);
    if (nent > 4 * (int64_t)1000000000)
        FAIL("'%s': too many entries (%lld)", path, (long long)nent);
    const int64_t n = nr;

    /* Entries (expanded when the file stores one triangle). */
    int64_t cap_e = m->symmetric_storage ? 2 * nent : nent;
    ri = cg_xmalloc(sizeof(int64_t) * (size_t)(cap_e + 1));
    ci = cg_xmalloc(sizeof(int64_t) * (size_t)(cap_e + 1));
    vv = cg_xmalloc(sizeof(double) * (size_t)(cap_e + 1));
    int64_t ne = 0, seen = 0;
    while (getline(&line, &cap, f) >= 0) {
        lineno++;
        if (line[0] == '%' || is_blank(line))
            continue;
        if (seen == nent)
            FAIL("'%s' line %lld: more entries than the %lld declared", path, (long long)lineno,
                 (long long)nent);
        char *s = line;
        int64_t i, j;
        double v;
        if (next_i64(&s, &i) || next_i64(&s, &j) || next_double(&s, &v) || !is_blank(s))
            FAIL("'%s' line %lld: malformed entry (expected 'row col value')", path,
                 (long long)lineno);
        if (i < 1 || i > n || j < 1 || j > n)
            FAIL("'%s' line %lld: index (%lld,%lld) out of range 1..%lld", path, (long long)lineno,
                 (long long)i, (long long)j, (long long)n);
        if (!isfinite(v))
            FAIL("'%s' line %lld: non-finite value", path, (long long)lineno);
        ri[ne] = i - 1;
        ci[ne] = j - 1;
        vv[ne] = v;
        ne++;
        if (m->symmetric_storage && i != j) {
            ri[ne] = j - 1;
            ci[ne] = i - 1;
            vv[ne] = v;
            ne++;
        }
        seen++;
    }
    if (seen != nent)
        FAIL("'%s': file ends after %lld of %lld declared entries", path, (long long)seen,
             (long long)nent);
    fclose(f);
    f = NULL;
    free(line);
    line = NULL;

    /* COO -> CSR: bucket by row, sort each row, sum duplicates. */
    int64_t *rowptr = cg_xcalloc((size_t)n + 1, sizeof(int64_t));
    m->rowptr = rowptr;
    m->n = n;
    for (int64_t e = 0; e < ne; e++)
        rowptr[ri[e] + 1]++;
    for (int64_t r = 0; r < n; r++)
        rowptr[r + 1] += rowptr[r];
    ent = cg_xmalloc(sizeof(mm_entry) * (size_t)(ne + 1));
    {
        int64_t *fill = cg_xmalloc(sizeof(int64_t) * (size_t)n);
        memcpy(fill, rowptr, sizeof(int64_t) * (size_t)n);
        for (int64_t e = 0; e < ne; e++) {
            mm_entry x = {ci[e], vv[e]};
            ent[fill[ri[e]]++] = x;
        }
        cg_free(fill);
    }
    cg_free(ri);
    cg_free(ci);
    cg_free(vv);
    ri = ci = NULL;
    vv = NULL;
    int64_t out = 0, start = 0;
    for (int64_t r = 0; r < n; r++) {
        int64_t end = rowptr[r + 1];
        qsort(ent + start, (size_t)(end - start), sizeof(mm_entry), cmp_entry);
        int64_t row_begin = out;
        for (int64_t e = start; e < end; e++) {
            if (out > row_begin && ent[out - 1].col == ent[e].col)
                ent[out - 1].val += ent[e].val;
            else
                ent[out++] = ent[e];
        }
        start = end;
        rowptr[r + 1] = out;
    }
    m->nnz = out;
    m->col = cg_xmalloc(sizeof(int64_t) * (size_t)(out + 1));
    m->val = cg_xmalloc(sizeof(double) * (size_t)(out + 1));
    for (int64_t e = 0; e < out; e++) {
        m->col[e] = ent[e].col;
        m->val[e] = ent[e].val;
    }
    cg_free(ent);
    ent = NULL;

    /* Positive diagonal. */
    for (int64_t r = 0; r < n; r++) {
        double d = 0.0;
        for (int64_t e = rowptr[r]; e < rowptr[r + 1]; e++)
            if (m->col[e] == r)
                d = m->val[e];
        if (!(d > 0.0))
            FAIL("'%s': diagonal entry (%lld,%lld) = %g is not positive (matrix not SPD)", path,
                 (long long)(r + 1), (long long)(r + 1), d);
    }

    /* Symmetry (always true by construction for symmetric storage). */
    if (!m->symmetric_storage) {
        for (int64_t r = 0; r < n; r++) {
            for (int64_t e = rowptr[r]; e < rowptr[r + 1]; e++) {
                int64_t c = m->col[e];
                if (c == r)
                    continue;
                double v = m->val[e], w = 0.0;
                int64_t lo = rowptr[c], hi = rowptr[c + 1] - 1;
                while (lo <= hi) {
                    int64_t mid = lo + (hi - lo) / 2;
                    if (m->col[mid] == r) {
                        w = m->val[mid];
                        break;
                    }
                    if (m->col[mid] < r)
                        lo = mid + 1;
                    else
                        hi = mid - 1;
                }
                if (fabs(v - w) > 1e-12 * fmax(fabs(v), fabs(w)))
                    FAIL("'%s': matrix is not symmetric: A(%lld,%lld) = %g but A(%lld,%lld) = %g",
                         path, (long long)(r + 1), (long long)(c + 1), v, (long long)(c + 1),
                         (long long)(r + 1), w);
            }
        }
    }
    return 0;

fail:
    if (f)
        fclose(f);
    free(line);
    cg_free(ri);
    cg_free(ci);
    cg_free(vv);
    cg_free(ent);
    mm_free(m);
    return -1;
}
