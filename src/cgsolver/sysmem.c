/* sysmem.c - memory availability queries. */
#define _DEFAULT_SOURCE /* _SC_AVPHYS_PAGES */
#include "sysmem.h"
#include "mpi_stats.h"

#include <stdio.h>
#include <stdlib.h>
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

static int read_line(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int ok = fgets(buf, (int)len, f) != NULL;
    fclose(f);
    return ok ? 0 : -1;
}

double sysmem_llc_bytes(void)
{
    int best_level = 0;
    double best = -1.0;
    for (int i = 0; i < 16; i++) {
        char path[128], buf[64];
        snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
        if (read_line(path, buf, sizeof(buf)) != 0)
            continue;
        int level = atoi(buf);
        snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
        if (read_line(path, buf, sizeof(buf)) != 0 || strncmp(buf, "Instruction", 11) == 0)
            continue;
        snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        char unit = 'K';
        double size;
        if (read_line(path, buf, sizeof(buf)) != 0 || sscanf(buf, "%lf%c", &size, &unit) < 1)
            continue;
        double scale = unit == 'G' ? 1073741824.0 : unit == 'M' ? 1048576.0 : unit == 'K' ? 1024.0 : 1.0;
        if (level > best_level && size > 0) {
            best_level = level;
            best = size * scale;
        }
    }
    return best;
}
