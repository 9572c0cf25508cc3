/* unit.h - the tiny harness shared by the unit test files. */
#ifndef CGSOLVER_TESTS_UNIT_H
#define CGSOLVER_TESTS_UNIT_H

#include <stdio.h>

#include "common.h"
#include "options.h"

extern int g_pass, g_fail;

#define CHECK(cond, ...)                                                     \
    do {                                                                     \
        if (cond) {                                                          \
            g_pass++;                                                        \
        } else {                                                             \
            g_fail++;                                                        \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                      \
            printf(__VA_ARGS__);                                             \
            printf("\n");                                                    \
        }                                                                    \
    } while (0)

/* options_parse with up to three arguments. */
static inline int parse(cg_options *o, char *err, const char *a1, const char *a2, const char *a3)
{
    char *argv[5] = {"cgsolver", (char *)a1, (char *)a2, (char *)a3, NULL};
    int argc = 1 + (a1 != NULL) + (a2 != NULL) + (a3 != NULL);
    return options_parse(argc, argv, o, err, CG_ERRLEN);
}

/* test_unit_solve.c */
void test_vecops(void);
void test_chunks(void);
void test_lanczos(void);
void test_solvers(void);
void test_triad(void);
void test_report(void);

#endif
