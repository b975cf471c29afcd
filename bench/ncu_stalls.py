#!/usr/bin/env python3
"""Summarize ncu per-SASS-instruction stall sampling of one kernel.

usage: ncu -i REPORT.ncu-rep --page source --csv --print-source sass > sass.csv
       bench/ncu_stalls.py sass.csv [N]
prints stall samples by opcode and by reason, and with N the N instructions with most samples
(the report needs --section SourceCounters).
"""
import csv,sys
rows=list(csv.reader(open(sys.argv[1])))
h=rows[1]; data=[r for r in rows[2:] if len(r)>=len(h)-1]
ci={n:i for i,n in enumerate(h)}
si=ci['Warp Stall Sampling (All Samples)']; ei=ci['Instructions Executed']
reasons=[n for n in h if n.startswith('stall_') and 'Not Issued' not in n]
f=lambda x: float(x) if x not in ('','-') else 0.0
tot=sum(f(r[si]) for r in data)
print('instructions',len(data),'samples',tot, 'executed', sum(f(r[ei]) for r in data))
# aggregate by opcode
from collections import defaultdict
agg=defaultdict(lambda:[0,0]); rs=defaultdict(float)
for r in data:
    op=r[1].split()[0] if r[1] else '?'
    if op.startswith('@'): op=r[1].split()[1]
    op=op.split('.')[0]
    agg[op][0]+=f(r[si]); agg[op][1]+=f(r[ei])
    for n in reasons: rs[n]+=f(r[ci[n]])
print('by opcode (samples %, executed):')
for op,(s_,e) in sorted(agg.items(),key=lambda x:-x[1][0])[:25]: print(f'  {op:10s} {100*s_/tot:5.1f}%  {e:12.0f}')
print('reasons:', ', '.join(f'{n[6:]} {100*v/tot:.1f}%' for n,v in sorted(rs.items(),key=lambda x:-x[1]) if v>0))
if len(sys.argv)>2:
    top=sorted(range(len(data)),key=lambda i:-f(data[i][si]))[:int(sys.argv[2])]
    for i in sorted(top):
        r=data[i]; rr=sorted(((f(r[ci[n]]),n[6:]) for n in reasons),reverse=True)[:2]
        print(f'{i:5d} {100*f(r[si])/tot:5.2f}% {r[1][:70]:70s} {rr}')
