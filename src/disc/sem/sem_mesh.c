/* The skeleton of spectral elements on a Cartesian mesh: numbering, gather /
 * scatter, boundary conditions, colours, the global condensed operator and
 * its diagonal (layout: sem_mesh.h; docs/sem.md). */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include "disc/sem/sem_mesh.h"
#include "disc/sem/sem_kernels.h"

static const char *const dir_names[3] = {"x", "y", "z"};

/* lexicographic index of tuple J in a box of sizes s, J0 fastest */
static inline int64_t lin3(const int64_t J[3], const int64_t s[3]) { return J[0] + s[0] * (J[1] + s[1] * J[2]); }

/* per direction: vertex indices (1) or cell indices (0) */
static void entity_sizes(const hpmg_sem_mesh *m, const int vert[3], int64_t s[3]) {
  for (int d = 0; d < 3; d++) s[d] = d >= m->dim ? 1 : vert[d] ? m->nv[d] : m->cells[d];
}

static int64_t vertex_offset(const hpmg_sem_mesh *m, const int64_t J[3]) {
  const int v[3] = {1, 1, 1};
  int64_t s[3];
  entity_sizes(m, v, s);
  return m->off_vert + lin3(J, s);
}
static int64_t edge_offset(const hpmg_sem_mesh *m, int k, const int64_t J[3]) {
  int v[3] = {1, 1, 1};
  v[k] = 0;
  int64_t s[3];
  entity_sizes(m, v, s);
  return m->off_edge[k] + (int64_t)m->el.m * lin3(J, s);
}
static int64_t face_offset(const hpmg_sem_mesh *m, int k, const int64_t J[3]) {
  int v[3] = {0, 0, 0};
  v[k] = 1;
  int64_t s[3];
  entity_sizes(m, v, s);
  const int64_t mf = m->dim == 3 ? (int64_t)m->el.m * m->el.m : m->el.m;
  return m->off_face[k] + mf * lin3(J, s);
}

int64_t hpmg_sem_skeleton_index(const hpmg_sem_mesh *m, const int64_t g[3]) {
  const int p = m->p, mm = m->el.m;
  int64_t I[3] = {0, 0, 0}, r[3] = {0, 0, 0};
  int on = 0, off[3], noff = 0;
  for (int d = 0; d < m->dim; d++) {
    I[d] = g[d] / p;
    r[d] = g[d] % p;
    if (r[d] == 0) on++;
    else off[noff++] = d;
  }
  if (noff == 0) return vertex_offset(m, I);
  if (m->dim == 3 && noff == 1) return edge_offset(m, off[0], I) + r[off[0]] - 1;
  if (noff == m->dim) return -1;
  int k = 0; /* the one direction on an element boundary: the face normal */
  for (int d = 0; d < m->dim; d++)
    if (r[d] == 0) k = d;
  const int64_t base = face_offset(m, k, I);
  if (m->dim == 2) return base + r[off[0]] - 1;
  return base + (r[off[1]] - 1) * mm + (r[off[0]] - 1); /* rows: the higher tangential direction */
}

void hpmg_sem_element_widths(const hpmg_sem_mesh *m, int64_t e, double h[3]) {
  int64_t c[3];
  hpmg_sem_element_coords(m, e, c);
  for (int d = 0; d < 3; d++) h[d] = d < m->dim ? m->x[d][c[d] + 1] - m->x[d][c[d]] : 1.0;
}

/* the entities of element c in boundary-vector order */
static void element_entities(const hpmg_sem_mesh *m, const int64_t c[3], int64_t *ent) {
  int j = 0;
  const int dim = m->dim;
  const int nvert = dim == 3 ? 8 : 4;
  for (int v = 0; v < nvert; v++) {
    int64_t J[3] = {0, 0, 0};
    for (int d = 0; d < dim; d++) J[d] = (c[d] + ((v >> d) & 1)) % m->nv[d];
    ent[j++] = vertex_offset(m, J);
  }
  if (dim == 3)
    for (int k = 0; k < 3; k++) { /* edges along x_k; corner bits over the other two, lower first */
      const int a = k == 0 ? 1 : 0, b = k == 2 ? 1 : 2;
      for (int q = 0; q < 4; q++) {
        int64_t J[3];
        J[k] = c[k];
        J[a] = (c[a] + (q & 1)) % m->nv[a];
        J[b] = (c[b] + ((q >> 1) & 1)) % m->nv[b];
        ent[j++] = edge_offset(m, k, J);
      }
    }
  for (int k = 0; k < dim; k++)
    for (int s = 0; s < 2; s++) {
      int64_t J[3] = {c[0], c[1], dim == 3 ? c[2] : 0};
      J[k] = (c[k] + s) % m->nv[k];
      ent[j++] = face_offset(m, k, J);
    }
}

void hpmg_sem_mesh_destroy(hpmg_sem_mesh *m) {
  hpmg_sem_element_free(&m->el);
  for (int d = 0; d < 3; d++) hpmg_free(&m->x[d]);
  hpmg_free(&m->coef);
  hpmg_free(&m->ent);
  hpmg_free(&m->mult);
  hpmg_free(&m->dirichlet);
  hpmg_free(&m->edir);
  hpmg_free(&m->color_ptr);
  hpmg_free(&m->color_elems);
}

double hpmg_sem_mesh_bytes(const hpmg_sem_mesh *m) {
  return (double)m->ne * ((m->dim + 1) * 8.0 + m->nent * 8.0 + 8.0 + (m->edir ? 1.0 : 0.0)) +
         (double)m->ns * (1.0 + (m->dirichlet ? 1.0 : 0.0)) + 8.0 * (double)(m->cells[0] + m->cells[1] + m->cells[2] + 3);
}

static int color_of(const hpmg_sem_mesh *m, int d, int64_t c) {
  if (m->periodic[d] && m->cells[d] % 2 == 1 && c == m->cells[d] - 1) return 2;
  return (int)(c % 2);
}

static int element_colour(const hpmg_sem_mesh *m, int64_t el) {
  int64_t c[3];
  hpmg_sem_element_coords(m, el, c);
  return color_of(m, 0, c[0]) + 3 * (color_of(m, 1, c[1]) + 3 * color_of(m, 2, c[2]));
}

void hpmg_sem_colour_buckets(const hpmg_sem_mesh *m, int64_t n, int (*colour)(const hpmg_sem_mesh *, int64_t),
                             int64_t *ptr, int64_t *items, int *ncolors) {
  int64_t cnt[27] = {0}, next[27];
  for (int64_t i = 0; i < n; i++) cnt[colour(m, i)]++;
  int nc = 0;
  int64_t pos = 0;
  for (int k = 0; k < 27; k++) {
    next[k] = pos;
    if (cnt[k]) ptr[nc++] = pos, pos += cnt[k];
  }
  ptr[nc] = n;
  for (int64_t i = 0; i < n; i++) items[next[colour(m, i)]++] = i;
  *ncolors = nc;
}

hpmg_error hpmg_sem_mesh_create(const hpmg_box *b, int p, double lambda, hpmg_sem_mesh *m) {
  HPMG_CHECK_ARG(m && b, "sem mesh: NULL argument");
  memset(m, 0, sizeof *m);
  hpmg_par_init();
  HPMG_CHECK_ARG(b->dim == 2 || b->dim == 3, "sem mesh: dimension %d (2 or 3)", b->dim);
  HPMG_CHECK_ARG(p >= HPMG_SEM_MIN_DEGREE && p <= HPMG_SEM_MAX_DEGREE, "--degree %d out of range for spectral elements (%d..%d)",
                 p, HPMG_SEM_MIN_DEGREE, HPMG_SEM_MAX_DEGREE);
  HPMG_CHECK_ARG(lambda >= 0 && isfinite(lambda), "--lambda must be >= 0 and finite (got %g)", lambda);
  const int dim = b->dim;
  double nlat = 1, ns = 0;
  for (int d = 0; d < dim; d++) {
    const int per = b->bc[2 * d] == HPMG_BC_PERIODIC;
    HPMG_CHECK_ARG(!per || b->cells[d] >= 3,
                   "spectral elements: periodic direction %s needs at least 3 elements (got %lld), so that no element is "
                   "its own neighbour's neighbour across the wrap",
                   dir_names[d], (long long)b->cells[d]);
    for (int64_t i = 0; i < b->cells[d]; i++)
      HPMG_CHECK_ARG(b->x[d][i + 1] - b->x[d][i] > 0, "spectral elements: element %lld in %s has width %g (must be positive)",
                     (long long)i, dir_names[d], b->x[d][i + 1] - b->x[d][i]);
    nlat *= (double)b->cells[d] * p + (per ? 0 : 1);
  }
  {
    double c[3] = {1, 1, 1};
    for (int d = 0; d < dim; d++) c[d] = (double)b->cells[d];
    const double mm = p - 1;
    ns = nlat - c[0] * c[1] * c[2] * pow(mm, dim);
  }
  HPMG_CHECK_ARG(nlat < 4.0e18 && ns < 4.0e18, "spectral elements: %.3g nodes overflow 64-bit indices", nlat);
  HPMG_CALL(hpmg_sem_element_create(dim, p, &m->el));
  m->dim = dim;
  m->p = p;
  m->lambda = lambda;
  m->ne = 1;
  for (int d = 0; d < 3; d++) {
    m->cells[d] = d < dim ? b->cells[d] : 1;
    m->periodic[d] = d < dim && b->bc[2 * d] == HPMG_BC_PERIODIC;
    m->nv[d] = d < dim ? m->cells[d] + !m->periodic[d] : 1;
    m->nlat[d] = d < dim ? m->cells[d] * p + !m->periodic[d] : 1;
    m->ne *= m->cells[d];
  }
  for (int f = 0; f < 6; f++) m->bc[f] = b->bc[f];
  m->nlat_total = m->nlat[0] * m->nlat[1] * m->nlat[2];
  /* skeleton blocks */
  const int64_t mm = m->el.m, mf = dim == 3 ? mm * mm : mm;
  int64_t off = 0;
  m->off_vert = 0;
  off += m->nv[0] * m->nv[1] * m->nv[2];
  for (int k = 0; k < 3; k++) {
    m->off_edge[k] = off;
    if (dim == 3) {
      int64_t cnt = mm;
      for (int d = 0; d < 3; d++) cnt *= d == k ? m->cells[d] : m->nv[d];
      off += cnt;
    }
  }
  for (int k = 0; k < 3; k++) {
    m->off_face[k] = off;
    if (k < dim) {
      int64_t cnt = mf;
      for (int d = 0; d < 3; d++) cnt *= d == k ? m->nv[d] : m->cells[d];
      off += cnt;
    }
  }
  m->ns = off;
  /* entity lengths and positions in the boundary vector */
  m->nent = dim == 3 ? 26 : 8;
  {
    int j = 0, pos = 0;
    for (int v = 0; v < (dim == 3 ? 8 : 4); v++, j++) m->ent_len[j] = 1, m->ent_pos[j] = pos++;
    for (int q = 0; q < (dim == 3 ? 12 : 0); q++, j++) m->ent_len[j] = (int)mm, m->ent_pos[j] = pos, pos += (int)mm;
    for (int f = 0; f < 2 * dim; f++, j++) m->ent_len[j] = (int)mf, m->ent_pos[j] = pos, pos += (int)mf;
  }
  hpmg_error e = HPMG_SUCCESS;
  for (int d = 0; d < 3 && !e; d++) {
    e = hpmg_malloc(sizeof(double) * (size_t)(m->cells[d] + 1), &m->x[d]);
    if (!e) {
      if (d < dim) memcpy(m->x[d], b->x[d], sizeof(double) * (size_t)(m->cells[d] + 1));
      else m->x[d][0] = 0, m->x[d][1] = 1;
    }
  }
  if (!e) e = hpmg_malloc(sizeof(double) * (size_t)(m->ne * (dim + 1)), &m->coef);
  if (!e) e = hpmg_malloc(sizeof(int64_t) * (size_t)(m->ne * m->nent), &m->ent);
  if (!e) e = hpmg_calloc((size_t)m->ns, &m->mult);
  if (!e) e = hpmg_malloc(sizeof(int64_t) * 28, &m->color_ptr);
  if (!e) e = hpmg_malloc(sizeof(int64_t) * (size_t)m->ne, &m->color_elems);
  if (e) {
    hpmg_sem_mesh_destroy(m);
    return e;
  }
  /* per element: coefficients, entities */
  for (int64_t el = 0; el < m->ne; el++) {
    int64_t c[3];
    double h[3];
    hpmg_sem_element_coords(m, el, c);
    hpmg_sem_element_widths(m, el, h);
    hpmg_sem_coefficients(dim, h, lambda, m->coef + el * (dim + 1));
    element_entities(m, c, m->ent + el * m->nent);
  }
  hpmg_sem_colour_buckets(m, m->ne, element_colour, m->color_ptr, m->color_elems, &m->ncolors);
  /* multiplicities */
  for (int64_t el = 0; el < m->ne; el++)
    for (int j = 0; j < m->nent; j++) {
      const int64_t o = m->ent[el * m->nent + j];
      for (int t = 0; t < m->ent_len[j]; t++) m->mult[o + t]++;
    }
  /* Dirichlet nodes: the lattice planes of the Dirichlet faces */
  int anyd = 0;
  for (int f = 0; f < 2 * dim; f++) anyd |= m->bc[f] == HPMG_BC_DIRICHLET;
  if (anyd) {
    e = hpmg_calloc((size_t)m->ns, &m->dirichlet);
    if (!e) e = hpmg_calloc((size_t)m->ne, &m->edir);
    if (e) {
      hpmg_sem_mesh_destroy(m);
      return e;
    }
    for (int f = 0; f < 2 * dim; f++) {
      if (m->bc[f] != HPMG_BC_DIRICHLET) continue;
      const int k = f / 2, a = k == 0 ? 1 : 0, bb = k == 2 ? 1 : 2;
      const int64_t gk = (f & 1) ? m->nlat[k] - 1 : 0;
      for (int64_t ib = 0; ib < m->nlat[bb]; ib++)
        for (int64_t ia = 0; ia < m->nlat[a]; ia++) {
          int64_t g[3];
          g[k] = gk, g[a] = ia, g[bb] = ib;
          const int64_t s = hpmg_sem_skeleton_index(m, g);
          m->ndir += !m->dirichlet[s];
          m->dirichlet[s] = 1;
        }
    }
    for (int64_t el = 0; el < m->ne; el++) {
      int64_t c[3];
      hpmg_sem_element_coords(m, el, c);
      for (int d = 0; d < dim; d++)
        if ((c[d] == 0 && m->bc[2 * d] == HPMG_BC_DIRICHLET) ||
            (c[d] == m->cells[d] - 1 && m->bc[2 * d + 1] == HPMG_BC_DIRICHLET))
          m->edir[el] = 1;
    }
  }
  m->ws = hpmg_sem_work_size(&m->el);
  return HPMG_SUCCESS;
}

/* ------------------------------------------------------------ gather/scatter */

void hpmg_sem_gather(const hpmg_sem_mesh *m, int64_t e, const double *x, double *xb) {
  const int64_t *ent = m->ent + e * m->nent;
  for (int j = 0; j < m->nent; j++) memcpy(xb + m->ent_pos[j], x + ent[j], sizeof(double) * (size_t)m->ent_len[j]);
}

void hpmg_sem_scatter_add(const hpmg_sem_mesh *m, int64_t e, const double *yb, double *y) {
  const int64_t *ent = m->ent + e * m->nent;
  for (int j = 0; j < m->nent; j++) {
    double *dst = y + ent[j];
    const double *src = yb + m->ent_pos[j];
    for (int t = 0; t < m->ent_len[j]; t++) dst[t] += src[t];
  }
}

/* zero the Dirichlet entries of element e's boundary vector */
static void mask_element(const hpmg_sem_mesh *m, int64_t e, double *xb) {
  const int64_t *ent = m->ent + e * m->nent;
  for (int j = 0; j < m->nent; j++) {
    const uint8_t *dm = m->dirichlet + ent[j];
    double *v = xb + m->ent_pos[j];
    for (int t = 0; t < m->ent_len[j]; t++)
      if (dm[t]) v[t] = 0.0;
  }
}

/* the work of one colour of m's elements: elements per colour times flops per element */
static double colour_work(const hpmg_sem_mesh *m) {
  return (double)m->ne / (m->ncolors > 0 ? m->ncolors : 1) * hpmg_sem_condensed_flops(&m->el);
}

/* the operator runs batches of elements (sem_kernels.h) in 3D: measured
 * 1.5-2.6x faster than element by element for every degree from 2 to 32
 * (docs/sem.md, "Time and memory") */
static int batched(const hpmg_sem_mesh *m) { return m->dim == 3; }

/* doubles of scratch per thread: the element kernels', or the batch's
 * interleaved input, output and coefficients and its kernel scratch (a
 * multiple of the lanes, so that every thread's part stays aligned) */
static size_t thread_work(const hpmg_sem_mesh *m) {
  const size_t single = 2 * (size_t)m->el.nb + m->ws;
  if (!batched(m)) return single;
  const size_t W = (size_t)hpmg_sem_kernels_select()->lanes;
  const size_t batch = W * (2 * (size_t)m->el.nb + 4) + hpmg_sem_batch_work_size(&m->el, (int)W);
  const size_t s = single > batch ? single : batch;
  return (s + W - 1) / W * W;
}

size_t hpmg_sem_mesh_work_size(const hpmg_sem_mesh *m) { return (size_t)omp_get_max_threads() * thread_work(m); }

void hpmg_sem_dssum(const hpmg_sem_mesh *m, const double *eb, double *y) {
  const int64_t ns = m->ns, nb = m->el.nb;
#pragma omp parallel if (hpmg_par((double)ns + (double)m->ne / (m->ncolors > 0 ? m->ncolors : 1) * nb))
  {
#pragma omp for schedule(static)
    for (int64_t i = 0; i < ns; i++) y[i] = 0.0;
    for (int col = 0; col < m->ncolors; col++) {
#pragma omp for schedule(static)
      for (int64_t i = m->color_ptr[col]; i < m->color_ptr[col + 1]; i++) {
        const int64_t e = m->color_elems[i];
        hpmg_sem_scatter_add(m, e, eb + e * nb, y);
      }
    }
  }
}

/* the element routine of the coloured loops: yb from xb for element e */
typedef void (*elem_fn)(const hpmg_sem_element *el, const double *d, const double *xb, double *yb, double *work);

static void diag_fn(const hpmg_sem_element *el, const double *d, const double *xb, double *yb, double *work) {
  (void)xb;
  hpmg_sem_condensed_diagonal(el, d, yb, work);
}

/* y = sum_e Q_e^T fn_e(Q_e x); masked: Dirichlet entries of Q_e x zeroed */
static void coloured(const hpmg_sem_mesh *m, int masked, elem_fn fn, const double *x, double *y, double *work) {
  const int64_t ns = m->ns, nb = m->el.nb;
  const int dc = m->dim + 1;
  const int mask = masked && m->dirichlet;
#pragma omp parallel if (hpmg_par(colour_work(m)))
  {
    double *xb = work + (size_t)omp_get_thread_num() * thread_work(m), *yb = xb + nb, *wk = yb + nb;
#pragma omp for schedule(static)
    for (int64_t i = 0; i < ns; i++) y[i] = 0.0;
    for (int col = 0; col < m->ncolors; col++) {
#pragma omp for schedule(static)
      for (int64_t i = m->color_ptr[col]; i < m->color_ptr[col + 1]; i++) {
        const int64_t e = m->color_elems[i];
        if (x) {
          hpmg_sem_gather(m, e, x, xb);
          if (mask && m->edir[e]) mask_element(m, e, xb);
        }
        fn(&m->el, m->coef + e * dc, xb, yb, wk);
        hpmg_sem_scatter_add(m, e, yb, y);
      }
    }
  }
}

void hpmg_sem_gather_batch(const hpmg_sem_mesh *m, const int64_t *elems, int nl, int W, int masked,
                           const double *x, double *xb) {
  const int nent = m->nent;
  for (int l = 0; l < W; l++) {
    if (l >= nl) {
      for (int k = 0; k < m->el.nb; k++) xb[(size_t)k * W + l] = 0.0;
      continue;
    }
    const int64_t e = elems[l], *ent = m->ent + e * nent;
    const int me = masked && m->dirichlet && m->edir[e];
    for (int j = 0; j < nent; j++) {
      const double *src = x + ent[j];
      double *dst = xb + (size_t)m->ent_pos[j] * W + l;
      const int len = m->ent_len[j];
      if (me) {
        const uint8_t *dm = m->dirichlet + ent[j];
        for (int t = 0; t < len; t++) dst[(size_t)t * W] = dm[t] ? 0.0 : src[t];
      } else
        for (int t = 0; t < len; t++) dst[(size_t)t * W] = src[t];
    }
  }
}

void hpmg_sem_scatter_add_batch(const hpmg_sem_mesh *m, const int64_t *elems, int nl, int W, const double *yb,
                                double *y) {
  const int nent = m->nent;
  for (int l = 0; l < nl; l++) {
    const int64_t *ent = m->ent + elems[l] * nent;
    for (int j = 0; j < nent; j++) {
      double *dst = y + ent[j];
      const double *src = yb + (size_t)m->ent_pos[j] * W + l;
      const int len = m->ent_len[j];
      for (int t = 0; t < len; t++) dst[t] += src[(size_t)t * W];
    }
  }
}

/* y = sum_e Q_e^T Hhat_e Q_e x by batches of `lanes` consecutive elements of
 * a colour (the last batch of a colour padded with zero input and the first
 * lane's coefficients), interleaved (sem_kernels.h); the scatter adds the
 * lanes in element order, so y gets the same additions in the same order as
 * element by element */
static void coloured_batched(const hpmg_sem_mesh *m, int masked, const double *b, const double *x, double *y,
                             double *work) {
  const hpmg_sem_kernels *K = hpmg_sem_kernels_select();
  const int W = K->lanes, nb = m->el.nb, dc = m->dim + 1;
  const int64_t ns = m->ns;
  const int mask = masked && m->dirichlet;
  const size_t tw = thread_work(m);
#pragma omp parallel if (hpmg_par(colour_work(m)))
  {
    double *xb = work + (size_t)omp_get_thread_num() * tw, *yb = xb + (size_t)W * nb, *dv = yb + (size_t)W * nb,
           *wk = dv + (size_t)W * 4;
#pragma omp for schedule(static)
    for (int64_t i = 0; i < ns; i++) y[i] = 0.0;
    for (int col = 0; col < m->ncolors; col++) {
      const int64_t c0 = m->color_ptr[col], nbat = (m->color_ptr[col + 1] - c0 + W - 1) / W;
#pragma omp for schedule(static)
      for (int64_t bt = 0; bt < nbat; bt++) {
        const int64_t q0 = c0 + bt * W;
        const int nl = (int)(m->color_ptr[col + 1] - q0 < W ? m->color_ptr[col + 1] - q0 : W);
        for (int l = 0; l < W; l++) {
          const int64_t e = m->color_elems[q0 + (l < nl ? l : 0)];
          for (int j = 0; j < dc; j++) dv[j * W + l] = m->coef[e * dc + j];
        }
        hpmg_sem_gather_batch(m, m->color_elems + q0, nl, W, mask, x, xb);
        K->condensed_apply(&m->el, dv, xb, yb, wk);
        hpmg_sem_scatter_add_batch(m, m->color_elems + q0, nl, W, yb, y);
      }
    }
    /* the last loop of the region: its end joins the threads, so no barrier of its own */
    if (b) { /* the residual b - A x, in the same region */
#pragma omp for schedule(static) nowait
      for (int64_t i = 0; i < ns; i++) y[i] = b[i] - (mask && m->dirichlet[i] ? x[i] : y[i]);
    } else if (mask) { /* the Dirichlet rows: the identity, in the same region */
#pragma omp for schedule(static) nowait
      for (int64_t i = 0; i < ns; i++)
        if (m->dirichlet[i]) y[i] = x[i];
    }
  }
}

void hpmg_sem_mesh_apply(const hpmg_sem_mesh *m, int masked, const double *x, double *y, double *work) {
  if (batched(m)) {
    coloured_batched(m, masked, NULL, x, y, work);
    return;
  }
  coloured(m, masked, hpmg_sem_condensed_apply, x, y, work);
  if (masked && m->dirichlet) {
    const int64_t ns = m->ns;
#pragma omp parallel for schedule(static) if (hpmg_par((double)ns))
    for (int64_t i = 0; i < ns; i++)
      if (m->dirichlet[i]) y[i] = x[i];
  }
}

void hpmg_sem_mesh_residual(const hpmg_sem_mesh *m, const double *b, const double *x, double *r, double *work) {
  if (batched(m)) {
    coloured_batched(m, 1, b, x, r, work);
    return;
  }
  hpmg_sem_mesh_apply(m, 1, x, r, work);
  const int64_t ns = m->ns;
#pragma omp parallel for schedule(static) if (hpmg_par((double)ns))
  for (int64_t i = 0; i < ns; i++) r[i] = b[i] - r[i];
}

void hpmg_sem_mesh_diagonal(const hpmg_sem_mesh *m, double *diag, double *work) {
  coloured(m, 0, diag_fn, NULL, diag, work);
  if (m->dirichlet)
    for (int64_t i = 0; i < m->ns; i++)
      if (m->dirichlet[i]) diag[i] = 1.0;
}

/* ------------------------------------------------- the element's diagonal */

void hpmg_sem_condensed_diagonal(const hpmg_sem_element *el, const double *d, double *diag, double *work) {
  const int n = el->n, m = el->m, dim = el->dim;
  const double *M = el->M, *L = el->L, *lam = el->lam;
  for (int k = 0; k < el->nb; k++) {
    const int r = el->bmap[k], i1 = r % n, i2 = (r / n) % n, i3 = r / (n * n);
    if (dim == 2)
      diag[k] = d[0] * M[i1] * M[i2] + d[1] * M[i2] * L[i1 * n + i1] + d[2] * L[i2 * n + i2] * M[i1];
    else
      diag[k] = d[0] * M[i1] * M[i2] * M[i3] + d[1] * M[i3] * M[i2] * L[i1 * n + i1] +
                d[2] * M[i3] * L[i2 * n + i2] * M[i1] + d[3] * L[i3 * n + i3] * M[i2] * M[i1];
  }
  if (m == 0) return;
  double *S2 = work, *T = S2 + m * m, *A = T + m * m;
  for (int i = 0; i < m * m; i++) S2[i] = el->S[i] * el->S[i];
  const int mf = dim == 3 ? m * m : m;
  for (int k = 0; k < dim; k++)
    for (int s = 0; s < 2; s++) {
      const double *as = el->a[s];
      double *df = diag + el->face_offset + (2 * k + s) * mf;
      const double c = d[k + 1] * d[k + 1];
      if (dim == 2) { /* tangential direction t = 1 - k */
        for (int i = 0; i < m; i++) {
          double t = 0;
          for (int l = 0; l < m; l++) {
            const double D = k == 0 ? d[0] + d[1] * lam[l] + d[2] * lam[i] : d[0] + d[1] * lam[i] + d[2] * lam[l];
            t += as[l] * as[l] / D;
          }
          T[i] = t;
        }
        for (int t = 0; t < m; t++) {
          double v = 0;
          for (int i = 0; i < m; i++) v += S2[t * m + i] * T[i];
          df[t] -= c * M[t + 1] * M[t + 1] * v;
        }
        continue;
      }
      const int lo = k == 0 ? 1 : 0, hi = k == 2 ? 1 : 2;
      /* T[i][j] = sum_l a_s[l]^2 / D, eigen index i along lo, j along hi, l along k */
      for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++) {
          double t = 0;
          for (int l = 0; l < m; l++) {
            int e3[3];
            e3[lo] = i, e3[hi] = j, e3[k] = l;
            t += as[l] * as[l] / (d[0] + d[1] * lam[e3[0]] + d[2] * lam[e3[1]] + d[3] * lam[e3[2]]);
          }
          T[i * m + j] = t;
        }
      for (int tl = 0; tl < m; tl++) /* A[tl][j] = sum_i S2[tl][i] T[i][j] */
        for (int j = 0; j < m; j++) {
          double v = 0;
          for (int i = 0; i < m; i++) v += S2[tl * m + i] * T[i * m + j];
          A[tl * m + j] = v;
        }
      for (int th = 0; th < m; th++)
        for (int tl = 0; tl < m; tl++) {
          double v = 0;
          for (int j = 0; j < m; j++) v += S2[th * m + j] * A[tl * m + j];
          df[th * m + tl] -= c * M[th + 1] * M[th + 1] * M[tl + 1] * M[tl + 1] * v;
        }
    }
}
