/* A box [0,len_0] x [0,len_1] (x [0,len_2]) with per-direction node
 * coordinates (uniform, stretched or given), a boundary condition per face,
 * and, for finite differences, where the unknowns live. The one description
 * of a Cartesian problem's geometry that every box discretization (finite
 * differences, Q_k, spectral elements) and the FFT solvers read.
 *
 * The finite-difference operator on a box (docs/bc.md), the contract between
 * the multigrid and the direct (FFT / tridiagonal) solvers:
 * per direction d, with h_i = x_{i+1} - x_i,
 *   vertex layout: unknowns at the nodes x_i not on a Dirichlet face (a
 *     periodic direction keeps x_0..x_{n-1}; x_n is x_0); dual widths
 *     w_i = (h_{i-1} + h_i)/2 with h_{-1} = 0 (h_n = 0) at a non-periodic end
 *     and the wrapped width at a periodic one; 1D stiffness
 *     (K u)_i = (u_i - u_{i-1})/h_{i-1} + (u_i - u_{i+1})/h_i, the term to a
 *     missing neighbour dropped (Neumann end), a Dirichlet neighbour's known
 *     value moved to the right-hand side;
 *   cell layout: unknowns at the cell centres c_i = (x_i + x_{i+1})/2,
 *     w_i = h_i, (K u)_i = sum over neighbours (u_i - u_j)/|c_i - c_j| (a
 *     periodic direction wraps), at a Dirichlet face (u_i - g)/(h_i/2), at a
 *     Neumann face nothing;
 * A = sum_d K_d (x) (W of the other directions) + lambda W, W = (x)_d W_d:
 * symmetric, positive definite unless no face is Dirichlet and lambda = 0
 * (then singular with the constants as null space);
 * b_i = W_i f(x_i) + Dirichlet values times their coupling + Neumann fluxes
 * g times the face's transverse dual area at the unknowns next to the face.
 * With uniform h and Dirichlet faces in the vertex layout, A is h^d times
 * the h^-2-scaled 5/7-point stencil of the unit-box FD problems. */
#ifndef HPMG_GRID_BOX_H
#define HPMG_GRID_BOX_H

#include "core/core.h"
#include "hpmg.h"

typedef struct {
  int dim;
  int64_t cells[3];      /* cells per direction (1 in z for 2D) */
  double len[3];         /* box lengths */
  double *x[3];          /* cells[d]+1 node coordinates per direction, x[d][0] = 0 (owned) */
  int uniform[3];        /* 1: equal cells in direction d (to a relative 1e-12) */
  hpmg_bc_kind bc[6];    /* face 2d: min, 2d+1: max of direction d */
  hpmg_fd_layout layout; /* finite differences: vertex or cell unknowns */
} hpmg_box;

static inline int hpmg_box_periodic(const hpmg_box *b, int d) { return b->bc[2 * d] == HPMG_BC_PERIODIC; }

/* Unknowns of direction d (1 in z for 2D). */
static inline int64_t hpmg_box_n(const hpmg_box *b, int d) {
  if (d >= b->dim) return 1;
  const int64_t n = b->cells[d];
  if (b->layout == HPMG_FD_CELL || hpmg_box_periodic(b, d)) return n;
  return n + 1 - (b->bc[2 * d] == HPMG_BC_DIRICHLET) - (b->bc[2 * d + 1] == HPMG_BC_DIRICHLET);
}

/* Index in x[d] of the first unknown's node (vertex layout): 1 behind a Dirichlet face. */
static inline int64_t hpmg_box_first(const hpmg_box *b, int d) {
  return b->layout == HPMG_FD_VERTEX && d < b->dim && b->bc[2 * d] == HPMG_BC_DIRICHLET;
}

/* 1 when no face is Dirichlet: with lambda = 0 the operator is singular. */
static inline int hpmg_box_neumann_like(const hpmg_box *b) {
  for (int f = 0; f < 2 * b->dim; f++)
    if (b->bc[f] == HPMG_BC_DIRICHLET) return 0;
  return 1;
}

/* The box of a problem's options: cells[d] (0: coarse 2^refine), node
 * coordinates from spacing[d], the BC kinds, the FD layout. Refuses, with a
 * message naming the direction or face: dim not 2/3, box lengths not positive
 * and finite, cells < 1 or more than 2^31 - 2 per direction or 2^62 unknowns
 * in all, periodic on one face of a direction only, a spacing parameter out
 * of range, node coordinates that are not finite, not increasing, not from
 * 0 to box[d], a cell narrower than 1e-12 of the box length (a vanishing
 * cell), BC data on a periodic face, a values array on a Neumann face, NaN or
 * Inf in a constant or in a values array. Nothing is allocated on failure. */
hpmg_error hpmg_box_init(const hpmg_problem_options *o, hpmg_box *b);
void hpmg_box_destroy(hpmg_box *b);
/* Unknowns of the box's FD operator: the product of hpmg_box_n. */
static inline int64_t hpmg_box_unknowns(const hpmg_box *b) {
  return hpmg_box_n(b, 0) * hpmg_box_n(b, 1) * hpmg_box_n(b, 2);
}

#endif
