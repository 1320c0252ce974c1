#!/bin/sh
# tsan.sh - ThreadSanitizer on listgate's only threads: the trainer's
# workers (gate/app/tokpool.c), which tokenize and compress posts ahead
# while the program's thread learns and journals them in order, and the
# thread that opens the database meanwhile (gate/app/trainer.c).
#
#   sh tests/tsan.sh BUILD_DIR CORPUS_DATA_DIR
#
# Configures BUILD_DIR (made when missing) with -fsanitize=thread and
# builds only what runs here: the pool's unit suite (tests/check_tokpool:
# order, tokens, bounds, a post's tokens whatever its worker read
# before) and listgate, whose standalone `train` of 400 ham and 300 spam
# posts of the SpamAssassin corpus then runs with 4 workers, and then
# through the journal of a private PostgreSQL (tests/pg.sh; not there:
# that check fails, it does not skip).  Any report fails it
# (halt_on_error, exit 66).  Not part of `make check` (a second build);
# tests/run-all.sh runs it.  Run from the top of the checkout.
set -eu

[ $# -eq 2 ] || { echo "usage: sh tests/tsan.sh BUILD_DIR CORPUS_DATA_DIR" >&2; exit 2; }
top=$(pwd)
b=$1 data=$2
[ -f "$top/configure" ] || { echo "tsan: run from the top of a bootstrapped checkout" >&2; exit 2; }
if [ ! -d "$data/easy-ham-1" ] || [ ! -d "$data/spam-1" ]; then
	echo "tsan: $data: not the corpus's data directory" >&2
	exit 2
fi
mkdir -p "$b"
b=$(cd "$b" && pwd)
(
	cd "$b"
	[ -f Makefile ] || "$top/configure" CFLAGS="-O1 -g -fsanitize=thread" \
	    LDFLAGS="-fsanitize=thread" > configure.out 2>&1 ||
	    { tail -n 30 configure.out; exit 1; }
	make -j"$(nproc 2>/dev/null || echo 2)" tests/check_tokpool listgate \
	    > make.out 2>&1 || { tail -n 30 make.out; exit 1; }
)

TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1 suppressions=$top/tests/tsan.supp"
export TSAN_OPTIONS
# without address-space randomisation where the kernel lets us: some
# kernels' randomisation puts mappings where ThreadSanitizer wants its
# shadow memory
run() {
	if setarch "$(uname -m)" -R true 2>/dev/null; then
		setarch "$(uname -m)" -R "$@"
	else
		"$@"
	fi
}
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-tsan.XXXXXX")
trap '[ -n "${TSAN_KEEP:-}" ] || rm -rf "$T"' EXIT INT TERM
fails=0

# the unit suite in one process (Check's forks would hide nothing, but
# the reports are clearer without them)
if CK_FORK=no run "$b/tests/check_tokpool" > "$T/unit" 2>&1 &&
    ! grep -q 'ThreadSanitizer' "$T/unit"; then
	echo "ok 1 - tests/check_tokpool under ThreadSanitizer"
else
	echo "not ok 1 - tests/check_tokpool under ThreadSanitizer"
	sed 's/^/# /' "$T/unit" | head -n 80
	fails=1
fi

# a training with 4 workers, standalone (the journal's side adds no
# thread: its COPY and commit are the program's thread's)
mkdir -p "$T/c/tokens"
chmod 750 "$T/c/tokens"
printf 'tokens_dir = %s/c/tokens\n' "$T" > "$T/c/listgate.conf"
find "$data/easy-ham-1" -name '*.txt' | sort | head -n 400 > "$T/ham"
find "$data/spam-1" -name '*.txt' | sort | head -n 300 > "$T/spam"
root=
[ "$(id -u)" -eq 0 ] && root=--allow-root
ok=1
for c in ham spam; do
	# shellcheck disable=SC2046,SC2086
	if ! LISTGATE_TRAIN_THREADS=4 run "$b/listgate" $root --config "$T/c" \
	    train -q --list t --$c $(cat "$T/$c") > "$T/train.$c" 2>&1 ||
	    grep -q 'ThreadSanitizer' "$T/train.$c"; then
		ok=0
		sed 's/^/# /' "$T/train.$c" | head -n 80
	fi
done
n=$(run "$b/listgate" $root --config "$T/c" score --list t --db-dump 2> /dev/null | wc -l)
if [ "$ok" = 1 ] && [ "$n" -gt 1000 ]; then
	echo "ok 2 - train with 4 workers under ThreadSanitizer ($n tokens learnt)"
else
	echo "not ok 2 - train with 4 workers under ThreadSanitizer ($n tokens learnt)"
	fails=1
fi

# the same through the journal: the database is opened by a thread of
# its own while the workers begin (the posts go to the journal and, by
# the follower, into the token file, which must then equal a rebuild)
cat > "$T/journal.sh" <<'EOF2'
set -u
T=$1 b=$2 root=$3
mkdir -p "$T/j/tokens"
chmod 750 "$T/j/tokens"
printf 'tokens_dir = %s/j/tokens\n' "$T" > "$T/j/listgate.conf"
run() {
	if setarch "$(uname -m)" -R true 2>/dev/null; then
		setarch "$(uname -m)" -R "$@"
	else
		"$@"
	fi
}
run "$b/listgate" $root --config "$T/j" migrate -q || exit 1
for c in ham spam; do
	# shellcheck disable=SC2046,SC2086
	LISTGATE_TRAIN_THREADS=4 run "$b/listgate" $root --config "$T/j" \
	    train -q --list t --$c $(cat "$T/$c") > "$T/jtrain.$c" 2>&1 ||
	    exit 1
	grep -q 'ThreadSanitizer' "$T/jtrain.$c" && exit 1
done
run "$b/listgate" $root --config "$T/j" score --list t --db-dump \
    2> /dev/null | sort > "$T/jdump" || exit 1
[ "$(wc -l < "$T/jdump")" -gt 1000 ] || exit 1
run "$b/listgate" $root --config "$T/j" rebuild -q --list t || exit 1
run "$b/listgate" $root --config "$T/j" score --list t --db-dump \
    2> /dev/null | sort > "$T/rdump" || exit 1
EOF2
# shellcheck disable=SC2086
if sh "$top/tests/pg.sh" run sh "$T/journal.sh" "$T" "$b" "$root" \
    > "$T/journal.out" 2>&1; then
	if cmp -s "$T/rdump" "$T/jdump"; then
		echo "ok 3 - train through the journal under ThreadSanitizer" \
		    "(the token file equals a rebuild from the journal)"
	else
		echo "not ok 3 - train through the journal under" \
		    "ThreadSanitizer: its token file differs from a rebuild"
		fails=1
	fi
else
	echo "not ok 3 - train through the journal under ThreadSanitizer"
	sed 's/^/# /' "$T/journal.out" "$T"/jtrain.* 2>/dev/null | head -n 80
	fails=1
fi
echo "1..3"
exit "$fails"
