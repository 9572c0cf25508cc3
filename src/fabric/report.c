/*
 * fabric's report on rank 0: the N x N matrices as text, and the one line
 * "FABRIC_JSON: {...}" that the check reads.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "fabric.h"

/* A JSON number, or null for what was not measured. */
static void json_num(double v, int measured)
{
    if (measured && isfinite(v))
        printf("%.6g", v);
    else
        printf("null");
}

static void json_matrix(const char *key, const double *m, const int *measured, int n)
{
    printf("\"%s\":[", key);
    for (int i = 0; i < n; i++) {
        printf(i ? ",[" : "[");
        for (int j = 0; j < n; j++) {
            if (j)
                printf(",");
            json_num(m[i * n + j], i != j && measured[i * n + j]);
        }
        printf("]");
    }
    printf("]");
}

static void print_matrix(const char *title, const char *fmt, const double *m,
                         const int *measured, const layout *l)
{
    int n = l->nnodes;
    printf("\n%s\n%-12s", title, "from\\to");
    for (int j = 0; j < n; j++)
        printf(" %12.12s", l->names[j]);
    printf("\n");
    for (int i = 0; i < n; i++) {
        printf("%-12.12s", l->names[i]);
        for (int j = 0; j < n; j++) {
            if (i == j || !measured[i * n + j])
                printf(" %12s", i == j ? "-" : "n/a");
            else
                printf(fmt, m[i * n + j]);
        }
        printf("\n");
    }
}

/* The human-readable part of the report: header and matrices. */
static void print_text_report(const options *o, const layout *l, const double *all,
                              const int *lat_ok, const int *bw_ok, const int *mr_ok,
                              int rounds, double wall)
{
    int n = l->nnodes, nn = n * n;
    printf("fabric %s: %d nodes x %d rank(s), %d round(s), %d pair(s), "
           "%.3f s\n",
           FABRIC_VERSION, n, l->ppn, rounds, n * (n - 1) / 2, wall);
    printf("latency: %d B ping-pong, %d round trips (+%d warm-up); bandwidth: "
           "%d x %d B windows, %d per direction; message rate: %d x %d B "
           "windows, %d per direction; at most %.1f s per measurement\n",
           o->lat_size, o->lat_iters, o->warmup, o->bw_window, o->bw_size,
           o->bw_iters, o->mr_window, o->mr_size, o->mr_iters, o->max_time);
    print_matrix("latency, median (us)", " %12.2f", all + M_P50 * nn, lat_ok, l);
    print_matrix("latency, p99 (us)", " %12.2f", all + M_P99 * nn, lat_ok, l);
    print_matrix("stalls: round trips slower than --stall-ms", " %12.0f",
                 all + M_STALLS * nn, lat_ok, l);
    print_matrix("bandwidth, all windows (MB/s)", " %12.1f", all + M_BW * nn, bw_ok,
                 l);
    print_matrix("bandwidth, best window (MB/s)", " %12.1f", all + M_BW_PEAK * nn,
                 bw_ok, l);
    print_matrix("message rate, all local pairs (million msg/s)", " %12.4f",
                 all + M_MR * nn, mr_ok, l);
}

/* The FABRIC_JSON line: options, schedule, every matrix, timings. */
static void print_json_report(const options *o, const layout *l, const double *all,
                              const int *lat_ok, const int *bw_ok, const int *mr_ok,
                              const double *round_s, int rounds, double wall,
                              int nranks, int complete)
{
    int n = l->nnodes, nn = n * n;
    printf("FABRIC_JSON: {\"version\":\"%s\",\"nodes\":[", FABRIC_VERSION);
    for (int i = 0; i < n; i++)
        printf("%s\"%s\"", i ? "," : "", l->names[i]);
    printf("],\"ranks\":%d,\"ranks_per_node\":%d,\"rounds\":%d,\"pairs\":%d,",
           nranks, l->ppn, rounds, n * (n - 1) / 2);
    printf("\"options\":{\"lat_size\":%d,\"lat_iters\":%d,\"warmup\":%d,"
           "\"bw_size\":%d,\"bw_window\":%d,\"bw_iters\":%d,\"mr_size\":%d,"
           "\"mr_window\":%d,\"mr_iters\":%d,\"max_time\":%g,\"stall_ms\":%g},",
           o->lat_size, o->lat_iters, o->warmup, o->bw_size, o->bw_window,
           o->bw_iters, o->mr_size, o->mr_window, o->mr_iters, o->max_time,
           o->stall_ms);
    printf("\"schedule\":[");
    for (int r = 0; r < rounds; r++) {
        printf(r ? ",[" : "[");
        int first = 1;
        for (int i = 0; i < n; i++) {
            int j = partner(n, r, i);
            if (j > i) {
                printf("%s[%d,%d]", first ? "" : ",", i, j);
                first = 0;
            }
        }
        printf("]");
    }
    printf("],");
    const struct {
        const char *key;
        int metric;
        const int *measured;
    } matrices[] = {
        {"latency_p50_us", M_P50, lat_ok},
        {"latency_mean_us", M_MEAN, lat_ok},
        {"latency_p99_us", M_P99, lat_ok},
        {"latency_min_us", M_MIN, lat_ok},
        {"latency_max_us", M_MAX, lat_ok},
        {"latency_stalls", M_STALLS, lat_ok},
        {"latency_iterations", M_LAT_ITERS, lat_ok},
        {"bandwidth_mbs", M_BW, bw_ok},
        {"bandwidth_peak_mbs", M_BW_PEAK, bw_ok},
        {"bandwidth_iterations", M_BW_ITERS, bw_ok},
        {"msgrate_mmps", M_MR, mr_ok},
        {"msgrate_peak_mmps", M_MR_PEAK, mr_ok},
        {"msgrate_iterations", M_MR_ITERS, mr_ok},
    };
    for (size_t i = 0; i < sizeof matrices / sizeof matrices[0]; i++) {
        json_matrix(matrices[i].key, all + matrices[i].metric * nn, matrices[i].measured,
                    n);
        printf(",");
    }
    printf("\"round_s\":[");
    for (int r = 0; r < rounds; r++)
        printf("%s%.6g", r ? "," : "", round_s[r]);
    printf("],\"wall_s\":%.6g,\"complete\":%s}\n", wall, complete ? "true" : "false");
}

/* Rank 0's report of the summed matrices *all*; returns whether every pair
 * of distinct nodes was measured (latency, bandwidth and message rate). */
int report(const options *o, const layout *l, int nranks, const double *all,
           const double *round_s, int rounds, double wall)
{
    int n = l->nnodes, nn = n * n;
    int complete = 1;
    int *lat_ok = calloc((size_t)nn, sizeof(int));
    int *bw_ok = calloc((size_t)nn, sizeof(int));
    int *mr_ok = calloc((size_t)nn, sizeof(int));
    if (!lat_ok || !bw_ok || !mr_ok)
        die(1, "out of memory");
    for (int i = 0; i < nn; i++) {
        lat_ok[i] = all[M_LAT_ITERS * nn + i] > 0;
        bw_ok[i] = all[M_BW_ITERS * nn + i] > 0;
        mr_ok[i] = all[M_MR_ITERS * nn + i] > 0;
        if (i / n != i % n && !(lat_ok[i] && bw_ok[i] && mr_ok[i]))
            complete = 0;
    }
    print_text_report(o, l, all, lat_ok, bw_ok, mr_ok, rounds, wall);
    print_json_report(o, l, all, lat_ok, bw_ok, mr_ok, round_s, rounds, wall, nranks,
                      complete);
    printf(complete ? "FABRIC COMPLETE\n" : "FABRIC INCOMPLETE\n");
    fflush(stdout);
    free(lat_ok);
    free(bw_ok);
    free(mr_ok);
    return complete;
}
