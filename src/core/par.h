#ifndef HPMG_CORE_PAR_H
#define HPMG_CORE_PAR_H
/* OpenMP regions of small loops (the coarse levels of every multigrid, the
 * spectral elements' p = 2 and 4 levels): a loop runs on the team only where
 * one of its regions (in a coloured loop, one colour between two barriers)
 * holds at least hpmg_par_min units of work (about a flop or a double
 * streamed); below, it runs on the calling thread. The threshold follows how
 * idle threads wait, read from OMP_WAIT_POLICY by hpmg_par_init (the solvers
 * call it at setup): with "passive" every region and barrier wakes sleeping
 * threads by a system call, microseconds that a coarse level's loop does not
 * have (HPMG_PAR_MIN_PASSIVE); spinning threads (libgomp's default and
 * "active") join a region within a fraction of a microsecond, so that small
 * loops still gain from the team (HPMG_PAR_MIN_SPIN; docs/sem.md, "Time and
 * memory", docs/bc.md). Elementwise loops give the same result bit for bit
 * either way; a reduction's rounding follows the number of threads that
 * ran it. hpmg_set_par_min(0) puts every loop on the team (the thread tests);
 * it returns the previous value and fixes the threshold (no later reading of
 * the environment). */
#define HPMG_PAR_MIN_PASSIVE 65536.0
#define HPMG_PAR_MIN_SPIN 4096.0
extern double hpmg_par_min; /* < 0 until hpmg_par_init (or hpmg_set_par_min) sets it */
void hpmg_par_init(void);
static inline int hpmg_par(double work) { return work >= hpmg_par_min; }
double hpmg_set_par_min(double units);

/* hpmg's dense LAPACK calls (1D eigenproblems of the fast diagonalization and
 * the star smoother, Cholesky of coarsest levels, the Lanczos eigenvalues) are
 * small and run on the calling thread: OpenBLAS's pthreads build hands even
 * a dsymv of order 15 to its own thread pool, whose workers then wait for
 * cores that hpmg's OpenMP threads hold (sem p = 8 on 8^3, two spinning
 * threads, 2-core VM: setup 0.14-0.27 s instead of 0.015-0.024 s, 20% of its
 * time in dsygv -> dsymv_thread_U). hpmg_blas_serial_begin sets OpenBLAS to one
 * thread and returns the previous count, hpmg_blas_serial_end restores it;
 * with another BLAS both do nothing. Call them from serial code only (the
 * count is global). */
int hpmg_blas_serial_begin(void);
void hpmg_blas_serial_end(int previous);
#endif
