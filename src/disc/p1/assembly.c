/* P1 assembly: symbolic and numeric phases (assembly.h). */
#include "disc/p1/assembly.h"
#include <stdlib.h>
#include <string.h>

void hpmg_p1_pattern_destroy(hpmg_p1_pattern *p) {
  hpmg_free(&p->rowptr);
  hpmg_free(&p->col);
  hpmg_free(&p->diag);
  hpmg_free(&p->inc_ptr);
  hpmg_free(&p->inc);
  hpmg_free(&p->slot);
  memset(p, 0, sizeof *p);
}

/* sorts a[0..n) and removes duplicates; returns the count left */
static int sort_unique(int64_t *a, int n) {
  for (int i = 1; i < n; i++) { /* rows are short (tens of entries): insertion sort */
    int64_t v = a[i];
    int j = i - 1;
    while (j >= 0 && a[j] > v) a[j + 1] = a[j], j--;
    a[j + 1] = v;
  }
  int m = 0;
  for (int i = 0; i < n; i++)
    if (m == 0 || a[i] != a[m - 1]) a[m++] = a[i];
  return m;
}

/* the sorted unique nodes of row i's incident cells into buf; returns the
 * count. mark (num_nodes entries, the thread's own) remembers the last row
 * that took each node, so that only the row's distinct nodes are sorted */
static int row_nodes(const hpmg_p1_mesh *m, const hpmg_p1_pattern *p, int64_t i, int64_t *buf, int32_t *mark) {
  int cnt = 0;
  for (int64_t q = p->inc_ptr[i]; q < p->inc_ptr[i + 1]; q++) {
    const int64_t c = p->inc[q] / p->nv;
    for (int l = 0; l < p->nv; l++) {
      const int64_t v = m->cell_nodes[c * p->nv + l];
      if (mark[v] != (int32_t)i) mark[v] = (int32_t)i, buf[cnt++] = v;
    }
  }
  return sort_unique(buf, cnt);
}

int64_t hpmg_p1_find(const hpmg_p1_pattern *p, int64_t i, int64_t j) {
  int64_t lo = p->rowptr[i], hi = p->rowptr[i + 1] - 1;
  while (lo <= hi) {
    const int64_t mid = (lo + hi) / 2;
    if (p->col[mid] == j) return mid;
    if (p->col[mid] < j) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

hpmg_error hpmg_p1_pattern_build(const hpmg_p1_mesh *m, hpmg_p1_pattern *p) {
  memset(p, 0, sizeof *p);
  HPMG_CHECK_ARG(m->dim == 2 || m->dim == 3, "P1 pattern: mesh dimension %d", m->dim);
  HPMG_CHECK_ARG(m->num_nodes > 0 && m->num_cells > 0, "P1 pattern: empty mesh");
  HPMG_CHECK_ARG(m->num_nodes < INT32_MAX, "P1 pattern: %lld nodes exceed 32-bit column indices", (long long)m->num_nodes);
  const int nv = m->dim + 1;
  const int64_t n = m->num_nodes, nc = m->num_cells;
  p->dim = m->dim;
  p->nv = nv;
  p->n = n;
  p->ncells = nc;
  hpmg_error e = hpmg_calloc(sizeof(int64_t) * (size_t)(n + 1), &p->inc_ptr);
  if (!e) e = hpmg_malloc(sizeof(int64_t) * (size_t)(nc * nv), &p->inc);
  if (!e) e = hpmg_malloc(sizeof(int64_t) * (size_t)(n + 1), &p->rowptr);
  if (!e) e = hpmg_malloc(sizeof(int64_t) * (size_t)n, &p->diag);
  if (!e) e = hpmg_malloc(sizeof(uint16_t) * (size_t)(nc * nv * nv), &p->slot);
  if (e) goto fail;
  /* incidence, in ascending cell order (a counting sort by node) */
  for (int64_t q = 0; q < nc * nv; q++) {
    const int64_t v = m->cell_nodes[q];
    if (v < 0 || v >= n) {
      e = hpmg_error_set(HPMG_ERR_ARG, "P1 pattern: cell %lld has node index %lld outside 0..%lld", (long long)(q / nv),
                         (long long)v, (long long)n - 1);
      goto fail;
    }
    p->inc_ptr[v + 1]++;
  }
  int maxinc = 0;
  for (int64_t i = 0; i < n; i++) {
    const int64_t d = p->inc_ptr[i + 1];
    if (d > maxinc) maxinc = (int)(d < 1 << 20 ? d : 1 << 20);
    p->inc_ptr[i + 1] += p->inc_ptr[i];
  }
  {
    int64_t *fill = NULL;
    if ((e = hpmg_malloc(sizeof(int64_t) * (size_t)n, &fill))) goto fail;
    memcpy(fill, p->inc_ptr, sizeof(int64_t) * (size_t)n);
    for (int64_t q = 0; q < nc * nv; q++) p->inc[fill[m->cell_nodes[q]]++] = q;
    hpmg_free(&fill);
  }
  /* row lengths, then the columns */
  const int bufn = maxinc * nv;
  int64_t maxrow = 0;
  p->rowptr[0] = 0;
  int failed = 0;
#pragma omp parallel reduction(max : maxrow) reduction(| : failed)
  {
    int64_t *buf = malloc(sizeof(int64_t) * (size_t)(bufn > 0 ? bufn : 1));
    int32_t *mark = malloc(sizeof(int32_t) * (size_t)n);
    if (!buf || !mark) failed = 1;
    else
      for (int64_t j = 0; j < n; j++) mark[j] = -1;
#pragma omp for schedule(static)
    for (int64_t i = 0; i < n; i++) {
      if (!buf || !mark) continue;
      const int64_t len = row_nodes(m, p, i, buf, mark);
      p->rowptr[i + 1] = len;
      maxrow = len > maxrow ? len : maxrow;
    }
    free(buf);
    free(mark);
  }
  if (failed) {
    e = hpmg_error_set(HPMG_ERR_MEMORY, "P1 pattern: cannot allocate a row buffer");
    goto fail;
  }
  if (maxrow > 65535) {
    e = hpmg_error_set(HPMG_ERR_ARG, "P1 pattern: a node has %lld neighbours (at most 65535)", (long long)maxrow);
    goto fail;
  }
  p->max_row = (int)maxrow;
  for (int64_t i = 0; i < n; i++) p->rowptr[i + 1] += p->rowptr[i];
  p->nnz = p->rowptr[n];
  if ((e = hpmg_malloc(sizeof(int32_t) * (size_t)p->nnz, &p->col))) goto fail;
#pragma omp parallel reduction(| : failed)
  {
    int64_t *buf = malloc(sizeof(int64_t) * (size_t)(bufn > 0 ? bufn : 1));
    int32_t *mark = malloc(sizeof(int32_t) * (size_t)n);
    if (!buf || !mark) failed = 1;
    else
      for (int64_t j = 0; j < n; j++) mark[j] = -1;
#pragma omp for schedule(static)
    for (int64_t i = 0; i < n; i++) {
      if (!buf || !mark) continue;
      const int len = row_nodes(m, p, i, buf, mark);
      for (int a = 0; a < len; a++) {
        p->col[p->rowptr[i] + a] = (int32_t)buf[a];
        if (buf[a] == i) p->diag[i] = p->rowptr[i] + a;
      }
    }
    free(buf);
    free(mark);
  }
  if (failed) {
    e = hpmg_error_set(HPMG_ERR_MEMORY, "P1 pattern: cannot allocate a row buffer");
    goto fail;
  }
  /* cell -> entry positions */
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < nc; c++) {
    const int64_t *v = m->cell_nodes + c * nv;
    for (int k = 0; k < nv; k++)
      for (int l = 0; l < nv; l++)
        p->slot[(c * nv + k) * nv + l] = (uint16_t)(hpmg_p1_find(p, v[k], v[l]) - p->rowptr[v[k]]);
  }
  return HPMG_SUCCESS;
fail:
  hpmg_p1_pattern_destroy(p);
  return e;
}

/* not inlined: the serial and the threaded loop must round alike (bitwise equal results) */
__attribute__((noinline)) double hpmg_p1_local_matrix(const hpmg_p1_mesh *m, const hpmg_p1_coef *cf, int64_t c,
                                                     double *out) {
  const int dim = m->dim, nv = dim + 1;
  const int64_t *v = m->cell_nodes + c * nv;
  double g[4][3], meas;
  const double *s = cf->sigma ? cf->sigma + c * cf->comps : NULL;
  if (dim == 3) {
    double a[3][3];
    for (int k = 0; k < 3; k++)
      for (int d = 0; d < 3; d++) a[k][d] = m->x[d][v[k + 1]] - m->x[d][v[0]];
    /* rows of J^-1 for J = [a1 a2 a3]: (a2 x a3, a3 x a1, a1 x a2) / det */
    double cr[3][3];
    for (int k = 0; k < 3; k++) {
      const double *p = a[(k + 1) % 3], *q = a[(k + 2) % 3];
      cr[k][0] = p[1] * q[2] - p[2] * q[1];
      cr[k][1] = p[2] * q[0] - p[0] * q[2];
      cr[k][2] = p[0] * q[1] - p[1] * q[0];
    }
    const double det = a[0][0] * cr[0][0] + a[0][1] * cr[0][1] + a[0][2] * cr[0][2], inv = 1.0 / det;
    meas = det / 6.0;
    for (int d = 0; d < 3; d++) {
      g[1][d] = cr[0][d] * inv;
      g[2][d] = cr[1][d] * inv;
      g[3][d] = cr[2][d] * inv;
      g[0][d] = -(g[1][d] + g[2][d] + g[3][d]);
    }
  } else {
    const double ax = m->x[0][v[1]] - m->x[0][v[0]], ay = m->x[1][v[1]] - m->x[1][v[0]];
    const double bx = m->x[0][v[2]] - m->x[0][v[0]], by = m->x[1][v[2]] - m->x[1][v[0]];
    const double det = ax * by - ay * bx, inv = 1.0 / det;
    meas = det / 2.0;
    g[1][0] = by * inv, g[1][1] = -bx * inv;
    g[2][0] = -ay * inv, g[2][1] = ax * inv;
    g[0][0] = -(g[1][0] + g[2][0]), g[0][1] = -(g[1][1] + g[2][1]);
  }
  /* sigma g_l for each l */
  double sg[4][3];
  for (int l = 0; l < nv; l++) {
    if (!s || cf->comps == 1) {
      const double sc = s ? s[0] : 1.0;
      for (int d = 0; d < dim; d++) sg[l][d] = sc * g[l][d];
    } else if (dim == 3) { /* xx yy zz xy xz yz */
      sg[l][0] = s[0] * g[l][0] + s[3] * g[l][1] + s[4] * g[l][2];
      sg[l][1] = s[3] * g[l][0] + s[1] * g[l][1] + s[5] * g[l][2];
      sg[l][2] = s[4] * g[l][0] + s[5] * g[l][1] + s[2] * g[l][2];
    } else { /* xx yy xy */
      sg[l][0] = s[0] * g[l][0] + s[2] * g[l][1];
      sg[l][1] = s[2] * g[l][0] + s[1] * g[l][1];
    }
  }
  const double mass = cf->lambda * meas / (dim == 3 ? 20.0 : 12.0);
  for (int k = 0; k < nv; k++)
    for (int l = k; l < nv; l++) {
      double d = 0.0;
      for (int q = 0; q < dim; q++) d += g[k][q] * sg[l][q];
      const double a = meas * d + mass * (k == l ? 2.0 : 1.0);
      out[k * nv + l] = out[l * nv + k] = a;
    }
  return meas;
}

/* row i of the gather; NV a constant, so that cell = inc / NV and k = inc % NV
 * cost a shift or a multiplication instead of two integer divisions */
static inline void gather_row(const hpmg_p1_pattern *p, const double *scratch, const int pk[4][4], int64_t i, double *val,
                              const int NV) {
  const int nloc = NV * (NV + 1) / 2;
  double *row = val + p->rowptr[i];
  const int64_t len = p->rowptr[i + 1] - p->rowptr[i];
  for (int64_t a = 0; a < len; a++) row[a] = 0.0;
  for (int64_t q = p->inc_ptr[i]; q < p->inc_ptr[i + 1]; q++) {
    const int64_t ck = p->inc[q]; /* cell * NV + k */
    const double *up = scratch + (ck / NV) * nloc;
    const int *pkk = pk[ck % NV];
    const uint16_t *sl = p->slot + ck * NV;
    for (int l = 0; l < NV; l++) row[sl[l]] += up[pkk[l]];
  }
}

void hpmg_p1_assemble(const hpmg_p1_mesh *m, const hpmg_p1_pattern *p, const hpmg_p1_coef *cf, double *scratch,
                      double *val) {
  const int nv = p->nv, nloc = nv * (nv + 1) / 2;
  const int64_t nc = p->ncells, n = p->n;
  int pk[4][4]; /* (k, l) -> place in the upper triangle */
  for (int k = 0; k < nv; k++)
    for (int l = 0; l < nv; l++) pk[k][l] = hpmg_p1_packed(k, l, nv);
#pragma omp parallel
  {
    double loc[16];
#pragma omp for schedule(static)
    for (int64_t c = 0; c < nc; c++) {
      hpmg_p1_local_matrix(m, cf, c, loc);
      for (int k = 0; k < nv; k++)
        for (int l = k; l < nv; l++) scratch[c * nloc + pk[k][l]] = loc[k * nv + l];
    }
    if (nv == 4) {
#pragma omp for schedule(static)
      for (int64_t i = 0; i < n; i++) gather_row(p, scratch, pk, i, val, 4);
    } else {
#pragma omp for schedule(static)
      for (int64_t i = 0; i < n; i++) gather_row(p, scratch, pk, i, val, 3);
    }
  }
}

void hpmg_p1_assemble_serial(const hpmg_p1_mesh *m, const hpmg_p1_pattern *p, const hpmg_p1_coef *cf, double *val) {
  const int nv = p->nv;
  memset(val, 0, sizeof(double) * (size_t)p->nnz);
  double loc[16];
  for (int64_t c = 0; c < p->ncells; c++) {
    hpmg_p1_local_matrix(m, cf, c, loc);
    const int64_t *v = m->cell_nodes + c * nv;
    for (int k = 0; k < nv; k++) {
      double *row = val + p->rowptr[v[k]];
      const uint16_t *sl = p->slot + (c * nv + k) * nv;
      for (int l = 0; l < nv; l++) row[sl[l]] += loc[k * nv + l];
    }
  }
}

void hpmg_p1_gather_vector(const hpmg_p1_pattern *p, const double *loc, double *b) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < p->n; i++) {
    double s = 0.0;
    for (int64_t q = p->inc_ptr[i]; q < p->inc_ptr[i + 1]; q++) s += loc[p->inc[q]];
    b[i] = s;
  }
}

void hpmg_p1_spmv(const hpmg_p1_pattern *p, const double *val, const double *x, double *y) {
  const int64_t *rp = p->rowptr;
  const int32_t *col = p->col;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < p->n; i++) {
    double s = 0.0;
    for (int64_t q = rp[i]; q < rp[i + 1]; q++) s += val[q] * x[col[q]];
    y[i] = s;
  }
}

hpmg_error hpmg_p1_contributions(const hpmg_p1_pattern *p, uint32_t **cptr_out, uint32_t **cidx_out) {
  *cptr_out = NULL, *cidx_out = NULL;
  const int nv = p->nv;
  const int64_t n = p->n, nc = p->ncells, total = nc * nv * nv;
  HPMG_CHECK_ARG((double)total < 4294967295.0 && p->nnz < 4294967295LL,
                 "P1 contribution lists: %lld cells exceed 32-bit indices", (long long)nc);
  uint32_t *cptr = NULL, *cidx = NULL;
  HPMG_CALL(hpmg_malloc(sizeof(uint32_t) * (size_t)(p->nnz + 1), &cptr));
  hpmg_error e = hpmg_malloc(sizeof(uint32_t) * (size_t)total, &cidx);
  if (e) {
    hpmg_free(&cptr);
    return e;
  }
  /* row i's contributions are nv per incidence: the block from inc_ptr[i] * nv;
   * inside it, entry after entry, each in ascending cell order */
  int failed = 0;
#pragma omp parallel reduction(| : failed)
  {
    uint32_t *fill = malloc(sizeof(uint32_t) * (size_t)(p->max_row + 1));
    failed = !fill;
#pragma omp for schedule(static)
    for (int64_t i = 0; i < n; i++) {
      if (!fill) continue;
      const int64_t r0 = p->rowptr[i], len = p->rowptr[i + 1] - r0;
      for (int64_t a = 0; a <= len; a++) fill[a] = 0;
      for (int64_t q = p->inc_ptr[i]; q < p->inc_ptr[i + 1]; q++)
        for (int l = 0; l < nv; l++) fill[p->slot[p->inc[q] * nv + l] + 1]++;
      fill[0] = (uint32_t)(p->inc_ptr[i] * nv);
      for (int64_t a = 0; a < len; a++) fill[a + 1] += fill[a];
      for (int64_t a = 0; a <= len; a++) cptr[r0 + a] = fill[a];
      for (int64_t q = p->inc_ptr[i]; q < p->inc_ptr[i + 1]; q++) {
        const int64_t c = p->inc[q] / nv;
        const int k = (int)(p->inc[q] % nv);
        for (int l = 0; l < nv; l++)
          cidx[fill[p->slot[p->inc[q] * nv + l]]++] = (uint32_t)((int64_t)hpmg_p1_packed(k, l, nv) * nc + c);
      }
    }
    free(fill);
  }
  if (failed) {
    hpmg_free(&cptr);
    hpmg_free(&cidx);
    return hpmg_error_set(HPMG_ERR_MEMORY, "P1 contribution lists: cannot allocate a row buffer");
  }
  *cptr_out = cptr;
  *cidx_out = cidx;
  return HPMG_SUCCESS;
}

hpmg_error hpmg_p1_cells_soa(const hpmg_p1_mesh *m, int32_t **cells_out) {
  const int nv = m->dim + 1;
  const int64_t nc = m->num_cells;
  int32_t *cells = NULL;
  HPMG_CALL(hpmg_malloc(sizeof(int32_t) * (size_t)(nv * nc), &cells));
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < nc; c++)
    for (int k = 0; k < nv; k++) cells[k * nc + c] = (int32_t)m->cell_nodes[c * nv + k];
  *cells_out = cells;
  return HPMG_SUCCESS;
}

void hpmg_p1_apply_bc(const hpmg_p1_pattern *p, const hpmg_p1_bc_data *bc, double *val, double *lift) {
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < bc->nrob; r++) {
    double v = val[bc->rob_pos[r]];
    for (int64_t t = bc->rob_ptr[r]; t < bc->rob_ptr[r + 1]; t++) v += bc->rob_w[t];
    val[bc->rob_pos[r]] = v;
  }
  if (!bc->ndir) return;
  const int64_t *rp = p->rowptr;
  const int32_t *col = p->col;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < bc->n; i++) {
    double s = 0.0;
    if (bc->dir[i]) {
      for (int64_t q = rp[i]; q < rp[i + 1]; q++) val[q] = col[q] == i ? 1.0 : 0.0;
    } else {
      for (int64_t q = rp[i]; q < rp[i + 1]; q++)
        if (bc->dir[col[q]]) {
          s += val[q] * bc->gd[col[q]];
          val[q] = 0.0;
        }
    }
    lift[i] = s;
  }
}
