#!/bin/sh
# run.sh - build listgate's libFuzzer targets and run one of them
#
#   tests/fuzz/run.sh [TARGET] [SECONDS]   build, then fuzz TARGET (default
#                                          mail) for SECONDS (default 60)
#   tests/fuzz/run.sh --build              build every target, run none
#   tests/fuzz/run.sh --replay TARGET FILE...
#                                          run TARGET once on each FILE
#                                          (the crash fixtures)
#
# Targets (tests/fuzz/fuzz_TARGET.c, dictionary tests/fuzz/TARGET.dict):
#   mail     the MIME walker and its decoders
#   tok      the tokenizer: tok_text, tok_header, tok_post
#   source   mbox, maildir and directory splitting (gate/mail/source.c)
#   listcfg  the configuration parser, and what it prints reading back
#   tmpl     argv templates: parsing and expansion
#   cookie   action addresses and cookies of moderation by mail
#   received the Received chain reader and its src: tokens (gate/received.c;
#            the first line of an input names trusted relays)
#   holder   the holder's requests and answers (gate/holder/holder.c)
#   notice   hold notices, digests and answers built from a hostile post
#            (gate/moderate/notice.c): well-formed, sanitized
#   web      the web server's form bodies and JSON (gate/web/form.c,
#            gate/web/json.c), Cookie and Host headers
#            (gate/web/session.c, listcfg/keys.c)
#   reply    the robot and list rules of moderation by mail, a reply's
#            From and Message-ID (gate/moderate/robot.c)
# Seeds come from the fixtures (tests/data/mail, tests/data/train, the
# configuration tests) and from tests/data/fuzz/TARGET/, the named
# fixtures of earlier crashes.  The corpus grows in $FUZZ_WORK/TARGET
# (default /tmp/listgate-fuzz); crashes land there as crash-*: turn each
# into a named fixture under tests/data/fuzz/TARGET/.  The objects are
# built with clang (-fsanitize=fuzzer-no-link,address,undefined) in
# $FUZZ_WORK/obj.  FUZZ_JOBS=N runs N fuzzing processes (default 1).
# Not part of make check: tests/fuzz/run-all-targets.sh runs them all.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
work=${FUZZ_WORK:-/tmp/listgate-fuzz}
CC=${CC_FUZZ:-clang}
TARGETS="mail tok source listcfg tmpl cookie received holder notice web reply"
obj=$work/obj
SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined"

build() {
	mkdir -p "$obj"
	# a config.h for a build outside configure
	if [ -f "$top/config.h" ]; then cfg=$top; else
		printf '#define _GNU_SOURCE 1\n#define LG_SYSCONFDIR "/etc/listgate"\n' \
		    > "$obj/config.h.new"
		cmp -s "$obj/config.h.new" "$obj/config.h" 2>/dev/null ||
		    mv "$obj/config.h.new" "$obj/config.h"
		cfg=$obj
	fi
	pqinc=$(pkg-config --cflags libpq 2>/dev/null ||
	    echo "-I$(pg_config --includedir 2>/dev/null || echo /usr/include/postgresql)")
	cflags="-g -O1 -fsanitize=fuzzer-no-link $SAN -I$cfg -I$top $pqinc"
	# the library: every file below the layer of configuration (plus
	# listcfg itself); rebuilt when any source or header changed
	srcs=$(cd "$top" && ls gate/util/*.c gate/mail/*.c gate/tok.c \
	    gate/tok_post.c gate/received.c gate/toklist.c gate/bayes.c gate/outcome.c \
	    gate/verdict.c listcfg/*.c gate/moderate/cookie.c gate/holder/holder.c \
	    gate/moderate/notice.c gate/moderate/robot.c gate/web/form.c \
	    gate/web/json.c gate/web/session.c gate/web/pwhash.c)
	stamp=$(cd "$top" && cat $srcs gate/*.h gate/*/*.h listcfg/*.h \
	    tests/fuzz/*.c | cksum | tr ' ' _)
	if [ ! -f "$obj/libfuzzgate.a" ] || [ "$(cat "$obj/stamp" 2>/dev/null)" != "$stamp" ]; then
		rm -f "$obj"/*.o "$obj/libfuzzgate.a"
		for s in $srcs; do echo "$s"; done |
		    xargs -P "$(nproc 2>/dev/null || echo 2)" -I{} sh -c \
		    'o=$(echo "$1" | tr / _); exec '"$CC $cflags"' -c "'"$top"'/$1" -o "'"$obj"'/${o%.c}.o"' sh {}
		ar rcs "$obj/libfuzzgate.a" "$obj"/*.o
		for tg in $TARGETS; do
			[ -f "$top/tests/fuzz/fuzz_$tg.c" ] || continue
			$CC $cflags -fsanitize=fuzzer "$top/tests/fuzz/fuzz_$tg.c" \
			    "$obj/libfuzzgate.a" -lpq -lz -lnettle -lcrypt -lm \
			    -o "$obj/fuzz_$tg"
		done
		echo "$stamp" > "$obj/stamp"
	fi
}

# the seeds of a target, into $1 (a directory)
seeds() {
	t=$1 d=$2
	mkdir -p "$d"
	case $t in
	mail|tok)
		cp "$top"/tests/data/mail/*.eml "$top"/tests/data/train/*.eml "$d/"
		;;
	source)
		# one file: an mbox of the training posts; a maildir and a
		# directory of them (pieces cut at "\n\x01\n")
		i=0
		for m in 0 1 2; do
			{
				printf "\\$m"
				for f in "$top"/tests/data/train/*.eml; do
					case $m in
					0) printf 'From x@example.org Thu Jan  1 00:00:00 1970\n' ;;
					esac
					cat "$f"
					case $m in
					0) echo ;;
					*) printf '\n\001\n' ;;
					esac
				done
			} > "$d/seed-layout$m"
		done
		cp "$top"/tests/data/mail/0015-mbox-from.eml "$d/"
		printf '\0From a\n\nFrom b\nx\n\nFrom c\r\n\r\nFrom d\n' > "$d/seed-froms"
		;;
	listcfg|tmpl)
		cp "$top"/tests/fuzz/seeds/"$t"/* "$d/" 2>/dev/null || :
		;;
	received)
		# the Received values of the corpus header chains
		for f in "$top"/tests/data/received/*.eml; do
			sed -n 's/^Received: //p' "$f" > "$d/$(basename "$f")"
		done
		;;
	holder)
		# a request as filter sends it, and an answer after it
		python3 - "$d/seed-request" <<'PY'
import struct, sys
f = [b"dev", b"s@example.org", b"dev@example.org", b"A <a@example.org>",
     b"x", b"<1@example.org>", b"spam", b"tok 0.99 3 0\n", b"held", b"",
     b"0.98765", b"7", b"1", b"0" * 64, b"From: a@example.org\n\nbody\n"]
body = b"".join(struct.pack(">I", len(x)) + x for x in f)
open(sys.argv[1], "wb").write(b"LGH1" + struct.pack(">I", len(body)) + body +
                              b"OK 0 812 1")
PY
		printf 'ER database: no connection' > "$d/seed-error"
		;;
	notice)
		# sender, Subject, envelope sender, note, clues, then a post
		for f in "$top"/tests/data/mail/*.eml; do
			{
				printf 'A <a@example.org>\000=?utf-8?b?4oCu?= x\000'
				printf '<1@example.org>\000deliver refused\000'
				printf 'cheap 0.99 3 0\nhello 0.01 0 9\n\000'
				cat "$f"
			} > "$d/$(basename "$f")"
		done
		;;
	reply)
		# an envelope sender, then a message
		for f in "$top"/tests/data/mail/*.eml; do
			{ echo 'mod@example.org'; cat "$f"; } > "$d/$(basename "$f")"
		done
		printf '\nFrom: x\nAuto-Submitted: auto-replied\n\nhi\n' > "$d/seed-null"
		printf 'owner-dev@example.org\nPrecedence: (c) bulk\nList-Id: <dev>\n\n' > "$d/seed-list"
		;;
	web)
		printf 'Aaction=approve&id=812&csrf=0a1b2c' > "$d/seed-form"
		printf '@user=mod%%40example.org&password=a+b%%20c' > "$d/seed-login"
		printf '\001{"action": "reject", "note": "spam \\u00e9\\ud83d\\ude00"}' > "$d/seed-json"
		printf '\100{"list":"dev","id":"812","nested":{"a":[1,2,{"b":null}]}}' > "$d/seed-nested"
		printf '\001lgsid=%064d; x=1; lgsid="%064d"' 1 2 > "$d/seed-cookie"
		printf '\002Lists.Example.ORG.:8443' > "$d/seed-host"
		printf '\003[::1]:8180' > "$d/seed-host6"
		;;
	cookie)
		printf 'dev-moderate+approve-812-0abcdefg0123456789abcdefghij@lists.example.org' > "$d/seed-approve"
		printf 'dev-moderate-reject-1-zzzzzzz00000000000000000000@x' > "$d/seed-qmail"
		printf '<dev-moderate+discard-99-@lists.example.org>' > "$d/seed-short"
		;;
	esac
	cp "$top"/tests/data/fuzz/"$t"/* "$d/" 2>/dev/null || :
}

# one build at a time (several runs may start together)
locked_build() {
	mkdir -p "$obj"
	if command -v flock >/dev/null 2>&1 && [ -z "${FUZZ_LOCKED:-}" ]; then
		FUZZ_LOCKED=1 flock "$obj/.lock" sh "$0" --build
	else
		build
	fi
}

case ${1:-} in
--build)
	build
	exit 0
	;;
--replay)
	shift
	t=$1
	shift
	locked_build
	[ $# -eq 0 ] && exit 0
	exec "$obj/fuzz_$t" -runs=1 "$@"
	;;
[0-9]*)
	t=mail
	;;
"")
	t=mail
	;;
*)
	t=$1
	shift
	;;
esac
secs=${1:-60}
case " $TARGETS " in
*" $t "*) ;;
*) echo "run.sh: unknown target $t (one of: $TARGETS)" >&2; exit 2 ;;
esac
locked_build
mkdir -p "$work/$t/corpus"
seeds "$t" "$work/$t/corpus"
cd "$work/$t"
set -- -max_total_time="$secs" -max_len=65536 -timeout=10 \
	-rss_limit_mb=2048 -print_final_stats=1 \
	-dict="$top/tests/fuzz/$t.dict" corpus
if [ "${FUZZ_JOBS:-1}" -gt 1 ]; then
	set -- -jobs="$FUZZ_JOBS" -workers="$FUZZ_JOBS" "$@"
fi
exec "$obj/fuzz_$t" "$@"
