/* chunks.c - regrouping CSR rows into chunks and single rows (chunks.h). */
#include "chunks.h"
#include "common.h"

#include <string.h>

/* Rows r..r+CHUNK_ROWS-1 (all before end) form a chunk. */
static int is_chunk(const int32_t *rp, const int32_t *col, int r, int end)
{
    if (r + CHUNK_ROWS > end)
        return 0;
    const int32_t w = rp[r + 1] - rp[r];
    if (w <= 0)
        return 0;
    for (int j = 1; j < CHUNK_ROWS; j++) {
        if (rp[r + j + 1] - rp[r + j] != w)
            return 0;
        const int32_t *first = col + rp[r], *row = col + rp[r + j];
        for (int32_t k = 0; k < w; k++)
            if (row[k] != first[k] + j)
                return 0;
    }
    return 1;
}

/* Walks the rows of every range, deciding chunk or single row; with M's
 * arrays allocated, also fills them. */
static void walk(chunk_matrix *M, const int32_t *rp, const int32_t *col, const double *val,
                 const int32_t *ranges, int nranges, int fill)
{
    int b = 0;
    int64_t voff = 0, coff = 0, chunked = 0;
    for (int k = 0; k < nranges; k++) {
        if (fill)
            M->range_blk[k] = b;
        const int end = ranges[2 * k + 1];
        for (int r = ranges[2 * k]; r < end; b++) {
            const int32_t len = rp[r + 1] - rp[r];
            if (is_chunk(rp, col, r, end)) {
                if (fill) {
                    M->row[b] = r;
                    M->width[b] = len;
                    M->voff[b] = (int32_t)voff;
                    M->coff[b] = (int32_t)coff;
                    for (int32_t s = 0; s < len; s++) {
                        M->col[coff + s] = col[rp[r] + s];
                        for (int j = 0; j < CHUNK_ROWS; j++)
                            M->val[voff + (int64_t)s * CHUNK_ROWS + j] = val[rp[r + j] + s];
                    }
                }
                voff += (int64_t)len * CHUNK_ROWS;
                coff += len;
                chunked += CHUNK_ROWS;
                r += CHUNK_ROWS;
            } else {
                if (fill) {
                    M->row[b] = r;
                    M->width[b] = -len;
                    M->voff[b] = (int32_t)voff;
                    M->coff[b] = (int32_t)coff;
                    memcpy(M->col + coff, col + rp[r], sizeof(int32_t) * (size_t)len);
                    memcpy(M->val + voff, val + rp[r], sizeof(double) * (size_t)len);
                }
                voff += len;
                coff += len;
                r++;
            }
        }
    }
    if (fill)
        M->range_blk[nranges] = b;
    M->nblocks = b;
    M->ncol = coff;
    M->chunked_rows = chunked;
}

void chunks_build(chunk_matrix *M, const int32_t *rowptr, const int32_t *col,
                  const double *val, const int32_t *ranges, int nranges)
{
    memset(M, 0, sizeof(*M));
    walk(M, rowptr, col, val, ranges, nranges, 0);
    const size_t nb = (size_t)(M->nblocks > 0 ? M->nblocks : 1);
    int64_t nnz = 0;
    for (int k = 0; k < nranges; k++)
        nnz += rowptr[ranges[2 * k + 1]] - rowptr[ranges[2 * k]];
    M->row = cg_xmalloc(sizeof(int32_t) * nb);
    M->width = cg_xmalloc(sizeof(int32_t) * nb);
    M->voff = cg_xmalloc(sizeof(int32_t) * nb);
    M->coff = cg_xmalloc(sizeof(int32_t) * nb);
    M->val = cg_xmalloc(sizeof(double) * (size_t)(nnz > 0 ? nnz : 1));
    M->col = cg_xmalloc(sizeof(int32_t) * (size_t)(M->ncol > 0 ? M->ncol : 1));
    M->range_blk = cg_xmalloc(sizeof(int32_t) * ((size_t)nranges + 1));
    walk(M, rowptr, col, val, ranges, nranges, 1);
}

void chunks_free(chunk_matrix *M)
{
    cg_free(M->row);
    cg_free(M->width);
    cg_free(M->voff);
    cg_free(M->coff);
    cg_free(M->val);
    cg_free(M->col);
    cg_free(M->range_blk);
    memset(M, 0, sizeof(*M));
}

double chunks_bytes(const chunk_matrix *M, int64_t nnz)
{
    return 8.0 * (double)nnz + 4.0 * (double)M->ncol + 16.0 * (double)M->nblocks;
}
