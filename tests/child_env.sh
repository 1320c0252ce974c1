#!/bin/sh
# child_env.sh - deliver and release see a short environment: PATH,
# HOME, LANG, LC_*, LISTGATE_CONFIG and the MTAs' variables, never
# libpq's (a moderator's PGPASSWORD) nor anything else
#
# `filter` (Postfix dialect, `deliver`) here, started with qmail's and
# Postfix's variables, libpq's and a few others set; `approve`
# (`release`) under tests/pg.sh with PGPASSWORD set as a moderator
# would.  The command writes its environment to a file.  Works in a
# mktemp -d directory removed at the end; never reads /etc.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
: "${top_builddir:?set by make check}"
QHOLD=$top_builddir/tests/qhold
DATA=$top_srcdir/tests/data/train
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-env.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
CONF=$T/conf
mkdir -p "$CONF/lists" || exit 99

. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP), pg_part
lg() { "$LISTGATE" --allow-root --config "$CONF" "$@"; }

# the command: its environment to $T/env.LIST, NUL-separated, then the
# post to /dev/null
cat > "$T/env.sh" <<END
#!/bin/sh
env -0 > "$T/env.\$1"
cat > /dev/null
END

# has FILE NAME=VALUE / lacks FILE NAME: in a NUL-separated environment
has() { tr '\0' '\n' < "$1" | grep -qxF "$2"; }
lacks() { ! tr '\0' '\n' < "$1" | grep -q "^$2="; }

if [ "${1:-}" = pg ]; then
	# --- inside tests/pg.sh: approve and release ---------------------
	printf 'tokens_dir = %s/tokens\n' "$T" > "$CONF/listgate.conf"
	printf 'release = /bin/sh %s/env.sh {list}\n' "$T" > "$CONF/lists/rel.conf"
	lg migrate -q || exit 99
	id=$("$QHOLD" rel "$DATA/spam1.eml" 0.9) || exit 99
	# trust authentication: the server never asks for the password
	PGPASSWORD=moderator-s3cret PGPASSFILE=$T/pgpass PGOPTIONS= \
	    SOMETHING_ELSE=x lg approve "$id" > "$T/out" 2> "$T/err"
	check "approve exits 0" test $? -eq 0
	e=$T/env.rel
	check "release ran" test -s "$e"
	check "a moderator's PGPASSWORD does not reach release" lacks "$e" PGPASSWORD
	for v in PGPASSFILE PGHOST PGPORT PGUSER PGDATABASE PGOPTIONS; do
		check "nor $v" lacks "$e" "$v"
	done
	check "nor anything unlisted" lacks "$e" SOMETHING_ELSE
	check "release keeps PATH" has "$e" "PATH=$PATH"
	echo "1..$n"
	[ $fails -eq 0 ]
	exit
fi

# --- filter under Postfix: deliver ------------------------------------
{
	echo 'tokens_dir = tokens'
	echo 'mta = postfix'
} > "$CONF/listgate.conf"
printf 'ham_cutoff = 1\nspam_cutoff = 1\ndeliver = /bin/sh %s/env.sh {list}\n' \
    "$T" > "$CONF/lists/dl.conf"
lg train --quiet --list dl --ham "$DATA"/ham[1-4].eml >/dev/null ||
    { echo "# training failed"; exit 99; }
env -i PATH="$PATH" HOME=/home/list LANG=C.UTF-8 LC_ALL=C.UTF-8 \
    LC_MESSAGES=C TZ=UTC USER=list LOGNAME=list \
    LISTGATE_CONFIG="$CONF" SENDER=s@example.org RECIPIENT=dl@example.org \
    LOCAL=dl HOST=example.org EXT=ext DTLINE='Delivered-To: dl@example.org' \
    QMAILINJECT=f QMAILQUEUE=/var/qmail/bin/qmail-queue \
    MAIL_CONFIG=/etc/postfix-out DOMAIN=example.org EXTENSION=x \
    CLIENT_ADDRESS=192.0.2.1 SASL_USERNAME=u \
    PGPASSWORD=s3cret PGHOST=/run/postgresql PGUSER=someone PGSERVICE=x \
    PGSSLKEY=/k LD_PRELOAD= IFS=x BASH_ENV=/tmp/x ENV=/tmp/y \
    LISTGATE_FAIL_ALLOC=0 LISTGATE_ALLOC_REPORT=0 SECRET_TOKEN=t \
    "$LISTGATE" --allow-root filter --mta postfix --list dl -f s@example.org -- \
    dl@example.org < "$DATA/ham-test.eml" > "$T/out" 2> "$T/err"
rc=$?
check "filter delivered (exit 0)" test "$rc" -eq 0
e=$T/env.dl
check "deliver ran" test -s "$e"
for v in "PATH=$PATH" HOME=/home/list LANG=C.UTF-8 LC_ALL=C.UTF-8 \
    LC_MESSAGES=C TZ=UTC USER=list LOGNAME=list LISTGATE_CONFIG="$CONF" \
    SENDER=s@example.org RECIPIENT=dl@example.org LOCAL=dl \
    HOST=example.org EXT=ext 'DTLINE=Delivered-To: dl@example.org' \
    QMAILINJECT=f QMAILQUEUE=/var/qmail/bin/qmail-queue \
    MAIL_CONFIG=/etc/postfix-out DOMAIN=example.org EXTENSION=x \
    CLIENT_ADDRESS=192.0.2.1 SASL_USERNAME=u; do
	check "deliver sees ${v%%=*}" has "$e" "$v"
done
for v in PGPASSWORD PGHOST PGUSER PGSERVICE PGSSLKEY LD_PRELOAD IFS \
    BASH_ENV ENV LISTGATE_FAIL_ALLOC LISTGATE_ALLOC_REPORT SECRET_TOKEN; do
	check "deliver does not see $v" lacks "$e" "$v"
done

pg_part
echo "1..$n"
[ $fails -eq 0 ]
