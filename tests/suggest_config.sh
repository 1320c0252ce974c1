#!/bin/sh
# suggest_config.sh - a command a message suggests names the configuration
# in use
#
# Run with --config DIR (or LISTGATE_CONFIG=DIR), the commands listgate
# tells the administrator to run (`listgate migrate`, `listgate rebuild
# --list L`, `listgate sync`, `listgate approve --force ID`, `config
# check`'s advice, the `listgate notify --pending` of a filter stopped
# while sending hold notices and of the holder whose notices failed)
# carry `--config DIR`, the directory shell-quoted:
# pasted without it, they act on another configuration's database and
# lists.  The directory here is named "it's a conf"; another one
# (LISTGATE_CONFIG while pasting, standing in for the default) has a
# database and tokens of its own, which a pasted command must leave
# alone.  Runs under tests/pg.sh; works in a mktemp -d directory removed
# at the end.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
: "${top_builddir:?set by make check}"
if [ -z "${PG_TEST_DIR:-}" ]; then
	exec sh "$top_srcdir/tests/pg.sh" run sh "$0" "$@"
fi
DATA=$top_srcdir/tests/data/train
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-suggest.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
T=$(realpath "$T") || exit 99	# as the messages name it
Q="$T/it's a conf"
OTHER=$T/other
mkdir -p "$Q/lists" "$OTHER/lists" || exit 99
createdb lg_q && createdb lg_o || exit 99
printf 'tokens_dir = %s/qtokens\ndatabase = dbname=lg_q\n' "$T" \
    > "$Q/listgate.conf"
printf 'tokens_dir = %s/otokens\ndatabase = dbname=lg_o\n' "$T" \
    > "$OTHER/listgate.conf"
printf '#!/bin/sh\ncat > "%s/released"\n' "$T" > "$T/release.sh" || exit 99
printf 'release = /bin/sh %s/release.sh\n' "$T" > "$Q/lists/dev.conf"

. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP)
# the other configuration is what a pasted command without --config uses
LISTGATE_CONFIG=$OTHER
export LISTGATE_CONFIG
lg() { "$LISTGATE" --allow-root --config "$Q" "$@"; }
run() { "$@" > "$T/out" 2> "$T/err"; rc=$?; }
sql() { psql -X -q -A -t -v ON_ERROR_STOP=1 -d "$1" -c "$2"; }
# how the messages must name the configuration: in single quotes, the '
# as '\''
QQ="listgate --config '$T/it'\\''s a conf'"
# paste FILE: the first suggested command in FILE (between backquotes,
# or up to a closing parenthesis) run as a shell would, listgate being
# the one under test
cat > "$T/extract.py" <<'PYEOF'
import re, sys
# listgate --config 'DIR' COMMAND..., the directory one quoted word
m = re.search(r"[`(]listgate (--config '(?:[^']|'\\'')*' [a-z][^`)]*)[`)]",
    open(sys.argv[1]).read())
print(m.group(1) if m else "")
PYEOF
paste_cmd() {
	python3 "$T/extract.py" "$1" > "$T/cmd"
	test -s "$T/cmd" || return 1
	sh -c "exec \"\$0\" --allow-root $(cat "$T/cmd")" "$LISTGATE" \
	    > "$T/pasted.out" 2>&1 || sed 's/^/# pasted: /' "$T/pasted.out"
}

# --- an unmigrated database: migrate ---------------------------------------
run lg held
check "held on an unmigrated database fails" test "$rc" -eq 1
check "... saying to run migrate with --config DIR, shell-quoted" \
    grep -qF "run \`$QQ migrate\`" "$T/err"
cp "$T/err" "$T/advice"
run lg migrate --status
check "migrate --status says the same" \
    grep -qF "(run $QQ migrate)" "$T/out"
paste_cmd "$T/advice"
check "the suggested migrate, pasted, migrates that configuration's database" \
    test "$(sql lg_q 'SELECT count(*) > 0 FROM schema_migrations')" = t
check "... and not the other one's" \
    test "$(sql lg_o "SELECT to_regclass('schema_migrations') IS NULL")" = t

# --- config check: no token file yet ---------------------------------------
# (a post in the journal, the file gone: sync and rebuild make it again)
run lg train --list dev --ham "$DATA/ham1.eml"
test "$rc" -eq 0 || exit 99
rm -f "$T/qtokens/dev.kch"
run lg config check --list dev
check "config check on a list without a token file names sync and rebuild with --config DIR" \
    grep -qF "none yet (\`$QQ sync\` or \`$QQ rebuild --list dev\` creates it" "$T/out"
sed 's/none yet (`[^`]*` or /(/' "$T/out" > "$T/advice"
paste_cmd "$T/advice"
check "the suggested rebuild, pasted, makes that configuration's token file" \
    sh -c "test -f '$T/qtokens/dev.kch' && ! test -e '$T/otokens/dev.kch'"

# --- a missing token file: sync ---------------------------------------------
rm -f "$T/qtokens/dev.kch"
run lg score --list dev "$DATA/spam1.eml"
check "score without a token file fails" test "$rc" -eq 1
check "... saying that sync or rebuild recreates it, with --config DIR" \
    grep -qF "does not exist: \`$QQ sync\` or \`$QQ rebuild --list dev\`" "$T/err"
paste_cmd "$T/err"
check "the suggested sync, pasted, recreates that configuration's token file" \
    sh -c "test -f '$T/qtokens/dev.kch' && ! test -e '$T/otokens/dev.kch'"

# --- a token file of an old format: rebuild ----------------------------------
"$top_builddir/tests/mkoldtok" "$T/qtokens/dev.kch" cur 20000 \
    "s:$DATA/spam1.eml" || exit 99
run lg sync --list dev
check "sync refuses a format 1 token file" test "$rc" -eq 1
check "... saying to rebuild with --config DIR" \
    grep -qF "run \`$QQ rebuild --list dev\`" "$T/err"
paste_cmd "$T/err"
run lg sync --list dev
check "the suggested rebuild, pasted, replaces that configuration's file" \
    test "$rc" -eq 0

# --- a release left 'releasing': approve --force ----------------------------
id=$(PGDATABASE=lg_q "$top_builddir/tests/qhold" dev "$DATA/ham2.eml") ||
    exit 99
sql lg_q "UPDATE held_posts SET status = 'releasing',
    decided_at = now() - interval '2 hours', decided_by = 'm'
    WHERE id = $id" > /dev/null 2>&1
run lg expire --list dev
if grep -q "has been releasing since" "$T/err"; then
	check "expire names approve --force with --config DIR" \
	    grep -qF "or \`$QQ approve --force $id\` to release it" "$T/err"
	sed 's/.*, or `/(`/' "$T/err" > "$T/advice"
	paste_cmd "$T/advice"
	check "the suggested approve --force, pasted, releases that configuration's post" \
	    sh -c "test -s '$T/released' && test \"\$(psql -X -A -t -d lg_q -c \"SELECT status FROM held_posts WHERE id = $id\")\" = approved"
else
	bad "expire names a post left releasing ($(cat "$T/err"))"
fi

# --- hold notices cut short: notify --pending -------------------------------
# (the filter stopped while its notify runs, the first time only; the
# holder's notify failing)
printf 'tokens_dir = %s/qtokens\ndatabase = dbname=lg_q\nsecret_file = %s/secret\n' \
    "$T" "$T" > "$Q/listgate.conf"
cat > "$T/notify.sh" <<EOF
#!/bin/sh
[ -e "$T/fail" ] && exit 1
if [ ! -e "$T/notified" ]; then : > "$T/notified"; sleep 30; fi
cat > "$T/notice.\$2"
EOF
{
	printf 'release = /bin/sh %s/release.sh\nham_cutoff = 0\n' "$T"
	printf 'moderators = alice@example.org\n'
	printf 'moderation_address = dev-moderate@lists.example.org\n'
	printf 'notify = /bin/sh %s/notify.sh {moderator} {id}\n' "$T"
} > "$Q/lists/dev.conf"
lg init > /dev/null 2>&1 || exit 99
"$LISTGATE" --allow-root --config "$Q" filter --list dev --mta postfix \
    < "$DATA/spam1.eml" > "$T/out" 2> "$T/err" &
fpid=$!
i=0
while [ ! -e "$T/notified" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
kill -TERM "$fpid"
wait "$fpid"
rc=$?
check "filter stopped while sending hold notices: exit 0, the post held ($rc)" \
    test "$rc" -eq 0
check "... saying notify --pending sends the rest, with --config DIR" \
    grep -qF "the post is held (\`$QQ notify --pending\` sends the rest)" "$T/err"
# (the stopped sender's claim on the row has run out)
sql lg_q "UPDATE notice_outbox SET claimed_until = now() - interval '1 second'" > /dev/null
paste_cmd "$T/err"
check "the suggested notify --pending, pasted, sends that configuration's notice" \
    sh -c "ls '$T' | grep -q '^notice\\.[0-9]'"
# the holder
S=$T/holder.sock
printf 'holder_socket = %s\n' "$S" >> "$Q/listgate.conf"
: > "$T/fail"
"$LISTGATE" --allow-root --config "$Q" holder --workers 1 > "$T/holder.log" 2>&1 &
hpid=$!
i=0
while ! grep -q "listening on" "$T/holder.log" && [ $i -lt 300 ]; do
	sleep 0.1
	i=$((i + 1))
done
run lg filter --list dev --mta postfix < "$DATA/spam2.eml"
kill "$hpid" 2>/dev/null
wait "$hpid"
check "the holder, its notices failing, names notify --pending with --config DIR" \
    grep -qF "(\`$QQ notify --pending\` sends th" "$T/holder.log"
rm -f "$T/fail"
paste_cmd "$T/holder.log"
check "the suggested notify --pending, pasted, sends the holder's post's notice" \
    test "$(ls "$T" | grep -c '^notice\.[0-9]')" -eq 2

# --- LISTGATE_CONFIG names the configuration too ------------------------------
rm -f "$T/qtokens/dev.kch"
run env LISTGATE_CONFIG="$Q" "$LISTGATE" --allow-root score --list dev \
    "$DATA/spam1.eml"
check "LISTGATE_CONFIG=DIR: the advice names --config DIR (read elsewhere, a command without it acts on /etc/listgate)" \
    grep -qF "\`$QQ rebuild --list dev\`" "$T/err"

echo "1..$n"
test "$fails" -eq 0
