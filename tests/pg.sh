#!/bin/sh
# pg.sh - a throwaway PostgreSQL cluster for the queue tests
#
#   sh tests/pg.sh run [--pgbouncer] CMD [ARG...]
#                                     start a private cluster, run CMD with
#                                     PGHOST PGPORT PGUSER PGDATABASE set,
#                                     stop it and remove it afterwards;
#                                     exits with CMD's status (77 = skip
#                                     when no PostgreSQL server is
#                                     installed, or no pgbouncer when
#                                     --pgbouncer asks for one)
#   sh tests/pg.sh stop | start       inside CMD: stop or restart that
#                                     cluster ($PG_TEST_DIR names it)
#   sh tests/pg.sh crash              inside CMD: stop it as a crash would
#                                     (-m immediate: what the WAL buffers
#                                     hold is never written)
#   sh tests/pg.sh standby-create     inside CMD: a streaming hot standby
#                                     of it, made with pg_basebackup and
#                                     started on port $PG_STANDBY_PORT in
#                                     the same socket directory; returns
#                                     once it streams
#   sh tests/pg.sh standby-stop | standby-start
#                                     inside CMD: stop or restart it
#   sh tests/pg.sh standby-promote    inside CMD: make it a primary (a
#                                     failover); returns once it takes
#                                     writes
#
# Inside CMD the environment also has PG_TEST_DIR, PG_SH (this script's
# path), PG_CTL_STOP and PG_CTL_START (ready-made command lines), PG_BIN
# (the server's programs) and PG_STANDBY_PORT.
#
# With --pgbouncer, a pgbouncer in transaction pooling mode listens on a
# Unix socket in the same directory, port $PGBOUNCER_PORT (exported),
# in front of every database of the cluster; PGPORT still names the
# server itself, so a test points a conninfo at "port=$PGBOUNCER_PORT"
# to go through the pooler.  Its pool is small (PGBOUNCER_POOL_SIZE
# server connections per database, default 2) and handed out round
# robin, so session state one client leaves on a server connection
# meets the next clients, as it does on a busy site.  Its console is
# the database "pgbouncer" on that port (SHOW STATS, SHOW SERVERS).
# The server does not sync to disk unless PG_TEST_FSYNC=on (the
# benchmark's training time counts the commit's fsync).  PG_TEST_OPTS
# adds server options (for a look at a run: PG_TEST_OPTS="-c
# log_min_duration_statement=20 -c log_autovacuum_min_duration=0").
#
# The cluster lives in a mktemp -d directory, listens on a Unix socket in
# that directory only (listen_addresses = ''), trusts local connections,
# and runs as an unprivileged user: PostgreSQL refuses to run as root, so
# under root the server runs as $PG_TEST_USER (default "nobody") through
# runuser, with the directory chowned to it (made under $TMPDIR, or
# under /tmp or /var/tmp when that user cannot reach $TMPDIR, as with
# root's private /root/tmp).  The standby and pgbouncer (which refuses
# root too) run as that user as well.  Nothing outside the directory is
# touched.
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
PG_STANDBY_PORT=5433
PGBOUNCER_PORT=6432

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
	    -w -t 60 -o "-c listen_addresses= -k $PG_TEST_DIR -p $PGTEST_PORT -c fsync=${PG_TEST_FSYNC:-off} -c synchronous_commit=${PG_TEST_FSYNC:-off} -c full_page_writes=${PG_TEST_FSYNC:-off} ${PG_TEST_OPTS:-}" \
	    start >/dev/null
}

pg_stop() {
	as_owner "$pgbin/pg_ctl" -D "$PG_TEST_DIR/data" -w -t 60 -m fast \
	    stop >/dev/null
}

pg_crash() {
	as_owner "$pgbin/pg_ctl" -D "$PG_TEST_DIR/data" -w -t 60 -m immediate \
	    stop >/dev/null
}

standby_start() {
	as_owner "$pgbin/pg_ctl" -D "$PG_TEST_DIR/standby" \
	    -l "$PG_TEST_DIR/standby.log" -w -t 60 -o "-c listen_addresses= -k $PG_TEST_DIR -p $PG_STANDBY_PORT -c fsync=off -c hot_standby=on" \
	    start >/dev/null
}

standby_stop() {
	as_owner "$pgbin/pg_ctl" -D "$PG_TEST_DIR/standby" -w -t 60 -m fast \
	    stop >/dev/null
}

# the standby becomes a primary (pg_ctl promote waits for the end of
# recovery)
standby_promote() {
	as_owner "$pgbin/pg_ctl" -D "$PG_TEST_DIR/standby" -w -t 60 promote \
	    >/dev/null
}

# a hot standby of the cluster: a base backup over the Unix socket
# (initdb -A trust lets local replication connections in), its
# primary_conninfo and standby.signal written by -R; returns once the
# primary lists it as streaming
standby_create() {
	as_owner "$pgbin/pg_basebackup" -D "$PG_TEST_DIR/standby" \
	    -h "$PG_TEST_DIR" -p "$PGTEST_PORT" -U "$PGTEST_SUPER" -R \
	    -X stream -c fast --no-sync >"$PG_TEST_DIR/basebackup.log" 2>&1 || {
		echo "pg.sh: pg_basebackup failed:" >&2
		cat "$PG_TEST_DIR/basebackup.log" >&2
		return 1
	}
	if ! standby_start; then
		echo "pg.sh: the standby did not start:" >&2
		cat "$PG_TEST_DIR/standby.log" >&2
		return 1
	fi
	i=0
	while [ $i -lt 300 ]; do
		s=$("$pgbin/psql" -X -q -A -t -h "$PG_TEST_DIR" \
		    -p "$PGTEST_PORT" -U "$PGTEST_SUPER" -d postgres -c \
		    "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'" \
		    2>/dev/null)
		[ "${s:-0}" -ge 1 ] 2>/dev/null && return 0
		sleep 0.1
		i=$((i + 1))
	done
	echo "pg.sh: the standby does not stream:" >&2
	cat "$PG_TEST_DIR/standby.log" >&2
	return 1
}

# pgbouncer in front of the cluster: transaction pooling, a Unix socket
# only (no listen_addr, so no TCP), as the cluster's owner; it
# daemonizes with its pid in pgbouncer.pid
pgbouncer_start() {
	pb=$PG_TEST_DIR/pgbouncer
	{
		echo "[databases]"
		echo "* = host=$PG_TEST_DIR port=$PGTEST_PORT"
		echo "[pgbouncer]"
		echo "pool_mode = transaction"
		echo "unix_socket_dir = $PG_TEST_DIR"
		echo "listen_port = $PGBOUNCER_PORT"
		echo "auth_type = trust"
		echo "auth_file = $pb.users"
		echo "admin_users = $PGTEST_SUPER"
		echo "default_pool_size = ${PGBOUNCER_POOL_SIZE:-2}"
		echo "server_round_robin = 1"
		echo "logfile = $pb.log"
		echo "pidfile = $pb.pid"
	} >"$pb.ini"
	printf '"%s" ""\n' "$PGTEST_SUPER" >"$pb.users"
	if [ "$(id -u)" -eq 0 ]; then
		chown "${PG_TEST_USER:-nobody}" "$pb.ini" "$pb.users"
	fi
	if ! as_owner "$pgbouncer" -d -q "$pb.ini"; then
		echo "pg.sh: pgbouncer did not start:" >&2
		cat "$pb.log" >&2 2>/dev/null
		return 1
	fi
	i=0
	while [ $i -lt 100 ]; do
		if [ -S "$PG_TEST_DIR/.s.PGSQL.$PGBOUNCER_PORT" ] &&
		    [ -s "$pb.pid" ]; then
			return 0
		fi
		sleep 0.05
		i=$((i + 1))
	done
	echo "pg.sh: pgbouncer does not listen:" >&2
	cat "$pb.log" >&2 2>/dev/null
	return 1
}

bouncer=0
case ${1:-} in
stop | start | crash | standby-create | standby-stop | standby-start | standby-promote)
	: "${PG_TEST_DIR:?pg.sh $1: not inside pg.sh run}"
	case $1 in
	stop) pg_stop ;;
	crash) pg_crash ;;
	start) pg_start ;;
	standby-create) standby_create ;;
	standby-stop) standby_stop ;;
	standby-start) standby_start ;;
	standby-promote) standby_promote ;;
	esac
	exit $?
	;;
run)
	shift
	if [ "${1:-}" = --pgbouncer ]; then
		bouncer=1
		shift
	fi
	;;
*)
	echo "usage: sh pg.sh run [--pgbouncer] CMD [ARG...] | stop | start | crash |" \
	    "standby-create | standby-stop | standby-start | standby-promote" >&2
	exit 2
	;;
esac

if [ -z "$pgbin" ]; then
	echo "pg.sh: no PostgreSQL server found (install postgresql); skipping" >&2
	exit 77
fi
pgbouncer=
if [ $bouncer = 1 ]; then
	for pgbouncer in "$(command -v pgbouncer)" /usr/sbin/pgbouncer ""; do
		[ -n "$pgbouncer" ] && [ -x "$pgbouncer" ] && break
	done
	if [ -z "$pgbouncer" ]; then
		echo "pg.sh: no pgbouncer found (install pgbouncer); skipping" >&2
		exit 77
	fi
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
	if [ -s "$PG_TEST_DIR/pgbouncer.pid" ]; then
		kill "$(cat "$PG_TEST_DIR/pgbouncer.pid")" 2>/dev/null
		i=0
		while [ -e "$PG_TEST_DIR/pgbouncer.pid" ] && [ $i -lt 50 ]; do
			sleep 0.1
			i=$((i + 1))
		done
	fi
	if [ -f "$PG_TEST_DIR/standby/postmaster.pid" ]; then
		as_owner "$pgbin/pg_ctl" -D "$PG_TEST_DIR/standby" -w \
		    -m immediate stop >/dev/null 2>&1
	fi
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
if [ $bouncer = 1 ]; then
	pgbouncer_start || exit 99
	export PGBOUNCER_PORT
fi

PG_SH=$me
PG_CTL_STOP="sh $me stop"
PG_CTL_START="sh $me start"
PG_BIN=$pgbin
export PG_SH PG_CTL_STOP PG_CTL_START PG_BIN PG_STANDBY_PORT

"$@"
rc=$?
exit $rc
