#!/bin/sh
# queue_bench.sh - time the filter's hold path per post, one process per
# post, directly, through pgbouncer and through listgate holder, against
# the pass path and bogofilter's per-post time, all measured in the same
# run
#
#   sh tests/queue_bench.sh [N] [OTHER_LISTGATE]
#
# Starts a private PostgreSQL with a pgbouncer in front of it in
# transaction pooling mode (tests/pg.sh run --pgbouncer; without
# pgbouncer installed, the rows through it are left out), builds the
# list's token file from tests/data/train through the journal, then
# times, interleaved so that every row sees the same machine load:
#
#   pass            `listgate filter --mta qmail` on a ham post (exit 0)
#   hold, direct    the same on a spam post (exit 99), a new PostgreSQL
#                   server process per post (the conninfo names the
#                   server's socket)
#   hold, pgbouncer the same through pgbouncer: its pooled server
#                   connections stay, each filter connects to pgbouncer
#   hold, holder    the same with holder_socket set: listgate holder
#                   (2 workers, started here) stores the post through
#                   its kept connection, directly and through pgbouncer;
#                   afterwards one filter of each is run under
#                   LD_DEBUG=files, and the bench fails if it loaded
#                   libpq (it held the post itself)
#   bogofilter      `bogofilter -d DIR < post`, trained on the same files
#
# N (default 200) posts each, every one differing in an X-Bench header
# line (so each hold is a new row, not a retry).  Reports the median and
# the 10th/90th percentiles of the wall time per process (spawn to exit,
# timed by python3), the mean CPU time of the process itself (user +
# system: steadier than wall time on a loaded machine, but it leaves out
# the server's and pgbouncer's work) and the hold/pass ratios.
# OTHER_LISTGATE, when given, is a second binary (an older build) timed
# the same way (pass, and hold both ways) against a database of its own.
# Not part of `make check`: run it by hand from a build directory
# (LISTGATE, top_srcdir, top_builddir are taken from there when unset).
# Never reads /etc.
set -u

: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$(pwd)}"
: "${LISTGATE:=$top_builddir/listgate}"
export top_srcdir top_builddir LISTGATE
if [ -z "${PG_TEST_DIR:-}" ]; then
	if command -v pgbouncer >/dev/null 2>&1 ||
	    [ -x /usr/sbin/pgbouncer ]; then
		exec sh "$top_srcdir/tests/pg.sh" run --pgbouncer sh "$0" "$@"
	fi
	echo "queue_bench: no pgbouncer: timing the direct connection only" >&2
	exec sh "$top_srcdir/tests/pg.sh" run sh "$0" "$@"
fi
N=${1:-200}
OTHER=${2:-}
QHOLD=$top_builddir/tests/qhold
DATA=$top_srcdir/tests/data/train
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-qbench.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM

# one configuration per binary, each with its own database; "new" also
# gets "new-pgb", the same database and token file through pgbouncer.
# This build takes --allow-root (the tests may run as root); the other
# binary may be older than that option
setup() {	# setup NAME BINARY [GLOBAL-OPTION]
	conf=$T/$1
	mkdir -p "$conf/lists" "$T/tokens-$1" || exit 99
	createdb "lg_$1" || exit 99
	printf 'tokens_dir = %s/tokens-%s\ndatabase = host=%s port=%s dbname=lg_%s\n' \
	    "$T" "$1" "$PGHOST" "$PGPORT" "$1" > "$conf/listgate.conf"
	printf 'deliver = /bin/true\n' > "$conf/lists/dev.conf"
	"$2" ${3:-} --config "$conf" migrate -q || exit 99
	for c in spam ham; do
		: > "$T/$c.posts"
		for i in 1 2 3; do
			for f in "$DATA/$c"[0-9].eml; do
				cat "$f" >> "$T/$c.posts"
				printf '\n\f\n' >> "$T/$c.posts"
			done
		done
		PGDATABASE=lg_$1 "$QHOLD" -j dev "$c" "$T/$c.posts" \
		    > /dev/null || exit 99
	done
	"$2" ${3:-} --config "$conf" sync -q --list dev || exit 99
}
setup new "$LISTGATE" --allow-root
[ -n "$OTHER" ] && setup old "$OTHER"
# NAME-pgb: the same database and token file through pgbouncer
pgb=
if [ -n "${PGBOUNCER_PORT:-}" ]; then
	pgb=1
	for c in new ${OTHER:+old}; do
		mkdir -p "$T/$c-pgb/lists" || exit 99
		cp "$T/$c/lists/dev.conf" "$T/$c-pgb/lists/" || exit 99
		printf 'tokens_dir = %s/tokens-%s\ndatabase = host=%s port=%s dbname=lg_%s\n' \
		    "$T" "$c" "$PGHOST" "$PGBOUNCER_PORT" "$c" \
		    > "$T/$c-pgb/listgate.conf"
	done
fi

# NAME-hold (and NAME-pgb-hold): the same with listgate holder, whose
# workers keep their connections (only this build has it)
hold_pids=
mkhold() {	# mkhold FROM TO SOCKET: TO is FROM with holder_socket
	mkdir -p "$T/$2/lists" || exit 99
	cp "$T/$1/lists/dev.conf" "$T/$2/lists/" || exit 99
	{ cat "$T/$1/listgate.conf"; echo "holder_socket = $3"; } \
	    > "$T/$2/listgate.conf"
	"$LISTGATE" --allow-root --config "$T/$2" holder \
	    > "$T/$2.log" 2>&1 &
	hold_pids="$hold_pids $!"
	i=0
	while ! grep -q "listening on" "$T/$2.log" && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	grep -q "listening on" "$T/$2.log" || { cat "$T/$2.log" >&2; exit 99; }
}
trap 'kill $hold_pids 2>/dev/null; rm -rf "$T"' EXIT INT TERM
mkhold new new-hold "$T/h.sock"
[ -n "$pgb" ] && mkhold new-pgb new-pgb-hold "$T/hb.sock"

bogo=
if command -v bogofilter >/dev/null 2>&1; then
	bogo=$T/bogo
	mkdir "$bogo" || exit 99
	for f in "$DATA"/spam[0-9].eml; do
		bogofilter -d "$bogo" -s < "$f" || exit 99
	done
	for f in "$DATA"/ham[0-9].eml; do
		bogofilter -d "$bogo" -n < "$f" || exit 99
	done
fi

python3 - "$T" "$N" "$LISTGATE" "$OTHER" "$bogo" "$pgb" "$DATA" <<'EOF'
import os, statistics, subprocess, sys, time
tdir, n, new, old, bogo, pgb, data = sys.argv[1], int(sys.argv[2]), *sys.argv[3:8]
spam = open(data + "/spam2.eml", "rb").read()
ham = open(data + "/ham-test.eml", "rb").read()
filt = ["filter", "--list", "dev", "--mta", "qmail"]
# name, argv, post, exit status wanted
runs = [("pass (ham, exit 0)", [new, "--allow-root", "--config", tdir + "/new"] + filt,
         ham, 0),
        ("hold, direct", [new, "--allow-root", "--config", tdir + "/new"] + filt, spam, 99)]
if pgb:
    runs.append(("hold, through pgbouncer",
                 [new, "--allow-root", "--config", tdir + "/new-pgb"] + filt, spam, 99))
runs.append(("hold, holder (direct)",
             [new, "--allow-root", "--config", tdir + "/new-hold"] + filt, spam, 99))
if pgb:
    runs.append(("hold, holder (pgbouncer)",
                 [new, "--allow-root", "--config", tdir + "/new-pgb-hold"] + filt, spam, 99))
if old:
    runs.append(("other binary: pass", [old, "--config", tdir + "/old"] +
                 filt, ham, 0))
    runs.append(("other binary: hold, direct",
                 [old, "--config", tdir + "/old"] + filt, spam, 99))
    if pgb:
        runs.append(("other binary: hold, pgbouncer",
                     [old, "--config", tdir + "/old-pgb"] + filt, spam, 99))
if bogo:
    runs.append(("bogofilter -d DIR", ["bogofilter", "-d", bogo], spam,
                 None))
times = {r[0]: [] for r in runs}
cpu = {r[0]: [] for r in runs}
post = tdir + "/post.eml"
null = os.open(os.devnull, os.O_WRONLY)
for i in range(n):
    for k, (name, argv, body, want) in enumerate(runs):
        with open(post, "wb") as f:
            f.write(b"X-Bench: %d-%d\n" % (k, i) + body)
        with open(post, "rb") as f:
            t0 = time.perf_counter()
            p = subprocess.Popen(argv, stdin=f, stdout=null, stderr=null)
            _, st, ru = os.wait4(p.pid, 0)
            t1 = time.perf_counter()
        rc = os.waitstatus_to_exitcode(st)
        p.returncode = rc
        if want is not None and rc != want:
            sys.exit("%s: post %d: exit %d, want %d" % (name, i, rc, want))
        times[name].append((t1 - t0) * 1000)
        cpu[name].append((ru.ru_utime + ru.ru_stime) * 1000)
med = {}
for name, _, _, _ in runs:
    t = sorted(times[name])
    q = statistics.quantiles(t, n=10)
    med[name] = statistics.median(t)
    print("%-30s wall median %6.2f ms (p10 %5.2f, p90 %6.2f), cpu %5.2f "
          "ms" % (name, med[name], q[0], q[-1], statistics.mean(cpu[name])))
print("(%d posts each, one process per post; cpu: the process's own user "
      "+ system time, mean)" % n)
def ratios(pas, holds):
    for name in holds:
        if name in med:
            print("%-40s %.2f x the pass path (wall, median)" %
                  (name + " / pass", med[name] / med[pas]))
ratios("pass (ham, exit 0)", ("hold, direct", "hold, through pgbouncer",
                              "hold, holder (direct)",
                              "hold, holder (pgbouncer)"))
# the holder did the holding: a filter of those runs loads no libpq
for name, argv, body, want in runs:
    if "holder" not in name:
        continue
    with open(post, "wb") as f:
        f.write(b"X-Bench: check-%s\n" % name.encode() + body)
    env = dict(os.environ, LD_DEBUG="files")
    with open(post, "rb") as f:
        p = subprocess.run(argv, stdin=f, stdout=null, stderr=subprocess.PIPE,
                           env=env)
    if p.returncode != 99 or b"file=libpq" in p.stderr:
        sys.exit("%s: the filter held the post itself (exit %d)" %
                 (name, p.returncode))
print("(the holder runs loaded no libpq: the holder held every post)")
if old:
    ratios("other binary: pass", ("other binary: hold, direct",
                                  "other binary: hold, pgbouncer"))
EOF
rc=$?
held=$(psql -X -q -A -t -d lg_new -c "SELECT count(*) FROM held_posts")
want=$((2 * N + 1))
[ -n "$pgb" ] && want=$((4 * N + 2))
[ "$rc" -ne 0 ] && want=$held
[ "$held" -eq "$want" ] || { echo "queue_bench: $held rows held, want $want" >&2; rc=1; }
exit $rc
