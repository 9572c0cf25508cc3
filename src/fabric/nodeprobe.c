/*
 * nodeprobe - a short, self-verifying health battery for one node: STREAM
 * (copy, scale, add, triad) on one core and DGEMM (BLAS, one thread).
 *
 * Each figure is the median of --samples timed samples; each sample repeats
 * the kernel (--stream-reps passes, or one DGEMM of order --dgemm-n) so that it
 * lasts much longer than a CPU-quota period: a throttled node shows its
 * throttled speed, not a lucky burst. Results are checked (STREAM: the
 * arrays' values after the known sequence of kernels; DGEMM: sampled entries
 * against a direct dot product). No MPI: the launcher runs one copy per node.
 *
 * Prints a summary, one line "NODEPROBE_JSON: {...}" and "VERIFICATION
 * SUCCESSFUL" (exit 0) or "VERIFICATION FAILED" (exit 2); bad input: one
 * line on stderr, exit 1.
 */
#include <cblas.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NODEPROBE_VERSION "1.0.0"
#define MAX_SAMPLES 1000

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void fail_input(const char *msg, const char *arg)
{
    fprintf(stderr, "nodeprobe: error: %s%s\n", msg, arg ? arg : "");
    exit(1);
}

static long parse_long(const char *s, long lo, long hi, const char *opt)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        char msg[128];
        snprintf(msg, sizeof msg, "bad value for %s: ", opt);
        fail_input(msg, s);
    }
    return v;
}

/* The STREAM arrays after `passes` rounds of copy, scale, add, triad, each
 * kernel repeated (repetition does not change the values: each is a pure
 * function of arrays it does not write). */
static void stream_expected(int passes, double scalar, double *a, double *b, double *c)
{
    double x = 1.0, y = 2.0, z = 0.0;
    for (int p = 0; p < passes; p++) {
        z = x;
        y = scalar * z;
        z = x + y;
        x = y + scalar * z;
    }
    *a = x;
    *b = y;
    *c = z;
}

int main(int argc, char **argv)
{
    long stream_n = 4L << 20; /* doubles per array: 32 MiB, 96 MiB in all */
    int stream_reps = 10, samples = 5, dgemm_n = 1024;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            printf("usage: nodeprobe [--stream-n DOUBLES] [--stream-reps N] "
                   "[--dgemm-n N] [--samples N]\n"
                   "STREAM and DGEMM on one core; one JSON line "
                   "(NODEPROBE_JSON:).\n");
            return 0;
        }
        if (i + 1 >= argc)
            fail_input("missing value for ", a);
        const char *v = argv[++i];
        if (!strcmp(a, "--stream-n"))
            stream_n = parse_long(v, 1024, 1L << 31, a);
        else if (!strcmp(a, "--stream-reps"))
            stream_reps = (int)parse_long(v, 1, 100000, a);
        else if (!strcmp(a, "--dgemm-n"))
            dgemm_n = (int)parse_long(v, 16, 20000, a);
        else if (!strcmp(a, "--samples"))
            samples = (int)parse_long(v, 1, MAX_SAMPLES, a);
        else
            fail_input("unknown option (see --help): ", a);
    }

    char host[256] = "unknown";
    gethostname(host, sizeof host - 1);

    /* STREAM */
    size_t n = (size_t)stream_n;
    double *a = malloc(n * sizeof(double)), *b = malloc(n * sizeof(double));
    double *c = malloc(n * sizeof(double));
    if (!a || !b || !c)
        fail_input("out of memory for the STREAM arrays", NULL);
    for (size_t j = 0; j < n; j++) {
        a[j] = 1.0;
        b[j] = 2.0;
        c[j] = 0.0;
    }
    const double scalar = 3.0;
    const char *kname[4] = {"copy", "scale", "add", "triad"};
    const double kbytes[4] = {16, 16, 24, 24}; /* bytes moved per element */
    double rate[4][MAX_SAMPLES];
    double t_start = now();
    for (int s = 0; s < samples; s++) {
        for (int k = 0; k < 4; k++) {
            double t0 = now();
            for (int r = 0; r < stream_reps; r++) {
                /* Each pass must really run, though it repeats the last one. */
                __asm__ __volatile__("" ::: "memory");
                switch (k) {
                case 0:
                    for (size_t j = 0; j < n; j++)
                        c[j] = a[j];
                    break;
                case 1:
                    for (size_t j = 0; j < n; j++)
                        b[j] = scalar * c[j];
                    break;
                case 2:
                    for (size_t j = 0; j < n; j++)
                        c[j] = a[j] + b[j];
                    break;
                default:
                    for (size_t j = 0; j < n; j++)
                        a[j] = b[j] + scalar * c[j];
                }
            }
            double t = now() - t0;
            rate[k][s] = kbytes[k] * (double)n * stream_reps / t / 1e9;
        }
    }
    double stream_s = now() - t_start;
    double ea, eb, ec;
    stream_expected(samples, scalar, &ea, &eb, &ec);
    double err = 0;
    for (size_t j = 0; j < n; j += 1 + n / 4096) {
        err = fmax(err, fabs(a[j] - ea) / fabs(ea));
        err = fmax(err, fabs(b[j] - eb) / fabs(eb));
        err = fmax(err, fabs(c[j] - ec) / fabs(ec));
    }
    int stream_ok = err < 1e-13;
    double stream_med[4];
    for (int k = 0; k < 4; k++)
        stream_med[k] = median(rate[k], samples);
    free(a);
    free(b);
    free(c);

    /* DGEMM */
    size_t m = (size_t)dgemm_n;
    double *A = malloc(m * m * sizeof(double)), *B = malloc(m * m * sizeof(double));
    double *C = malloc(m * m * sizeof(double));
    if (!A || !B || !C)
        fail_input("out of memory for the DGEMM matrices", NULL);
    unsigned long long seed = 88172645463325252ULL;
    for (size_t j = 0; j < m * m; j++) {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        A[j] = (double)(seed % 1000) / 1000.0 - 0.5;
        B[j] = (double)((seed >> 20) % 1000) / 1000.0 - 0.5;
    }
    double gflops[MAX_SAMPLES];
    t_start = now();
    for (int s = 0; s < samples; s++) {
        double t0 = now();
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, dgemm_n, dgemm_n,
                    dgemm_n, 1.0, A, dgemm_n, B, dgemm_n, 0.0, C, dgemm_n);
        double t = now() - t0;
        gflops[s] = 2.0 * (double)m * (double)m * (double)m / t / 1e9;
    }
    double dgemm_s = now() - t_start;
    double derr = 0;
    for (int k = 0; k < 64; k++) {
        size_t i = (size_t)(k * 7919) % m, j = (size_t)(k * 104729) % m;
        double ref = 0, mag = 0;
        for (size_t p = 0; p < m; p++) {
            ref += A[i * m + p] * B[p * m + j];
            mag += fabs(A[i * m + p] * B[p * m + j]);
        }
        derr = fmax(derr, fabs(C[i * m + j] - ref) / (mag > 0 ? mag : 1));
    }
    int dgemm_ok = derr < 1e-12;
    double dgemm_med = median(gflops, samples);
    free(A);
    free(B);
    free(C);

    int ok = stream_ok && dgemm_ok;
    printf("nodeprobe %s on %s: %d sample(s)\n", NODEPROBE_VERSION, host, samples);
    printf("  STREAM  %ld doubles per array, %d pass(es) per sample, %.2f s:",
           stream_n, stream_reps, stream_s);
    for (int k = 0; k < 4; k++)
        printf(" %s %.2f", kname[k], stream_med[k]);
    printf(" GB/s (median); max relative error %.1e\n", err);
    printf("  DGEMM   n=%d, %.2f s: %.2f GFlop/s (median); max relative error "
           "%.1e\n",
           dgemm_n, dgemm_s, dgemm_med, derr);
    printf("NODEPROBE_JSON: {\"version\":\"%s\",\"host\":\"%s\",\"samples\":%d,"
           "\"stream_n\":%ld,\"stream_reps\":%d,\"dgemm_n\":%d,"
           "\"stream_copy_gbs\":%.6g,\"stream_scale_gbs\":%.6g,"
           "\"stream_add_gbs\":%.6g,\"stream_triad_gbs\":%.6g,"
           "\"dgemm_gflops\":%.6g,\"stream_s\":%.6g,\"dgemm_s\":%.6g,"
           "\"stream_error\":%.3g,\"dgemm_error\":%.3g,\"verified\":%s}\n",
           NODEPROBE_VERSION, host, samples, stream_n, stream_reps, dgemm_n,
           stream_med[0], stream_med[1], stream_med[2], stream_med[3], dgemm_med,
           stream_s, dgemm_s, err, derr, ok ? "true" : "false");
    printf("VERIFICATION %s\n", ok ? "SUCCESSFUL" : "FAILED");
    return ok ? 0 : 2;
}
