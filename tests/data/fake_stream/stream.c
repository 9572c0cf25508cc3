/*
 * A STAND-IN FOR STREAM's stream.c -- NOT STREAM. clusterbench's own test
 * code: it runs the four STREAM kernels (copy, scale, add, triad) with OpenMP
 * on arrays of STREAM_ARRAY_SIZE doubles, NTIMES times, checks the arrays
 * afterwards and prints a report in stream.c's output format, so that the
 * check's build (compiler, OpenMP, -D options) and its sanity and figures are
 * exercised without the real file.
 *
 * Test switch (environment of the run): FAKE_STREAM_CORRUPT=1 spoils one
 * element after the timed loops, so validation fails.
 */
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#ifndef STREAM_ARRAY_SIZE
#define STREAM_ARRAY_SIZE 1000000
#endif
#ifndef NTIMES
#define NTIMES 10
#endif

static double a[STREAM_ARRAY_SIZE], b[STREAM_ARRAY_SIZE], c[STREAM_ARRAY_SIZE];

static double rel_err(double x, double expected)
{
    double d = (x - expected) / expected;
    return d < 0 ? -d : d;
}

static double now(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return tv.tv_sec + 1e-6 * tv.tv_usec;
}

int main(void)
{
    const long n = STREAM_ARRAY_SIZE;
    const double scalar = 3.0;
    const char *names[4] = {"Copy:      ", "Scale:     ", "Add:       ", "Triad:     "};
    const double bytes[4] = {2.0 * sizeof(double) * n, 2.0 * sizeof(double) * n,
                             3.0 * sizeof(double) * n, 3.0 * sizeof(double) * n};
    double best[4] = {FLT_MAX, FLT_MAX, FLT_MAX, FLT_MAX}, sum[4] = {0}, worst[4] = {0};
    int threads = 0;
    long j;
    int k, i;

    printf("-------------------------------------------------------------\n");
    printf("STREAM-like stand-in (clusterbench tests), not STREAM\n");
    printf("-------------------------------------------------------------\n");
    printf("This system uses %d bytes per array element.\n", (int)sizeof(double));
    printf("Array size = %ld (elements), Offset = 0 (elements)\n", n);
    printf("Each kernel will be executed %d times.\n", NTIMES);
#pragma omp parallel
    {
#pragma omp atomic
        threads++;
    }
#ifdef _OPENMP
    printf("Number of Threads requested = %d\n", omp_get_max_threads());
#endif
    printf("Number of Threads counted = %d\n", threads);

#pragma omp parallel for
    for (j = 0; j < n; j++) {
        a[j] = 1.0;
        b[j] = 2.0;
        c[j] = 0.0;
    }
    for (k = 0; k < NTIMES; k++) {
        double t[4];
        t[0] = now();
#pragma omp parallel for
        for (j = 0; j < n; j++) c[j] = a[j];
        t[0] = now() - t[0];
        t[1] = now();
#pragma omp parallel for
        for (j = 0; j < n; j++) b[j] = scalar * c[j];
        t[1] = now() - t[1];
        t[2] = now();
#pragma omp parallel for
        for (j = 0; j < n; j++) c[j] = a[j] + b[j];
        t[2] = now() - t[2];
        t[3] = now();
#pragma omp parallel for
        for (j = 0; j < n; j++) a[j] = b[j] + scalar * c[j];
        t[3] = now() - t[3];
        for (i = 0; k > 0 && i < 4; i++) { /* the first pass is not timed */
            double ti = t[i] > 1e-9 ? t[i] : 1e-9;
            sum[i] += ti;
            best[i] = ti < best[i] ? ti : best[i];
            worst[i] = ti > worst[i] ? ti : worst[i];
        }
    }
    printf("-------------------------------------------------------------\n");
    printf("Function    Best Rate MB/s  Avg time     Min time     Max time\n");
    for (i = 0; i < 4; i++)
        printf("%s%12.1f  %11.6f  %11.6f  %11.6f\n", names[i], 1.0e-6 * bytes[i] / best[i],
               sum[i] / (NTIMES - 1), best[i], worst[i]);
    printf("-------------------------------------------------------------\n");

    if (getenv("FAKE_STREAM_CORRUPT"))
        a[n / 2] *= 2.0;
    {
        /* The values every element must hold after NTIMES passes. */
        double ea = 1.0, eb = 2.0, ec = 0.0, err = 0.0;
        for (k = 0; k < NTIMES; k++) {
            ec = ea;
            eb = scalar * ec;
            ec = ea + eb;
            ea = eb + scalar * ec;
        }
        for (j = 0; j < n; j++)
            err += rel_err(a[j], ea) + rel_err(b[j], eb) + rel_err(c[j], ec);
        if (err / n > 1e-13) {
            printf("Failed Validation on array a[], AvgRelAbsErr > epsilon (1e-13)\n");
            return 0;
        }
    }
    printf("Solution Validates: avg error less than 1.000000e-13 on all three arrays\n");
    printf("-------------------------------------------------------------\n");
    return 0;
}
