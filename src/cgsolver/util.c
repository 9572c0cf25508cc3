/* util.c - allocation helpers. */
#define _DEFAULT_SOURCE /* madvise / MADV_HUGEPAGE */
#include "common.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* CGSOLVER_HUGEPAGES=0 in the environment disables the huge-page hint
 * (huge-page first touch can be slow on some virtual machines, which
 * lengthens the untimed setup). */
static int use_huge_pages(void)
{
    static int cached = -1;
    if (cached < 0) {
        const char *e = getenv("CGSOLVER_HUGEPAGES");
        cached = !(e && e[0] == '0');
    }
    return cached;
}

void *cg_xmalloc(size_t bytes)
{
    void *p = NULL;
    if (bytes == 0)
        bytes = 64;
    /* Large arrays: 2 MiB alignment and a transparent-huge-page hint; this
     * cuts TLB misses and lets hardware prefetchers run across 4 KiB page
     * boundaries in the streaming kernels. */
    const size_t huge = (size_t)2 << 20;
    size_t align = bytes >= huge && use_huge_pages() ? huge : 64;
    if (posix_memalign(&p, align, bytes) != 0 || p == NULL) {
        fprintf(stderr, "cgsolver: error: out of memory (allocating %zu bytes)\n", bytes);
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, CG_EXIT_ERROR);
        exit(CG_EXIT_ERROR);
    }
#ifdef MADV_HUGEPAGE
    if (align == huge)
        (void)madvise(p, bytes & ~(huge - 1), MADV_HUGEPAGE);
#endif
    return p;
}

void *cg_xcalloc(size_t count, size_t size)
{
    if (size != 0 && count > SIZE_MAX / size) {
        fprintf(stderr, "cgsolver: error: allocation size overflow\n");
        MPI_Abort(MPI_COMM_WORLD, CG_EXIT_ERROR);
        exit(CG_EXIT_ERROR);
    }
    void *p = cg_xmalloc(count * size);
    memset(p, 0, count * size);
    return p;
}

void cg_free(void *p)
{
    free(p);
}

int cg_num_threads(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}
