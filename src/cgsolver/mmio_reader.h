/* mmio_reader.h - reader/validator for Matrix Market coordinate files
 * holding a symmetric positive-definite candidate matrix (serial; called
 * by rank 0). */
#ifndef CGSOLVER_MMIO_READER_H
#define CGSOLVER_MMIO_READER_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int64_t n;        /* rows = columns */
    int64_t nnz;      /* stored nonzeros of the full (expanded) matrix */
    int64_t *rowptr;  /* n+1, global CSR with sorted, unique columns */
    int64_t *col;
    double *val;
    int symmetric_storage; /* file header said "symmetric" */
} mm_matrix;

/* Read and validate: coordinate format, real/integer field, square,
 * symmetric (a "general" file is checked entry by entry), finite values,
 * strictly positive diagonal.  Duplicate entries are summed.
 * Returns 0 on success, -1 with a one-line message in err otherwise. */
int mm_read_spd(const char *path, mm_matrix *m, char *err, size_t errlen);

void mm_free(mm_matrix *m);

#endif
