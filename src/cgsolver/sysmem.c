/* sysmem.c - memory availability queries. */
#define _DEFAULT_SOURCE /* _SC_AVPHYS_PAGES */
#include "sysmem.h"
#include "mpi_stats.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

double sysmem_available_bytes(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (f) {
        char line[256];
        while (fgets(line, sizeof(line), f)) {
            unsigned long long kb;
            if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) {
                fclose(f);
                return (double)kb * 1024.0;
            }
        }
        fclose(f);
    }
#ifdef _SC_AVPHYS_PAGES
    long pages = sysconf(_SC_AVPHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    if (pages > 0 && psz > 0)
        return (double)pages * (double)psz;
#endif
    return -1.0;
}

int sysmem_ranks_on_node(MPI_Comm comm)
{
    MPI_Comm node;
    int n = 1;
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
        MPI_Comm_size(node, &n);
        MPI_Comm_free(&node);
    }
    cgm_count_other();
    return n;
}
