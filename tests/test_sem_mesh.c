/* Spectral elements on a Cartesian mesh (src/disc/sem/sem_mesh.h): the
 * skeleton numbering against the GLL lattice, gather/scatter and
 * multiplicities, colours, and the global condensed operator and its
 * diagonal against the dense Schur complement of the assembled global
 * matrix (LAPACKE Cholesky of the global interior block), for 2D and 3D,
 * every BC kind, stretched widths, lambda = 0 and > 0.
 * Argument "full": also p = 12 in 3D (label slow). */
#include <lapacke.h>
#include <omp.h>
#include <string.h>
#include "check.h"
#include "sem_test_mesh.h"
#include "disc/sem/sem_mesh.h"

/* lattice index of element e's local node r */
static int64_t lattice_of(const hpmg_sem_mesh *m, int64_t e, int r, int64_t g[3]) {
  int64_t c[3];
  hpmg_sem_element_coords(m, e, c);
  const int n = m->el.n;
  int i[3] = {r % n, (r / n) % n, r / (n * n)};
  for (int d = 0; d < 3; d++) g[d] = d < m->dim ? (c[d] * m->p + i[d]) % m->nlat[d] : 0;
  return g[0] + m->nlat[0] * (g[1] + m->nlat[1] * g[2]);
}

/* numbering, gather/scatter, multiplicities, colours */
static void check_layout(const hpmg_sem_mesh *m, const char *name) {
  const int64_t N = m->nlat_total, ns = m->ns;
  const int nb = m->el.nb;
  int64_t *s_of = malloc(sizeof(int64_t) * (size_t)N), *hits = calloc((size_t)ns, sizeof(int64_t));
  int *cnt = calloc((size_t)N, sizeof(int));
  int bad_bij = 0, bad_map = 0;
  for (int64_t i = 0; i < N; i++) {
    int64_t g[3] = {i % m->nlat[0], (i / m->nlat[0]) % m->nlat[1], i / (m->nlat[0] * m->nlat[1])};
    s_of[i] = hpmg_sem_skeleton_index(m, g);
    if (s_of[i] >= ns) bad_bij++;
    else if (s_of[i] >= 0) hits[s_of[i]]++;
  }
  for (int64_t s = 0; s < ns; s++) bad_bij += hits[s] != 1;
  CHECK(bad_bij == 0, "%s: lattice boundary nodes -> skeleton is not a bijection (%d bad)", name, bad_bij);
  /* gather through the entity blocks = gather through the lattice */
  double *x = malloc(sizeof(double) * (size_t)ns), *y = malloc(sizeof(double) * (size_t)ns), *xb = malloc(sizeof(double) * nb);
  for (int64_t s = 0; s < ns; s++) x[s] = (double)s;
  for (int64_t e = 0; e < m->ne; e++) {
    hpmg_sem_gather(m, e, x, xb);
    for (int k = 0; k < nb; k++) {
      int64_t g[3];
      const int64_t li = lattice_of(m, e, m->el.bmap[k], g);
      bad_map += xb[k] != (double)s_of[li];
      cnt[li]++;
    }
    for (int k = 0; k < m->el.ni; k++) {
      int64_t g[3];
      bad_map += s_of[lattice_of(m, e, m->el.imap[k], g)] != -1;
    }
  }
  CHECK(bad_map == 0, "%s: element entity blocks disagree with the lattice numbering (%d entries)", name, bad_map);
  int bad_mult = 0;
  for (int64_t i = 0; i < N; i++)
    if (s_of[i] >= 0) bad_mult += cnt[i] != m->mult[s_of[i]];
  CHECK(bad_mult == 0, "%s: multiplicities differ from the element count per node (%d)", name, bad_mult);
  /* dssum(gather(x)) = mult .* x */
  double *eb = malloc(sizeof(double) * (size_t)(m->ne * nb));
  for (int64_t s = 0; s < ns; s++) x[s] = check_rand();
  for (int64_t e = 0; e < m->ne; e++) hpmg_sem_gather(m, e, x, eb + e * nb);
  hpmg_sem_dssum(m, eb, y);
  double err = 0;
  for (int64_t s = 0; s < ns; s++) err = fmax(err, fabs(y[s] - m->mult[s] * x[s]) / fmax(fabs(x[s]), 1e-300));
  CHECK(err <= 16 * 2.3e-16, "%s: dssum(gather x) != mult x (%.3g relative)", name, err);
  /* sum of element entries = sum of dssum entries */
  double se = 0, sy = 0;
  for (int64_t i = 0; i < m->ne * nb; i++) se += eb[i];
  for (int64_t s = 0; s < ns; s++) sy += y[s];
  CHECK_CLOSE(se, sy, 1e-12, fabs(se), "dssum conserves the sum");
  /* colours: no node shared inside a colour */
  int bad_col = 0;
  int64_t *stamp = calloc((size_t)ns, sizeof(int64_t));
  for (int col = 0; col < m->ncolors; col++)
    for (int64_t i = m->color_ptr[col]; i < m->color_ptr[col + 1]; i++) {
      const int64_t e = m->color_elems[i];
      for (int j = 0; j < m->nent; j++)
        for (int t = 0; t < m->ent_len[j]; t++) {
          int64_t *st = &stamp[m->ent[e * m->nent + j] + t];
          bad_col += *st == col + 1;
          *st = col + 1;
        }
    }
  CHECK(bad_col == 0 && m->color_ptr[m->ncolors] == m->ne, "%s: colouring shares %d nodes", name, bad_col);
  free(stamp);
  /* vertex stars (sem_mesh.h): the nodes g with g_k = J_k p, |g_j - J_j p| < p are skeleton nodes,
   * distinct, 3 ns^2 - 3 ns + 1 (2D: 2 ns - 1) of them, ns = 2p - 1, around every vertex whose
   * 2^dim elements exist */
  int bad_star = 0, nstars = 0;
  const int p = m->p, nS = 2 * p - 1;
  const int want = m->dim == 3 ? 3 * nS * nS - 3 * nS + 1 : 2 * nS - 1;
  int64_t *seen = calloc((size_t)ns, sizeof(int64_t));
  for (int64_t v = 0; v < m->nv[0] * m->nv[1] * m->nv[2]; v++) {
    const int64_t J[3] = {v % m->nv[0], (v / m->nv[0]) % m->nv[1], v / (m->nv[0] * m->nv[1])};
    int inside = 1;
    for (int d = 0; d < m->dim; d++) inside &= m->periodic[d] || (J[d] > 0 && J[d] < m->cells[d]);
    if (!inside) continue;
    nstars++;
    int count = 0;
    for (int k = 0; k < m->dim; k++) {
      const int a = k == 0 ? 1 : 0, b = k == 2 ? 1 : 2;
      for (int ib = (b < m->dim ? -(p - 1) : 0); ib <= (b < m->dim ? p - 1 : 0); ib++)
        for (int ia = -(p - 1); ia <= p - 1; ia++) {
          int64_t g[3] = {0, 0, 0};
          g[k] = J[k] * p;
          g[a] = J[a] * p + ia;
          if (b < m->dim) g[b] = J[b] * p + ib;
          for (int d = 0; d < m->dim; d++) g[d] = (g[d] + m->nlat[d]) % m->nlat[d];
          const int64_t si = hpmg_sem_skeleton_index(m, g);
          if (si < 0) {
            bad_star++;
            continue;
          }
          if (seen[si] != v + 1) count++;
          seen[si] = v + 1;
        }
    }
    bad_star += count != want;
  }
  CHECK(bad_star == 0, "%s: %d vertex-star nodes off the skeleton or miscounted (%d stars)", name, bad_star, nstars);
  free(seen);
  free(eb);
  free(x);
  free(y);
  free(xb);
  free(s_of);
  free(hits);
  free(cnt);
}

/* operator and diagonal against the dense Schur complement */
static void check_operator(const hpmg_sem_mesh *m, const char *name) {
  const int64_t N = m->nlat_total, ns = m->ns;
  const int nloc = m->el.nloc;
  int64_t *s_of = malloc(sizeof(int64_t) * (size_t)N), *i_of = malloc(sizeof(int64_t) * (size_t)N);
  int64_t *b_lat = malloc(sizeof(int64_t) * (size_t)ns);
  int64_t ni = 0;
  for (int64_t i = 0; i < N; i++) {
    int64_t g[3] = {i % m->nlat[0], (i / m->nlat[0]) % m->nlat[1], i / (m->nlat[0] * m->nlat[1])};
    s_of[i] = hpmg_sem_skeleton_index(m, g);
    i_of[i] = s_of[i] < 0 ? ni++ : -1;
    if (s_of[i] >= 0) b_lat[s_of[i]] = i;
  }
  const int64_t nb = ns;
  double *HII = calloc((size_t)(ni * ni), sizeof(double)), *HIB = calloc((size_t)(ni * nb), sizeof(double));
  double *HBB = calloc((size_t)(nb * nb), sizeof(double));
  double *He = malloc(sizeof(double) * (size_t)nloc * nloc), *u = calloc((size_t)nloc, sizeof(double));
  double *work = malloc(sizeof(double) * hpmg_sem_work_size(&m->el));
  int64_t *gl = malloc(sizeof(int64_t) * (size_t)nloc);
  for (int64_t e = 0; e < m->ne; e++) {
    for (int j = 0; j < nloc; j++) { /* column j of H_e */
      u[j] = 1.0;
      hpmg_sem_apply_full(&m->el, m->coef + e * (m->dim + 1), u, He + (size_t)j * nloc, work);
      u[j] = 0.0;
    }
    for (int j = 0; j < nloc; j++) {
      int64_t g[3];
      gl[j] = lattice_of(m, e, j, g);
    }
    for (int j = 0; j < nloc; j++)
      for (int i = 0; i < nloc; i++) { /* H_e symmetric: He[j][i] = H(i, j) */
        const double v = He[(size_t)j * nloc + i];
        const int64_t a = gl[i], b = gl[j];
        if (s_of[a] < 0 && s_of[b] < 0) HII[i_of[a] * ni + i_of[b]] += v;
        else if (s_of[a] < 0) HIB[i_of[a] * nb + s_of[b]] += v;
        else if (s_of[b] >= 0) HBB[s_of[a] * nb + s_of[b]] += v;
      }
  }
  /* X = H_II^{-1} H_IB */
  lapack_int info = LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', (lapack_int)ni, HII, (lapack_int)ni);
  CHECK(info == 0, "%s: dpotrf of the global interior block: %d", name, (int)info);
  double *X = malloc(sizeof(double) * (size_t)(ni * nb));
  memcpy(X, HIB, sizeof(double) * (size_t)(ni * nb));
  if (!info) info = LAPACKE_dpotrs(LAPACK_ROW_MAJOR, 'L', (lapack_int)ni, (lapack_int)nb, HII, (lapack_int)ni, X, (lapack_int)nb);
  /* the masked Schur complement's diagonal and two products */
  double *dref = malloc(sizeof(double) * (size_t)nb), *dmf = malloc(sizeof(double) * (size_t)nb);
  double *mwork = malloc(sizeof(double) * hpmg_sem_mesh_work_size(m));
  double dscale = 0, derr = 0;
  for (int64_t i = 0; i < nb; i++) {
    double s = HBB[i * nb + i];
    for (int64_t k = 0; k < ni; k++) s -= HIB[k * nb + i] * X[k * nb + i];
    dref[i] = m->dirichlet && m->dirichlet[i] ? 1.0 : s;
    dscale = fmax(dscale, fabs(dref[i]));
  }
  hpmg_sem_mesh_diagonal(m, dmf, mwork);
  for (int64_t i = 0; i < nb; i++) derr = fmax(derr, fabs(dmf[i] - dref[i]));
  CHECK(derr <= 1e-12 * dscale, "%s: diagonal vs dense Schur complement: %.3g relative", name, derr / dscale);
  double *x = malloc(sizeof(double) * (size_t)nb), *y = malloc(sizeof(double) * (size_t)nb), *yr = malloc(sizeof(double) * (size_t)nb);
  double *t = malloc(sizeof(double) * (size_t)ni);
  double worst = 0;
  for (int rep = 0; rep < 2; rep++) {
    for (int64_t i = 0; i < nb; i++) x[i] = check_rand();
    for (int masked = 0; masked < 2; masked++) {
      /* yr = S P x (masked: then rows of P replaced by identity) */
      double ysc = 0, yer = 0;
      for (int64_t i = 0; i < nb; i++) {
        double s = 0;
        for (int64_t j = 0; j < nb; j++) {
          const double xj = masked && m->dirichlet && m->dirichlet[j] ? 0.0 : x[j];
          s += HBB[i * nb + j] * xj;
        }
        yr[i] = s;
      }
      for (int64_t k = 0; k < ni; k++) {
        double s = 0;
        for (int64_t j = 0; j < nb; j++) s += HIB[k * nb + j] * (masked && m->dirichlet && m->dirichlet[j] ? 0.0 : x[j]);
        t[k] = s;
      }
      for (int64_t j = 0; j < nb; j++) { /* yr -= X^T t, X = H_II^{-1} H_IB: H_BI H_II^{-1} H_IB x */
        double s = 0;
        for (int64_t k = 0; k < ni; k++) s += X[k * nb + j] * t[k];
        yr[j] -= s;
      }
      if (masked && m->dirichlet)
        for (int64_t i = 0; i < nb; i++)
          if (m->dirichlet[i]) yr[i] = x[i];
      hpmg_sem_mesh_apply(m, masked, x, y, mwork);
      for (int64_t i = 0; i < nb; i++) {
        ysc = fmax(ysc, fabs(yr[i]));
        yer = fmax(yer, fabs(y[i] - yr[i]));
      }
      worst = fmax(worst, yer / ysc);
      CHECK(yer <= 1e-12 * ysc, "%s: operator (masked %d) vs dense Schur complement: %.3g relative", name, masked,
            yer / ysc);
    }
  }
  printf("  %-46s skeleton %6lld interior %6lld  diag %.1e  apply %.1e\n", name, (long long)nb, (long long)ni,
         derr / dscale, worst);
  free(x), free(y), free(yr), free(t), free(dref), free(dmf), free(mwork), free(X);
  free(HII), free(HIB), free(HBB), free(He), free(u), free(work), free(gl), free(s_of), free(i_of), free(b_lat);
}

/* the colours make the result independent of the thread count, bit for bit */
static void check_threads(const hpmg_sem_mesh *m, const char *name) {
  const int nt = omp_get_max_threads();
  omp_set_num_threads(3);
  double *work = malloc(sizeof(double) * hpmg_sem_mesh_work_size(m));
  double *x = malloc(sizeof(double) * (size_t)m->ns), *y[2] = {malloc(sizeof(double) * (size_t)m->ns),
                                                               malloc(sizeof(double) * (size_t)m->ns)};
  for (int64_t i = 0; i < m->ns; i++) x[i] = check_rand();
  /* every loop on the team (hpmg_par_min 0), then the default: small
   * meshes' loops on the calling thread, the same bits */
  const double par_min = hpmg_set_par_min(0.0);
  for (int t = 0; t < 2; t++) {
    omp_set_num_threads(t ? 3 : 1);
    hpmg_sem_mesh_apply(m, 1, x, y[t], work);
  }
  CHECK(!memcmp(y[0], y[1], sizeof(double) * (size_t)m->ns), "%s: 1 and 3 threads differ", name);
  hpmg_set_par_min(par_min);
  hpmg_sem_mesh_apply(m, 1, x, y[0], work);
  CHECK(!memcmp(y[0], y[1], sizeof(double) * (size_t)m->ns), "%s: 3 threads, default threshold, differs", name);
  omp_set_num_threads(nt);
  free(work), free(x), free(y[0]), free(y[1]);
}

static void run(const config *c) {
  hpmg_box box;
  hpmg_sem_mesh m;
  static const char *bcn[3] = {"D", "N", "P"};
  char name[128];
  int w = snprintf(name, sizeof name, "%dD p=%d %lldx%lld", c->dim, c->p, (long long)c->cells[0], (long long)c->cells[1]);
  if (c->dim == 3) w += snprintf(name + w, sizeof name - (size_t)w, "x%lld", (long long)c->cells[2]);
  w += snprintf(name + w, sizeof name - (size_t)w, " bc ");
  for (int d = 0; d < c->dim; d++) w += snprintf(name + w, sizeof name - (size_t)w, "%s%s", bcn[c->bc[d][0]], bcn[c->bc[d][1]]);
  snprintf(name + w, sizeof name - (size_t)w, "%s l=%g", c->sp[0] || c->sp[1] ? " stretched" : "", c->lambda);
  hpmg_error e = make_mesh(c, &box, &m);
  CHECK(e == HPMG_SUCCESS, "%s: mesh: %s", name, hpmg_last_error());
  if (e) return;
  check_layout(&m, name);
  check_operator(&m, name);
  check_threads(&m, name);
  hpmg_sem_mesh_destroy(&m);
  hpmg_box_destroy(&box);
}

/* refusals: nothing allocated, message names the value */
static void check_refusals(void) {
  config c = {2, 4, {2, 3, 1}, {{HPMG_BC_PERIODIC, HPMG_BC_PERIODIC}, {HPMG_BC_DIRICHLET, HPMG_BC_DIRICHLET}}, {0}, {0}, 0};
  hpmg_box box;
  hpmg_sem_mesh m;
  hpmg_error e = make_mesh(&c, &box, &m);
  CHECK(e == HPMG_ERR_ARG && strstr(hpmg_last_error(), "at least 3"), "periodic with 2 elements: %d %s", e, hpmg_last_error());
  c.cells[0] = 3;
  c.p = 1;
  e = make_mesh(&c, &box, &m);
  CHECK(e == HPMG_ERR_ARG && strstr(hpmg_last_error(), "degree"), "degree 1: %d %s", e, hpmg_last_error());
  c.p = HPMG_SEM_MAX_DEGREE + 1;
  e = make_mesh(&c, &box, &m);
  CHECK(e == HPMG_ERR_ARG, "degree %d accepted", c.p);
}

int main(int argc, char **argv) {
  const int full = argc > 1 && !strcmp(argv[1], "full");
  const hpmg_bc_kind D = HPMG_BC_DIRICHLET, N = HPMG_BC_NEUMANN, P = HPMG_BC_PERIODIC;
  const hpmg_spacing_kind U = HPMG_SPACING_UNIFORM, G = HPMG_SPACING_GEOMETRIC, T = HPMG_SPACING_TANH;
  check_refusals();
  /* 2D: p = 2..8, every BC kind and mix, stretched, lambda 0 and > 0 */
  const int p2[] = {2, 3, 5, 8};
  for (int i = 0; i < 4; i++) {
    const int p = p2[i];
    config a = {2, p, {3, 4, 1}, {{D, D}, {D, D}}, {U, U}, {0, 0}, 0.0};
    run(&a);
    config b = {2, p, {3, 4, 1}, {{P, P}, {D, N}}, {U, G}, {0, 1.5}, 2.5};
    run(&b);
    config c = {2, p, {4, 3, 1}, {{N, N}, {N, N}}, {T, U}, {1.2, 0}, 0.0};
    run(&c);
    config d = {2, p, {3, 3, 1}, {{P, P}, {P, P}}, {U, U}, {0, 0}, 1.0};
    run(&d);
  }
  /* 3D: p = 2..8 */
  const int p3[] = {2, 3, 4};
  for (int i = 0; i < 3; i++) {
    const int p = p3[i];
    config a = {3, p, {3, 2, 2}, {{D, D}, {D, D}, {D, D}}, {G, U, U}, {1.5, 0, 0}, 0.0};
    run(&a);
    config b = {3, p, {3, 2, 2}, {{P, P}, {N, D}, {D, N}}, {U, T, G}, {0, 1.0, 2.0}, 3.0};
    run(&b);
    config c = {3, p, {3, 3, 2}, {{P, P}, {P, P}, {N, N}}, {U, U, G}, {0, 0, 0.7}, 0.0};
    run(&c);
  }
  const int p3b[] = {6, 8};
  for (int i = 0; i < 2; i++) {
    const int p = p3b[i];
    config a = {3, p, {3, 1, 1}, {{P, P}, {D, N}, {N, D}}, {G, U, U}, {1.5, 0, 0}, 0.0};
    run(&a);
    config b = {3, p, {2, 1, 1}, {{N, N}, {N, N}, {D, D}}, {U, U, U}, {0, 0, 0}, 1.5};
    run(&b);
  }
  if (full) {
    config a = {3, 12, {2, 1, 1}, {{D, N}, {N, D}, {D, D}}, {G, U, U}, {2.0, 0, 0}, 0.0};
    run(&a);
    config b = {3, 12, {3, 1, 1}, {{P, P}, {N, N}, {N, N}}, {U, U, U}, {0, 0, 0}, 0.0};
    run(&b);
  }
  return check_report();
}
