#!/bin/sh
# queue_bench.sh - time the filter's hold path per post, one process per
# post, beside bogofilter's per-post time measured in the same run
#
#   sh tests/queue_bench.sh [N] [OTHER_LISTGATE]
#
# Starts a private PostgreSQL (tests/pg.sh), builds the list's token file
# from tests/data/train through the journal, then runs `listgate filter`
# on N (default 200) spam posts that differ in one header line (so each
# is a new row, not a retry) and reports the median and the 10th/90th
# percentiles of the wall time per process (spawn to exit, timed by
# python3).  OTHER_LISTGATE, when given, is a second binary (an older
# build) timed the same way against a database of its own, interleaved
# with the first so both see the same machine load.  bogofilter, when
# installed, is trained on the same files and timed on the same posts
# (`bogofilter -d DIR < post`).  Not part of `make check`: run it by
# hand from a build directory (LISTGATE, top_srcdir, top_builddir are
# taken from there when unset).  Never reads /etc.
set -u

: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$(pwd)}"
: "${LISTGATE:=$top_builddir/listgate}"
export top_srcdir top_builddir LISTGATE
if [ -z "${PG_TEST_DIR:-}" ]; then
	exec sh "$top_srcdir/tests/pg.sh" run sh "$0" "$@"
fi
N=${1:-200}
OTHER=${2:-}
QHOLD=$top_builddir/tests/qhold
DATA=$top_srcdir/tests/data/train
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-qbench.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM

# one configuration per binary, each with its own database; this build
# takes --allow-root (the tests may run as root), the other binary may
# be older than that option
setup() {	# setup NAME BINARY [GLOBAL-OPTION]
	conf=$T/$1
	mkdir -p "$conf/lists" "$T/tokens-$1" || exit 99
	createdb "lg_$1" || exit 99
	printf 'tokens_dir = %s/tokens-%s\ndatabase = dbname=lg_%s\n' \
	    "$T" "$1" "$1" > "$conf/listgate.conf"
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

# N posts, each with its own X-Bench line
mkdir "$T/posts" || exit 99
i=0
while [ "$i" -lt "$N" ]; do
	{ printf 'X-Bench: %d\n' "$i"; cat "$DATA/spam2.eml"; } \
	    > "$T/posts/$i.eml"
	i=$((i + 1))
done

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

python3 - "$T" "$N" "$LISTGATE" "$OTHER" "$bogo" <<'EOF'
import statistics, subprocess, sys, time
tdir, n, new, old, bogo = sys.argv[1], int(sys.argv[2]), *sys.argv[3:6]
runs = [("listgate filter (hold)", [new, "--allow-root", "--config",
         tdir + "/new", "filter",
         "--list", "dev", "--mta", "qmail"], 99)]
if old:
    runs.append(("listgate filter (hold), other binary",
                 [old, "--config", tdir + "/old", "filter", "--list", "dev",
                  "--mta", "qmail"], 99))
if bogo:
    runs.append(("bogofilter -d DIR", ["bogofilter", "-d", bogo], None))
times = {name: [] for name, _, _ in runs}
for i in range(n):
    for name, argv, want in runs:
        with open("%s/posts/%d.eml" % (tdir, i), "rb") as f:
            t0 = time.perf_counter()
            rc = subprocess.call(argv, stdin=f, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
            t1 = time.perf_counter()
        if want is not None and rc != want:
            sys.exit("%s: post %d: exit %d, want %d" % (name, i, rc, want))
        times[name].append((t1 - t0) * 1000)
for name, _, _ in runs:
    t = sorted(times[name])
    q = statistics.quantiles(t, n=10)
    print("%-40s median %.2f ms  (p10 %.2f, p90 %.2f; %d posts, one "
          "process each)" % (name, statistics.median(t), q[0], q[-1], n))
EOF
rc=$?
held=$(psql -X -q -A -t -d lg_new -c "SELECT count(*) FROM held_posts")
[ "$held" -eq "$N" ] || { echo "queue_bench: $held rows held, want $N" >&2; rc=1; }
exit $rc
