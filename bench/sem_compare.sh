#!/bin/sh
# Time to the same error (docs/sem.md, "Comparison"): spectral elements with
# static condensation (--disc sem, kMG and kvMG), hpmg's Q_k multigrid (FMG,
# --disc fe) and the deal.II peer (matrix-free GMG-preconditioned CG,
# ../shared/peers/dealii), all on the unit cube with the sine manufactured
# solution u = prod sin(pi x_i), homogeneous Dirichlet, on meshes of N^3
# cells of degree k (N = 2^L for qk and dealii: deal.II refines one cell).
# RHS=waves: paper 001's eq. 27 on (0, 2 pi)^3 instead (Dirichlet data from
# it; hpmg only, Q_k on any N: the peer has the sine problem only).
#
# "Same error": each method's discretization error E on its mesh is its L2
# error after a solve to a 1e-12 residual reduction; then its tolerance is
# loosened along 1e-1, 1e-2, ..., 1e-12 (the first, loosest one whose L2
# error is within 10% of E) and that solve is timed (THREADS list; the
# search runs on the last thread count; deal.II runs MPI ranks for
# threads, as its README recommends on this machine). Printed: method,
# degree, cells, threads, unknowns (GLL/FE nodes, boundary included), the
# tolerance found, iterations, setup and solve seconds (best of REPEAT),
# microseconds per unknown of the solve, the L2 error and E.
#
# The deal.II peer built in /tmp/peers/dealii10/b10 has 3D degrees up to 8
# (9 and 10 in 2D only): its k = 10 case prints "skipped".
#
# usage: sem_compare.sh path/to/hpmg [path/to/poisson_dealii] [cases] [threads]
#   cases: "method:k:N ..." with method qk, dealii, kmg, kvmg (default below:
#          about 1e6 unknowns, Q_k / deal.II degrees 4, 6, 8, 10 and SEM 4..16)
#   threads: default "1 2"; REPEAT (default 2) solves per timing; RHS (sine, waves)
if [ $# -lt 1 ] || [ ! -x "$1" ]; then
  echo "usage: sem_compare.sh path/to/hpmg [path/to/poisson_dealii] [cases] [threads]" >&2
  exit 2
fi
hpmg=$1
dealii=${2:-/tmp/peers/dealii10/b10/poisson_dealii}
cases=${3:-"qk:4:32 dealii:4:32 kmg:4:32 kvmg:4:32
qk:6:16 dealii:6:16 kmg:6:16 kvmg:6:16
qk:8:16 dealii:8:16 kmg:8:16 kvmg:8:16
qk:10:8 dealii:10:8 kmg:10:8 kvmg:10:8
kmg:12:8 kvmg:12:8 kmg:16:6 kvmg:16:6"}
threads=${4:-"1 2"}
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive} # passive unless set (spinning threads stall a shared machine)
export HPMG=$hpmg DEALII=$dealii CASES=$cases THREADS=$threads REPEAT=${REPEAT:-2} RHS=${RHS:-sine}
exec python3 - <<'EOF'
import json, math, os, re, subprocess, sys

hpmg, dealii = os.environ["HPMG"], os.environ["DEALII"]
threads = [int(t) for t in os.environ["THREADS"].split()]
repeat = int(os.environ["REPEAT"])
waves = os.environ["RHS"] == "waves"
if os.environ["RHS"] not in ("sine", "waves"):
    sys.exit("sem_compare.sh: RHS must be sine or waves")
ladder = [10.0 ** -e for e in range(1, 13)]

def run(method, k, n, tol, t):
    """one solve: dict with dofs, its, setup, solve, l2"""
    if method == "dealii":
        if waves:
            raise RuntimeError("the deal.II peer solves the sine problem only")
        L = int(round(math.log2(n)))
        cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", str(t), dealii, "3", str(k), str(L),
               "--tol", "%g" % tol, "--repeat", "1"]
        out = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS="1"))
        line = [l for l in out.stdout.splitlines() if l.startswith("peer=dealii")]
        if out.returncode or not line:  # e.g. a degree the peer was not built for (3D: k <= 8 in dealii10)
            raise RuntimeError("deal.II failed: %s: %s" % (" ".join(cmd), (out.stdout + out.stderr).strip().splitlines()[0]))
        d = dict(kv.split("=", 1) for kv in line[-1].split())
        return dict(dofs=int(d["dofs"]), its=int(d["iters"]), setup=float(d["setup_s"]), solve=float(d["solve_s"]),
                    l2=float(d["l2err"]))
    if method == "qk" and waves:
        cmd = [hpmg, "solve", "--disc", "fe", "--dim", "3", "--degree", str(k), "--cells", str(n), "--solver", "fmg",
               "--rhs", "waves"]
    elif method == "qk":
        L = int(round(math.log2(n)))
        cmd = [hpmg, "solve", "--disc", "fe", "--dim", "3", "--degree", str(k), "--coarse", "1", "--refine", str(L),
               "--solver", "fmg"]
    else:
        cmd = [hpmg, "solve", "--disc", "sem", "--dim", "3", "--degree", str(k), "--cells", str(n), "--solver", method]
        cmd += ["--rhs", "waves"] if waves else []
    cmd += ["--tol", "%g" % tol, "--threads", str(t), "--json", "--maxit", "1000"]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode:
        sys.exit("hpmg failed: %s\n%s%s" % (" ".join(cmd), out.stdout[-2000:], out.stderr[-2000:]))
    d = json.loads(out.stdout)
    return dict(dofs=d["dofs_total"] or d["dofs"], its=d["iterations"], setup=d["setup_s"], solve=d["solve_s"],
                l2=d["l2_error"])

def best(method, k, n, tol, t):
    rs = [run(method, k, n, tol, t) for _ in range(repeat)]
    r = min(rs, key=lambda r: r["solve"])
    r["setup"] = min(x["setup"] for x in rs)
    return r

print("%-6s %3s %4s %3s %9s %7s %4s %8s %8s %8s %10s %10s" % ("method", "k", "N", "thr", "unknowns", "tol", "its",
      "setup_s", "solve_s", "us/unk", "L2", "L2_disc"))
sys.stdout.flush()
for case in os.environ["CASES"].split():
    method, k, n = case.split(":")
    k, n = int(k), int(n)
    t0 = threads[-1]
    try:
        e = run(method, k, n, 1e-12, t0)["l2"]
    except RuntimeError as err:
        print("%-6s %3d %4d  skipped: %s" % (method, k, n, err))
        continue
    tol = next(tl for tl in ladder if run(method, k, n, tl, t0)["l2"] <= 1.1 * e)
    for t in threads:
        r = best(method, k, n, tol, t)
        print("%-6s %3d %4d %3d %9d %7.0e %4d %8.3f %8.3f %8.3f %10.3e %10.3e" % (method, k, n, t, r["dofs"], tol,
              r["its"], r["setup"], r["solve"], 1e6 * r["solve"] / r["dofs"], r["l2"], e))
        sys.stdout.flush()
EOF
