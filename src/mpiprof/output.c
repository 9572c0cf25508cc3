/* output.c - reduce the per-rank tables at MPI_Finalize; rank 0 writes JSON.
 *
 * Output path: $MPIPROF_OUTPUT if set (a directory, or a file name in which
 * %j is replaced by the job id and %p by rank 0's pid), otherwise
 * ./mpiprof.<job id>.json. The job id is the batch system's (Slurm, PBS,
 * LSF, Flux; Slurm adds the step) or else rank 0's pid. The file is written
 * to a temporary name and renamed, so a reader never sees half a file.
 */
#include "mpiprof.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Scalars reduced besides the per-function table. */
enum { D_WALL, D_MPI, D_SHARE, D_INIT, D_EXTRA };
enum { L_FORTRAN, L_EXTRA };
#define ND (F_COUNT + D_EXTRA)
#define NL (2 * F_COUNT + L_EXTRA)

typedef struct {
    double dmin[ND], dmax[ND], dsum[ND];
    long long lmin[NL], lmax[NL], lsum[NL];
    long long hist[F_COUNT][MPIPROF_NBINS];
    double *per_rank; /* wall, mpi for every rank (rank 0 only) */
    int nranks, nodes;
} summary;

/* A JSON string of at most n bytes of s; bytes outside ASCII become '?', so
 * the file is valid UTF-8 whatever the command line held. */
static void json_string(FILE *f, const char *s, size_t n)
{
    fputc('"', f);
    for (size_t i = 0; i < n && s[i]; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c < 0x80 ? c : '?', f);
    }
    fputc('"', f);
}

static void json_num(FILE *f, double x)
{
    if (x != x || x > 1e300 || x < -1e300)
        fputs("null", f);
    else
        fprintf(f, "%.9g", x);
}

static void stat_d(FILE *f, const summary *s, int i)
{
    fputs("{\"min\":", f);
    json_num(f, s->dmin[i]);
    fputs(",\"mean\":", f);
    json_num(f, s->dsum[i] / s->nranks);
    fputs(",\"max\":", f);
    json_num(f, s->dmax[i]);
    fputs(",\"sum\":", f);
    json_num(f, s->dsum[i]);
    fputc('}', f);
}

static void stat_l(FILE *f, const summary *s, int i)
{
    fprintf(f, "{\"min\":%lld,\"mean\":", s->lmin[i]);
    json_num(f, (double)s->lsum[i] / s->nranks);
    fprintf(f, ",\"max\":%lld,\"sum\":%lld}", s->lmax[i], s->lsum[i]);
}

static void histogram(FILE *f, const long long *h)
{
    int last = 0;
    for (int b = 0; b < MPIPROF_NBINS; b++)
        if (h[b])
            last = b;
    fputc('[', f);
    for (int b = 0; b <= last; b++)
        fprintf(f, "%s%lld", b ? "," : "", h[b]);
    fputc(']', f);
}

static const char *category_name(int c)
{
    static const char *const names[CAT_COUNT] = {"p2p", "collective", "completion", "comm"};
    return c >= 0 && c < CAT_COUNT ? names[c] : "other";
}

static const char *thread_level_name(int level)
{
    if (level == MPI_THREAD_SINGLE)
        return "single";
    if (level == MPI_THREAD_FUNNELED)
        return "funneled";
    if (level == MPI_THREAD_SERIALIZED)
        return "serialized";
    if (level == MPI_THREAD_MULTIPLE)
        return "multiple";
    return NULL;
}

static void job_id(char *out, size_t n, long pid)
{
    const char *slurm = getenv("SLURM_JOB_ID"), *step = getenv("SLURM_STEP_ID");
    const char *others[] = {"PBS_JOBID", "LSB_JOBID", "FLUX_JOB_ID"};
    if (slurm && *slurm) {
        if (step && *step)
            snprintf(out, n, "%s.%s", slurm, step);
        else
            snprintf(out, n, "%s", slurm);
        return;
    }
    for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
        const char *v = getenv(others[i]);
        if (v && *v) {
            snprintf(out, n, "%s", v);
            return;
        }
    }
    snprintf(out, n, "%ld", pid);
}

/* The output file name; 0 on success, -1 if it does not fit. */
static int output_path(char *out, size_t n)
{
    char id[128];
    long pid = (long)getpid();
    job_id(id, sizeof(id), pid);
    const char *env = getenv("MPIPROF_OUTPUT");
    struct stat st;
    int len;
    if (!env || !*env) {
        len = snprintf(out, n, "mpiprof.%s.json", id);
    } else if (env[strlen(env) - 1] == '/' || (stat(env, &st) == 0 && S_ISDIR(st.st_mode))) {
        len = snprintf(out, n, "%s%smpiprof.%s.json", env,
                       env[strlen(env) - 1] == '/' ? "" : "/", id);
    } else {
        size_t k = 0;
        for (const char *p = env; *p; p++) {
            if (p[0] == '%' && (p[1] == 'j' || p[1] == 'p')) {
                char num[32];
                snprintf(num, sizeof(num), "%ld", pid);
                k += (size_t)snprintf(out + k, n - k, "%s", p[1] == 'j' ? id : num);
                p++;
            } else if (k + 1 < n) {
                out[k++] = *p;
            } else {
                k = n;
            }
            if (k + 1 >= n)
                return -1;
        }
        out[k] = '\0';
        len = (int)k;
    }
    return len > 0 && (size_t)len < n ? 0 : -1;
}

static void command_line(FILE *f)
{
    char buf[4096];
    size_t n = 0;
    FILE *c = fopen("/proc/self/cmdline", "r");
    if (c) {
        n = fread(buf, 1, sizeof(buf) - 1, c);
        fclose(c);
    }
    for (size_t i = 0; n && i + 1 < n; i++)
        if (buf[i] == '\0')
            buf[i] = ' ';
    buf[n] = '\0';
    if (n)
        json_string(f, buf, n);
    else
        fputs("null", f);
}

static void write_json(FILE *f, const summary *s)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int len = 0, major = 0, minor = 0;
    PMPI_Get_library_version(lib, &len);
    PMPI_Get_version(&major, &minor);
    size_t first_line = strcspn(lib, "\n");
    char host[256] = "";
    gethostname(host, sizeof(host) - 1);
    char stamp[32] = "";
    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm))
        strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm);

    fprintf(f, "{\"format\":\"%s\",\"tool\":\"mpiprof %s\",\"mpi_library\":", MPIPROF_FORMAT,
            MPIPROF_VERSION);
    json_string(f, lib, first_line);
    fprintf(f, ",\"mpi_standard\":\"%d.%d\",\"command\":", major, minor);
    command_line(f);
    fputs(",\"host_rank0\":", f);
    json_string(f, host, sizeof(host));
    fprintf(f, ",\"finished\":\"%s\",\"nranks\":%d,\"nodes\":%d,\"thread_level\":", stamp,
            s->nranks, s->nodes);
    const char *level = thread_level_name(mpiprof_g.thread_level);
    if (level)
        fprintf(f, "\"%s\"", level);
    else
        fputs("null", f);
    fputs(",\"fortran_calls\":", f);
    stat_l(f, s, 2 * F_COUNT + L_FORTRAN);

    double wall = s->dsum[F_COUNT + D_WALL], mpi = s->dsum[F_COUNT + D_MPI];
    fputs(",\"mpi_time_share\":", f);
    json_num(f, wall > 0 ? mpi / wall : 0.0);
    fputs(",\"time\":{\"wall\":", f);
    stat_d(f, s, F_COUNT + D_WALL);
    fputs(",\"mpi\":", f);
    stat_d(f, s, F_COUNT + D_MPI);
    fputs(",\"share\":", f);
    stat_d(f, s, F_COUNT + D_SHARE);
    fputs(",\"init\":", f);
    stat_d(f, s, F_COUNT + D_INIT);
    fputs("}", f);

    fputs(",\"histogram_bins\":\"bin 0: 0 bytes; bin k >= 1: [2^(k-1), 2^k) bytes\"", f);
    fputs(",\"functions\":{", f);
    int first = 1;
    long long cat[CAT_COUNT][MPIPROF_NBINS];
    memset(cat, 0, sizeof(cat));
    for (int i = 0; i < F_COUNT; i++) {
        if (s->lsum[i] == 0)
            continue;
        int c = mpiprof_categories[i];
        fprintf(f, "%s\"%s\":{\"category\":\"%s\",\"calls\":", first ? "" : ",",
                mpiprof_names[i], category_name(c));
        first = 0;
        stat_l(f, s, i);
        fputs(",\"time\":", f);
        stat_d(f, s, i);
        if (c <= CAT_COLLECTIVE) {
            fputs(",\"bytes\":", f);
            stat_l(f, s, F_COUNT + i);
            fputs(",\"histogram\":", f);
            histogram(f, s->hist[i]);
            for (int b = 0; b < MPIPROF_NBINS; b++)
                cat[c][b] += s->hist[i][b];
        }
        fputc('}', f);
    }
    fputs("},\"histograms\":{\"p2p\":", f);
    histogram(f, cat[CAT_P2P]);
    fputs(",\"collective\":", f);
    histogram(f, cat[CAT_COLLECTIVE]);
    fputs("},\"ranks\":[", f);
    for (int r = 0; r < s->nranks; r++) {
        fprintf(f, "%s{\"rank\":%d,\"wall\":", r ? "," : "", r);
        json_num(f, s->per_rank[2 * r]);
        fputs(",\"mpi\":", f);
        json_num(f, s->per_rank[2 * r + 1]);
        fputc('}', f);
    }
    fputs("]}\n", f);
}

static int count_nodes(MPI_Comm world)
{
    MPI_Comm node;
    int local = 0, one = 0, nodes = 0;
    if (PMPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) !=
        MPI_SUCCESS)
        return 0;
    PMPI_Comm_rank(node, &local);
    PMPI_Comm_free(&node);
    one = local == 0;
    PMPI_Allreduce(&one, &nodes, 1, MPI_INT, MPI_SUM, world);
    return nodes;
}

void mpiprof_write_report(void)
{
    double t_end = mpiprof_now();
    MPI_Comm world = MPI_COMM_WORLD;
    int rank = 0;
    static summary s; /* large: keep it off the stack */
    PMPI_Comm_rank(world, &rank);
    PMPI_Comm_size(world, &s.nranks);

    double d[ND], mpi = 0.0;
    long long l[NL];
    static long long h[F_COUNT][MPIPROF_NBINS];
    for (int i = 0; i < F_COUNT; i++) {
        const mpiprof_stat *st = &mpiprof_g.fn[i];
        d[i] = st->time;
        mpi += st->time;
        l[i] = (long long)st->calls;
        l[F_COUNT + i] = (long long)st->bytes;
        for (int b = 0; b < MPIPROF_NBINS; b++)
            h[i][b] = (long long)st->hist[b];
    }
    double wall = t_end - mpiprof_g.t_start;
    d[F_COUNT + D_WALL] = wall;
    d[F_COUNT + D_MPI] = mpi;
    d[F_COUNT + D_SHARE] = wall > 0 ? mpi / wall : 0.0;
    d[F_COUNT + D_INIT] = mpiprof_g.t_init;
    l[2 * F_COUNT + L_FORTRAN] = (long long)mpiprof_g.fortran_calls;

    PMPI_Reduce(d, s.dmin, ND, MPI_DOUBLE, MPI_MIN, 0, world);
    PMPI_Reduce(d, s.dmax, ND, MPI_DOUBLE, MPI_MAX, 0, world);
    PMPI_Reduce(d, s.dsum, ND, MPI_DOUBLE, MPI_SUM, 0, world);
    PMPI_Reduce(l, s.lmin, NL, MPI_LONG_LONG, MPI_MIN, 0, world);
    PMPI_Reduce(l, s.lmax, NL, MPI_LONG_LONG, MPI_MAX, 0, world);
    PMPI_Reduce(l, s.lsum, NL, MPI_LONG_LONG, MPI_SUM, 0, world);
    PMPI_Reduce(h, s.hist, F_COUNT * MPIPROF_NBINS, MPI_LONG_LONG, MPI_SUM, 0, world);
    double mine[2] = {wall, mpi};
    s.per_rank = rank == 0 ? malloc(sizeof(double) * 2 * (size_t)s.nranks) : NULL;
    int have = rank != 0 || s.per_rank != NULL, all = 0;
    PMPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, world);
    if (!all) {
        if (rank == 0)
            fputs("mpiprof: out of memory; no profile written\n", stderr);
        return;
    }
    PMPI_Gather(mine, 2, MPI_DOUBLE, s.per_rank, 2, MPI_DOUBLE, 0, world);
    s.nodes = count_nodes(world);
    if (rank != 0)
        return;

    char path[PATH_MAX], tmp[PATH_MAX + 32];
    if (output_path(path, sizeof(path)) != 0) {
        fputs("mpiprof: MPIPROF_OUTPUT is too long; no profile written\n", stderr);
        free(s.per_rank);
        return;
    }
    snprintf(tmp, sizeof(tmp), "%s.tmp%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    int ok = f != NULL, err = errno;
    if (ok) {
        write_json(f, &s);
        ok = !ferror(f);
        ok = (fclose(f) == 0) && ok;
        ok = ok && rename(tmp, path) == 0;
        err = errno;
        if (!ok)
            remove(tmp);
    }
    if (!ok)
        fprintf(stderr, "mpiprof: cannot write %s: %s\n", path, strerror(err));
    else if (!getenv("MPIPROF_QUIET"))
        fprintf(stderr, "mpiprof: wrote %s (%d ranks, MPI %.1f%% of wall time)\n", path,
                s.nranks, s.dsum[F_COUNT + D_WALL] > 0
                              ? 100.0 * s.dsum[F_COUNT + D_MPI] / s.dsum[F_COUNT + D_WALL]
                              : 0.0);
    free(s.per_rank);
}
