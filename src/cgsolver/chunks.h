/* chunks.h - the storage the SpMV reads: the CSR rows regrouped, in row
 * order, into blocks.
 *
 * A chunk is CHUNK_ROWS consecutive rows of equal length whose column lists
 * shift by one from each row to the next (every stencil row away from the
 * domain's faces).  It is stored slot by slot: for slot k, one column
 * index (that of its first row) and CHUNK_ROWS values, so the x entries of
 * a slot are CHUNK_ROWS consecutive values, read as vectors without a
 * gather, and the matrix streams 8 bytes per nonzero plus 4 per slot
 * instead of CSR's 12.  Every other row is a block of one row with its own
 * column indices.  Each row's products are summed in column order from
 * zero in both kinds of block, so y does not depend on how rows fall into
 * chunks (that is, on the partition). */
#ifndef CGSOLVER_CHUNKS_H
#define CGSOLVER_CHUNKS_H

#include <stdint.h>

#define CHUNK_ROWS 8

typedef struct {
    int nblocks;
    int32_t *row;     /* first row of each block */
    int32_t *width;   /* > 0: a chunk with `width` slots; <= 0: one row of -width entries */
    int32_t *voff;    /* where the block's values start in val */
    int32_t *coff;    /* where its column indices start in col */
    double *val;
    int32_t *col;
    int64_t ncol;     /* column indices stored */
    int64_t chunked_rows;
    /* Blocks of row range k of the ranges given to chunks_build:
     * [range_blk[k], range_blk[k+1]). */
    int32_t *range_blk;
} chunk_matrix;

/* Regroup the CSR rows rowptr/col/val of the row ranges [ranges[2k],
 * ranges[2k+1]), k < nranges, which must be disjoint and together cover
 * every row. */
void chunks_build(chunk_matrix *M, const int32_t *rowptr, const int32_t *col,
                  const double *val, const int32_t *ranges, int nranges);
void chunks_free(chunk_matrix *M);

/* Bytes one SpMV reads of M: values, column indices, 16 bytes of block
 * header per block. */
double chunks_bytes(const chunk_matrix *M, int64_t nnz);

#endif
