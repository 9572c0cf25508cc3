/* options.h - command-line options of cgsolver. */
#ifndef CGSOLVER_OPTIONS_H
#define CGSOLVER_OPTIONS_H

#include <stddef.h>
#include <stdio.h>

enum cg_variant { CG_CLASSIC = 0, CG_PIPELINED = 1 };
enum cg_precond { PC_NONE = 0, PC_JACOBI = 1 };

typedef struct {
    char cls;             /* problem class letter: S W A B C D */
    long n;               /* grid edge (from class unless --n given) */
    int n_given;          /* --n was used */
    int stencil;          /* 7 or 27 */
    int variant;          /* enum cg_variant */
    int precond;          /* enum cg_precond */
    int weak;             /* 1 = weak scaling */
    const char *matrix;   /* Matrix Market file or NULL */
    double tol;           /* relative residual tolerance */
    long maxit;           /* iteration limit */
    int help;             /* --help requested */
} cg_options;

/* Grid edge of a class letter, or -1 if the class is unknown. */
long class_grid_n(char cls);

/* Parse argv into *o.  Returns 0 on success, -1 on error (message,
 * without the "cgsolver: error: " prefix, in err). */
int options_parse(int argc, char **argv, cg_options *o, char *err, size_t errlen);

void options_usage(FILE *f);

const char *variant_name(int v);
const char *precond_name(int p);

#endif
