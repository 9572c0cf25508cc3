/* vecops.h - fused vector kernels of the CG variants.  Each kernel makes a
 * single pass over its vectors, combining updates and the local parts of
 * the next dot products.  dinv == NULL means "no preconditioner".
 * The *_flops / *_bytes helpers give the per-element model counts used for
 * GFLOP/s and effective bandwidth (bytes: each vector read or written once,
 * 8 bytes per element; no write-allocate traffic). */
#ifndef CGSOLVER_VECOPS_H
#define CGSOLVER_VECOPS_H

/* Local dot product. */
double vec_dot(int n, const double *restrict a, const double *restrict b);

/* Classic CG start: r = b - q (q == NULL: r = b), p = dinv.*r (or r);
 * out[0] = (r,r), out[1] = (r, dinv.*r). */
void cg_classic_init(int n, const double *restrict b, const double *restrict q,
                     double *restrict r, double *restrict p, const double *restrict dinv,
                     double out[2]);

/* x += a p; r -= a q; out[0] = (r,r), out[1] = (r, dinv.*r). */
void cg_classic_update(int n, double a, double *restrict x, const double *restrict p,
                       double *restrict r, const double *restrict q,
                       const double *restrict dinv, double out[2]);
double cg_classic_update_flops(int jacobi);
double cg_classic_update_bytes(int jacobi);

/* p = dinv.*r + b p  (or r + b p). */
void cg_classic_direction(int n, double b, double *restrict p, const double *restrict r,
                          const double *restrict dinv);
double cg_classic_direction_flops(int jacobi);
double cg_classic_direction_bytes(int jacobi);

/* Pipelined CG start, after w = A u with u = dinv.*r (or r):
 * out[0] = gamma = (r,u), out[2] = (r,r); m = dinv.*w when dinv != NULL. */
void cg_pipe_init(int n, const double *restrict r, const double *restrict w,
                  double *restrict m, const double *restrict dinv, double out[3]);

/* Pipelined CG (Ghysels-Vanroose) fused update, with u = dinv.*r, m = dinv.*w:
 *   z = nv + b z;  s = w + b s;  p = u + b p;
 *   x += a p;  r -= a s;  w -= a z;  m = dinv.*w;
 *   out = { (r,u), (w,u), (r,r) } of the new vectors. */
void cg_pipe_update(int n, double a, double b, double *restrict x, double *restrict r,
                    double *restrict w, double *restrict m, double *restrict p,
                    double *restrict s, double *restrict z, const double *restrict nv,
                    const double *restrict dinv, double out[3]);
double cg_pipe_update_flops(int jacobi);
double cg_pipe_update_bytes(int jacobi);

#endif
