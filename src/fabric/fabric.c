/*
 * fabric - latency, bandwidth and message rate between every pair of nodes of
 * an MPI job, in O(N) rounds.
 *
 * The ranks are grouped into nodes by processor name. A round-robin
 * ("circle") schedule pairs the N nodes so that every pair meets exactly once
 * in N-1 rounds (N rounds for odd N, one node idle per round); all the pairs
 * of a round communicate at the same time, and rounds are separated by
 * barriers, so the wall time grows with the number of rounds, not of pairs.
 *
 * Per pair of nodes (A, B), A being the lower-numbered:
 *   latency      ping-pong of --lat-size bytes between the first ranks of A
 *                and B: half round-trip time, its median, mean, p99, min, max,
 *                and the stalls: round trips slower than --stall-ms (100 ms by
 *                default: a TCP retransmission timeout is at least 200 ms);
 *   bandwidth    windows of --bw-window non-blocking sends of --bw-size bytes,
 *                A->B then B->A, between the first ranks: bytes / time over
 *                all windows, and the best single window (what the link can
 *                do, less disturbed by a busy CPU);
 *   message rate windows of --mr-window sends of --mr-size bytes from every
 *                rank of A to the rank of B with the same local index, all
 *                local pairs at once (multi-pair), A->B then B->A: the sum of
 *                the pairs' rates.
 * Every measurement stops early after --max-time seconds (a lossy link must
 * not hold the job; warm-up gets at most half of that again), and reports
 * how many iterations it completed.
 *
 * Rank 0 prints the N x N matrices and one line "FABRIC_JSON: {...}"
 * (report.c).
 * Exit codes: 0 every pair measured; 1 bad input or job layout (one line on
 * stderr); 2 a pair could not be measured.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fabric.h"

#define TAG_CTRL 1
#define TAG_DATA 2
#define TAG_ACK 3

static int rank, nranks;

void die(int code, const char *msg)
{
    if (rank == 0)
        fprintf(stderr, "fabric: error: %s\n", msg);
    MPI_Finalize();
    exit(code);
}

static int parse_int(const char *s, long lo, long hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

static int parse_double(const char *s, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= lo && v <= hi))
        return -1;
    *out = v;
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: fabric [--lat-size B] [--lat-iters N] [--warmup N]\n"
            "              [--bw-size B] [--bw-window N] [--bw-iters N]\n"
            "              [--mr-size B] [--mr-window N] [--mr-iters N]\n"
            "              [--max-time S] [--stall-ms MS] [--help]\n"
            "Latency, bandwidth and message rate between every pair of nodes\n"
            "of the job, in O(N) rounds; one JSON line (FABRIC_JSON:).\n");
}

static void parse_options(int argc, char **argv, options *o)
{
    *o = (options){.lat_size = 8,
                   .lat_iters = 500,
                   .warmup = 20,
                   .bw_size = 1 << 20,
                   .bw_window = 8,
                   .bw_iters = 10,
                   .mr_size = 8,
                   .mr_window = 64,
                   .mr_iters = 50,
                   .max_time = 2.0,
                   .stall_ms = 100.0};
    char msg[256];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            if (rank == 0)
                usage(stdout);
            MPI_Finalize();
            exit(0);
        }
        struct {
            const char *name;
            int *ival;
            double *dval;
            long lo, hi;
        } table[] = {
            {"--lat-size", &o->lat_size, NULL, 1, 1 << 20},
            {"--lat-iters", &o->lat_iters, NULL, 1, 10000000},
            {"--warmup", &o->warmup, NULL, 0, 100000},
            {"--bw-size", &o->bw_size, NULL, 1, 1 << 30},
            {"--bw-window", &o->bw_window, NULL, 1, 1024},
            {"--bw-iters", &o->bw_iters, NULL, 1, 1000000},
            {"--mr-size", &o->mr_size, NULL, 1, 1 << 20},
            {"--mr-window", &o->mr_window, NULL, 1, 65536},
            {"--mr-iters", &o->mr_iters, NULL, 1, 1000000},
            {"--max-time", NULL, &o->max_time, 0, 86400},
            {"--stall-ms", NULL, &o->stall_ms, 0, 1e6},
        };
        size_t k, n = sizeof table / sizeof table[0];
        for (k = 0; k < n; k++)
            if (!strcmp(a, table[k].name))
                break;
        if (k == n) {
            snprintf(msg, sizeof msg, "unknown option %s (see --help)", a);
            die(1, msg);
        }
        if (i + 1 >= argc) {
            snprintf(msg, sizeof msg, "%s needs a value", a);
            die(1, msg);
        }
        const char *v = argv[++i];
        int bad = table[k].ival
                      ? parse_int(v, table[k].lo, table[k].hi, table[k].ival)
                      : parse_double(v, (double)table[k].lo, (double)table[k].hi,
                                     table[k].dval);
        if (bad || (table[k].dval == &o->max_time && o->max_time <= 0)) {
            snprintf(msg, sizeof msg, "bad value for %s: %s", a, v);
            die(1, msg);
        }
    }
}

static void build_layout(layout *l)
{
    char me[NAME_LEN] = {0};
    int len;
    MPI_Get_processor_name(me, &len);
    char (*all)[NAME_LEN] = calloc((size_t)nranks, NAME_LEN);
    l->names = calloc((size_t)nranks, NAME_LEN);
    l->node_of = malloc(sizeof(int) * (size_t)nranks);
    l->local_of = malloc(sizeof(int) * (size_t)nranks);
    int *count = calloc((size_t)nranks, sizeof(int));
    if (!all || !l->names || !l->node_of || !l->local_of || !count)
        die(1, "out of memory");
    MPI_Allgather(me, NAME_LEN, MPI_CHAR, all, NAME_LEN, MPI_CHAR, MPI_COMM_WORLD);
    l->nnodes = 0;
    for (int r = 0; r < nranks; r++) {
        int n;
        for (n = 0; n < l->nnodes; n++)
            if (!strcmp(l->names[n], all[r]))
                break;
        if (n == l->nnodes)
            memcpy(l->names[l->nnodes++], all[r], NAME_LEN);
        l->node_of[r] = n;
        l->local_of[r] = count[n]++;
    }
    l->ppn = count[0];
    for (int n = 1; n < l->nnodes; n++) {
        if (count[n] != l->ppn) {
            char msg[2 * NAME_LEN + 128];
            snprintf(msg, sizeof msg,
                     "nodes have different rank counts (%s: %d, %s: %d); run "
                     "the same number of ranks on every node",
                     l->names[0], l->ppn, l->names[n], count[n]);
            die(1, msg);
        }
    }
    if (l->nnodes < 2) {
        char msg[NAME_LEN + 160];
        snprintf(msg, sizeof msg,
                 "all %d rank(s) run on one node (%s): nothing to measure "
                 "(a launcher/MPI mismatch starts N one-rank jobs)",
                 nranks, l->names[0]);
        die(1, msg);
    }
    l->rank_at = malloc(sizeof(int) * (size_t)nranks);
    if (!l->rank_at)
        die(1, "out of memory");
    for (int r = 0; r < nranks; r++)
        l->rank_at[l->node_of[r] * l->ppn + l->local_of[r]] = r;
    free(all);
    free(count);
}

/* The partner node of `node` in round `round` of the circle schedule, or -1. */
int partner(int nnodes, int round, int node)
{
    int m = nnodes + (nnodes & 1); /* a dummy node makes the count even */
    int fixed = m - 1, k = m - 1;
    int other;
    if (node == fixed)
        other = round;
    else if (node == round)
        other = fixed;
    else
        other = ((2 * round - node) % k + k) % k;
    return other >= nnodes ? -1 : other;
}

static int num_rounds(int nnodes) { return nnodes + (nnodes & 1) - 1; }

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A 1-int control message: 1 go on, 0 stop. */
static void send_ctrl(int peer, int go)
{
    MPI_Send(&go, 1, MPI_INT, peer, TAG_CTRL, MPI_COMM_WORLD);
}

static int recv_ctrl(int peer)
{
    int go;
    MPI_Recv(&go, 1, MPI_INT, peer, TAG_CTRL, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return go;
}

typedef struct {
    double p50, mean, p99, min, max;
    int iters, stalls;
} lat_stats;

/* Ping-pong; the initiator returns the statistics (half round trips, us). */
static lat_stats pingpong(int peer, int initiator, const options *o, char *buf,
                          double *samples)
{
    lat_stats s = {0};
    if (!initiator) {
        while (recv_ctrl(peer)) {
            MPI_Recv(buf, o->lat_size, MPI_CHAR, peer, TAG_DATA, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            MPI_Send(buf, o->lat_size, MPI_CHAR, peer, TAG_DATA, MPI_COMM_WORLD);
        }
        return s;
    }
    /* Warm-up (connections, caches) gets half the time budget at most; the
     * measured round trips get the whole budget of their own. */
    double start = MPI_Wtime(), measured_from = -1;
    int n = 0;
    for (int it = 0; it < o->warmup + o->lat_iters; it++) {
        double now = MPI_Wtime();
        if (it < o->warmup && it > 0 && now - start > 0.5 * o->max_time)
            it = o->warmup;
        if (it >= o->warmup) {
            if (measured_from < 0)
                measured_from = now;
            else if (now - measured_from > o->max_time)
                break;
        }
        send_ctrl(peer, 1);
        double t0 = MPI_Wtime();
        MPI_Send(buf, o->lat_size, MPI_CHAR, peer, TAG_DATA, MPI_COMM_WORLD);
        MPI_Recv(buf, o->lat_size, MPI_CHAR, peer, TAG_DATA, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        double rtt = MPI_Wtime() - t0;
        if (it >= o->warmup)
            samples[n++] = rtt;
    }
    send_ctrl(peer, 0);
    s.iters = n;
    if (n == 0)
        return s;
    double sum = 0;
    for (int i = 0; i < n; i++) {
        sum += samples[i];
        if (samples[i] * 1e3 > o->stall_ms)
            s.stalls++;
    }
    qsort(samples, (size_t)n, sizeof(double), cmp_double);
    int i99 = (int)ceil(0.99 * n) - 1;
    s.p50 = (n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]));
    s.p50 *= 0.5e6;
    s.mean = sum / n * 0.5e6;
    s.p99 = samples[i99 < 0 ? 0 : i99] * 0.5e6;
    s.min = samples[0] * 0.5e6;
    s.max = samples[n - 1] * 0.5e6;
    return s;
}

/* Windows of non-blocking sends from sender to receiver; the sender returns
 * the rate (bytes/s or messages/s, per `per_message`) over all windows, and
 * sets the best single window's rate and the window count. */
static double stream(int peer, int sender, int size, int window, int iters,
                     int warmup, double max_time, char *buf, MPI_Request *reqs,
                     MPI_Status *stats, int per_message, double *peak, int *done)
{
    int ack = 0;
    *done = 0;
    if (!sender) {
        while (recv_ctrl(peer)) {
            for (int w = 0; w < window; w++)
                MPI_Irecv(buf, size, MPI_CHAR, peer, TAG_DATA, MPI_COMM_WORLD,
                          &reqs[w]);
            MPI_Waitall(window, reqs, stats);
            MPI_Send(&ack, 1, MPI_INT, peer, TAG_ACK, MPI_COMM_WORLD);
        }
        return 0;
    }
    double start = MPI_Wtime(), t0 = -1, spent = 0, best = 0;
    double per_window = per_message ? (double)window : (double)size * window;
    int n = 0;
    for (int it = 0; it < warmup + iters; it++) {
        double w0 = MPI_Wtime();
        /* Warm-up: half the budget at most; then the budget is the windows'. */
        if (it < warmup && it > 0 && w0 - start > 0.5 * max_time)
            it = warmup;
        if (it >= warmup) {
            if (t0 < 0)
                t0 = w0;
            else if (w0 - t0 > max_time)
                break;
        }
        send_ctrl(peer, 1);
        for (int w = 0; w < window; w++)
            MPI_Isend(buf, size, MPI_CHAR, peer, TAG_DATA, MPI_COMM_WORLD, &reqs[w]);
        MPI_Waitall(window, reqs, stats);
        MPI_Recv(&ack, 1, MPI_INT, peer, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        double dt = MPI_Wtime() - w0;
        if (it >= warmup) {
            n++;
            if (dt > 0 && per_window / dt > best)
                best = per_window / dt;
        }
    }
    spent = t0 < 0 ? 0 : MPI_Wtime() - t0;
    send_ctrl(peer, 0);
    *done = n;
    *peak = best;
    if (n == 0 || spent <= 0)
        return 0;
    return per_window * n / spent;
}

/* Scratch space of one rank's measurements. */
typedef struct {
    char *buf;
    double *samples;
    MPI_Request *reqs;
    MPI_Status *stats;
} scratch;

/* The rounds: in each, every node measures its partner of the round
 * (latency, bandwidth both ways, message rate both ways) into *mine*, this
 * rank's share of the M_COUNT matrices, and round_s[r] holds its time. */
static void run_rounds(const options *o, const layout *l, scratch *w, double *mine,
                       double *round_s, int rounds)
{
    int n = l->nnodes, nn = n * n;
    int me_node = l->node_of[rank], me_local = l->local_of[rank];
#define AT(metric, i, j) mine[(metric) * nn + (i) * n + (j)]
    for (int r = 0; r < rounds; r++) {
        double r0 = MPI_Wtime();
        int other = partner(n, r, me_node);
        int peer = other < 0 ? -1 : l->rank_at[other * l->ppn + me_local];
        int low = other >= 0 && me_node < other; /* A: the lower node index */
        int a = low ? me_node : other, b = low ? other : me_node;

        /* Latency: first ranks only. */
        if (peer >= 0 && me_local == 0) {
            lat_stats s = pingpong(peer, low, o, w->buf, w->samples);
            if (low) {
                double v[] = {s.p50, s.mean, s.p99, s.min, s.max, s.stalls, s.iters};
                for (int m = M_P50; m <= M_LAT_ITERS; m++)
                    AT(m, a, b) = AT(m, b, a) = v[m - M_P50];
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
        /* Bandwidth: first ranks, A->B then B->A. */
        for (int dir = 0; dir < 2; dir++) {
            if (peer >= 0 && me_local == 0) {
                int sender = dir == 0 ? low : !low;
                int done;
                double peak;
                double rate = stream(peer, sender, o->bw_size, o->bw_window,
                                     o->bw_iters, 2, o->max_time, w->buf, w->reqs,
                                     w->stats, 0, &peak, &done);
                if (sender) {
                    AT(M_BW, me_node, other) = rate / 1e6;
                    AT(M_BW_PEAK, me_node, other) = peak / 1e6;
                    AT(M_BW_ITERS, me_node, other) = done;
                }
            }
            MPI_Barrier(MPI_COMM_WORLD);
        }
        /* Message rate: every local pair at once, A->B then B->A. */
        for (int dir = 0; dir < 2; dir++) {
            if (peer >= 0) {
                int sender = dir == 0 ? low : !low;
                int done;
                double peak;
                double rate = stream(peer, sender, o->mr_size, o->mr_window,
                                     o->mr_iters, 2, o->max_time, w->buf, w->reqs,
                                     w->stats, 1, &peak, &done);
                if (sender) {
                    AT(M_MR, me_node, other) += rate / 1e6;
                    AT(M_MR_PEAK, me_node, other) += peak / 1e6;
                    AT(M_MR_ITERS, me_node, other) += done;
                }
            }
            MPI_Barrier(MPI_COMM_WORLD);
        }
        round_s[r] = MPI_Wtime() - r0;
    }
#undef AT
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    options o;
    parse_options(argc, argv, &o);
    layout l;
    build_layout(&l);

    int nn = l.nnodes * l.nnodes;
    size_t bufsize = (size_t)o.bw_size;
    if ((size_t)o.lat_size > bufsize)
        bufsize = (size_t)o.lat_size;
    if ((size_t)o.mr_size > bufsize)
        bufsize = (size_t)o.mr_size;
    int maxwin = o.bw_window > o.mr_window ? o.bw_window : o.mr_window;
    scratch w = {
        .buf = malloc(bufsize),
        .samples = malloc(sizeof(double) * (size_t)(o.lat_iters + o.warmup)),
        .reqs = malloc(sizeof(MPI_Request) * (size_t)maxwin),
        /* A status array, not MPI_STATUSES_IGNORE: GCC 12 warns about MPICH's. */
        .stats = malloc(sizeof(MPI_Status) * (size_t)maxwin),
    };
    double *mine = calloc((size_t)(M_COUNT * nn), sizeof(double));
    double *all = calloc((size_t)(M_COUNT * nn), sizeof(double));
    int rounds = num_rounds(l.nnodes);
    double *round_s = calloc((size_t)rounds, sizeof(double));
    if (!w.buf || !w.samples || !w.reqs || !w.stats || !mine || !all || !round_s)
        die(1, "out of memory");
    memset(w.buf, 1, bufsize);

    MPI_Barrier(MPI_COMM_WORLD);
    double wall0 = MPI_Wtime();
    run_rounds(&o, &l, &w, mine, round_s, rounds);
    double wall = MPI_Wtime() - wall0;
    MPI_Reduce(mine, all, M_COUNT * nn, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);

    int complete = 1;
    if (rank == 0)
        complete = report(&o, &l, nranks, all, round_s, rounds, wall);
    MPI_Bcast(&complete, 1, MPI_INT, 0, MPI_COMM_WORLD);
    /* MPICH 4.0 over UCX's TCP transport can deadlock in MPI_Finalize: a
     * rank answers its peer's finalize flush while still inside an earlier
     * call, finishes first and blocks in a PMI barrier, and the peer's own
     * flush then waits for it forever (pmodels/mpich#6596). Leaving a barrier
     * together and pausing outside MPI makes every rank send its flush before
     * it answers another's. */
    MPI_Barrier(MPI_COMM_WORLD);
    nanosleep(&(struct timespec){.tv_sec = 0, .tv_nsec = 200000000}, NULL);
    free(w.buf);
    free(w.samples);
    free(w.reqs);
    free(w.stats);
    free(mine);
    free(all);
    free(round_s);
    free(l.names);
    free(l.node_of);
    free(l.local_of);
    free(l.rank_at);
    MPI_Finalize();
    return complete ? 0 : 2;
}
