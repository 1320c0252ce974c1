#!/bin/sh
# pg.sh - a throwaway PostgreSQL cluster for the queue tests
#
#   sh tests/pg.sh run CMD [ARG...]   start a private cluster, run CMD with
#                                     PGHOST PGPORT PGUSER PGDATABASE set,
#                                     stop it and remove it afterwards;
#                                     exits with CMD's status (77 = skip
#                                     when no PostgreSQL server is installed)
#   sh tests/pg.sh stop | start       inside CMD: stop or restart that
#                                     cluster ($PG_TEST_DIR names it)
#
# Inside CMD the environment also has PG_TEST_DIR, PG_SH (this script's
# path), PG_CTL_STOP and PG_CTL_START (ready-made command lines).
# The server does not sync to disk unless PG_TEST_FSYNC=on (the
# benchmark's training time counts the commit's fsync).
#
# The cluster lives in a mktemp -d directory, listens on a Unix socket in
# that directory only (listen_addresses = ''), trusts local connections,
# and runs as an unprivileged user: PostgreSQL refuses to run as root, so
# under root the server runs as $PG_TEST_USER (default "nobody") through
# runuser, with the directory chowned to it (made under $TMPDIR, or
# under /tmp or /var/tmp when that user cannot reach $TMPDIR, as with
# root's private /root/tmp).  Nothing outside the directory is touched.
set -u

me=$0
case $me in /*) ;; *) me=$(pwd)/$me ;; esac

# newest server binaries
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
if [ -z "$pgbin" ] && command -v initdb >/dev/null 2>&1; then
	pgbin=$(dirname "$(command -v initdb)")
fi

PGTEST_SUPER=listgate
PGTEST_DB=listgate_test
PGTEST_PORT=5432

# run a server command as the cluster's owner
as_owner() {
	if [ "$(id -u)" -eq 0 ]; then
		runuser -u "${PG_TEST_USER:-nobody}" -- "$@"
	else
		"$@"
	fi
}

pg_start() {
	as_owner "$pgbin/pg_ctl" -D "$PG_TEST_DIR/data" -l "$PG_TEST_DIR/log" \
	    -w -t 60 -o "-c listen_addresses= -k $PG_TEST_DIR -p $PGTEST_PORT -c fsync=${PG_TEST_FSYNC:-off} -c synchronous_commit=${PG_TEST_FSYNC:-off} -c full_page_writes=${PG_TEST_FSYNC:-off}" \
	    start >/dev/null
}

pg_stop() {
	as_owner "$pgbin/pg_ctl" -D "$PG_TEST_DIR/data" -w -t 60 -m fast \
	    stop >/dev/null
}

case ${1:-} in
stop)
	: "${PG_TEST_DIR:?pg.sh stop: not inside pg.sh run}"
	pg_stop
	exit $?
	;;
start)
	: "${PG_TEST_DIR:?pg.sh start: not inside pg.sh run}"
	pg_start
	exit $?
	;;
run)
	shift
	;;
*)
	echo "usage: sh pg.sh run CMD [ARG...] | stop | start" >&2
	exit 2
	;;
esac

if [ -z "$pgbin" ]; then
	echo "pg.sh: no PostgreSQL server found (install postgresql); skipping" >&2
	exit 77
fi
if [ "$(id -u)" -eq 0 ] && ! id "${PG_TEST_USER:-nobody}" >/dev/null 2>&1; then
	echo "pg.sh: running as root and no user ${PG_TEST_USER:-nobody} to run the server; skipping" >&2
	exit 77
fi

# The cluster's directory: under $TMPDIR, unless the server's user
# cannot reach it there (root with a private TMPDIR such as /root/tmp):
# then /tmp, then /var/tmp (likewise when $TMPDIR is too long a path for
# the server's socket).  Under root the directory is chowned to that user
# and checked by entering it as that user.
owner_reaches() {	# owner_reaches DIR: the server's user can enter DIR
	[ "$(id -u)" -ne 0 ] && return 0
	chown "${PG_TEST_USER:-nobody}" "$1" 2>/dev/null || return 1
	runuser -u "${PG_TEST_USER:-nobody}" -- sh -c 'cd "$1" && test -w .' \
	    sh "$1" 2>/dev/null
}
PG_TEST_DIR=
for base in "${TMPDIR:-/tmp}" /tmp /var/tmp; do
	[ -d "$base" ] || continue
	d=$(mktemp -d "$base/lg-pg.XXXXXX" 2>/dev/null) || continue
	chmod 755 "$d"
	# the server's socket path must fit in sun_path (107 bytes)
	if [ ${#d} -le 80 ] && owner_reaches "$d"; then
		PG_TEST_DIR=$d
		break
	fi
	rm -rf "$d"
done
if [ -z "$PG_TEST_DIR" ]; then
	echo "pg.sh: no temporary directory that ${PG_TEST_USER:-nobody} can" \
	    "reach (tried ${TMPDIR:-/tmp}, /tmp, /var/tmp)" >&2
	exit 99
fi
export PG_TEST_DIR
cleanup() {
	if [ -f "$PG_TEST_DIR/data/postmaster.pid" ]; then
		as_owner "$pgbin/pg_ctl" -D "$PG_TEST_DIR/data" -w -m immediate \
		    stop >/dev/null 2>&1
	fi
	rm -rf "$PG_TEST_DIR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

(cd "$PG_TEST_DIR" && as_owner "$pgbin/initdb" -D "$PG_TEST_DIR/data" \
    -U "$PGTEST_SUPER" -A trust -E UTF8 --no-locale --no-sync \
    >"$PG_TEST_DIR/initdb.log" 2>&1) || {
	echo "pg.sh: initdb failed:" >&2
	cat "$PG_TEST_DIR/initdb.log" >&2
	exit 99
}
if ! (cd "$PG_TEST_DIR" && pg_start); then
	echo "pg.sh: the server did not start:" >&2
	cat "$PG_TEST_DIR/log" >&2
	exit 99
fi

PGHOST=$PG_TEST_DIR
PGPORT=$PGTEST_PORT
PGUSER=$PGTEST_SUPER
PGDATABASE=$PGTEST_DB
export PGHOST PGPORT PGUSER PGDATABASE
unset PGHOSTADDR PGSERVICE PGPASSWORD PGOPTIONS 2>/dev/null
"$pgbin/createdb" "$PGTEST_DB" || exit 99

PG_SH=$me
PG_CTL_STOP="sh $me stop"
PG_CTL_START="sh $me start"
PG_BIN=$pgbin
export PG_SH PG_CTL_STOP PG_CTL_START PG_BIN

"$@"
rc=$?
exit $rc
