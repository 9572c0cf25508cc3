/* partition.h - contiguous block distribution of global rows over ranks.
 * The first (n mod p) ranks own one row more than the others. */
#ifndef CGSOLVER_PARTITION_H
#define CGSOLVER_PARTITION_H

#include <stdint.h>

typedef struct {
    int64_t n;    /* global rows */
    int p;        /* ranks */
    int64_t base; /* n / p */
    int64_t rem;  /* n % p */
} block_partition;

static inline block_partition bp_make(int64_t n, int p)
{
    block_partition bp = {n, p, n / p, n % p};
    return bp;
}

/* First global row of rank r (r may equal p: returns n). */
static inline int64_t bp_start(const block_partition *bp, int r)
{
    return (int64_t)r * bp->base + (r < bp->rem ? r : bp->rem);
}

static inline int64_t bp_count(const block_partition *bp, int r)
{
    return bp->base + (r < bp->rem ? 1 : 0);
}

/* Rank owning global row g (0 <= g < n). */
static inline int bp_owner(const block_partition *bp, int64_t g)
{
    int64_t big = bp->rem * (bp->base + 1); /* rows owned by the larger blocks */
    if (g < big)
        return (int)(g / (bp->base + 1));
    return (int)(bp->rem + (g - big) / bp->base);
}

#endif
