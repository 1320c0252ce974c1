#!/bin/sh
# tsan.sh - ThreadSanitizer on listgate's threads: the trainer's
# workers (gate/app/tokpool.c), which tokenize and compress posts ahead
# while the program's thread learns and journals them in order, the
# thread that opens the database meanwhile (gate/app/trainer.c), and
# listgate web's request threads (gate/web/), which release posts at
# once.
#
#   sh tests/tsan.sh BUILD_DIR CORPUS_DATA_DIR
#
# Configures BUILD_DIR (made when missing) with -fsanitize=thread and
# builds only what runs here: the pool's unit suite (tests/check_tokpool:
# order, tokens, bounds, a post's tokens whatever its worker read
# before) and listgate, whose standalone `train` of 400 ham and 300 spam
# posts of the SpamAssassin corpus then runs with 4 workers, and then
# through the journal of a private PostgreSQL (tests/pg.sh; not there:
# that check fails, it does not skip).  Then `listgate web`, whose
# request threads decide posts (held by tests/qhold, built too) at
# once: concurrent approvals (a release program slow enough for them to
# overlap, one killed by its time-out after it read the post, an LMTP
# server that is not there) and rejections (the sender's notice sent)
# of four lists, by three moderators, with reads of the posts and a
# new account meanwhile.  Any report fails it
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
	    tests/qhold \
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

# listgate web: a thread per request, and a decision's release runs in
# it (gate/app/decide.c, handoff.c, run.c, lmtp.c), with the sender's
# notice of a rejection (gate/moderate); posts of four lists approved
# and rejected at once by three moderators, each release slow enough for
# the others to start meanwhile
cat > "$T/web.sh" <<'EOF2'
set -u
T=$1 b=$2 top=$3
LISTGATE=$T/lg top_srcdir=$top
# the server without address-space randomisation too (as run above)
if setarch "$(uname -m)" -R true 2>/dev/null; then
	printf '#!/bin/sh\nexec setarch %s -R %s/listgate "$@"\n' \
	    "$(uname -m)" "$b" > "$LISTGATE"
else
	printf '#!/bin/sh\nexec %s/listgate "$@"\n' "$b" > "$LISTGATE"
fi
chmod +x "$LISTGATE"
T=$T/w
mkdir -p "$T"
. "$top/tests/web_lib.sh"
web_setup || exit 1
# slow releases (they overlap), one list's killed by its time-out after
# it read the post, one list's to an LMTP server that is not there; a
# rejection's notice to the sender through a program
cat > "$T/release.sh" <<EOS
#!/bin/sh
cat >> "$T/released.\$1" || exit 1
sleep 0.5
EOS
printf '#!/bin/sh\ncat > /dev/null\nsleep 5\n' > "$T/slow.sh"
printf '#!/bin/sh\ncat > /dev/null\n' > "$T/notify.sh"
for l in dev other slow lmtp; do
	{
		case $l in
		slow)	printf 'release = /bin/sh %s/slow.sh\n' "$T"
			printf 'timeout = 1\n' ;;
		lmtp)	printf 'release = lmtp:127.0.0.1:1 {list}@example.org\n' ;;
		*)	printf 'release = /bin/sh %s/release.sh {list}\n' "$T" ;;
		esac
		printf 'moderators = mod@example.org\n'
		printf 'moderation_address = %s-moderate@example.org\n' "$l"
		printf 'notify = /bin/sh %s/notify.sh\n' "$T"
		printf 'sender_notice = yes\n'
	} > "$CONF/lists/$l.conf"
done
for l in dev other slow lmtp; do
	"$b/tests/qhold" -n "$l" "$top/tests/data/train/ham1.eml" 6 \
	    > "$T/ids.$l" || exit 1
done
# a post in several charsets, shown meanwhile: each connection's thread
# opens converters (gate/mail/charset.c), and closes them as it ends
printf 'From: s@example.org\nTo: dev@example.org\nSubject: %s %s %s\nMIME-Version: 1.0\nContent-Type: text/plain; charset=koi8-r\n\n\341\342 hello\n' \
    '=?iso-8859-2?Q?a=E1?=' '=?iso-2022-jp?Q?b?=' '=?big5?Q?c?=' \
    > "$T/cs.eml"
cs=$("$b/tests/qhold" dev "$T/cs.eml") || exit 1
web_start || exit 1
i=0
for l in dev other slow lmtp; do
	for id in $(cat "$T/ids.$l"); do
		i=$((i + 1))
		case $((i % 3)) in
		0) a=reject ;;
		*) a=approve ;;
		esac
		case $l in
		dev)	u=alice:alice-secret-1 ;;
		other)	u=carol:carol-secret-1 ;;
		*)	u=bob:bob-secret-12 ;;
		esac
		curl -s -o /dev/null -w "$l $id $a %{http_code}\n" -u "$u" \
		    -d "action=$a" "$URL/api/lists/$l/held/$id" \
		    >> "$T/codes" &
		# and reads meanwhile: the post, its list
		curl -s -o /dev/null -o /dev/null -o /dev/null \
		    -w "%{http_code}\n" -u bob:bob-secret-12 \
		    "$URL/api/lists/$l/held/$id" "$URL/api/lists/$l/held" \
		    "$URL/api/lists/dev/held/$cs" >> "$T/reads" &
	done
done
# users.conf rewritten meanwhile: the requests' threads read it again
printf 'dave-secret-12\n' | lg user add dave --lists dev > /dev/null ||
    exit 1
wait_curls=0
while [ "$(cat "$T/codes" "$T/reads" 2>/dev/null | wc -l)" -lt \
    $((4 * i)) ] && [ $wait_curls -lt 600 ] &&
    kill -0 "$webpid" 2>/dev/null; do
	sleep 0.2
	wait_curls=$((wait_curls + 1))
done
web_stop
sed 's/^/# /' "$T/codes"
cp "$T/web.log" "$1/web.log"
grep -q ThreadSanitizer "$T/web.log" && exit 1
[ "$webrc" -eq 0 ] || exit 1
[ "$(wc -l < "$T/codes")" -eq "$i" ] || exit 1
# every read answered
[ "$(grep -c '^200$' "$T/reads")" -eq $((3 * i)) ] || exit 1
# every approval of dev and other released, every rejection 200 but
# slow's, which may find the list busy: an approval holds the post's and
# the list's lock through its release, which slow's time-out (1 s) ends,
# and a decision waits for them at most that long in web (503, nothing
# decided)
[ "$(grep -c '^[^ ]* [0-9]* reject 200$' "$T/codes")" -eq $((i / 3 - \
    $(grep -c '^slow [0-9]* reject 503$' "$T/codes"))) ] || exit 1
for l in dev other; do
	n=$(grep -c "^$l [0-9]* approve " "$T/codes")
	[ "$(grep -c "^$l [0-9]* approve 200\$" "$T/codes")" -eq "$n" ] &&
	    [ "$(grep -c '^X-Seq:' "$T/released.$l")" -eq "$n" ] || exit 1
done
# and every approval of slow and lmtp failed (502; slow's, or found
# its list busy: 503), slow's each killed after it had read the post
# (its own thread's answer), at least one
[ "$(grep -c '^lmtp [0-9]* approve 502$' "$T/codes")" -eq \
    "$(grep -c '^lmtp [0-9]* approve ' "$T/codes")" ] || exit 1
n502=$(grep -c '^slow [0-9]* approve 502$' "$T/codes")
[ "$n502" -ge 1 ] && [ $((n502 + $(grep -c '^slow [0-9]* approve 503$' \
    "$T/codes"))) -eq "$(grep -c '^slow [0-9]* approve ' "$T/codes")" ] ||
    exit 1
[ "$(grep -c 'release command .* after it had read the whole post' \
    "$T/web.log")" -eq "$n502" ] || exit 1
# and a decision that found its list busy decided nothing
for id in $(sed -n 's/^slow \([0-9]*\) [a-z]* 503$/\1/p' "$T/codes"); do
	[ "$(psql -X -A -t -c "SELECT status FROM held_posts WHERE id = $id")" \
	    = held ] || exit 1
done
EOF2
if sh "$top/tests/pg.sh" run sh "$T/web.sh" "$T" "$b" "$top" \
    > "$T/web.out" 2>&1; then
	echo "ok 4 - listgate web's concurrent decisions under ThreadSanitizer"
else
	echo "not ok 4 - listgate web's concurrent decisions under ThreadSanitizer"
	sed 's/^/# /' "$T/web.out" "$T/web.log" 2>/dev/null | head -n 150
	fails=1
fi
echo "1..4"
exit "$fails"
