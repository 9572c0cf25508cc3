/* triad.c - clusterbench's own STREAM-style triad (MPI, one process per core).
 *
 *   a[i] = b[i] + s * c[i]      i = 0 .. n-1 on every rank
 *
 * Every rank owns its three arrays.  Each repetition is framed by
 * MPI_Barrier; its time is the slowest rank's, and the figure is the best
 * (minimum) of N repetitions after one untimed warm-up pass, as STREAM does.
 *
 * Byte convention (the STREAM one): a triad moves 24 bytes per element
 * (read b, read c, write a; 8-byte doubles).  The write-allocate read of a
 * that a cache with write-allocate performs is NOT counted.  The solver's
 * model (src/cgsolver/README.md, "Flop and byte model") uses the same
 * convention: every array read or written once per kernel, no write-allocate
 * or cache-reuse effects.  The 32-byte figure (with the write-allocate read)
 * is printed too, for information only.
 *
 * Array size: by default each array (summed over the ranks of a node) is at
 * least 4x the node's last-level cache and at least 512 MiB.  Arrays are
 * 2 MiB aligned with a transparent-huge-page hint, like the solver's large
 * arrays (TRIAD_HUGEPAGES=0 disables the hint, as CGSOLVER_HUGEPAGES=0 does
 * for the solver).
 *
 * Output (rank 0): a human summary and one machine-readable line
 *   TRIAD_JSON: {...}
 * followed by "TRIAD VALIDATION SUCCESSFUL" or "TRIAD VALIDATION FAILED".
 * Exit 0 / 1 (bad option) / 2 (validation failed).
 */
#define _DEFAULT_SOURCE /* madvise */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define HUGE_BYTES ((size_t)2 << 20)
#define MIN_ARRAY_BYTES ((double)(512u << 20))

static int use_huge_pages(void)
{
    const char *e = getenv("TRIAD_HUGEPAGES");
    return !(e && e[0] == '0');
}

static double *alloc_array(size_t n)
{
    size_t bytes = n * sizeof(double);
    size_t align = bytes >= HUGE_BYTES && use_huge_pages() ? HUGE_BYTES : 64;
    void *p = NULL;
    if (posix_memalign(&p, align, bytes) != 0 || p == NULL)
        return NULL;
#ifdef MADV_HUGEPAGE
    if (align == HUGE_BYTES)
        (void)madvise(p, bytes & ~(HUGE_BYTES - 1), MADV_HUGEPAGE);
#endif
    return p;
}

/* Sum of the distinct last-level caches of this node, from sysfs (the
 * sysconf value is unreliable in virtual machines); 0 if unknown. */
static double node_llc_bytes(void)
{
    long ncpu = sysconf(_SC_NPROCESSORS_CONF);
    int best_level = 0;
    double total = 0.0;
    char seen[64][128];
    int nseen = 0;
    for (long cpu = 0; cpu < ncpu; cpu++) {
        for (int idx = 0; idx < 16; idx++) {
            char path[256], buf[128];
            int level = 0;
            snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%ld/cache/index%d/level",
                     cpu, idx);
            FILE *f = fopen(path, "r");
            if (!f)
                break;
            if (fscanf(f, "%d", &level) != 1)
                level = 0;
            fclose(f);
            snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%ld/cache/index%d/type",
                     cpu, idx);
            f = fopen(path, "r");
            if (!f || !fgets(buf, sizeof(buf), f) || strncmp(buf, "Instruction", 11) == 0) {
                if (f)
                    fclose(f);
                continue;
            }
            fclose(f);
            if (level < best_level)
                continue;
            if (level > best_level) {
                best_level = level;
                total = 0.0;
                nseen = 0;
            }
            snprintf(path, sizeof(path),
                     "/sys/devices/system/cpu/cpu%ld/cache/index%d/shared_cpu_list", cpu, idx);
            f = fopen(path, "r");
            if (!f || !fgets(buf, sizeof(buf), f)) {
                if (f)
                    fclose(f);
                continue;
            }
            fclose(f);
            int dup = 0;
            for (int s = 0; s < nseen; s++)
                if (strcmp(seen[s], buf) == 0)
                    dup = 1;
            if (dup || nseen >= 64)
                continue;
            snprintf(seen[nseen++], sizeof(seen[0]), "%s", buf);
            snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%ld/cache/index%d/size",
                     cpu, idx);
            f = fopen(path, "r");
            double size = 0.0;
            char unit = 0;
            if (f) {
                if (fscanf(f, "%lf%c", &size, &unit) < 1)
                    size = 0.0;
                fclose(f);
            }
            if (unit == 'K')
                size *= 1024.0;
            else if (unit == 'M')
                size *= 1048576.0;
            else if (unit == 'G')
                size *= 1073741824.0;
            total += size;
        }
    }
    return total;
}

static void usage(FILE *f)
{
    fputs("usage: triad [--elements N] [--ntimes N] [--scalar S] [--help]\n"
          "  --elements N  elements per array per rank (default: each array, summed\n"
          "                over the ranks of a node, >= 4x the node's LLC and >= 512 MiB)\n"
          "  --ntimes N    timed repetitions, best is reported (default 20, >= 2)\n"
          "  --scalar S    triad scalar (default 3.0)\n",
          f);
}

static int parse_long(const char *s, long long *out)
{
    char *end;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end != '\0' || v <= 0)
        return -1;
    *out = v;
    return 0;
}

/* The timed kernel; noinline keeps the loop a plain streaming loop. */
__attribute__((noinline)) static void triad(size_t n, double *restrict a,
                                            const double *restrict b,
                                            const double *restrict c, double s)
{
    for (size_t i = 0; i < n; i++)
        a[i] = b[i] + s * c[i];
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nranks, node_ranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &node_ranks);
    MPI_Comm_free(&node);

    long long elements = 0, ntimes = 20;
    double scalar = 3.0;
    for (int i = 1; i < argc; i++) {
        const char *opt = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        int bad = 0;
        if (strcmp(opt, "--help") == 0) {
            if (rank == 0)
                usage(stdout);
            MPI_Finalize();
            return 0;
        } else if (strcmp(opt, "--elements") == 0 && val) {
            bad = parse_long(val, &elements);
            i++;
        } else if (strcmp(opt, "--ntimes") == 0 && val) {
            bad = parse_long(val, &ntimes) || ntimes < 2;
            i++;
        } else if (strcmp(opt, "--scalar") == 0 && val) {
            char *end;
            scalar = strtod(val, &end);
            bad = end == val || *end != '\0' || !isfinite(scalar);
            i++;
        } else {
            bad = 1;
        }
        if (bad) {
            if (rank == 0) {
                fprintf(stderr, "triad: error: bad option or value: %s\n", opt);
                usage(stderr);
            }
            MPI_Finalize();
            return 1;
        }
    }

    double llc = node_llc_bytes();
    if (elements == 0) {
        double per_node = fmax(4.0 * llc, MIN_ARRAY_BYTES);
        elements = (long long)ceil(per_node / 8.0 / node_ranks);
    }
    const size_t n = (size_t)elements;
    double *a = alloc_array(n), *b = alloc_array(n), *c = alloc_array(n);
    int ok_alloc = a && b && c, all_ok;
    MPI_Allreduce(&ok_alloc, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok) {
        if (rank == 0)
            fprintf(stderr, "triad: error: out of memory (3 x %lld doubles per rank)\n",
                    elements);
        MPI_Finalize();
        return 1;
    }
    /* First touch by the owning process. */
    for (size_t i = 0; i < n; i++) {
        a[i] = 0.0;
        b[i] = 1.0;
        c[i] = 2.0;
    }

    triad(n, a, b, c, scalar); /* warm-up, untimed */
    double *times = malloc(sizeof(double) * (size_t)ntimes);
    for (long long k = 0; k < ntimes; k++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        triad(n, a, b, c, scalar);
        double t = MPI_Wtime() - t0, tmax;
        MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        times[k] = tmax;
    }

    /* Validation: every a[i] must be b + s*c exactly. */
    const double want = 1.0 + scalar * 2.0;
    long long bad_loc = 0, bad_all = 0;
    for (size_t i = 0; i < n; i++)
        bad_loc += a[i] != want;
    MPI_Allreduce(&bad_loc, &bad_all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);

    if (rank == 0) {
        double best = INFINITY, worst = 0.0, sum = 0.0;
        for (long long k = 0; k < ntimes; k++) {
            best = fmin(best, times[k]);
            worst = fmax(worst, times[k]);
            sum += times[k];
        }
        const double elems_total = (double)elements * nranks;
        const double bytes = 24.0 * elems_total, bytes_wa = 32.0 * elems_total;
        const double array_node = 8.0 * (double)elements * node_ranks;
        printf("triad - clusterbench STREAM-style triad a = b + s*c (MPI)\n");
        printf("  ranks        : %d (%d on this node)\n", nranks, node_ranks);
        printf("  arrays       : %lld doubles per rank per array, %.1f MiB per array per node "
               "(%.1fx the LLC of %.1f MiB)\n",
               elements, array_node / 1048576.0, llc > 0 ? array_node / llc : 0.0,
               llc / 1048576.0);
        if (llc > 0 && array_node < 4.0 * llc)
            printf("  WARNING      : arrays are smaller than 4x the LLC: the figure is partly "
                   "cache bandwidth\n");
        printf("  repetitions  : %lld timed (best reported) after 1 warm-up\n", ntimes);
        printf("  time         : best %.6f s, avg %.6f s, worst %.6f s\n", best, sum / ntimes,
               worst);
        printf("  triad        : %.3f GB/s (STREAM convention, 24 B/element, no write-allocate)\n",
               bytes / best * 1e-9);
        printf("  with WA      : %.3f GB/s (32 B/element incl. write-allocate read; info)\n",
               bytes_wa / best * 1e-9);
        printf("TRIAD_JSON: {\"ranks\":%d,\"ranks_per_node\":%d,\"elements_per_rank\":%lld,"
               "\"array_bytes_per_node\":%.0f,\"llc_bytes\":%.0f,\"ntimes\":%lld,"
               "\"bytes_per_element\":24,\"time_best_s\":%.9g,\"time_avg_s\":%.9g,"
               "\"time_worst_s\":%.9g,\"triad_gbs\":%.6g,\"triad_avg_gbs\":%.6g,"
               "\"triad_wa_gbs\":%.6g,\"huge_pages\":%s,\"validated\":%s}\n",
               nranks, node_ranks, elements, array_node, llc, ntimes, best, sum / ntimes,
               worst, bytes / best * 1e-9, bytes / (sum / ntimes) * 1e-9, bytes_wa / best * 1e-9,
               use_huge_pages() ? "true" : "false", bad_all == 0 ? "true" : "false");
        printf("TRIAD VALIDATION %s\n", bad_all == 0 ? "SUCCESSFUL" : "FAILED");
        fflush(stdout);
    }
    free(times);
    free(a);
    free(b);
    free(c);
    MPI_Finalize();
    return bad_all == 0 ? 0 : 2;
}
