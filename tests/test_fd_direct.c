/* The direct (transform + tridiagonal) FD solver, src/disc/fd/fd_direct.c,
 * against the operator contract of src/grid/box.h, built here independently
 * from node coordinates as a matrix-free product:
 *  - every pair of faces per direction (DD, NN, DN, ND, PP) in 2D and 3D,
 *    vertex and cell layout, uniform and with one stretched direction (tanh or
 *    geometric), odd / even / prime cells, lambda = 0 and > 0:
 *    ||A u - b|| / ||b|| < 1e-11 on a random b (singular problems: against the
 *    projected b - W 1 (1^T b)/(1^T W 1), the solution has zero W-mean and
 *    the reported defect is 1^T b);
 *  - the tridiagonal path on a uniform direction (flagged non-uniform) equals
 *    the transform path;
 *  - on 2^L unit boxes with Dirichlet faces it equals the sine-transform
 *    solver fd_fft (A = h^(d-2) times its h^-2-scaled system);
 *  - two non-uniform directions are refused;
 *  - the GPU's transforms (fd_direct_xform.h: every r2r kind as one complex
 *    FFT with pre- and post-processing) run here with FFTW's complex FFTs
 *    equal FFTW's r2r transforms, for odd, even and prime lengths.
 * Exit 77 (skip) without FFTW. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "disc/fd/fd_direct.h"
#include "disc/fd/fd_direct_xform.h"
#include "disc/fd/fd_fft.h"
#ifdef HPMG_HAVE_FFTW
#include <fftw3.h>
#endif

/* one direction of the test operator: unknown count, dual widths, neighbours */
typedef struct {
  int64_t n;
  double *w, *cl, *cr, *dg; /* couplings to the left / right unknown (0: none), diagonal */
  int wrap;
} dir1d;

/* From the contract's words: vertex unknowns at the nodes not on a Dirichlet
 * face, (K u)_i = (u_i - u_{i-1})/h_{i-1} + (u_i - u_{i+1})/h_i; cell unknowns
 * at centres, couplings 1/|c_i - c_j|, Dirichlet face 1/(h/2). */
static void build_dir(const double *x, int64_t cells, hpmg_bc_kind b0, hpmg_bc_kind b1, int cell, dir1d *D) {
  const int per = b0 == HPMG_BC_PERIODIC;
  const double L = x[cells] - x[0];
  int64_t first = 0, n;
  if (cell || per) n = cells;
  else {
    first = b0 == HPMG_BC_DIRICHLET;
    n = cells + 1 - first - (b1 == HPMG_BC_DIRICHLET);
  }
  D->n = n;
  D->wrap = per;
  D->w = calloc((size_t)n, sizeof(double));
  D->cl = calloc((size_t)n, sizeof(double));
  D->cr = calloc((size_t)n, sizeof(double));
  D->dg = calloc((size_t)n, sizeof(double));
  for (int64_t i = 0; i < n; i++) {
    if (!cell) {
      const int64_t m = first + i;
      /* coordinates of the left and right neighbour nodes (periodic: shifted copies) */
      const int has_l = per || m > 0, has_r = per || m < cells;
      const double xl = m > 0 ? x[m - 1] : x[cells - 1] - L;
      const double xr = m + 1 <= cells ? x[m + 1] : 0; /* periodic m < cells always */
      const double hl = has_l ? x[m] - xl : 0, hr = has_r ? xr - x[m] : 0;
      D->w[i] = (hl + hr) / 2;
      if (has_l) { D->dg[i] += 1 / hl; if (per || m - 1 >= first) D->cl[i] = 1 / hl; }
      if (has_r) { D->dg[i] += 1 / hr; if (per || m + 1 <= first + n - 1) D->cr[i] = 1 / hr; }
    } else {
      const double c = (x[i] + x[i + 1]) / 2;
      D->w[i] = x[i + 1] - x[i];
      if (i > 0 || per) {
        const double cl = i > 0 ? (x[i - 1] + x[i]) / 2 : (x[cells - 1] + x[cells]) / 2 - L;
        D->cl[i] = 1 / (c - cl); D->dg[i] += 1 / (c - cl);
      } else if (b0 == HPMG_BC_DIRICHLET) D->dg[i] += 1 / (c - x[0]);
      if (i < n - 1 || per) {
        const double cr = i < n - 1 ? (x[i + 1] + x[i + 2]) / 2 : (x[0] + x[1]) / 2 + L;
        D->cr[i] = 1 / (cr - c); D->dg[i] += 1 / (cr - c);
      } else if (b1 == HPMG_BC_DIRICHLET) D->dg[i] += 1 / (x[cells] - c);
    }
  }
}

static void free_dir(dir1d *D) { free(D->w); free(D->cl); free(D->cr); free(D->dg); }

/* y = A u, A = sum_d K_d (x) W_others + lambda W */
static void apply_A(int dim, const dir1d *D, double lambda, const double *u, double *y) {
  const int64_t n0 = D[0].n, n1 = D[1].n, n2 = dim == 3 ? D[2].n : 1;
  for (int64_t k = 0; k < n2; k++)
    for (int64_t j = 0; j < n1; j++)
      for (int64_t i = 0; i < n0; i++) {
        const int64_t id[3] = {i, j, k}, st[3] = {1, n0, n0 * n1};
        const int64_t c = i + n0 * (j + n1 * k);
        double wd[3] = {1, 1, 1}, W = 1;
        for (int d = 0; d < dim; d++) { wd[d] = D[d].w[id[d]]; W *= wd[d]; }
        double s = lambda * W * u[c];
        for (int d = 0; d < dim; d++) {
          const int64_t a = id[d], nd = D[d].n;
          double ku = D[d].dg[a] * u[c];
          if (D[d].cl[a] != 0) ku -= D[d].cl[a] * u[c + ((a > 0 ? a - 1 : nd - 1) - a) * st[d]];
          if (D[d].cr[a] != 0) ku -= D[d].cr[a] * u[c + ((a < nd - 1 ? a + 1 : 0) - a) * st[d]];
          s += ku * W / wd[d];
        }
        y[c] = s;
      }
}

static double *coords(int64_t cells, double L, int stretch) {
  double *x = malloc(sizeof(double) * (size_t)(cells + 1));
  for (int64_t i = 0; i <= cells; i++) {
    const double t = (double)i / (double)cells;
    if (stretch == 1) x[i] = L / 2 * (1 + tanh(2.0 * (2 * t - 1)) / tanh(2.0)); /* tanh, beta = 2 */
    else if (stretch == 2) { /* geometric: last cell 50 times the first */
      const double r = pow(50.0, 1.0 / (double)(cells - 1));
      x[i] = L * (pow(r, (double)i) - 1) / (pow(r, (double)cells) - 1);
    }
    else x[i] = L * t;
  }
  x[0] = 0;
  x[cells] = L;
  return x;
}

static const hpmg_bc_kind PAIRS[5][2] = {{HPMG_BC_DIRICHLET, HPMG_BC_DIRICHLET}, {HPMG_BC_NEUMANN, HPMG_BC_NEUMANN},
                                         {HPMG_BC_DIRICHLET, HPMG_BC_NEUMANN}, {HPMG_BC_NEUMANN, HPMG_BC_DIRICHLET},
                                         {HPMG_BC_PERIODIC, HPMG_BC_PERIODIC}};
static const char *PNAME[5] = {"DD", "NN", "DN", "ND", "PP"};
static double worst = 0;

/* pairs[d]: index into PAIRS; stretch_dir: -1 none; flag_only: mark the direction
 * non-uniform without stretching it. Returns 0 on success, 1 on a failed check. */
static int run_case(int dim, const int64_t cells[3], const int pairs[3], int layout, int stretch_dir, int stretch,
                    double lambda, double *u_out) {
  hpmg_box box;
  memset(&box, 0, sizeof box);
  box.dim = dim;
  box.layout = layout ? HPMG_FD_CELL : HPMG_FD_VERTEX;
  const double len[3] = {2.0, 1.0, 1.5};
  dir1d D[3];
  memset(D, 0, sizeof D);
  for (int d = 0; d < 3; d++) {
    box.cells[d] = d < dim ? cells[d] : 1;
    box.len[d] = len[d];
    if (d >= dim) continue;
    box.x[d] = coords(cells[d], len[d], d == stretch_dir ? stretch : 0);
    box.uniform[d] = d != stretch_dir;
    box.bc[2 * d] = PAIRS[pairs[d]][0];
    box.bc[2 * d + 1] = PAIRS[pairs[d]][1];
    build_dir(box.x[d], cells[d], box.bc[2 * d], box.bc[2 * d + 1], layout, &D[d]);
  }
  int64_t N = 1;
  for (int d = 0; d < dim; d++) N *= D[d].n;
  CHECK(N == (int64_t)hpmg_box_n(&box, 0) * hpmg_box_n(&box, 1) * hpmg_box_n(&box, 2), "unknown count");
  double *b = malloc(sizeof(double) * (size_t)N), *u = malloc(sizeof(double) * (size_t)N),
         *r = malloc(sizeof(double) * (size_t)N);
  for (int64_t c = 0; c < N; c++) b[c] = check_rand();
  fd_direct s;
  hpmg_error e = fd_direct_create(&box, lambda, 0, 0, &s);
  if (e == HPMG_ERR_BACKEND) { printf("skip: %s\n", hpmg_last_error()); exit(77); }
  int bad = 0;
  char name[96];
  snprintf(name, sizeof name, "%dD %s %s%s%s %lldx%lldx%lld stretch dir %d (%d) lambda %g", dim,
           layout ? "cell" : "vertex", PNAME[pairs[0]], PNAME[pairs[1]], dim == 3 ? PNAME[pairs[2]] : "",
           (long long)cells[0], (long long)cells[1], dim == 3 ? (long long)cells[2] : 1LL, stretch_dir, stretch, lambda);
  CHECK(e == HPMG_SUCCESS, "%s: create: %s", name, hpmg_last_error());
  if (!e) {
    e = fd_direct_solve(s, b, u);
    CHECK(e == HPMG_SUCCESS, "%s: solve: %s", name, hpmg_last_error());
    /* in place (b == u): the same values */
    memcpy(r, b, sizeof(double) * (size_t)N);
    CHECK(fd_direct_solve(s, r, r) == HPMG_SUCCESS, "%s: in-place solve: %s", name, hpmg_last_error());
    CHECK(memcmp(r, u, sizeof(double) * (size_t)N) == 0, "%s: the in-place solve differs", name);
    int singular = lambda == 0;
    for (int f = 0; f < 2 * dim; f++)
      if (box.bc[f] == HPMG_BC_DIRICHLET) singular = 0;
    double sb = 0, sw = 0;
    if (singular) {
      /* project b: b - W 1 (1^T b) / (1^T W 1) */
      double *W = r;
      for (int64_t c = 0; c < N; c++) {
        const int64_t id[3] = {c % D[0].n, (c / D[0].n) % D[1].n, dim == 3 ? c / (D[0].n * D[1].n) : 0};
        W[c] = 1;
        for (int d = 0; d < dim; d++) W[c] *= D[d].w[id[d]];
        sb += b[c];
        sw += W[c];
      }
      double rep_sum, rep_rel;
      fd_direct_defect(s, &rep_sum, &rep_rel);
      CHECK(fabs(rep_sum - sb) <= 1e-12 * (double)N, "%s: reported defect %g, expected %g", name, rep_sum, sb);
      double wu = 0, un = 0;
      for (int64_t c = 0; c < N; c++) { b[c] -= W[c] * sb / sw; wu += W[c] * u[c]; un += W[c] * fabs(u[c]); }
      CHECK(fabs(wu) <= 1e-12 * un, "%s: W-mean of u %g (||u||_W1 %g)", name, wu, un);
    }
    apply_A(dim, D, lambda, u, r);
    double rn = 0, bn = 0;
    for (int64_t c = 0; c < N; c++) { rn += (r[c] - b[c]) * (r[c] - b[c]); bn += b[c] * b[c]; }
    const double rel = sqrt(rn / bn);
    if (rel > worst) worst = rel;
    CHECK(rel < 1e-11, "%s: ||Au - b||/||b|| = %.3e", name, rel);
    bad = !(rel < 1e-11);
    if (u_out) memcpy(u_out, u, sizeof(double) * (size_t)N);
  }
  fd_direct_destroy(&s);
  for (int d = 0; d < 3; d++) { free(box.x[d]); free_dir(&D[d]); }
  free(b); free(u); free(r);
  return bad;
}

/* every BC pair per direction, both layouts, uniform and stretched in each direction */
static void sweep(int dim, const int64_t cells[3]) {
  int pairs[3] = {0, 0, 0};
  const int ncomb = dim == 2 ? 25 : 125;
  int cases = 0, failed = 0;
  for (int comb = 0; comb < ncomb; comb++) {
    pairs[0] = comb % 5; pairs[1] = (comb / 5) % 5; pairs[2] = comb / 25;
    for (int layout = 0; layout < 2; layout++)
      for (int sd = -1; sd < dim; sd++) {
        const double lambda = (comb + layout + sd) % 3 == 0 ? 0.7 : 0.0;
        failed += run_case(dim, cells, pairs, layout, sd, sd < 0 ? 0 : 1 + (comb + sd) % 2, lambda, NULL);
        cases++;
      }
  }
  printf("%dD %lldx%lldx%lld: %d cases, %d failed, worst relative residual so far %.2e\n", dim, (long long)cells[0],
         (long long)cells[1], (long long)cells[2], cases, failed, worst);
}

/* the tridiagonal path on a uniform direction equals the transform path */
static void tri_vs_transform(void) {
  const int64_t cells[3] = {9, 8, 7};
  for (int comb = 0; comb < 125; comb += 7) {
    const int pairs[3] = {comb % 5, (comb / 5) % 5, comb / 25};
    for (int layout = 0; layout < 2; layout++)
      for (int t = 0; t < 3; t++) {
        int64_t N = 1;
        hpmg_box box;
        memset(&box, 0, sizeof box);
        box.dim = 3;
        box.layout = layout ? HPMG_FD_CELL : HPMG_FD_VERTEX;
        for (int d = 0; d < 3; d++) {
          box.cells[d] = cells[d];
          box.len[d] = 1.0 + d;
          box.x[d] = coords(cells[d], box.len[d], 0);
          box.uniform[d] = 1;
          box.bc[2 * d] = PAIRS[pairs[d]][0];
          box.bc[2 * d + 1] = PAIRS[pairs[d]][1];
        }
        for (int d = 0; d < 3; d++) N *= hpmg_box_n(&box, d);
        double *b = malloc(sizeof(double) * (size_t)N), *u1 = malloc(sizeof(double) * (size_t)N),
               *u2 = malloc(sizeof(double) * (size_t)N);
        for (int64_t c = 0; c < N; c++) b[c] = check_rand();
        fd_direct s1 = NULL, s2 = NULL;
        const double lambda = comb % 2 ? 0.0 : 1.5;
        hpmg_error e = fd_direct_create(&box, lambda, 0, 0, &s1);
        box.uniform[t] = 0;
        if (!e) e = fd_direct_create(&box, lambda, 0, 0, &s2);
        if (!e) e = fd_direct_solve(s1, b, u1);
        if (!e) e = fd_direct_solve(s2, b, u2);
        CHECK(e == HPMG_SUCCESS, "tri vs transform: %s", hpmg_last_error());
        CHECK(!s2 || fd_direct_tri_dir(s2) == t, "tridiagonal direction %d", t);
        double dn = 0, un = 0;
        for (int64_t c = 0; c < N; c++) { dn = fmax(dn, fabs(u1[c] - u2[c])); un = fmax(un, fabs(u1[c])); }
        CHECK(dn <= 1e-12 * un, "tri vs transform %s%s%s %s t=%d: max diff %.3e of %.3e", PNAME[pairs[0]],
              PNAME[pairs[1]], PNAME[pairs[2]], layout ? "cell" : "vertex", t, dn, un);
        fd_direct_destroy(&s1);
        fd_direct_destroy(&s2);
        for (int d = 0; d < 3; d++) free(box.x[d]);
        free(b); free(u1); free(u2);
      }
  }
}

/* equals the unit-box sine solver: A = h^(d-2) T, T the h^-2-scaled stencil */
static void against_fd_fft(int dim, int L) {
  const int64_t n = (int64_t)1 << L, m = n - 1, s1 = n + 1;
  hpmg_box box;
  memset(&box, 0, sizeof box);
  box.dim = dim;
  box.layout = HPMG_FD_VERTEX;
  for (int d = 0; d < 3; d++) {
    box.cells[d] = d < dim ? n : 1;
    box.len[d] = 1;
    if (d < dim) { box.x[d] = coords(n, 1.0, 0); box.uniform[d] = 1; }
  }
  const int64_t N = dim == 2 ? m * m : m * m * m;
  double *b = malloc(sizeof(double) * (size_t)N), *u = malloc(sizeof(double) * (size_t)N);
  fd_fft f;
  CHECK(fd_fft_create(dim, n, FD_DOUBLE, 0, 0, &f) == HPMG_SUCCESS, "fd_fft_create: %s", hpmg_last_error());
  double *buf = fd_fft_buffer(f);
  const double h = 1.0 / (double)n, scale = pow(h, dim - 2);
  for (int64_t c = 0; c < N; c++) {
    const int64_t i = c % m, j = (c / m) % m, k = dim == 3 ? c / (m * m) : -1;
    const double v = check_rand();
    buf[(i + 1) + s1 * ((j + 1) + s1 * (k + 1))] = v;
    b[c] = scale * v;
  }
  fd_direct s;
  CHECK(fd_direct_create(&box, 0.0, 0, 0, &s) == HPMG_SUCCESS, "fd_direct_create: %s", hpmg_last_error());
  CHECK(fd_fft_execute(f) == HPMG_SUCCESS && fd_direct_solve(s, b, u) == HPMG_SUCCESS, "solves");
  double dn = 0, un = 0;
  for (int64_t c = 0; c < N; c++) {
    const int64_t i = c % m, j = (c / m) % m, k = dim == 3 ? c / (m * m) : -1;
    dn = fmax(dn, fabs(u[c] - buf[(i + 1) + s1 * ((j + 1) + s1 * (k + 1))]));
    un = fmax(un, fabs(u[c]));
  }
  printf("%dD n=%lld: direct vs fd_fft max difference %.2e (max |u| %.2e)\n", dim, (long long)n, dn, un);
  CHECK(dn <= 1e-12 * un, "%dD L=%d: direct vs fd_fft differ by %.3e of %.3e", dim, L, dn, un);
  fd_direct_destroy(&s);
  fd_fft_destroy(&f);
  for (int d = 0; d < 3; d++) free(box.x[d]);
  free(b); free(u);
}

static void refusals(void) {
  hpmg_box box;
  memset(&box, 0, sizeof box);
  box.dim = 3;
  for (int d = 0; d < 3; d++) { box.cells[d] = 6; box.len[d] = 1; box.x[d] = coords(6, 1, 1); box.uniform[d] = d == 0; }
  fd_direct s = NULL;
  hpmg_error e = fd_direct_create(&box, 0, 0, 0, &s);
  CHECK(e == HPMG_ERR_ARG && s == NULL, "two non-uniform directions refused (got %d)", (int)e);
  printf("refused: %s\n", hpmg_last_error());
  box.uniform[1] = 1;
  box.bc[0] = HPMG_BC_PERIODIC; /* one periodic face */
  e = fd_direct_create(&box, 0, 0, 0, &s);
  CHECK(e == HPMG_ERR_ARG && s == NULL, "one periodic face refused (got %d)", (int)e);
  box.bc[0] = HPMG_BC_DIRICHLET;
  e = fd_direct_create(&box, -1, 0, 0, &s);
  CHECK(e == HPMG_ERR_ARG && s == NULL, "negative lambda refused (got %d)", (int)e);
  for (int d = 0; d < 3; d++) free(box.x[d]);
}

/* the GPU's formulas with FFTW's r2c / c2r / c2c in place of cuFFT's D2Z / Z2D / Z2Z */
static void xform_formulas(void) {
#ifdef HPMG_HAVE_FFTW
  const fd_direct_kind kinds[10] = {FDX_R2HC, FDX_HC2R, FDX_DST1, FDX_DCT1, FDX_DCT2,
                                    FDX_DCT3, FDX_DST2, FDX_DST3, FDX_DCT4, FDX_DST4};
  const fftw_r2r_kind fk[10] = {FFTW_R2HC, FFTW_HC2R, FFTW_RODFT00, FFTW_REDFT00, FFTW_REDFT10,
                                FFTW_REDFT01, FFTW_RODFT10, FFTW_RODFT01, FFTW_REDFT11, FFTW_RODFT11};
  const int64_t sizes[7] = {2, 3, 4, 7, 8, 13, 64};
  double worst_x = 0;
  for (int q = 0; q < 10; q++)
    for (int si = 0; si < 7; si++) {
      const int64_t n = sizes[si], L = fdd_len(kinds[q], n), P = fdd_in_len(kinds[q], n);
      double *x = fftw_malloc(sizeof(double) * (size_t)n), *ref = fftw_malloc(sizeof(double) * (size_t)n);
      double *re = fftw_malloc(sizeof(double) * (size_t)(2 * L + 2)), *cz = fftw_malloc(sizeof(double) * (size_t)(2 * L + 2));
      for (int64_t j = 0; j < n; j++) x[j] = check_rand();
      fftw_plan pr = fftw_plan_r2r_1d((int)n, x, ref, fk[q], FFTW_ESTIMATE);
      fftw_execute(pr);
      fftw_destroy_plan(pr);
      const int fft = fdd_fft(kinds[q]);
      for (int64_t t = 0; t < P; t++) {
        double a, b;
        fdd_gather(kinds[q], n, t, x, 1, &a, &b);
        if (fft == FDD_D2Z) re[t] = a;
        else { cz[2 * t] = a; cz[2 * t + 1] = b; }
      }
      fftw_plan p;
      if (fft == FDD_D2Z) p = fftw_plan_dft_r2c_1d((int)L, re, (fftw_complex *)cz, FFTW_ESTIMATE);
      else if (fft == FDD_Z2D) p = fftw_plan_dft_c2r_1d((int)L, (fftw_complex *)cz, re, FFTW_ESTIMATE);
      else p = fftw_plan_dft_1d((int)L, (fftw_complex *)cz, (fftw_complex *)cz, FFTW_FORWARD, FFTW_ESTIMATE);
      fftw_execute(p);
      fftw_destroy_plan(p);
      double dn = 0, rn = 0;
      for (int64_t k = 0; k < n; k++) {
        const double y = fdd_scatter(kinds[q], n, k, re, cz, 1);
        dn = fmax(dn, fabs(y - ref[k]));
        rn = fmax(rn, fabs(ref[k]));
      }
      worst_x = fmax(worst_x, dn / rn);
      CHECK(dn <= 1e-13 * rn * (double)n, "GPU formula of r2r kind %d, n = %lld: max difference %.3e of %.3e", (int)fk[q],
            (long long)n, dn, rn);
      fftw_free(x); fftw_free(ref); fftw_free(re); fftw_free(cz);
    }
  printf("GPU transform formulas (FFTW complex FFTs) vs FFTW r2r: worst relative difference %.2e\n", worst_x);
#endif
}

#ifdef HPMG_HAVE_FFTW
/* one direction's transform of the GPU solve: fdd_gather_at, FFTW's batched
 * complex FFT with cuFFT's advanced layout, fdd_scatter_at, chunk by chunk */
static void emu_transform(const int64_t n[3], int64_t size, int a, fd_direct_kind kind, int64_t Lmax, size_t chunk,
                          double *u) {
  const int64_t nn = n[a], M = size / nn, L = fdd_len(kind, nn), P = fdd_in_len(kind, nn), Q = fdd_out_len(kind, nn);
  const int64_t Mc = fdd_chunk_lines(Lmax, M, chunk);
  double *A = fftw_malloc(16 * (size_t)(Mc * Lmax)), *B = fftw_malloc(16 * (size_t)(Mc * (Lmax / 2 + 1)));
  const int fft = fdd_fft(kind);
  for (int64_t m0 = 0; m0 < M; m0 += Mc) {
    const int64_t Bc = M - m0 < Mc ? M - m0 : Mc;
    for (int64_t e = 0; e < Bc * P; e++) fdd_gather_at(kind, a, n[0], n[1], nn, m0, Bc, e, u, A, B);
    int len = (int)L, in = (int)P, out = (int)Q;
    const int is = a == 0 ? 1 : (int)Bc, id = a == 0 ? in : 1, os = a == 0 ? 1 : (int)Bc, od = a == 0 ? out : 1;
    fftw_plan p;
    if (fft == FDD_D2Z)
      p = fftw_plan_many_dft_r2c(1, &len, (int)Bc, A, &in, is, id, (fftw_complex *)B, &out, os, od, FFTW_ESTIMATE);
    else if (fft == FDD_Z2D)
      p = fftw_plan_many_dft_c2r(1, &len, (int)Bc, (fftw_complex *)B, &in, is, id, A, &out, os, od, FFTW_ESTIMATE);
    else
      p = fftw_plan_many_dft(1, &len, (int)Bc, (fftw_complex *)A, &in, is, id, (fftw_complex *)A, &out, os, od,
                             FFTW_FORWARD, FFTW_ESTIMATE);
    fftw_execute(p);
    fftw_destroy_plan(p);
    for (int64_t e = 0; e < Bc * nn; e++) fdd_scatter_at(kind, a, n[0], n[1], nn, m0, Bc, e, A, B, u);
  }
  fftw_free(A);
  fftw_free(B);
}

/* the GPU solve (fd_direct.cu's solve()) run on the host: its per-thread
 * functions looped over the threads, FFTW in place of cuFFT */
static void emulate_gpu(const hpmg_box *box, double lambda, const double *b, double *u, size_t chunk) {
  fd_direct_dir dir[3];
  memset(dir, 0, sizeof dir);
  int64_t n[3] = {1, 1, 1}, size = 1;
  int tri = -1;
  for (int d = 0; d < box->dim; d++) {
    if (fd_direct_dir_init(box, d, &dir[d])) { printf("FAIL: %s\n", hpmg_last_error()); exit(1); }
    n[d] = dir[d].n;
    size *= n[d];
    if (!dir[d].uniform) tri = d;
  }
  const int singular = hpmg_box_neumann_like(box) && lambda == 0;
  const double *w2 = box->dim == 3 ? dir[2].w : NULL, *m2 = box->dim == 3 ? dir[2].mu : NULL;
  for (int64_t c = 0; c < size; c++) u[c] = fdd_scale_in(c, n[0], n[1], tri, dir[0].w, dir[1].w, w2, b[c]);
  int fast = tri < 0;
  for (int d = 0; d < box->dim; d++) fast = fast && dir[d].periodic;
  if (fast) { /* solve_fast: one r2c of rank dim, the shared division, one c2r */
    const int64_t nh = n[0] / 2 + 1, csize = nh * n[1] * n[2];
    int nn[3];
    double norm = 1;
    for (int d = 0; d < box->dim; d++) { nn[d] = (int)n[box->dim - 1 - d]; norm *= dir[d].norm; }
    fftw_complex *Z = fftw_malloc(sizeof(fftw_complex) * (size_t)csize);
    fftw_plan pf = fftw_plan_dft_r2c(box->dim, nn, u, Z, FFTW_ESTIMATE);
    fftw_plan pb = fftw_plan_dft_c2r(box->dim, nn, Z, u, FFTW_ESTIMATE);
    fftw_execute(pf);
    for (int64_t e = 0; e < csize; e++)
      fdd_divide_fast_at(e, nh, n[1], lambda, 1 / norm, dir[0].mu, dir[1].mu, m2, (double *)Z);
    fftw_execute(pb);
    fftw_destroy_plan(pf);
    fftw_destroy_plan(pb);
    fftw_free(Z);
    for (int d = 0; d < 3; d++) fd_direct_dir_free(&dir[d]);
    return;
  }
  double norm = 1;
  for (int d = 0; d < box->dim; d++)
    if (d != tri) {
      const int64_t Lf = fdd_len(dir[d].kf, n[d]), Lb = fdd_len(dir[d].kb, n[d]);
      emu_transform(n, size, d, dir[d].kf, Lf > Lb ? Lf : Lb, chunk, u);
      norm *= dir[d].norm;
    }
  if (tri < 0) {
    for (int64_t c = 0; c < size; c++) {
      const double sg = fdd_sigma(c, n[0], n[1], -1, lambda, dir[0].mu, dir[1].mu, m2);
      u[c] = sg > 0 ? u[c] / norm / sg : 0;
    }
  } else {
    const int64_t N = n[tri], st = tri == 0 ? 1 : (tri == 1 ? n[0] : n[0] * n[1]);
    double *cp = malloc(sizeof(double) * (size_t)size), *z = malloc(sizeof(double) * (size_t)size);
    for (int64_t q = 0; q < size / N; q++)
      fdd_tri_line(q, tri, n[0], n[1], N, st, lambda, 1 / norm, singular, dir[tri].periodic, dir[0].mu, dir[1].mu, m2,
                   dir[tri].lo, dir[tri].di, dir[tri].up, dir[tri].w, u, cp, z);
    free(cp);
    free(z);
  }
  for (int d = box->dim - 1; d >= 0; d--)
    if (d != tri) {
      const int64_t Lf = fdd_len(dir[d].kf, n[d]), Lb = fdd_len(dir[d].kb, n[d]);
      emu_transform(n, size, d, dir[d].kb, Lf > Lb ? Lf : Lb, chunk, u);
    }
  for (int d = 0; d < 3; d++) fd_direct_dir_free(&dir[d]);
}

/* the emulated GPU solve equals the CPU solve: every BC pair, both layouts,
 * uniform and stretched in each direction, large and tiny staging chunks */
static void gpu_emulation(int dim, const int64_t cells[3], size_t chunk, int every) {
  double worst_e = 0;
  int cases = 0;
  const int ncomb = dim == 2 ? 25 : 125;
  for (int comb = 0; comb < ncomb; comb += every) {
    const int pairs[3] = {comb % 5, (comb / 5) % 5, comb / 25};
    for (int layout = 0; layout < 2; layout++)
      for (int sd = -1; sd < dim; sd++) {
        hpmg_box box;
        memset(&box, 0, sizeof box);
        box.dim = dim;
        box.layout = layout ? HPMG_FD_CELL : HPMG_FD_VERTEX;
        int64_t N = 1;
        for (int d = 0; d < 3; d++) {
          box.cells[d] = d < dim ? cells[d] : 1;
          box.len[d] = 1.0 + 0.25 * d;
          if (d >= dim) continue;
          box.x[d] = coords(cells[d], box.len[d], d == sd ? 1 + (comb + d) % 2 : 0);
          box.uniform[d] = d != sd;
          box.bc[2 * d] = PAIRS[pairs[d]][0];
          box.bc[2 * d + 1] = PAIRS[pairs[d]][1];
        }
        for (int d = 0; d < dim; d++) N *= hpmg_box_n(&box, d);
        const double lambda = (comb + sd + layout) % 2 ? 0.0 : 0.8;
        double *b = malloc(sizeof(double) * (size_t)N), *u1 = malloc(sizeof(double) * (size_t)N),
               *u2 = malloc(sizeof(double) * (size_t)N);
        for (int64_t c = 0; c < N; c++) b[c] = check_rand();
        fd_direct s;
        CHECK(fd_direct_create(&box, lambda, 0, 0, &s) == HPMG_SUCCESS && fd_direct_solve(s, b, u1) == HPMG_SUCCESS,
              "CPU solve: %s", hpmg_last_error());
        fd_direct_destroy(&s);
        emulate_gpu(&box, lambda, b, u2, chunk);
        double dn = 0, un = 0;
        for (int64_t c = 0; c < N; c++) { dn = fmax(dn, fabs(u1[c] - u2[c])); un = fmax(un, fabs(u1[c])); }
        worst_e = fmax(worst_e, dn / un);
        CHECK(dn <= 1e-11 * un, "GPU emulation %dD %s %s%s%s stretch %d: differs from the CPU by %.3e of %.3e", dim,
              layout ? "cell" : "vertex", PNAME[pairs[0]], PNAME[pairs[1]], dim == 3 ? PNAME[pairs[2]] : "", sd, dn, un);
        cases++;
        for (int d = 0; d < 3; d++) free(box.x[d]);
        free(b); free(u1); free(u2);
      }
  }
  printf("GPU emulation %dD %lldx%lldx%lld chunk %zu B: %d cases, worst difference from the CPU %.2e\n", dim,
         (long long)cells[0], (long long)cells[1], (long long)cells[2], chunk, cases, worst_e);
}
#endif

int main(void) {
  xform_formulas();
  const int64_t c2a[3] = {7, 8, 1}, c2b[3] = {13, 6, 1}, c2c[3] = {131, 5, 1}, c3a[3] = {5, 6, 7}, c3b[3] = {4, 9, 3};
  sweep(2, c2a);
  sweep(2, c2b);
  sweep(2, c2c); /* several blocks of lines in the tridiagonal pass */
  sweep(3, c3a);
  sweep(3, c3b);
  { /* above the serial threshold: the threaded passes (channel-like, and a cyclic tridiagonal direction) */
    const int64_t cb[3] = {40, 33, 30};
    const int ch[3] = {4, 1, 4}, cy[3] = {0, 4, 2};
    int bad = run_case(3, cb, ch, 1, 1, 1, 0.0, NULL);
    bad += run_case(3, cb, cy, 0, 1, 2, 0.3, NULL);
    bad += run_case(3, cb, cy, 1, 0, 1, 0.0, NULL);
    printf("3D 40x33x30 threaded: %d failed, worst relative residual so far %.2e\n", bad, worst);
  }
  tri_vs_transform();
  against_fd_fft(2, 6);
  against_fd_fft(3, 4);
  refusals();
#ifdef HPMG_HAVE_FFTW
  const int64_t e2[3] = {9, 12, 1}, e3[3] = {6, 7, 5}, e3c[3] = {16, 11, 13};
  gpu_emulation(2, e2, (size_t)1 << 30, 1);
  gpu_emulation(3, e3, (size_t)1 << 30, 1);
  gpu_emulation(3, e3c, 8192, 6); /* chunks of a few lines and a remainder */
#endif
  return check_report();
}
