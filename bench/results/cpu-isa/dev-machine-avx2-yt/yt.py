# Applies the y stage written transposed (README.md) to a copy of
# src/disc/qk/laplace_kernels.inc at 909e2b0: python3 yt.py PATH_TO_THE_COPY
import sys
p=sys.argv[1]
s=open(p).read()
anchor="""/* xt: the x stage on transposed line groups"""
fn='''#if defined(LAP_SHUFFLE) && HPMG_VBYTES / RSIZE <= 4
#define LAP_YT 1
static inline __attribute__((always_inline)) void SFX(contract_yt)(int64_t nx, int64_t l0, int64_t ln,
                                                                   const hpmg_laplace_rows *Ry, const REAL *T1,
                                                                   const REAL *T2, const int has2, const REAL *yc,
                                                                   const REAL *sky, REAL lambda, REAL *restrict AT,
                                                                   REAL *restrict BT) {
  const VEC lam = SFX(vsplat)(lambda);
  for (int64_t i0 = 0; i0 < nx; i0 += VL) {
    if (i0 + VL > nx) i0 = nx - VL;
    VEC ra[VL], rb[VL];
    UNROLL for (int q = 0; q < (int)VL; q++) {
      const int64_t i2 = l0 + q < ln ? l0 + q : ln - 1, j0 = Ry->j0[i2];
      const int nb = Ry->n[i2];
      const REAL *cf = yc + 2 * Ry->off[i2];
      const REAL *p = T1 + j0 * nx + i0, *qq = has2 ? T2 + j0 * nx + i0 : NULL;
      const VEC x = SFX(vld)(p + (i2 - j0) * nx);
      VEC a = (VEC){0}, b = (VEC){0};
      for (int o = 0; o < nb; o++, p += nx) {
        const REAL kk = cf[2 * o], m = cf[2 * o + 1];
        const VEC v = SFX(vldr)(p);
        a += m * v;
        b += kk * (v - x);
        if (has2) {
          b += m * SFX(vld)(qq);
          qq += nx;
        }
      }
      ra[q] = a;
      rb[q] = b + SFX(vsplat)(sky[i2]) * x + lam * a;
    }
    SFX(transpose)(ra);
    SFX(transpose)(rb);
    UNROLL for (int q = 0; q < (int)VL; q++) {
      SFX(vst)(AT + (i0 + q) * XG, ra[q]);
      SFX(vst)(BT + (i0 + q) * XG, rb[q]);
    }
  }
}
#endif

'''
assert anchor in s
s=s.replace(anchor, fn+anchor,1)
old="""          for (int l = 0; l < nl; l++) {
            const int64_t i2 = g0 + l, j0 = Ry->j0[i2];
            if (T2)
              SFX(contract_y)(nx, Ry->n[i2], T1 + j0 * nx, T2 + j0 * nx, 1, nx, yc + 2 * Ry->off[i2],
                              (int)(i2 - j0), op->SK[1][i2], lambda, la + l * nx, lb + l * nx);
            else
              SFX(contract_y)(nx, Ry->n[i2], T1 + j0 * nx, NULL, 0, nx, yc + 2 * Ry->off[i2], (int)(i2 - j0),
                              op->SK[1][i2], lambda, la + l * nx, lb + l * nx);
          }
          /* y_line = Kx A + Mx B (banded along x) on the transposed group */
          const int nv = (nl + (int)VL - 1) / (int)VL;
          SFX(to_rows)(nx, nv, la, AT);
          SFX(to_rows)(nx, nv, lb, BT);
"""
new="""          const int nv = (nl + (int)VL - 1) / (int)VL;
#ifdef LAP_YT
          if (nx >= VL) {
            for (int v = 0; v < nv; v++) {
              if (T2) SFX(contract_yt)(nx, g0 + v * VL, g0 + nl, Ry, T1, T2, 1, yc, op->SK[1], lambda, AT + v * VL, BT + v * VL);
              else SFX(contract_yt)(nx, g0 + v * VL, g0 + nl, Ry, T1, NULL, 0, yc, op->SK[1], lambda, AT + v * VL, BT + v * VL);
            }
          } else
#endif
          {
          for (int l = 0; l < nl; l++) {
            const int64_t i2 = g0 + l, j0 = Ry->j0[i2];
            if (T2)
              SFX(contract_y)(nx, Ry->n[i2], T1 + j0 * nx, T2 + j0 * nx, 1, nx, yc + 2 * Ry->off[i2],
                              (int)(i2 - j0), op->SK[1][i2], lambda, la + l * nx, lb + l * nx);
            else
              SFX(contract_y)(nx, Ry->n[i2], T1 + j0 * nx, NULL, 0, nx, yc + 2 * Ry->off[i2], (int)(i2 - j0),
                              op->SK[1][i2], lambda, la + l * nx, lb + l * nx);
          }
          SFX(to_rows)(nx, nv, la, AT);
          SFX(to_rows)(nx, nv, lb, BT);
          }
"""
assert old in s
s=s.replace(old,new)
s=s.replace("#undef LAP_SHUFFLE\n","#undef LAP_SHUFFLE\n#undef LAP_YT\n")
open(p,'w').write(s)
