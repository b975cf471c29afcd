/* The star smoother's local solver (paper 001, Sec. 3): the exact inverse of
 * the condensed operator on one vertex-centred block of 2x2(x2) elements (the
 * "star"), applied by fast diagonalization of the full block restricted to
 * the star (Algorithm 1, 37 n^3 operations in 3D, n = 2p-1), and its
 * element-centred extension (3x3(x3) elements, n = 3p-1, 73 n^3). Method,
 * boundaries, weights and tests: docs/sem.md, "The star smoother".
 *
 * A block has ne elements per direction (2: vertex star, 3: element-centred)
 * and, per direction, n = ne*p - 1 points: the block's nodes without its two
 * outer ends (the local problem is homogeneous there). Point i of a direction
 * is node i+1 of the block; the ne-1 element interfaces inside the block, the
 * "planes", lie at the points c[j] = (j+1)*p - 1.
 *
 * Star-local layout (input f and output u of hpmg_sem_star_solve): the
 * condensed unknowns of the block are the points that lie on a plane in at
 * least one direction. They are stored face by face, nf = dim*(ne-1) faces;
 * face f = k*(ne-1) + j is the plane j normal to x_{k+1}, an n x n row-major
 * matrix (3D) whose rows run over the higher and columns over the lower of
 * the two tangential directions (as the faces of sem_element.h), or n values
 * along the tangential direction (2D). Face f starts at f * n^(dim-1).
 * A point on several planes (a line where faces cross, the star's vertex) is
 * stored once per face: on input every copy holds the point's value, on
 * output every copy holds the same value (that of the lowest face).
 *
 * Boundaries (paper Sec. 3.3), per direction and side: a side is an element
 * of the domain (an interior neighbour or the periodic wrap: nothing
 * changes), or a Neumann or Dirichlet boundary: the ghost element beyond it
 * is decoupled, and for Dirichlet also the boundary plane. Decoupled points
 * keep the same layout (identity padding of the 1D eigenvectors); their input
 * is ignored and their output is exactly zero. */
#ifndef HPMG_SEM_STAR_H
#define HPMG_SEM_STAR_H

#include "core/isa.h"
#include "disc/sem/sem_element.h"

typedef enum {
  HPMG_SEM_SIDE_ELEMENT = 0,  /* the neighbouring element belongs to the domain (interior or periodic) */
  HPMG_SEM_SIDE_NEUMANN = 1,  /* Neumann boundary: the ghost element is decoupled */
  HPMG_SEM_SIDE_DIRICHLET = 2 /* Dirichlet boundary: the ghost element and the boundary plane are decoupled */
} hpmg_sem_side;

#define HPMG_SEM_STAR_VERTEX 2  /* ne of the vertex star */
#define HPMG_SEM_STAR_ELEMENT 3 /* ne of the element-centred block */

/* The 1D block of one direction: assembled matrices of the ne elements
 * restricted to the n coupled-or-padded points, and their generalized
 * eigenproblem L S = M S Lambda, S^T M S = I on the coupled points
 * [lo, hi), identity (S = I, Lambda = 1) on the decoupled ones. */
typedef struct {
  int p, ne, n;  /* degree, elements, points n = ne*p - 1 */
  int ld;        /* row stride of S, ST: n rounded up to a multiple of 4 (full SIMD rows) */
  int np, c[2];  /* planes np = ne-1 at points c[0..np-1] */
  int lo, hi;    /* coupled points lo <= i < hi */
  int floating;  /* no Dirichlet end: both sides Neumann (element-centred only); Lambda_0 = 0 */
  double *M;     /* assembled mass (diagonal, n), zero where decoupled */
  double *L;     /* assembled stiffness, n x n row-major, zero where decoupled */
  double *S;     /* eigenvectors, n rows of ld: S[i*ld + a], point i, eigenvector a < n; 0 for a >= n */
  double *ST;    /* S transposed, same shape */
  double *lam;   /* eigenvalues (ld), ascending on [lo, hi), 1 where decoupled and beyond n */
  double *mask;  /* 1 on coupled, 0 on decoupled points (n) */
  double *onpl;  /* 1 on the planes' points, else 0 (n): multiplicity counts */
  double *w;     /* weights of the vertex star (n), degree-7 partition of unity; NULL for ne = 3 */
} hpmg_sem_block1d;

/* Build the block of one direction: ne = HPMG_SEM_STAR_VERTEX or
 * HPMG_SEM_STAR_ELEMENT elements of widths h[0..ne-1] (left to right; the
 * width of a boundary side's ghost element is not used), side[0] (left) and
 * side[1] (right) of kind hpmg_sem_side. A vertex star needs an element on at
 * least one side. el gives the degree and the 1D standard matrices. */
hpmg_error hpmg_sem_block1d_create(const hpmg_sem_element *el, int ne, const double *h, const int *side,
                                   hpmg_sem_block1d *b);
void hpmg_sem_block1d_free(hpmg_sem_block1d *b);
/* Bytes the block holds. */
size_t hpmg_sem_block1d_bytes(const hpmg_sem_block1d *b);

/* One star: dim blocks (not owned; stars of a mesh may share them) and the
 * Helmholtz coefficient lambda >= 0. hpmg_sem_star_init checks the blocks
 * (same p and ne) and refuses a singular block (lambda = 0 with every
 * direction floating); it allocates nothing. */
typedef struct {
  int dim, p, ne, n, ld, np, nf; /* the blocks' p, ne, n, ld, np; nf = dim*np faces */
  size_t fsize, size;            /* face: fsize = n^(dim-1) values; star-local vector: size = nf*fsize */
  double lambda;
  const hpmg_sem_block1d *b[3]; /* b[k]: direction x_{k+1} */
} hpmg_sem_star;

hpmg_error hpmg_sem_star_init(hpmg_sem_star *st, int dim, const hpmg_sem_block1d *const *b, double lambda);

/* Doubles of scratch hpmg_sem_star_solve and hpmg_sem_star_solve_tpf take. */
size_t hpmg_sem_star_work_size(const hpmg_sem_star *st);
size_t hpmg_sem_star_tpf_work_size(const hpmg_sem_star *st);

/* u = Hhat_star^{-1} f in the star-local layout (Algorithm 1): the inverse of
 * the block's condensed operator with homogeneous Dirichlet values on the
 * block boundary, by fast diagonalization restricted to the faces: in 3D
 * 8 nf n^3 operations for the face transforms (there and back), (2 nf + 1) n^3
 * in eigenspace, 2 nf n^3 for the contractions (vertex star: 37 n^3,
 * element-centred: 73 n^3; 2D: O(n^2)). f and u must not overlap; work holds
 * hpmg_sem_star_work_size doubles. */
void hpmg_sem_star_solve(const hpmg_sem_star *st, const double *f, double *u, double *work);

/* Vertex stars in lanes: `lanes` 3D vertex stars of one degree solved at
 * once, star l in lane l of every vector (the smoother's stars of small p,
 * whose one-star solve is bound by its loops' overhead; docs/sem.md, "The
 * star smoother over a mesh"). Per direction d the stars' 1D blocks
 * interleaved: S[d][(i n + a) lanes + l] = S_l[i][a] (n x n, without the
 * row padding), lam[d][a lanes + l], mask[d][i lanes + l]; onpl[d] the
 * blocks' plane flags (the same for every vertex star, at c = p - 1).
 * Star-local vectors interleaved the same way: value t of star l (the
 * layout of hpmg_sem_star_solve) at t lanes + l. */
typedef struct {
  int n, c, lanes; /* points per direction (2p - 1), the plane's point c = p - 1, stars */
  double lambda;
  const double *S[3], *lam[3], *mask[3], *onpl[3];
} hpmg_sem_star_lanes;

/* Doubles of scratch of the lanes' solve (7 n^2 lanes). */
static inline size_t hpmg_sem_star_lanes_work_size(int n, int lanes) { return 7 * (size_t)n * n * lanes; }

/* The star kernels, compiled once per instruction set (sem_star_kernels.c;
 * core/isa.h): the vectors of the target's width. */
typedef struct {
  /* lanes of the vectors (doubles): the number of stars `solve_lanes` takes */
  int lanes;
  /* u = Hhat^{-1} f for L->lanes stars at once (Algorithm 1 on lane vectors,
   * the full loops over n: the decoupled points come out exactly 0 as in
   * `solve`; the same results to rounding); L->lanes must be `lanes`; work
   * holds hpmg_sem_star_lanes_work_size doubles */
  void (*solve_lanes)(const hpmg_sem_star_lanes *L, const double *f, double *u, double *work);
  /* hpmg_sem_star_solve */
  void (*solve)(const hpmg_sem_star *st, const double *f, double *u, double *work);
  /* u = Z f for a star's dense inverse Z (the smoother's small stars): ZT
   * holds Z^T, n rows of ld doubles, ld a multiple of 32 */
  void (*dense)(const double *ZT, size_t n, size_t ld, const double *f, double *u);
} hpmg_sem_star_kernels;

HPMG_ISA_TABLE(hpmg_sem_star_kernels, hpmg_sem_star_kernels)

/* the two tangential directions of a 3D face normal to x_{k+1}: rows (the
 * higher), columns (the lower) */
static inline void hpmg_sem_face_dirs(int k, int *R, int *C) {
  *R = k == 2 ? 1 : 2;
  *C = k == 0 ? 1 : 0;
}

/* The same inverse by fast diagonalization of the full block
 * ((S^T)^{(x)dim}, D^{-1}, S^{(x)dim} on all n^dim points, 4 dim n^{dim+1}
 * operations: "TPF" of the paper), the reference for hpmg_sem_star_solve. */
void hpmg_sem_star_solve_tpf(const hpmg_sem_star *st, const double *f, double *u, double *work);

/* Floating-point operations of one hpmg_sem_star_solve / _tpf, as the kernels count them. */
double hpmg_sem_star_flops(const hpmg_sem_star *st);
double hpmg_sem_star_tpf_flops(const hpmg_sem_star *st);

/* The smooth weight of paper 001 (degree p_W = 7) at distance t in [0, 1]
 * from the star's vertex, in units of the element width:
 * w(t) = 1 - t^4 (35 - 84 t + 70 t^2 - 20 t^3), w(0) = 1, w(1) = 0, the
 * derivatives 1..3 vanish at both ends, and w(t) + w(1-t) = 1. */
double hpmg_sem_weight7(double t);

/* u *= W restricted to the star's faces (W = w_3 (x) w_2 (x) w_1 of the
 * blocks' weights): the weighting of Algorithm 2 before the scatter. Vertex
 * stars only (HPMG_ERR_ARG for the element-centred block). */
hpmg_error hpmg_sem_star_weigh(const hpmg_sem_star *st, double *u);

#endif
