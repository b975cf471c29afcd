#!/bin/bash
# A/B of op_bench between builds, one thread, variants forced with HPMG_ISA, interleaved
# case by case over ROUNDS rounds; prints the fastest double/float apply ms of each.
#   OPS="dim:k:L ..." ISAS="avx2 avx512" REP=10 ROUNDS=3 ab.sh BUILD_DIR...  (raw lines: /tmp/isaop-raw.txt)
# local A/B: builds given as args; OPS, ISAS, ROUNDS
for r in $(seq ${ROUNDS:-3}); do
for c in ${OPS:-3:3:5 3:5:4 3:7:4}; do IFS=: read -r d k L <<< "$c"
for isa in ${ISAS:-avx2}; do for b in "$@"; do
  HPMG_ISA=$isa OMP_NUM_THREADS=1 $b/op_bench $d $k $L ${REP:-10} | grep -E "apply" | sed "s|^|$r $b $isa $d $k $L |"
done; done; done; done > /tmp/isaop-raw.txt
python3 - <<'PY'
best={}
order=[]
for l in open('/tmp/isaop-raw.txt'):
    f=l.split(); r,b,isa,d,k,L,prec=f[:7]; ms=float(f[8])
    if b not in order: order.append(b)
    key=(d,k,L,isa,prec,b); best[key]=min(best.get(key,1e9),ms)
keys=sorted(set(k[:5] for k in best))
print("dim k L isa prec " + " | ".join(order))
for kk in keys: print(*kk, *["%.3f"%best.get(kk+(b,),0) for b in order])
PY
