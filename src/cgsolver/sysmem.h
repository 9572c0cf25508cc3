/* sysmem.h - available memory and ranks per node, for the up-front
 * "will the problem fit?" check. */
#ifndef CGSOLVER_SYSMEM_H
#define CGSOLVER_SYSMEM_H

#include <mpi.h>

/* MemAvailable from /proc/meminfo (bytes), else sysconf-based free
 * physical memory; negative if unknown. */
double sysmem_available_bytes(void);

/* Number of ranks of comm sharing this rank's node. Collective. */
int sysmem_ranks_on_node(MPI_Comm comm);

/* Size of the last-level cache that CPU 0 uses (the highest level of
 * /sys/devices/system/cpu/cpu0/cache), bytes; negative if unknown. */
double sysmem_llc_bytes(void);

#endif
