#!/bin/sh
# run.sh - build a libFuzzer target and run it
#   tests/fuzz/run.sh [seconds] [mail|received]   (default 60, mail)
# Seeds: tests/data/mail/*.eml; the corpus grows in $FUZZ_WORK (default
# a directory under /tmp).  Crashes land in $FUZZ_WORK/crash-*: turn each
# into a named fixture under tests/data/mail/.  Not part of make check.
set -eu
secs=${1:-60}
target=${2:-mail}
top=$(cd "$(dirname "$0")/../.." && pwd)
work=${FUZZ_WORK:-/tmp/listgate-fuzz-$target}
CC=${CC_FUZZ:-clang}
mkdir -p "$work/corpus" "$work/obj"
# a config.h for a build outside configure
if [ -f "$top/config.h" ]; then cfg=$top; else
	printf '#define _GNU_SOURCE 1\n' > "$work/obj/config.h"; cfg=$work/obj
fi
if [ "$target" = received ]; then
	# the Received reader: seeds are the corpus header chains
	$CC -g -O1 -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=undefined -I"$cfg" -I"$top" \
		"$top/tests/fuzz/fuzz_received.c" "$top/gate/received.c" \
		"$top/gate/toklist.c" "$top"/gate/util/*.c \
		-o "$work/fuzz_received"
	for f in "$top"/tests/data/received/*.eml; do
		sed -n 's/^Received: //p' "$f" > "$work/corpus/$(basename "$f")"
	done
	cd "$work"
	exec ./fuzz_received -max_total_time="$secs" -max_len=8192 \
		-timeout=10 -rss_limit_mb=2048 -print_final_stats=1 corpus
fi
$CC -g -O1 -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined -I"$cfg" -I"$top" \
	"$top/tests/fuzz/fuzz_mail.c" "$top"/gate/mail/*.c \
	"$top"/gate/util/*.c -o "$work/fuzz_mail"
cp "$top"/tests/data/mail/*.eml "$work/corpus/" 2>/dev/null || :
cd "$work"
exec ./fuzz_mail -max_total_time="$secs" -max_len=65536 -timeout=10 \
	-rss_limit_mb=2048 -print_final_stats=1 \
	-dict="$top/tests/fuzz/mail.dict" corpus
