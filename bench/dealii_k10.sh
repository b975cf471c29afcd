#!/bin/bash
# The deal.II peer (../shared/peers/dealii) instantiates K = 1..8 only. For the
# issue-5 comparison at 2D k = 9, 10 this builds a local variant with 2D
# Poisson k = 9, 10 added, from an already built peer (setup.sh), without
# touching it: main.cc gets two more cases (2D, lambda = 0 only), two more
# instantiation units are compiled with the peer's flags, and the peer's
# other objects are relinked. Output: $OUT_DIR/poisson_dealii (default
# /tmp/peers/dealii10/b10). About 2 minutes on 2 cores.
#   bench/dealii_k10.sh [PEER_SRC] [PEER_BUILD]
set -eu
SRC=${1:-/tmp/peers/dealii}
BLD=${2:-$SRC/build}
OUT_DIR=${OUT_DIR:-/tmp/peers/dealii10/b10}
mkdir -p "$OUT_DIR"
python3 - "$SRC/main.cc" "$OUT_DIR/main.cc" <<'PY'
import sys
s = open(sys.argv[1]).read()
a = """      case 8: run_problem<dim, 8, with_mass>(prm); break;
      default: std::fprintf(stderr, "k must be in 1..8\\n"); std::exit(1);"""
b = """      case 8: run_problem<dim, 8, with_mass>(prm); break;
      case 9:
        if constexpr (dim == 2 && !with_mass) { run_problem<dim, 9, with_mass>(prm); break; }
        std::fprintf(stderr, "k = 9, 10: 2D Poisson only in this build\\n"); std::exit(1);
      case 10:
        if constexpr (dim == 2 && !with_mass) { run_problem<dim, 10, with_mass>(prm); break; }
        std::fprintf(stderr, "k = 9, 10: 2D Poisson only in this build\\n"); std::exit(1);
      default: std::fprintf(stderr, "k must be in 1..10\\n"); std::exit(1);"""
assert s.count(a) == 1, "unexpected peer main.cc"
open(sys.argv[2], "w").write(s.replace(a, b))
PY
FL=$BLD/CMakeFiles/poisson_dealii.dir/flags.make
F=$(sed -n 's/^CXX_FLAGS = //p' "$FL")
I=$(sed -n 's/^CXX_INCLUDES = //p' "$FL")
D=$(sed -n 's/^CXX_DEFINES = //p' "$FL")
for k in 9 10; do
  printf '#include "poisson_mf.templates.h"\ntemplate void run_problem<2, %d, false>(const Params &);\n' $k > "$OUT_DIR/inst_d2_k${k}_mass_false.cc"
done
pids=()
for s in main.cc inst_d2_k9_mass_false.cc inst_d2_k10_mass_false.cc; do
  /usr/bin/c++ $D -I"$SRC" $I $F -c "$OUT_DIR/$s" -o "$OUT_DIR/$s.o" & pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
cd "$BLD"
L=$(sed "s#CMakeFiles/poisson_dealii.dir/main.cc.o#$OUT_DIR/main.cc.o $OUT_DIR/inst_d2_k9_mass_false.cc.o $OUT_DIR/inst_d2_k10_mass_false.cc.o#; s#-o poisson_dealii#-o $OUT_DIR/poisson_dealii#" CMakeFiles/poisson_dealii.dir/link.txt)
eval "$L"
echo "built $OUT_DIR/poisson_dealii"
