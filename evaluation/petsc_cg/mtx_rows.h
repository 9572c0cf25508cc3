/* mtx_rows.h - the rows of a Matrix Market file that one rank owns. */
#ifndef PETSC_CG_MTX_ROWS_H
#define PETSC_CG_MTX_ROWS_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int64_t row, col;
    double val;
} triple;

/* Reads FILE, keeps the entries of rows [r0, r1) of this rank (both
 * triangles of a symmetric file), sorted by (row, col) with duplicates
 * summed.  Returns 0, or -1 with a message in err. */
int read_mtx_rows(const char *path, int rank, int size, int64_t *n_out, int64_t *r0_out,
                  int64_t *r1_out, triple **out, int64_t *nout, char *err, size_t errlen);

#endif
