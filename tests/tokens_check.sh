#!/bin/sh
# tokens_check.sh - damage in a token file is found, and every message
# says what to do
#
# A trained token file gets scattered damage (a few 4-byte writes at
# random offsets, three seeds): `score --db-stats`, `config check` and,
# under tests/pg.sh, `sync --check` must find it and name `listgate
# rebuild --list L`; any other command that stumbles on it must say the
# same.  A missing file's message says that sync or rebuild recreates it
# from the journal.  Works in a mktemp -d directory removed at the end.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
DATA=$top_srcdir/tests/data/train
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-tokens-check.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
CONF=$T/conf

. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP), pg_part
lg() { "$LISTGATE" --allow-root --config "$CONF" "$@"; }
run() { "$@" > "$T/out" 2> "$T/err"; rc=$?; }
command -v python3 >/dev/null 2>&1 || { echo "python3 is needed"; exit 99; }
# damage FILE N SEED: N writes of 4 random bytes at random offsets
damage() {
	python3 -c '
import os, random, sys
path, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
r = random.Random(seed)
size = os.path.getsize(path)
with open(path, "r+b") as f:
    for i in range(n):
        f.seek(r.randrange(0, size - 4))
        f.write(bytes(r.randrange(256) for _ in range(4)))
' "$@"
}
# setup [DATABASE]: a configuration with a trained list d
setup() {
	rm -rf "$CONF"
	mkdir -p "$CONF/lists" || exit 99
	{
		printf 'tokens_dir = tokens\nlock_wait_ms = 200\n'
		[ -n "${1:-}" ] && printf 'database = "%s"\n' "$1"
	} > "$CONF/listgate.conf"
	: > "$CONF/lists/d.conf"
	[ -n "${1:-}" ] && { lg migrate -q || exit 99; }
	lg train -q --list d --spam "$DATA"/spam[1-4].eml > /dev/null &&
	    lg train -q --list d --ham "$DATA"/ham[1-4].eml > /dev/null ||
	    exit 99
	cp "$CONF/tokens/d.kch" "$T/sound.kch"
}

if [ "${1:-}" = pg ]; then
	setup "host=$PGHOST port=$PGPORT user=$PGUSER dbname=$PGDATABASE"
	run lg sync --check
	check "sync --check of a sound file exits 0" test "$rc" -eq 0
	check "... says it is sound, and where it stands" \
	    grep -q "^list d: .*/d.kch is sound: [0-9]* tokens, journal position 8 of 8\$" "$T/out"
	for seed in 1 2 3; do
		cp "$T/sound.kch" "$CONF/tokens/d.kch"
		damage "$CONF/tokens/d.kch" 20 "$seed"
		run lg sync --check --list d
		check "sync --check finds scattered damage (seed $seed)" test "$rc" -eq 1
		check "... and says to run rebuild" \
		    grep -Eq "(damaged|not a listgate token file).*run \`listgate --config [^ ]* rebuild --list d\`" "$T/err"
	done
	run lg rebuild -q --list d
	check "rebuild recreates it" test "$rc" -eq 0
	run lg sync --check --list d
	check "... and sync --check finds it sound" test "$rc" -eq 0
	rm -f "$CONF/tokens/d.kch"
	run lg sync --check --list d
	check "sync --check of a missing file exits 1" test "$rc" -eq 1
	check "... saying sync or rebuild recreates it from the journal" \
	    grep -q "does not exist: \`listgate --config [^ ]* sync\` or \`listgate --config [^ ]* rebuild --list d\` recreates it from the journal" "$T/err"
	check "... and creates nothing" test ! -e "$CONF/tokens/d.kch"
	run lg sync --list d
	check "sync then recreates it" test "$rc" -eq 0 -a -f "$CONF/tokens/d.kch"
	# a token file ahead of the journal (from another database)
	psql -X -q -c "DELETE FROM train_journal WHERE id > 6" 2>/dev/null
	run lg sync --check --list d
	check "sync --check of a file ahead of the journal exits 1" test "$rc" -eq 1
	check "... saying to rebuild" grep -q "another (or a restored) database; run \`listgate --config [^ ]* rebuild --list d\`" "$T/err"
	echo "1..$n"
	[ "$fails" -eq 0 ]
	exit
fi

setup
run lg score --list d --db-stats
check "--db-stats of a sound file exits 0" test "$rc" -eq 0
run lg config check --list d
check "config check of a sound file exits 0" test "$rc" -eq 0
check "... and says it checked the token file" \
    grep -q "^# token file .*/d.kch: sound, [0-9]* tokens\$" "$T/out"
for seed in 1 2 3; do
	cp "$T/sound.kch" "$CONF/tokens/d.kch"
	damage "$CONF/tokens/d.kch" 20 "$seed"
	run lg score --list d --db-stats
	check "--db-stats finds scattered damage (seed $seed)" test "$rc" -eq 1
	check "... and says to run rebuild" \
	    grep -Eq "(is damaged|is not a listgate token file) \(.*\): run \`listgate --config [^ ]* rebuild --list d\`" "$T/err"
	run lg config check --list d
	check "config check finds it (seed $seed)" test "$rc" -eq 1
	check "... and says to run rebuild" \
	    grep -Eq "listgate config: list d: token file .* (is damaged|is not a listgate token file).*rebuild --list d" "$T/err"
	# whatever else stumbles on it says the same
	for c in "score --list d $DATA/spam-test.eml" \
	    "train -q --list d --ham $DATA/ham-test.eml"; do
		# shellcheck disable=SC2086
		run lg $c
		if [ "$rc" -ne 0 ]; then
			check "$(echo "$c" | cut -d' ' -f1) fails with the rebuild advice (seed $seed)" \
			    grep -q "listgate --config [^ ]* rebuild --list d" "$T/err"
		fi
	done
done
# even one spot of damage (seed-chosen offsets, most land in the buckets)
found=0
for seed in 11 12 13 14 15 16 17 18 19 20; do
	cp "$T/sound.kch" "$CONF/tokens/d.kch"
	damage "$CONF/tokens/d.kch" 1 "$seed"
	lg score --list d --db-stats > /dev/null 2>&1 || found=$((found + 1))
done
check "one 4-byte write found in $found of 10 files" test "$found" -ge 9
rm -f "$CONF/tokens/d.kch"
run lg score --list d "$DATA/spam-test.eml"
check "a missing file: score fails" test "$rc" -eq 1
check "... saying sync or rebuild recreates it from the journal" \
    grep -q "does not exist: \`listgate --config [^ ]* sync\` or \`listgate --config [^ ]* rebuild --list d\` recreates it from the journal" "$T/err"
run lg config check --list d
check "config check of a list without a token file exits 0" test "$rc" -eq 0
check "... and says how it comes" grep -q "^# token file .*: none yet" "$T/out"
# without a database it named sync and rebuild, which cannot make it
# there ("no database configured"): train does
env -u PGHOST -u PGHOSTADDR -u PGPORT -u PGUSER -u PGDATABASE -u PGSERVICE \
    "$LISTGATE" --allow-root --config "$CONF" config check --list d \
    > "$T/out" 2> "$T/err"
check "... without a database, naming train" grep -q "^# token file .*: none yet (no database: \`listgate --config [^ ]* train --list d --spam/--ham \.\.\.\` makes it; filter defers the list's posts until then)\$" "$T/out"

if [ -f "$top_srcdir/tests/pg.sh" ]; then
	pg_part
fi

echo "1..$n"
[ "$fails" -eq 0 ]
