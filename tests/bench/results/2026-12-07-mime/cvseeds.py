# results/2026-12-06g/cvseeds.py, reading also cv's hh0.5% (2026-12-07b)
import hashlib, os, subprocess, sys, re
corpus="/work/main/cache/spam-assassin/package/data"
HAM=["easy-ham-1","easy-ham-2","hard-ham-1"]; SPAM=["spam-1","spam-2"]
def lines(split, folds, seed):
    lim = 128 if split==100 else 38
    out=[]
    for label, dirs in (("H",HAM),("S",SPAM)):
        for d in dirs:
            for name in sorted(os.listdir(os.path.join(corpus,d))):
                if not name.endswith(".txt"): continue
                h=hashlib.sha1(name.encode()).digest()
                if h[0]>=limit(split): continue
                f = h[1]%folds if seed==0 else hashlib.sha1((name+str(seed)).encode()).digest()[0]%folds
                out.append("%s %d %s\n"%(label,f,os.path.join(corpus,d,name)))
    return "".join(out)
def limit(split): return 128 if split==100 else 38
cv=sys.argv[1]; split=int(sys.argv[2]); folds=int(sys.argv[3]); seeds=int(sys.argv[4]); rest=sys.argv[5:]
ro=[];op=[];hh=[]
for s in range(seeds):
    r=subprocess.run([cv]+rest,input=lines(split,folds,s),text=True,capture_output=True).stdout
    m=re.search(r"1-ROCA% ([0-9.]+) op0.5% (\d+) hh0.5% (\d+)",r)
    ro.append(float(m.group(1))); op.append(int(m.group(2))); hh.append(int(m.group(3)))
print("split %d folds %d %s: 1-ROCA%% mean %.4f [%s] op mean %.1f [%s] hh mean %.1f [%s]"%(split,folds," ".join(rest),sum(ro)/len(ro)," ".join("%.4f"%x for x in ro),sum(op)/len(op)," ".join(map(str,op)),sum(hh)/len(hh)," ".join(map(str,hh))),flush=True)
