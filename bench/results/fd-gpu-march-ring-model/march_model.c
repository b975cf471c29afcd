/* CPU model of k_mcgs_march (src/cuda/fd_kernels.cu): the z-marching fused
 * S-sweep 8-color GS (3D), out of place, tiles of TX x TY points including a
 * ring (RX in x, RY in y), compared bitwise with the color-by-color sweep.
 *   gcc -O2 march_model.c -o m && ./m n TX TY RX S backward [RY]
 * Result: R = 2S is the smallest ring with 0 mismatches (x and y). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
typedef double T;
static int n; static long s1, s2;
#define IDX(i,j,k) ((long)(i) + (long)(j)*s1 + (long)(k)*s2)
static void ref_sweep(T *u, const T *f, int backward) {
  const T w = (T)(1.0/6.0);
  for (int cc = 0; cc < 8; cc++) {
    int c = backward ? 7 - cc : cc;
    for (int k = 1; k < n; k++) for (int j = 1; j < n; j++) for (int i = 1; i < n; i++) {
      if (((i&1) | ((j&1)<<1) | ((k&1)<<2)) != c) continue;
      long q = IDX(i,j,k);
      u[q] = w * (f[q] + u[q-1] + u[q+1] + u[q-s1] + u[q+s1] + u[q-s2] + u[q+s2]);
    }
  }
}
static int TX, TY, R, RY, S;
/* one block: owned x in [ox0, ox0+OX), y in [oy0, oy0+OY) */
static void block(const T *uin, const T *f, T *uout, int bx, int by, int p) {
  const int OX = TX - 2*R, OY = TY - 2*RY, WN = 2*S + 2;
  const int x0 = 1 + bx*OX - R, y0 = 1 + by*OY - RY; /* tile origin */
  const T w = (T)(1.0/6.0);
  T *win = calloc((size_t)WN*TX*TY, sizeof(T));
#define SLOT(q) (((q) % WN + WN) % WN)
#define W(q,a,b) win[((long)SLOT(q)*TY + (b))*TX + (a)]
  int kmax = n + 2*S - 2; if ((kmax & 1) != p) kmax++;
  for (int k = p; k <= kmax; k += 2) {
    for (int q = k; q <= k+1; q++) /* load */
      for (int b = 0; b < TY; b++) for (int a = 0; a < TX; a++) {
        int i = x0+a, j = y0+b;
        W(q,a,b) = (q >= 0 && q <= n && i >= 0 && i <= n && j >= 0 && j <= n) ? uin[IDX(i,j,q)] : 0;
      }
    for (int s = 0; s < S; s++) for (int ph = 0; ph < 2; ph++) {
      int q = k - 2*s - ph; /* A_s(k-2s), B_s(k-2s-1) */
      if (q < 1 || q > n-1) continue;
      for (int sub = 0; sub < 4; sub++) {
        int jp = (sub >> 1) ? 1-p : p, ip = (sub & 1) ? 1-p : p;
        for (int b = 1; b < TY-1; b++) for (int a = 1; a < TX-1; a++) {
          int i = x0+a, j = y0+b;
          if (i < 1 || i > n-1 || j < 1 || j > n-1 || (i&1) != ip || (j&1) != jp) continue;
          W(q,a,b) = w * (f[IDX(i,j,q)] + W(q,a-1,b) + W(q,a+1,b) + W(q,a,b-1) + W(q,a,b+1) + W(q-1,a,b) + W(q+1,a,b));
        }
      }
    }
    for (int q = k-2*S; q <= k-2*S+1; q++) { /* store final planes */
      if (q < 1 || q > n-1) continue;
      for (int b = RY; b < TY-RY; b++) for (int a = R; a < TX-R; a++) {
        int i = x0+a, j = y0+b;
        if (i >= 1 && i <= n-1 && j >= 1 && j <= n-1) uout[IDX(i,j,q)] = W(q,a,b);
      }
    }
  }
  free(win);
}
int main(int argc, char **argv) {
  n = atoi(argv[1]); TX = atoi(argv[2]); TY = atoi(argv[3]); R = atoi(argv[4]); S = atoi(argv[5]); RY = argc > 7 ? atoi(argv[7]) : R;
  int back = atoi(argv[6]);
  s1 = n+1; s2 = s1*s1; long N = s2*(n+1);
  T *u = calloc(N, sizeof(T)), *f = calloc(N, sizeof(T)), *ur = calloc(N, sizeof(T)), *uo = calloc(N, sizeof(T));
  srand(1);
  for (int k = 1; k < n; k++) for (int j = 1; j < n; j++) for (int i = 1; i < n; i++) {
    u[IDX(i,j,k)] = rand() / (T)RAND_MAX; f[IDX(i,j,k)] = rand() / (T)RAND_MAX - 0.5; }
  memcpy(ur, u, N*sizeof(T));
  for (int s = 0; s < S; s++) ref_sweep(ur, f, back);
  const int OX = TX-2*R, OY = TY-2*RY;
  for (int by = 0; by*OY < n-1; by++) for (int bx = 0; bx*OX < n-1; bx++) block(u, f, uo, bx, by, back);
  long bad = 0;
  for (int k = 1; k < n; k++) for (int j = 1; j < n; j++) for (int i = 1; i < n; i++)
    if (uo[IDX(i,j,k)] != ur[IDX(i,j,k)]) bad++;
  printf("n=%d TX=%d TY=%d R=%d S=%d back=%d: %ld mismatches\n", n, TX, TY, R, S, back, bad);
  return bad != 0;
}
