import re,sys,statistics as st
def rd(f):
    d={}
    for l in open(f):
        m=re.match(r"seed (\d+): 5-fold: (\d+) ham held, (\d+)/(\d+) spam passed \(bf (\d+)\)",l)
        if m: s,h,p,t,b=map(int,m.group(1,2,3,4,5)); d[s]=(h,p,b,p/b if b else float('inf'))
    return d
R=sys.argv[1]
for v in sys.argv[2:]:
  for n in (1477,888):
    a={};b={}
    for suf in ("","-s21","-s41"):
        try: x=rd("%s/base-op%d%s.txt"%(R,n,suf)); y=rd("%s/%s-op%d%s.txt"%(R,v,n,suf))
        except FileNotFoundError: continue
        a.update(x); b.update(y)
    ks=sorted(set(a)&set(b))
    print("%-8s %4d, %d seeds: ratio median %.2f -> %.2f, mean %.2f -> %.2f, at most 0.5: %d -> %d; ham held %d -> %d, lg spam passed %d -> %d; ratio lower %d / higher %d"%(v,n,len(ks),
      st.median(a[k][3] for k in ks),st.median(b[k][3] for k in ks),st.mean(a[k][3] for k in ks),st.mean(b[k][3] for k in ks),
      sum(a[k][3]<=0.5 for k in ks),sum(b[k][3]<=0.5 for k in ks),
      sum(a[k][0] for k in ks),sum(b[k][0] for k in ks),sum(a[k][1] for k in ks),sum(b[k][1] for k in ks),
      sum(b[k][3]<a[k][3] for k in ks),sum(b[k][3]>a[k][3] for k in ks)))
