#!/bin/sh
# token_modes.sh - token files hold list content (addresses, subjects):
# they are made 0640 in a tokens directory made 0750, whatever the
# umask; train, sync and rebuild tighten older world-readable ones; a
# tokens directory others may write is refused (and a shared one, such
# as /tmp, left as it is)
#
# train on the token file alone here; sync and rebuild from the journal
# under tests/pg.sh.  Works in a mktemp -d directory removed at the end;
# never reads /etc.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
: "${top_builddir:?set by make check}"
QHOLD=$top_builddir/tests/qhold
DATA=$top_srcdir/tests/data/train
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-modes.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
CONF=$T/conf
mkdir -p "$CONF/lists" || exit 99

. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP), pg_part
lg() { "$LISTGATE" --allow-root --config "$CONF" "$@"; }
mode() { stat -c %a "$1"; }
# is FILE MODE
is() {
	m=$(mode "$1" 2>/dev/null)
	[ "$m" = "$2" ] || { echo "# $1: mode $m, want $2"; return 1; }
}

if [ "${1:-}" = pg ]; then
	# --- inside tests/pg.sh: sync and rebuild ------------------------
	printf 'tokens_dir = %s/tokens-pg\n' "$T" > "$CONF/listgate.conf"
	lg migrate -q || exit 99
	"$QHOLD" -j dev spam "$DATA/spam1.eml" >/dev/null || exit 99
	"$QHOLD" -j dev ham "$DATA/ham1.eml" >/dev/null || exit 99
	umask 022
	lg sync --list dev > "$T/out" 2>&1
	check "sync creates the token file" test -s "$T/tokens-pg/dev.kch"
	check "... 0640" is "$T/tokens-pg/dev.kch" 640
	check "... in a tokens directory made 0750" is "$T/tokens-pg" 750
	chmod 0644 "$T/tokens-pg/dev.kch"
	chmod 0755 "$T/tokens-pg"
	"$QHOLD" -j dev ham "$DATA/ham2.eml" >/dev/null || exit 99
	lg sync --list dev > "$T/out" 2>&1
	check "sync tightens a 0644 token file to 0640" is "$T/tokens-pg/dev.kch" 640
	check "and a 0755 tokens directory to 0750" is "$T/tokens-pg" 750
	umask 0
	lg rebuild --list dev > "$T/out" 2>&1
	check "rebuild exits 0" test $? -eq 0
	check "rebuild makes the new file 0640 under umask 0" is "$T/tokens-pg/dev.kch" 640
	echo "1..$n"
	[ $fails -eq 0 ]
	exit
fi

# --- train on the token file alone ----------------------------------------
printf 'tokens_dir = tokens\n' > "$CONF/listgate.conf"
umask 022
lg train --quiet --list dev --spam "$DATA/spam1.eml" > "$T/out" 2>&1
check "train creates the token file" test -s "$CONF/tokens/dev.kch"
check "... 0640 under umask 022" is "$CONF/tokens/dev.kch" 640
check "... in a tokens directory made 0750" is "$CONF/tokens" 750
umask 077
lg train --quiet --list other --spam "$DATA/spam1.eml" > "$T/out" 2>&1
check "0640 under umask 077 too (the group reads it)" is "$CONF/tokens/other.kch" 640
umask 0
lg train --quiet --list wide --spam "$DATA/spam1.eml" > "$T/out" 2>&1
check "0640 under umask 0" is "$CONF/tokens/wide.kch" 640
rm -rf "$CONF/tokens"
printf 'tokens_dir = %s/a/b/tokens\n' "$T" > "$CONF/listgate.conf"
lg train --quiet --list dev --spam "$DATA/spam1.eml" > "$T/out" 2>&1
check "a new tokens directory is 0750 under umask 0" is "$T/a/b/tokens" 750
check "and so are the parents it makes" is "$T/a/b" 750
umask 022
chmod 0644 "$T/a/b/tokens/dev.kch"
chmod 0755 "$T/a/b/tokens"
lg train --quiet --list dev --ham "$DATA/ham1.eml" > "$T/out" 2>&1
check "train tightens a 0644 token file to 0640" is "$T/a/b/tokens/dev.kch" 640
check "and a 0755 tokens directory to 0750" is "$T/a/b/tokens" 750
lg score --list dev "$DATA/ham2.eml" > "$T/out" 2>&1
chmod 0644 "$T/a/b/tokens/dev.kch"
lg score --list dev "$DATA/ham2.eml" > "$T/out" 2>&1
check "a reader (score) changes no mode" is "$T/a/b/tokens/dev.kch" 644
# a tokens directory others may write: another user could put a token
# file of their own there, or a link where Kyoto Cabinet creates its
# log (dev.kch.wal, opened with O_TRUNC)
chmod 0770 "$T/a/b/tokens"
lg score --list dev "$DATA/ham2.eml" > "$T/out" 2>&1
check "a group-writable tokens directory: score refuses (exit 1)" test $? -eq 1
check "... naming the directory and what to do" \
    grep -q "tokens directory $T/a/b/tokens is writable by its group (mode 0770).*chmod go-w" "$T/out"
lg train --quiet --list dev --ham "$DATA/ham1.eml" > "$T/out" 2>&1
check "... train, its owner, takes group write away and learns" \
    sh -c "test $? -eq 0 && test \$(stat -c %a '$T/a/b/tokens') = 750"
mkdir "$T/shared" && chmod 1777 "$T/shared" || exit 99
printf 'do not truncate\n' > "$T/secret"
ln -s "$T/secret" "$T/shared/dev.kch.wal"
printf 'tokens_dir = %s/shared\n' "$T" > "$CONF/listgate.conf"
lg train --quiet --list dev --spam "$DATA/spam1.eml" > "$T/out" 2>&1
check "a shared tokens directory (1777, as /tmp): train refuses (exit 1)" test $? -eq 1
check "... saying so" grep -q "writable by everyone (mode 1777)" "$T/out"
check "... and leaves its mode alone" is "$T/shared" 1777
check "... the file a planted .wal link points at is untouched" \
    test "$(cat "$T/secret")" = "do not truncate"
check "... no token file made" test ! -e "$T/shared/dev.kch"

pg_part
echo "1..$n"
[ $fails -eq 0 ]
