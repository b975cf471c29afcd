#!/bin/sh
# The levels of Q_k boxes (docs/bc.md, Levels): cells stretched in more than one direction, and
# uniform cells at odd counts. -Laplace u = f on the unit square or cube, Dirichlet faces, the
# manufactured sine solution, CG + V-cycle to a relative residual of 1e-9, default smoother
# (the vertex patch on stretched cells, Chebyshev on uniform ones). One line per case: the
# levels the box semi-coarsening built, the coarsest level's unknowns, iterations, setup and
# time to solution, DoF/s and the L2 error against the exact solution.
# Usage: bench/qk_box_levels.sh path/to/hpmg [extra hpmg options, e.g. --threads 2]
HPMG=${1:?usage: qk_box_levels.sh path/to/hpmg [hpmg options]}
shift
printf '%-36s %10s %6s %9s %5s %9s %10s %10s %12s\n' case unknowns levels coarsest its "setup[s]" "solve[s]" "DoF/s" "L2 error"
run() { # label dim degree cells [grid]
  # shellcheck disable=SC2086
  "$HPMG" solve --dim "$2" --degree "$3" --cells "$4" ${5:+--grid "$5"} --solver cg --json $EXTRA > /tmp/qk_box_levels.$$ 2>/dev/null
  python3 - "$1" /tmp/qk_box_levels.$$ <<'EOF'
import json, sys
d = json.load(open(sys.argv[2]))
coarse = min(l['dofs'] for l in d['per_level'])
print('%-36s %10d %6d %9d %5d %9.3f %10.3f %10.3g %12.4e%s' % (sys.argv[1], d['dofs'], d['levels'], coarse, d['iterations'],
      d['setup_s'], d['solve_s'], d['dofs_per_s'], d['l2_error'], '' if d['converged'] else ' (not converged)'))
EOF
}
EXTRA="$*"
run "2D Q2 256^2 x,y tanh 2" 2 2 256,256 x=tanh:2,y=tanh:2
run "2D Q2 1024^2 x,y tanh 2" 2 2 1024,1024 x=tanh:2,y=tanh:2
run "2D Q4 256^2 x,y tanh 3" 2 4 256,256 x=tanh:3,y=tanh:3
run "2D Q4 256^2 x geometric 1.01, y tanh 2" 2 4 256,256 x=geometric:1.01,y=tanh:2
run "3D Q2 48^3 x,y,z tanh 2" 3 2 48,48,48 x=tanh:2,y=tanh:2,z=tanh:2
run "2D Q2 1024^2 y tanh 2 (one direction)" 2 2 1024,1024 y=tanh:2
run "3D Q2 63^3 uniform" 3 2 63,63,63
run "3D Q2 64^3 uniform (even)" 3 2 64,64,64
run "3D Q2 97^3 uniform" 3 2 97,97,97
run "3D Q2 85x64x85 uniform" 3 2 85,64,85
run "3D Q4 31^3 uniform" 3 4 31,31,31
run "2D Q4 255^2 uniform" 2 4 255,255
rm -f /tmp/qk_box_levels.$$
