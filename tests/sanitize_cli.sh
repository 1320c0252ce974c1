#!/bin/sh
# sanitize_cli.sh - hostile text never reaches a terminal, a log line or
# JSON as it came
#
# A post carries terminal escapes (CSI "ESC [31m", OSC "ESC ]0;title
# BEL"), U+009B (the C1 CSI: UTF-8 C2 9B, and the raw byte 0x9B) and
# U+202E (RIGHT-TO-LEFT OVERRIDE) in its Subject, From, Message-ID,
# X-Mailer, body URL and RFC 2047 words, and in the envelope sender.
# None of those bytes may come out of `tokens`, `score -v` (text and
# --json) or the filter's summary line (logged to stderr when that is a
# terminal: script(1) gives it one); under PostgreSQL (tests/pg.sh; the
# part is skipped, exit 77, when no server is installed) neither from
# `held`, `held --json` (valid JSON) nor `show ID`, while the held row
# itself keeps the text as it came (masking is for output).  Works in a
# mktemp -d directory removed at the end; never reads /etc.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
DATA=$top_srcdir/tests/data/train
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-sanitize.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
CONF=$T/conf

. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP), pg_part, lock_file
lg() { "$LISTGATE" --allow-root --config "$CONF" "$@"; }
run() { "$@" > "$T/out" 2> "$T/err"; rc=$?; }

# the bytes that must never come out: ESC, BEL, 0x9B (raw, and the
# second byte of UTF-8 U+009B), U+202E
ESC=$(printf '\033')
BEL=$(printf '\007')
C1=$(printf '\233')
RLO=$(printf '\342\200\256')
# clean FILE: FILE holds none of them
clean() {
	! LC_ALL=C grep -q -a -e "$ESC" -e "$BEL" -e "$C1" -e "$RLO" "$1"
}
# has FILE TEXT: FILE holds TEXT (fixed string)
has() { LC_ALL=C grep -q -a -F -e "$2" "$1"; }

# the envelope sender and the post
SENDER=$(printf 'bad\033[31m\302\233\233\342\200\256@example.net')
{
	printf 'From: \033]0;title\007Evil \342\200\256 <ev\302\233il@example.org>\n'
	printf 'To: dev@lists.example.org\n'
	printf 'Subject: Win \033[31mbig\033[0m \302\2332J \2332J \342\200\256gnp.exe\n'
	printf '  =?utf-8?q?=1B]0;pwned=07_=C2=9B_=E2=80=AE?= =?iso-8859-1?q?=9B1m?=\n'
	printf 'Message-ID: <m\033[31m\302\233\233\342\200\256@example.org>\n'
	printf 'X-Mailer: Mailer\033[31m\302\233X \233Y \342\200\256Z\n'
	printf 'Date: Mon, 1 Jan 2024 00:00:00 +0000\n'
	printf 'Content-Type: text/plain; charset=utf-8\n'
	printf '\n'
	printf 'Cheap pills at http://ev\302\233il.example/\342\200\256\233path now\n'
	printf '\033[2J\033]0;owned\007 buy \302\233 now \342\200\256 \233\n'
} > "$T/hostile.eml"
clean "$T/hostile.eml" &&
    { echo "# the hostile post holds no hostile bytes"; exit 99; }

# a configuration: list dev passes everything (ham_cutoff = 1) without
# a database, holds everything (ham_cutoff = 0) with one
setup_conf() {
	rm -rf "$CONF"
	mkdir -p "$CONF/lists" || exit 99
	{
		echo 'tokens_dir = tokens'
		echo 'mta = qmail'
		[ -n "${1:-}" ] && echo "database = \"$1\""
	} > "$CONF/listgate.conf"
	printf 'ham_cutoff = %s\nspam_cutoff = 1\n' "$2" > "$CONF/lists/dev.conf"
	if [ -n "${1:-}" ]; then
		lg migrate >/dev/null 2>"$T/err" || { cat "$T/err"; exit 99; }
	fi
	# the hostile post three times: its tokens decide its score
	lg train --quiet --list dev --spam "$DATA"/spam[1-4].eml \
	    "$T/hostile.eml" "$T/hostile.eml" "$T/hostile.eml" >/dev/null &&
	    lg train --quiet --list dev --ham "$DATA"/ham[1-4].eml >/dev/null ||
	    { echo "# training failed"; exit 99; }
}

# filter_tty OUT: the filter on the hostile post with stderr on a
# terminal (script(1)), its output in OUT; 1 when there is no script
filter_tty() {
	command -v script >/dev/null 2>&1 || return 1
	script -qec "'$LISTGATE' --allow-root --config '$CONF' filter --list dev \
	    --mta qmail -f '$SENDER' -- dev@lists.example.org \
	    < '$T/hostile.eml'; echo \"exit=\$?\"" /dev/null > "$1" 2>&1
	return 0
}

# check_log OUT ACTION: the summary line in OUT is there and clean
check_log() {
	if ! has "$1" "action=$2"; then
		bad "filter: the summary line (action=$2) was logged"
		sed 's/^/# /' "$1"
		return
	fi
	ok "filter: the summary line (action=$2) was logged"
	check "filter: ... holds no hostile byte" clean "$1"
	check "filter: ... masks the Message-ID" has "$1" "msgid=<m?[31m???@"
	check "filter: ... masks the envelope sender" \
	    has "$1" "from=<bad?[31m???@example.net>"
}

if [ "${1:-}" = pg ]; then
	# --- inside tests/pg.sh: held, held --json, show ------------------
	setup_conf "host=$PGHOST port=$PGPORT user=$PGUSER dbname=$PGDATABASE" 0
	sql() { psql -X -q -A -t -v ON_ERROR_STOP=1 -c "$1"; }
	if filter_tty "$T/log"; then
		check "filter: the hostile post is held (exit 99)" \
		    has "$T/log" "exit=99"
		check_log "$T/log" held
	else
		echo "# no script(1): the filter's log line is not checked"
		lg filter --list dev --mta qmail -f "$SENDER" \
		    -- dev@lists.example.org < "$T/hostile.eml" >/dev/null 2>&1
		check "filter: the hostile post is held (exit 99)" test $? -eq 99
	fi
	id=$(sql "SELECT max(id) FROM held_posts WHERE list = 'dev'")
	[ -n "$id" ] || { echo "# nothing held"; exit 99; }
	check "the row keeps the Subject's controls (masked on output)" \
	    test "$(sql "SELECT strpos(subject, chr(27)) > 0 AND
	    strpos(subject, chr(155)) > 0 AND strpos(subject, chr(8238)) > 0
	    FROM held_posts WHERE id = $id")" = t
	check "... the envelope sender's raw 0x9B (invalid UTF-8) as U+FFFD" \
	    test "$(sql "SELECT strpos(env_sender, chr(65533)) > 0 AND
	    strpos(env_sender, chr(27)) > 0 FROM held_posts WHERE id = $id")" = t

	run lg held
	check "held exits 0" test "$rc" -eq 0
	check "held: no hostile byte" clean "$T/out"
	check "held: the subject, masked" has "$T/out" "Win ?[31mbig?[0m ?2J"
	check "held: the sender, masked" has "$T/out" "?]0;title?Evil ? <"

	run lg held --json
	check "held --json exits 0" test "$rc" -eq 0
	check "held --json: no hostile byte" clean "$T/out"
	if command -v python3 >/dev/null 2>&1; then
		check "held --json is valid JSON" \
		    python3 -c 'import json,sys; json.load(sys.stdin)' < "$T/out"
		check "held --json: masked characters are U+FFFD" python3 -c '
import json, sys
d = json.load(sys.stdin)
r = [x for x in d if x["id"] == int(sys.argv[1])][0]
bad = [c for f in ("from", "subject", "message_id", "env_sender")
       for c in r[f] if ord(c) < 0x20 or 0x7f <= ord(c) <= 0x9f or
       c in "\u061c\u200e\u200f\u2028\u2029\u202a\u202b\u202c\u202d\u202e"
             "\u2066\u2067\u2068\u2069\ufeff"]
sys.exit(bool(bad) or not r["subject"].startswith("Win \ufffd[31mbig") or
         "\ufffd" not in r["env_sender"])
' "$id" < "$T/out"
	else
		echo "# no python3: held --json is not parsed"
	fi

	run lg show "$id"
	check "show exits 0" test "$rc" -eq 0
	check "show: no hostile byte" clean "$T/out"
	check "show: the Subject, masked" \
	    has "$T/out" "Win ?[31mbig?[0m ?2J"
	check "show: the decoded words, masked" has "$T/out" "?]0;pwned? ? ?"
	check "show: the Message-ID, masked" has "$T/out" "<m?[31m???@"
	check "show: the text preview, masked" \
	    has "$T/out" "?[2J?]0;owned? buy ? now ? ?"
	echo "1..$n"
	[ $fails -eq 0 ]
	exit
fi

# --- without a database: tokens, score -v, the filter's log line --------------
setup_conf "" 1

run lg tokens "$T/hostile.eml"
check "tokens exits 0" test "$rc" -eq 0
check "tokens: no hostile byte" clean "$T/out"
check "tokens: the X-Mailer token, masked" has "$T/out" "ua:mailer [31m?x ?y ?z"
check "tokens: the URL token, masked" has "$T/out" "url:ev?il"

run lg score --list dev -v "$T/hostile.eml"
check "score -v exits 0" test "$rc" -eq 0
check "score -v: no hostile byte" clean "$T/out"
check "score -v: the deciding URL token, masked" has "$T/out" "url:ev?il.example 0."
check "score -v: the deciding X-Mailer token, masked" has "$T/out" "ua:mailer [31m?x ?y ?z 0."
run lg score --list dev -v --json "$T/hostile.eml"
check "score -v --json exits 0" test "$rc" -eq 0
check "score -v --json: no hostile byte" clean "$T/out"
check "score -v --json: the URL token, escaped U+FFFD" \
    has "$T/out" '"url:ev\ufffdil.example 0.'
if command -v python3 >/dev/null 2>&1; then
	check "score -v --json is valid JSON" \
	    python3 -c 'import json,sys; json.load(sys.stdin)' < "$T/out"
fi
# a file name is untrusted too
cp "$T/hostile.eml" "$T/x${ESC}[31m${RLO}.eml"
run lg score --list dev "$T/hostile.eml" "$T/x${ESC}[31m${RLO}.eml"
check "score: a hostile file name is masked" clean "$T/out"
run lg score --list dev "$T/nonexistent${ESC}[2J${C1}.eml"
check "score: ... also in the error message" clean "$T/err"

if filter_tty "$T/log"; then
	check "filter: the post passes (exit 0)" has "$T/log" "exit=0"
	check_log "$T/log" pass
else
	echo "# no script(1): the filter's log line is not checked"
fi

# --- the hold path, with a private PostgreSQL ------------------------------
pg_part

echo "1..$n"
[ $fails -eq 0 ]
