/* lanczos.h - extreme eigenvalue estimates from CG coefficients.
 * CG's alpha/beta define the Lanczos tridiagonal matrix T of the
 * (preconditioned) operator; its extreme eigenvalues (Ritz values)
 * approximate the extreme eigenvalues of the operator from inside. */
#ifndef CGSOLVER_LANCZOS_H
#define CGSOLVER_LANCZOS_H

/* alpha[0..k-1], beta[0..k-1] where beta[j] combined p_{j-1} into p_j
 * (beta[0] unused).  Returns 0 on success (k >= 1). */
int lanczos_extremes(const double *alpha, const double *beta, int k, double *lmin, double *lmax);

#endif
