/* Spectral elements (paper 001, Huismann-Stiller-Froehlich): the element-level
 * building blocks of continuous GLL spectral elements on cuboid elements with
 * static condensation. One reference element of degree p in dimension 2 or 3
 * holds the 1D standard matrices on [-1,1], the fast diagonalization of the
 * interior block and the boundary numbering; an element of widths h enters
 * only through its coefficient vector d (hpmg_sem_coefficients).
 *
 * Element-local node numbering: lexicographic, x1 fastest,
 * idx = (i3*n + i2)*n + i1 with n = p+1 (2D: i2*n + i1).
 * Kronecker convention (paper 001, eq. 4): the last factor acts on x1, so
 *   H_e = d0 M(x)M(x)M + d1 M(x)M(x)L + d2 M(x)L(x)M + d3 L(x)M(x)M.
 *
 * Boundary vector of an element (docs/sem.md, "Boundary layout"), m = p-1:
 *   3D: 8 vertices, v = c1 + 2 c2 + 4 c3 (c = 0: index 0, c = 1: index p);
 *       12 edges of m points each: 4 along x1 (corner c2 + 2 c3), 4 along x2
 *       (c1 + 2 c3), 4 along x3 (c1 + 2 c2), points ascending;
 *       6 faces of m*m points: f = 2*d + s for the face normal to x_{d+1} at
 *       side s (0: index 0, 1: index p), stored as an m x m row-major block
 *       whose rows run over the higher and columns over the lower of the two
 *       tangential directions.
 *   2D: 4 vertices, v = c1 + 2 c2; 4 faces (edges) of m points, f = 2*d + s.
 * Interior vector: the (p-1)^dim interior nodes, lexicographic, x1 fastest. */
#ifndef HPMG_SEM_ELEMENT_H
#define HPMG_SEM_ELEMENT_H

#include "core/core.h"

#define HPMG_SEM_MIN_DEGREE 2
#define HPMG_SEM_MAX_DEGREE 64

typedef struct {
  int dim, p, n, m;       /* dimension, degree, n = p+1 nodes and m = p-1 interior nodes per direction */
  int nloc, nb, ni;       /* nodes of an element: all n^dim, boundary, interior m^dim */
  int face_offset;        /* position of face 0 in the boundary vector */
  double *x, *w;          /* GLL nodes and weights on [-1,1] (n) */
  double *M;              /* diagonal of the standard mass matrix M_S (n) */
  double *L;              /* standard stiffness L_S, n x n row-major */
  /* fast diagonalization of the interior block: S^T L_II S = Lambda,
   * S^T M_II S = I (LAPACKE_dsygv); Sinv = S^{-1} = S^T M_II */
  double *S, *Sinv, *lam; /* m x m, m x m, m */
  double *SinvT;          /* Sinv transposed (row access in the face transforms) */
  double *ST;             /* S transposed (row access in the interior solve) */
  double *a[2];           /* a_s = S^T L_{I,s} for the end nodes s = 0 (index 0) and 1 (index p), m each */
  double *lI[2];          /* L_{I,s}: column of L_S at end node s, interior rows (m) */
  /* difference form of the condensed apply (docs/sem.md, "Error floor"), nv = 2^dim vertices:
   * phi[k nv + v]: the multilinear vertex function of vertex v at boundary position k;
   * dphi[(dd nb + k) nv + v]: its exact stiffness flux (L_S xi = e_p - e_0) along x_{dd+1}
   * at k, times the tangential mass weights (0 unless k is at an end of that direction);
   * sv[s] = Sinv (1 -+ xi_I)/2 (m), the 1D factors of S^T (x) ... w_I phi_v */
  double *phi, *dphi, *sv[2];
  int *bmap;              /* boundary position -> element-local node (nb) */
  int *imap;              /* interior position -> element-local node (ni) */
  double *mb;             /* product of the 1D mass weights at each boundary node (nb) */
} hpmg_sem_element;

/* Build the reference element of degree p (HPMG_SEM_MIN_DEGREE..HPMG_SEM_MAX_DEGREE)
 * in dimension dim (2 or 3). HPMG_ERR_NUMERIC if the eigenproblem fails. */
hpmg_error hpmg_sem_element_create(int dim, int p, hpmg_sem_element *el);
void hpmg_sem_element_free(hpmg_sem_element *el);

/* Coefficients d[0..dim] of a cuboid element with widths h[0..dim-1]:
 * d = (prod h / 2^dim) * (lambda, 4/h1^2, ..., 4/h_dim^2). */
hpmg_error hpmg_sem_coefficients(int dim, const double *h, double lambda, double *d);

/* Doubles of scratch one call of the element routines below needs. */
size_t hpmg_sem_work_size(const hpmg_sem_element *el);

/* The routines below act on one element and take caller scratch `work` of
 * hpmg_sem_work_size doubles; they cannot fail once el and d are valid. */

/* y = H_e u on all nloc nodes, sum factorization, O(p^{dim+1}). */
void hpmg_sem_apply_full(const hpmg_sem_element *el, const double *d, const double *u, double *y,
                         double *work);
/* u_I = H_II^{-1} f_I (interior vectors), fast diagonalization, O(p^{dim+1}). */
void hpmg_sem_interior_solve(const hpmg_sem_element *el, const double *d, const double *fI, double *uI,
                             double *work);
/* Condensed right-hand side Fhat = F_B - H_BI H_II^{-1} F_I from the element
 * load F (nloc values) into the boundary vector Fhat (nb). */
void hpmg_sem_condense_rhs(const hpmg_sem_element *el, const double *d, const double *F, double *Fhat,
                           double *work);
/* Interior recovery u_I = H_II^{-1}(F_I - H_IB u_B): writes all nloc values of u
 * (boundary copied from uB). */
void hpmg_sem_recover(const hpmg_sem_element *el, const double *d, const double *F, const double *uB,
                      double *u, double *work);
/* yB = Hhat_e uB = (H_BB - H_BI H_II^{-1} H_IB) uB, matrix-free in O(p^dim). */
void hpmg_sem_condensed_apply(const hpmg_sem_element *el, const double *d, const double *uB, double *yB,
                              double *work);

/* Batches over ne elements (OpenMP over elements). d holds dim+1 coefficients
 * per element; u/y hold nloc (full) or nb (condensed) values per element. */
hpmg_error hpmg_sem_apply_full_batch(const hpmg_sem_element *el, int64_t ne, const double *d,
                                     const double *u, double *y);
hpmg_error hpmg_sem_condensed_apply_batch(const hpmg_sem_element *el, int64_t ne, const double *d,
                                          const double *uB, double *yB);

/* Floating-point operations of one element apply, as the kernels count them. */
double hpmg_sem_full_flops(const hpmg_sem_element *el);
double hpmg_sem_condensed_flops(const hpmg_sem_element *el);

#endif
