import re,sys
def rd(f):
    d={}
    for l in open(f):
        m=re.match(r"seed (\d+): 5-fold: (\d+) ham held, (\d+)/(\d+) spam passed \(bf (\d+)\)",l)
        if m: s,h,p,t,b=map(int,m.group(1,2,3,4,5)); d[s]=(h,p,b,p/b if b else float('inf'))
    return d
a=rd(sys.argv[1]); b=rd(sys.argv[2])
ks=sorted(set(a)&set(b))
import statistics as st
w=sum(1 for k in ks if b[k][3]<a[k][3]); l=sum(1 for k in ks if b[k][3]>a[k][3])
print("%s vs %s: held %d->%d, lg passed %d->%d, bf %d->%d, ratio median %.2f->%.2f, variant ratio lower in %d, higher in %d of %d"%(sys.argv[1].split('/')[-1],sys.argv[2].split('/')[-1],
 sum(a[k][0] for k in ks),sum(b[k][0] for k in ks),sum(a[k][1] for k in ks),sum(b[k][1] for k in ks),sum(a[k][2] for k in ks),sum(b[k][2] for k in ks),
 st.median(a[k][3] for k in ks),st.median(b[k][3] for k in ks),w,l,len(ks)))
