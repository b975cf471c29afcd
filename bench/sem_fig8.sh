#!/bin/sh
# Paper 001, Fig. 8 (docs/sem.md): iterations of MG, kMG, kvMG on anisotropic meshes, 8^3
# elements, p = 16, box (2 pi AR) x (pi ceil(AR/2)) x (2 pi), Dirichlet, the manufactured sine
# solution, 1e-10 reduction. usage (from the repository root, build in build/): sh bench/sem_fig8.sh [build dir]
for ar in 1 4 8 16 48; do
  lx=$(python3 -c "import math; print(2*math.pi*$ar)"); ly=$(python3 -c "import math; print(math.pi*math.ceil($ar/2))"); lz=$(python3 -c "import math; print(2*math.pi)")
  for s in mg kmg kvmg; do
    it=$(OMP_WAIT_POLICY=passive OMP_NUM_THREADS=2 "${1:-build}/hpmg" solve --disc sem --degree 16 --cells 8 --box $lx,$ly,$lz --solver $s --tol 1e-10 --maxit 200 --json 2>/dev/null | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["iterations"], "%.1f" % d["solve_s"])')
    echo "AR $ar $s $it"
  done
done
