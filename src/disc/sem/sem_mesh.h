/* Spectral elements on a Cartesian mesh (paper 001): the skeleton of the
 * statically condensed system, its global numbering, direct stiffness
 * summation, boundary conditions, and the global condensed operator
 *   Hhat = sum_e Q_e^T Hhat_e Q_e
 * applied matrix-free with the element kernel of sem_element.h, with its
 * exact diagonal (docs/sem.md, "Mesh and skeleton").
 *
 * Mesh: cells[d] cuboid elements per direction between the node coordinates
 * x[d][0..cells[d]] of an hpmg_box (element widths uniform or stretched);
 * element e = c0 + cells0 (c1 + cells1 c2).
 *
 * GLL lattice: the nodes of all elements, nlat[d] = cells[d] p + 1 per
 * direction (cells[d] p in a periodic direction: the last plane is the
 * first); lattice node g = (g0, g1, g2), index g0 + nlat0 (g1 + nlat1 g2).
 * Element (c0, c1, c2), local node (i1, i2, i3) is lattice node
 * g_d = (c_d p + i_d) mod nlat[d].
 *
 * Skeleton: the lattice nodes with at least one g_d = 0 mod p (all GLL nodes
 * on element boundaries), ns of them, grouped by mesh entity. With nv[d] =
 * mesh vertices per direction (cells + 1, or cells if periodic) and nc[d] =
 * cells[d], each entity is an index tuple J (J_d a vertex index in [0, nv_d)
 * or a cell index in [0, nc_d)) numbered lexicographically, J0 fastest:
 *   vertices  J_d all vertex indices, 1 point each;             at off_vert
 *   edges k   (3D) J_k a cell, the others vertices, m = p-1 points
 *             ascending along x_k;                              at off_edge[k]
 *   faces k   (normal x_k) J_k a vertex, the others cells, m^{dim-1} points:
 *             3D an m x m row-major block, rows over the higher and columns
 *             over the lower tangential direction; 2D m points ascending.
 *                                                               at off_face[k]
 * This is the element boundary vector's layout (sem_element.h) entity by
 * entity, and all elements have the same orientation, so every entity of an
 * element is one contiguous block of the skeleton vector: gather and scatter
 * are nent block copies per element (ent[e * nent + j] = skeleton offset of
 * the element's j-th entity, in boundary-vector order: vertices, edges,
 * faces).
 *
 * A vertex star (the 2^dim elements around a mesh vertex) reads the vertex,
 * the 2 dim edges (3D) or faces (2D) through it and, in 3D, the 12 faces
 * through it: each is an entity of the lists above, found from the vertex
 * tuple by J_k -> J_k - 1 or J_k for the cells on either side (wrapped in a
 * periodic direction); the 1D block of direction k is the two cells
 * J_k - 1, J_k with the widths x[k][J_k] - x[k][J_k - 1] and
 * x[k][J_k + 1] - x[k][J_k]. In lattice terms, the star's condensed
 * unknowns (the three planes through the vertex, n_S = 2p - 1 points per
 * direction) are the lattice nodes g with g_k = J_k p and |g_j - J_j p| < p
 * (j != k), taken mod nlat in a periodic direction and absent beyond a
 * non-periodic boundary; hpmg_sem_skeleton_index maps each to the skeleton.
 *
 * Boundary conditions: Dirichlet skeleton nodes (on a Dirichlet face;
 * Dirichlet wins on an edge or corner shared with a Neumann face) stay in
 * the vector and are masked: the operator acts as P Hhat P + (I - P), P
 * zeroing them, so Dirichlet rows are identity rows. Neumann faces need
 * nothing here (natural). Periodic directions identify the planes g_d = 0
 * and g_d = nlat: the vertex index wraps.
 *
 * Threads: the operator and the scatter run the elements in colours (per
 * direction c mod 2; the last cell of a periodic direction with an odd
 * count is a third colour), so that no two elements of one colour share a
 * skeleton node; results do not depend on the thread count. */
#ifndef HPMG_SEM_MESH_H
#define HPMG_SEM_MESH_H

#include <stdint.h>
#include "disc/sem/sem_element.h"
#include "grid/box.h"

#define HPMG_SEM_MAX_ENTITIES 26

typedef struct {
  int dim, p;
  hpmg_sem_element el;      /* the reference element of degree p */
  int64_t cells[3];         /* elements per direction (1 in z for 2D) */
  int64_t ne;               /* elements */
  int periodic[3];
  hpmg_bc_kind bc[6];       /* face 2d: min, 2d+1: max of direction d */
  double *x[3];             /* element boundary coordinates, cells[d]+1 per direction (owned) */
  double lambda;
  double *coef;             /* (dim+1) coefficients d per element (hpmg_sem_coefficients) */
  int64_t nv[3], nlat[3];   /* mesh vertices and GLL lattice nodes per direction */
  int64_t nlat_total;       /* lattice nodes in all: the full field's length */
  int64_t off_vert, off_edge[3], off_face[3], ns; /* skeleton blocks and total length */
  int nent;                 /* entities per element: 26 (3D), 8 (2D) */
  int ent_len[HPMG_SEM_MAX_ENTITIES], ent_pos[HPMG_SEM_MAX_ENTITIES]; /* points, position in the boundary vector */
  int64_t *ent;             /* ne * nent skeleton offsets */
  uint8_t *mult;            /* elements sharing each skeleton node (ns) */
  uint8_t *dirichlet;       /* 1 at Dirichlet skeleton nodes (ns); NULL when there are none */
  uint8_t *edir;            /* 1 for elements with a Dirichlet node (ne); NULL when there are none */
  int64_t ndir;             /* Dirichlet skeleton nodes */
  int ncolors;
  int64_t *color_ptr;       /* ncolors+1 offsets into color_elems: the non-empty colours (hpmg_sem_colour_buckets) */
  int64_t *color_elems;     /* the elements, colour by colour */
  size_t ws;                /* doubles of scratch per thread for the element kernels */
} hpmg_sem_mesh;

/* Items 0..n-1 (elements, vertices) bucketed by colour(m, i) in [0, 27):
 * ptr[0 .. *ncolors] (28 entries) the offsets into items of the non-empty
 * colours only, in the order of their index, each colour's items ascending.
 * Every loop over the colours ends in a barrier, and without an odd periodic
 * wrap 19 of the 27 colours (3D) are empty (p = 8 on 8^3, kvMG, 2 threads:
 * 1142 barriers a solve with them, 477 without). */
void hpmg_sem_colour_buckets(const hpmg_sem_mesh *m, int64_t n, int (*colour)(const hpmg_sem_mesh *, int64_t),
                             int64_t *ptr, int64_t *items, int *ncolors);

/* The mesh of degree p (HPMG_SEM_MIN_DEGREE..HPMG_SEM_MAX_DEGREE) on box b
 * (hpmg_box_init's validated geometry; its node coordinates are copied),
 * lambda >= 0. HPMG_ERR_ARG, naming the value: degree out of range, a
 * periodic direction with fewer than 3 elements, a vanishing element width,
 * skeleton counts that overflow 64 bits. Nothing is kept on failure. */
hpmg_error hpmg_sem_mesh_create(const hpmg_box *b, int p, double lambda, hpmg_sem_mesh *m);
void hpmg_sem_mesh_destroy(hpmg_sem_mesh *m);
/* Bytes the mesh holds (without the reference element). */
double hpmg_sem_mesh_bytes(const hpmg_sem_mesh *m);

/* OpenMP regions of the spectral-element loops: core/par.h's threshold
 * (hpmg_par), the element loops counting hpmg_sem_condensed_flops per
 * element; the first mesh created reads the wait policy (hpmg_par_init). */
#include "core/par.h"

/* Skeleton index of lattice node g (each g_d in [0, nlat[d])), -1 for an
 * element-interior node. */
int64_t hpmg_sem_skeleton_index(const hpmg_sem_mesh *m, const int64_t g[3]);
/* Element (c0, c1, c2) of element index e. */
static inline void hpmg_sem_element_coords(const hpmg_sem_mesh *m, int64_t e, int64_t c[3]) {
  c[0] = e % m->cells[0];
  c[1] = (e / m->cells[0]) % m->cells[1];
  c[2] = e / (m->cells[0] * m->cells[1]);
}
/* Widths of element e per direction (h[2] = 1 in 2D). */
void hpmg_sem_element_widths(const hpmg_sem_mesh *m, int64_t e, double h[3]);

/* Q_e: the boundary vector xb (el.nb) of element e from the skeleton vector x. */
void hpmg_sem_gather(const hpmg_sem_mesh *m, int64_t e, const double *x, double *xb);
/* Q_e^T: y += the boundary vector yb of element e. */
void hpmg_sem_scatter_add(const hpmg_sem_mesh *m, int64_t e, const double *yb, double *y);
/* Batches of W elements (sem_kernels.h), value k of lane l at k * W + l:
 * xb = the boundary vectors of elems[0..nl-1] (lanes nl..W-1 zero; masked:
 * Dirichlet entries zeroed), and y += those of yb, lane by lane. */
void hpmg_sem_gather_batch(const hpmg_sem_mesh *m, const int64_t *elems, int nl, int W, int masked,
                           const double *x, double *xb);
void hpmg_sem_scatter_add_batch(const hpmg_sem_mesh *m, const int64_t *elems, int nl, int W, const double *yb,
                                double *y);
/* Direct stiffness summation of element boundary vectors: y = sum_e Q_e^T
 * eb_e, eb holding ne * nb values (threads by colour). */
void hpmg_sem_dssum(const hpmg_sem_mesh *m, const double *eb, double *y);

/* y = Hhat x on the skeleton: masked (P Hhat P + I - P, the solver's
 * operator) or not (the plain sum of the element operators, for lifting
 * Dirichlet values). work: hpmg_sem_mesh_work_size doubles. */
void hpmg_sem_mesh_apply(const hpmg_sem_mesh *m, int masked, const double *x, double *y, double *work);
/* r = b - A x with A the masked operator (P Hhat P + I - P): one parallel
 * region in 3D (the subtraction after the colours), the same bits as
 * hpmg_sem_mesh_apply followed by r = b - y. r must not overlap b or x. */
void hpmg_sem_mesh_residual(const hpmg_sem_mesh *m, const double *b, const double *x, double *r, double *work);
/* Scratch the mesh routines need (all threads). */
size_t hpmg_sem_mesh_work_size(const hpmg_sem_mesh *m);
/* The exact diagonal of the masked global operator (1 at Dirichlet nodes). */
void hpmg_sem_mesh_diagonal(const hpmg_sem_mesh *m, double *diag, double *work);

/* The diagonal of the element's condensed operator Hhat_e (nb values), in
 * O(p^dim) per element: H_e's diagonal at the boundary nodes, minus, at face
 * node (t_hi, t_lo) of face (k, s),
 *   d_k^2 M_t_hi^2 M_t_lo^2 sum_{i,j,l} S_{t_lo,i}^2 S_{t_hi,j}^2 a_s[l]^2 / D(i, j, l)
 * (vertices and edges do not couple to the interior). work: hpmg_sem_work_size. */
void hpmg_sem_condensed_diagonal(const hpmg_sem_element *el, const double *d, double *diag, double *work);

#endif
