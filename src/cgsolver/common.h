/* common.h - shared definitions for the cgsolver benchmark. */
#ifndef CGSOLVER_COMMON_H
#define CGSOLVER_COMMON_H

#include <stddef.h>
#include <stdint.h>

#define CGSOLVER_VERSION "1.0.0"

/* Process exit codes. */
#define CG_EXIT_OK 0
#define CG_EXIT_ERROR 1          /* bad arguments / bad input / resources */
#define CG_EXIT_VERIFY_FAILED 2  /* ran, but verification failed */

#define CG_ERRLEN 512

/* OpenMP is optional: CG_OMP(...) expands to a pragma only when compiled
 * with OpenMP, so -Wall -Werror builds without it stay warning-free. */
#ifdef _OPENMP
#define CG_PRAGMA_(x) _Pragma(#x)
#define CG_OMP(x) CG_PRAGMA_(omp x)
#else
#define CG_OMP(x)
#endif

/* 64-byte aligned allocation; aborts the MPI job with a one-line
 * message if memory is exhausted (sizes are pre-checked for generated
 * problems, so this only triggers in exceptional situations). */
void *cg_xmalloc(size_t bytes);
void *cg_xcalloc(size_t count, size_t size);
void cg_free(void *p);

/* Number of OpenMP threads (1 without OpenMP). */
int cg_num_threads(void);

#endif
