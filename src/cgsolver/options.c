/* options.c - command-line parsing (identical on every rank, so all ranks
 * reach the same decision without communication). */
#include "options.h"
#include "common.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_GRID_N 100000L /* keeps n^3 far from 64-bit overflow */

long class_grid_n(char cls)
{
    switch (cls) {
    case 'S': return 16;
    case 'W': return 32;
    case 'A': return 64;
    case 'B': return 128;
    case 'C': return 192;
    case 'D': return 256;
    default: return -1;
    }
}

const char *variant_name(int v) { return v == CG_PIPELINED ? "pipelined" : "classic"; }
const char *precond_name(int p) { return p == PC_JACOBI ? "jacobi" : "none"; }

void options_usage(FILE *f)
{
    fprintf(f,
        "Usage: cgsolver [options]\n"
        "MPI sparse conjugate-gradient benchmark (version " CGSOLVER_VERSION ").\n"
        "\n"
        "Problem:\n"
        "  --class S|W|A|B|C|D      generated 3-D Poisson problem class (default S)\n"
        "                           grid edge n: S=16 W=32 A=64 B=128 C=192 D=256\n"
        "  --n GRID                 grid edge n (overrides the class size)\n"
        "  --stencil 7|27           7-point or 27-point stencil (default 7)\n"
        "  --scaling strong|weak    strong: global grid n^3; weak: n^3 rows per rank\n"
        "                           (default strong)\n"
        "  --matrix FILE.mtx        solve with an SPD Matrix Market matrix instead\n"
        "                           (b = A*ones, exact solution = ones)\n"
        "Solver:\n"
        "  --variant classic|pipelined  CG variant (default classic)\n"
        "  --precond none|jacobi    preconditioner (default none)\n"
        "  --tol T                  relative residual tolerance (default 1e-8)\n"
        "  --maxit N                iteration limit (default 10000)\n"
        "  --help                   show this help\n"
        "\n"
        "Output: a human summary, one line 'CGSOLVER_JSON: {...}', and\n"
        "'VERIFICATION SUCCESSFUL' (exit 0) or 'VERIFICATION FAILED' (exit 2).\n"
        "Bad input prints one line 'cgsolver: error: ...' and exits with 1.\n");
}

static int parse_long(const char *s, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0')
        return -1;
    *out = v;
    return 0;
}

static int parse_double(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno != 0 || end == s || *end != '\0' || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

int options_parse(int argc, char **argv, cg_options *o, char *err, size_t errlen)
{
    memset(o, 0, sizeof(*o));
    o->cls = 'S';
    o->n = class_grid_n('S');
    o->stencil = 7;
    o->variant = CG_CLASSIC;
    o->precond = PC_NONE;
    o->tol = 1e-8;
    o->maxit = 10000;
    long n_opt = 0;

    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            o->help = 1;
            return 0;
        }
        if (strncmp(arg, "--", 2) != 0) {
            snprintf(err, errlen, "unexpected argument '%s' (see --help)", arg);
            return -1;
        }
        /* Split "--name=value" or take the value from the next argument. */
        char name[64];
        const char *val = NULL;
        const char *eq = strchr(arg, '=');
        size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
        if (len >= sizeof(name)) {
            snprintf(err, errlen, "unknown option '%.60s...' (see --help)", arg);
            return -1;
        }
        memcpy(name, arg, len);
        name[len] = '\0';
        static const char *known[] = {"--class", "--n", "--stencil", "--variant", "--precond",
                                      "--scaling", "--matrix", "--tol", "--maxit"};
        int is_known = 0;
        for (size_t k = 0; k < sizeof(known) / sizeof(known[0]); k++)
            if (strcmp(name, known[k]) == 0)
                is_known = 1;
        if (!is_known) {
            snprintf(err, errlen, "unknown option '%s' (see --help)", name);
            return -1;
        }
        if (eq) {
            val = eq + 1;
        } else {
            if (i + 1 >= argc) {
                snprintf(err, errlen, "option '%s' needs a value", name);
                return -1;
            }
            val = argv[++i];
        }

        if (strcmp(name, "--class") == 0) {
            if (strlen(val) != 1 || class_grid_n(val[0]) < 0) {
                snprintf(err, errlen, "unknown class '%s' (expected S, W, A, B, C or D)", val);
                return -1;
            }
            o->cls = val[0];
        } else if (strcmp(name, "--n") == 0) {
            if (parse_long(val, &n_opt) != 0 || n_opt < 2 || n_opt > MAX_GRID_N) {
                snprintf(err, errlen, "invalid grid size '--n %s' (expected an integer 2..%ld)",
                         val, MAX_GRID_N);
                return -1;
            }
            o->n_given = 1;
        } else if (strcmp(name, "--stencil") == 0) {
            if (strcmp(val, "7") == 0)
                o->stencil = 7;
            else if (strcmp(val, "27") == 0)
                o->stencil = 27;
            else {
                snprintf(err, errlen, "invalid stencil '%s' (expected 7 or 27)", val);
                return -1;
            }
        } else if (strcmp(name, "--variant") == 0) {
            if (strcmp(val, "classic") == 0)
                o->variant = CG_CLASSIC;
            else if (strcmp(val, "pipelined") == 0)
                o->variant = CG_PIPELINED;
            else {
                snprintf(err, errlen, "invalid variant '%s' (expected classic or pipelined)", val);
                return -1;
            }
        } else if (strcmp(name, "--precond") == 0) {
            if (strcmp(val, "none") == 0)
                o->precond = PC_NONE;
            else if (strcmp(val, "jacobi") == 0)
                o->precond = PC_JACOBI;
            else {
                snprintf(err, errlen, "invalid preconditioner '%s' (expected none or jacobi)", val);
                return -1;
            }
        } else if (strcmp(name, "--scaling") == 0) {
            if (strcmp(val, "strong") == 0)
                o->weak = 0;
            else if (strcmp(val, "weak") == 0)
                o->weak = 1;
            else {
                snprintf(err, errlen, "invalid scaling '%s' (expected strong or weak)", val);
                return -1;
            }
        } else if (strcmp(name, "--matrix") == 0) {
            if (val[0] == '\0') {
                snprintf(err, errlen, "option '--matrix' needs a file name");
                return -1;
            }
            o->matrix = val;
        } else if (strcmp(name, "--tol") == 0) {
            if (parse_double(val, &o->tol) != 0 || !(o->tol > 0.0 && o->tol < 1.0)) {
                snprintf(err, errlen, "invalid tolerance '%s' (expected 0 < tol < 1)", val);
                return -1;
            }
        } else if (strcmp(name, "--maxit") == 0) {
            if (parse_long(val, &o->maxit) != 0 || o->maxit < 1 || o->maxit > 100000000L) {
                snprintf(err, errlen, "invalid iteration limit '%s' (expected 1..100000000)", val);
                return -1;
            }
        }
    }
    o->n = o->n_given ? n_opt : class_grid_n(o->cls);
    if (o->matrix && o->weak) {
        snprintf(err, errlen, "--scaling weak needs a generated problem, not --matrix");
        return -1;
    }
    return 0;
}
