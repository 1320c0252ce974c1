#!/bin/sh
# root.sh - listgate started as root becomes the `user' (and `group') of
# listgate.conf before it opens anything else, or refuses to run (filter
# and moderate: a temporary failure in its MTA's dialect); --allow-root stays root.
# Configuration another user could change is refused.  Root (with
# --allow-root) follows no link the list user could put in its way: in
# the tokens directory (the member cache, Kyoto Cabinet's log: no token
# file is written where another user could put links), nor in place of
# a directory it makes or tightens (strace opens those races every time;
# without strace they are skipped).  The member cache the tokens
# directory's owner makes is written by the filter's user too (of its
# group, in a directory it may not write).
#
# The root parts need root (CI runs as root) and the system users
# nobody and daemon; as another user they print a "# SKIP" line and the
# checks of group- and world-writable files still run.  Under tests/pg.sh
# (root only): a moderator who may not write the token files decides,
# and their owner's sync applies the decision; listgate web as nobody
# reads a users.conf given to it with chown.  Works in a
# mktemp -d directory removed at the end; never reads /etc/listgate.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
: "${top_builddir:?set by make check}"
DATA=$top_srcdir/tests/data/train
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-root.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
CONF=$T/conf
mkdir -p "$CONF/lists" || exit 99

. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP)
run() { "$@" > "$T/out" 2> "$T/err"; rc=$?; }
# lg: as root, without --allow-root
lg() { "$LISTGATE" --config "$CONF" "$@"; }
CONFR=$(realpath "$CONF") || exit 99	# as the advice names it
lgr() { "$LISTGATE" --allow-root --config "$CONF" "$@"; }
says() {
	grep -qF -- "$1" "$T/err" || { echo "# stderr: $(cat "$T/err")"; return 1; }
}

if [ "${1:-}" = pg ]; then
	# --- inside tests/pg.sh: a moderator who may not write the token
	# files decides; their owner's sync learns from it ----------------
	QHOLD=$top_builddir/tests/qhold
	chmod 755 "$T"
	mkdir -m 750 "$T/tokens" || exit 99
	printf 'tokens_dir = %s/tokens\n' "$T" > "$CONF/listgate.conf"
	printf 'release = /bin/sh -c "cat > /dev/null"\n' > "$CONF/lists/dev.conf"
	lgr migrate -q || exit 99
	"$QHOLD" -j dev spam "$DATA/spam1.eml" >/dev/null || exit 99
	lgr sync -q --list dev || exit 99
	id=$("$QHOLD" dev "$DATA/ham1.eml" 0.9) || exit 99
	run runuser -u nobody -- "$LISTGATE" --config "$CONF" approve "$id"
	check "a moderator who cannot write the token file approves (exit 0)" \
	    test "$rc" -eq 0
	check "... told that the owner's sync learns from it" says \
	    "list dev: the token file is not yours to write; its owner's next \`listgate --config $CONFR sync\` learns from the decisions"
	check "... the post is approved" test "$(psql -X -A -t -q -c \
	    "SELECT status FROM held_posts WHERE id = $id")" = approved
	run lgr sync --list dev
	grep -q "list dev: 1 journal event applied" "$T/out" &&
	    ok "... one event applied by the owner's sync" ||
	    bad "... one event applied by the owner's sync ($(cat "$T/out"))"
	# train as a user who may not write the token file: journaled,
	# and told who syncs them
	run runuser -u nobody -- "$LISTGATE" --config "$CONF" train --list dev \
	    --ham "$DATA/ham2.eml"
	check "train as a user who cannot write the token file: exit 1" \
	    test "$rc" -eq 1
	check "... told that the owner's sync learns the posts" says \
	    "list dev: the posts are in the journal, but the token file is not yours to write: its owner's \`listgate --config $CONFR sync --list dev\` learns them"
	# tune --apply as a user who may not write lists/ (root's, as
	# listgate.conf(5) lays it out): nothing applied and nothing
	# rebuilt, the directory named, at once
	TD=$top_srcdir/tests/data/tune
	chown nobody "$T/tokens" "$T/tokens/dev.kch" || exit 99
	runuser -u nobody -- "$LISTGATE" --config "$CONF" train -q --list dev \
	    --ham "$TD/ham" || exit 99
	runuser -u nobody -- "$LISTGATE" --config "$CONF" train -q --list dev \
	    --spam "$TD/spam" || exit 99
	cp "$CONF/lists/dev.conf" "$T/dev.conf.before"
	cp "$T/tokens/dev.kch" "$T/dev.kch.before"
	run runuser -u nobody -- "$LISTGATE" --config "$CONF" tune --list dev \
	    --apply
	check "tune --apply as a user who cannot write lists/ exits 1" \
	    test "$rc" -eq 1
	check "... naming the directory and what to do" says \
	    "list dev: nothing applied: $CONF/lists/dev.conf cannot be written as user nobody: its directory $CONF/lists is not writable"
	check "... the list's file unchanged" \
	    cmp -s "$CONF/lists/dev.conf" "$T/dev.conf.before"
	check "... the token file not rebuilt" \
	    cmp -s "$T/tokens/dev.kch" "$T/dev.kch.before"
	# with --json: the object all the same (it printed nothing), why
	# in apply_error
	run runuser -u nobody -- "$LISTGATE" --config "$CONF" tune --list dev \
	    --apply --json
	check "... with --json: exit 1, the object with applied empty and apply_error naming the directory" \
	    python3 -c "import json, sys; d = json.load(open('$T/out')); sys.exit(0 if $rc == 1 and d['applied'] == [] and d['recommended'] is not None and d['apply_error'].startswith('nothing applied: $CONF/lists/dev.conf cannot be written as user nobody: its directory $CONF/lists is not writable') else 1)"
	check "... the list's file unchanged again" \
	    cmp -s "$CONF/lists/dev.conf" "$T/dev.conf.before"
	# listgate web as nobody: a users.conf it cannot read (put in place
	# as root's: logged, the accounts read before stay), then given to
	# it with chown, as the log's error leads one to do: read again at
	# the next request (a chown changes only the file's ctime, and the
	# server went on with the accounts from before until a restart)
	if command -v curl > /dev/null 2>&1; then
		printf 'web-secret-12\n' | lgr user add wa --lists dev > /dev/null &&
		    chown nobody "$CONF/users.conf" || exit 99
		runuser -u nobody -- "$LISTGATE" --config "$CONF" web \
		    --listen 127.0.0.1:0 2> "$T/web.log" &
		webpid=$!
		i=0
		until grep -q 'listening on' "$T/web.log"; do
			i=$((i + 1))
			if [ $i -gt 100 ]; then
				sed 's/^/# web: /' "$T/web.log"
				kill "$webpid"
				exit 99
			fi
			sleep 0.1
		done
		port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' \
		    "$T/web.log" | head -n 1)
		wcode() {
			curl -s -o /dev/null -w '%{http_code}' -u "$1" \
			    "http://127.0.0.1:$port/api/lists"
		}
		printf 'web-secret-13\n' | lgr user add wb --lists dev > /dev/null &&
		    cp "$CONF/users.conf" "$T/users.root" &&
		    mv "$T/users.root" "$CONF/users.conf" || exit 99
		c=$(wcode wb:web-secret-13)
		check "web as nobody: a users.conf of root's is not read ($c)" \
		    test "$c" = 401
		check "... the log says why" \
		    grep -q "users.conf: cannot open: Permission denied (the accounts read before stay)" "$T/web.log"
		chown nobody "$CONF/users.conf" || exit 99
		c=$(wcode wb:web-secret-13)
		check "... given to nobody (chown), it is read at the next request ($c)" \
		    test "$c" = 200
		kill "$webpid"
		wait "$webpid"
	else
		echo "# SKIP listgate web as nobody: no curl"
	fi
	echo "1..$n"
	[ $fails -eq 0 ]
	exit
fi

# --- configuration another user could change ----------------------------
printf 'tokens_dir = tokens\n' > "$CONF/listgate.conf"
chmod 644 "$CONF/listgate.conf"
printf 'ham_cutoff = 0.4\n' > "$CONF/lists/dev.conf"
run lgr config check
check "a sound configuration is accepted" test "$rc" -eq 0
chmod 664 "$CONF/listgate.conf"
run lgr config check
check "a group-writable listgate.conf is refused" test "$rc" -eq 1
check "... saying why and what to do" says \
    "$CONF/listgate.conf: writable by its group (mode 0664): listgate trusts no configuration another user can change; chmod go-w"
chmod 646 "$CONF/listgate.conf"
run lgr config check
check "a world-writable listgate.conf is refused" says \
    "listgate.conf: writable by everyone (mode 0646)"
chmod 644 "$CONF/listgate.conf"
chmod 666 "$CONF/lists/dev.conf"
run lgr config check --list dev
check "a world-writable lists/dev.conf is refused" says \
    "lists/dev.conf: writable by everyone (mode 0666)"
printf 'x' | lgr filter --mta postfix --list dev > "$T/out" 2> "$T/err"
check "... and filter defers (75) rather than trust it" test $? -eq 75
chmod 644 "$CONF/lists/dev.conf"
chmod 775 "$CONF/lists"
run lgr config check --list dev
check "a group-writable lists directory is refused" says \
    "lists: writable by its group (mode 0775)"
chmod 755 "$CONF/lists"
chmod 777 "$CONF"
run lgr config check
check "a world-writable configuration directory is refused" says \
    "conf: writable by everyone (mode 0777)"
chmod 755 "$CONF"

if [ "$(id -u)" -ne 0 ]; then
	echo "# SKIP root: not running as root"
	echo "1..$n"
	[ $fails -eq 0 ]
	exit
fi
if ! id nobody >/dev/null 2>&1 || ! getent group daemon >/dev/null 2>&1; then
	echo "# SKIP root: no user nobody or no group daemon"
	echo "1..$n"
	[ $fails -eq 0 ]
	exit
fi
chmod 755 "$T"
nobody=$(id -u nobody)
daemon_gid=$(getent group daemon | cut -d: -f3)

# --- owned by another user -------------------------------------------------
chown nobody "$CONF/listgate.conf"
run lgr config check
check "a listgate.conf owned by another user is refused (as root)" says \
    "listgate.conf: owned by uid $nobody, neither root nor the user listgate runs as (uid 0)"
run runuser -u nobody -- "$LISTGATE" --config "$CONF" config check
check "... but not by the user who owns it" test "$rc" -eq 0
chown daemon "$CONF/listgate.conf"
run runuser -u nobody -- "$LISTGATE" --config "$CONF" config check
check "nor by a third user" says "owned by uid $(id -u daemon), neither root nor the user listgate runs as (uid $nobody)"
chown root "$CONF/listgate.conf"
run runuser -u nobody -- "$LISTGATE" --config "$CONF" config check
check "a file root owns is fine for every user" test "$rc" -eq 0

# --- root without `user' ------------------------------------------------------
run lg config check
check "root without user: refused (exit 1)" test "$rc" -eq 1
check "... naming the key and --allow-root" says \
    "running as root, and $CONF/listgate.conf sets no \`user': set user (and group) to the unprivileged account listgate runs as, or pass --allow-root"
run lg --help
check "--help still works" test "$rc" -eq 0
# --allow-root after the command: not "pass --allow-root", but where
run lg held --allow-root
check "held --allow-root (after the command): a usage error" test "$rc" -eq 2
check "... saying it goes before the command" says \
    "listgate held: --allow-root is an option of listgate itself, not of held: give it before the command (listgate --config $CONFR --allow-root held ...)"
for c in train sync approve web; do
	run lg "$c" --help
	check "$c --help still works (exit 0, its usage on stdout)" \
	    sh -c "test $rc -eq 0 && grep -q 'usage: listgate .*$c' '$T/out'"
done
# the help of a command's own subcommand too (it was the refusal, exit 1;
# config keys --help a usage error, exit 2)
for c in "config check" "config keys" "user add" "user list"; do
	# shellcheck disable=SC2086
	run lg $c --help
	check "$c --help still works (exit 0, its usage on stdout)" \
	    sh -c "test $rc -eq 0 && grep -q 'usage: listgate .*${c% *}' '$T/out' && test ! -s '$T/err'"
done
# (filter --help exits 0 only at a terminal: an MTA would take 0 for
# delivered)
run lg filter --help < /dev/null
check "filter --help prints its usage" grep -q 'usage: listgate .*filter' "$T/out"
printf 'ham_cutoff = 1\nspam_cutoff = 1\n' > "$CONF/lists/dev.conf"
lgr train --quiet --list dev --ham "$DATA/ham1.eml" || exit 99
lg filter --list dev < "$DATA/ham-test.eml" > "$T/out" 2> "$T/err"
check "filter as root without user: 111 under qmail" test $? -eq 111
check "... saying why" says "temporary failure: running as root, and"
lg filter --mta postfix --list dev -f a@b -- dev@b < "$DATA/ham-test.eml" \
    > "$T/out" 2> "$T/err"
check "... 75 with --mta postfix" test $? -eq 75
printf 'tokens_dir = tokens\nmta = postfix\n' > "$CONF/listgate.conf"
lg filter --list dev < "$DATA/ham-test.eml" > "$T/out" 2> "$T/err"
check "... 75 when listgate.conf says mta = postfix" test $? -eq 75
lg filter --mta qmail --list dev < "$DATA/ham-test.eml" > "$T/out" 2> "$T/err"
check "... --mta qmail over listgate.conf: 111" test $? -eq 111
lg filter --bogus < "$DATA/ham-test.eml" > "$T/out" 2> "$T/err"
check "... a usage error too: 75 (listgate.conf's dialect)" test $? -eq 75
lgr filter --mta qmail --list dev < "$DATA/ham-test.eml" > "$T/out" 2> "$T/err"
check "--allow-root: filter works as root (pass: 0)" test $? -eq 0
# moderate, the moderation address's pipe command, likewise: exit 1
# would make Postfix bounce a moderator's reply (and its decision)
A=dev-moderate+approve-1-aaaaaaaaaaaaaaaaaaaaaaaaaaa@lists.example.org
lg moderate -f a@b -- "$A" < "$DATA/ham-test.eml" > "$T/out" 2> "$T/err"
check "moderate as root without user: 75 when listgate.conf says mta = postfix" \
    test $? -eq 75
check "... saying why" says "temporary failure: running as root, and"
lg moderate --mta qmail -f a@b -- "$A" < "$DATA/ham-test.eml" > "$T/out" \
    2> "$T/err"
check "... --mta qmail: 111" test $? -eq 111

# --- bad users --------------------------------------------------------------
printf 'tokens_dir = tokens\nuser = root\n' > "$CONF/listgate.conf"
run lg config check
check "user = root is refused" says "user \`root' is root (uid 0)"
printf 'tokens_dir = tokens\nuser = lg-no-such-user\n' > "$CONF/listgate.conf"
run lg config check
check "an unknown user is refused" says "cannot become user lg-no-such-user"
printf 'tokens_dir = tokens\nuser = nobody\ngroup = lg-no-such-group\n' \
    > "$CONF/listgate.conf"
run lg config check
check "an unknown group is refused" says "group \`lg-no-such-group'"
printf 'tokens_dir = tokens\n\nuser = "no body"\n' > "$CONF/listgate.conf"
run lgr config check
check "a user that is no user name: file and line" says \
    "listgate.conf:3: user: \`no body' is not a user name"

# --- root with `user': it becomes that user first ---------------------------
# the tokens directory belongs to nobody; the configuration to root
rm -rf "$CONF/tokens"
mkdir "$T/tokens" && chown nobody "$T/tokens" && chmod 750 "$T/tokens" ||
    exit 99
cat > "$T/id.sh" <<END
#!/bin/sh
echo "\$(id -u) \$(id -g) \$(id -G) \$HOME" > "$T/tokens/id.\$1"
cat > /dev/null
END
chmod 755 "$T/id.sh"
printf 'tokens_dir = %s/tokens\nmta = postfix\nuser = nobody\n' "$T" \
    > "$CONF/listgate.conf"
printf 'ham_cutoff = 1\nspam_cutoff = 1\ndeliver = /bin/sh %s/id.sh {list}\n' \
    "$T" > "$CONF/lists/dev.conf"
run lg train --quiet --list dev --ham "$DATA/ham1.eml"
check "root with user = nobody: train works" test "$rc" -eq 0
check "... and the token file it made is nobody's" \
    test "$(stat -c %u "$T/tokens/dev.kch" 2>/dev/null)" = "$nobody"
# a token file root made (train --allow-root) in nobody's directory:
# train as nobody names the owner and the chown (it said to run as the
# files' owner, the user of listgate.conf, which it was)
chown root "$T/tokens/dev.kch" || exit 99
run lg train --quiet --list dev --ham "$DATA/ham2.eml"
check "a token file of root's in nobody's directory: train as nobody fails (1)" \
    test "$rc" -eq 1
check "... naming its owner and the chown to do" says \
    "token file $T/tokens/dev.kch cannot be opened for writing (open failed (permission denied)): it belongs to root, not to nobody, whom this command runs as: give it to nobody (chown nobody $T/tokens/dev.kch), keeping its group"
# ... and mode 0600 (copied in under umask 077): its readers are told
# the mode and the chmod (it said they need the token files' group)
chmod 600 "$T/tokens/dev.kch" || exit 99
run lg score --list dev "$DATA/ham1.eml"
check "a token file of mode 0600 another user owns: score fails (1)" \
    test "$rc" -eq 1
check "... naming its mode and the chmod to do" says \
    "token file $T/tokens/dev.kch cannot be opened for reading (open failed (permission denied)): its mode 0600 lets no one but its owner read it, and its readers (filter) read token files through their group: chmod g+r $T/tokens/dev.kch"
chmod 640 "$T/tokens/dev.kch" || exit 99
chown nobody "$T/tokens/dev.kch" || exit 99
# root with --allow-root writes no token file in nobody's directory:
# Kyoto Cabinet's log (PATH.wal, opened with O_TRUNC), a rebuild's
# renames and chowns follow the links nobody may put there
mkdir -m 700 "$T/rw" || exit 99
runuser -u nobody -- ln -s "$T/rw/wal" "$T/tokens/dev.kch.wal" || exit 99
cp "$T/tokens/dev.kch" "$T/dev.kch.nobody"
run lgr train --quiet --list dev --spam "$top_srcdir/tests/data/tune/spam"
check "--allow-root in a tokens directory nobody owns: train refused (1)" \
    test "$rc" -eq 1
check "... naming the owner and what to do" says \
    "tokens directory $T/tokens belongs to nobody: root does not write token files in a directory another user owns"
check "... the file a link there names is neither created nor written" \
    test ! -e "$T/rw/wal"
check "... the token file unchanged, and nobody's" sh -c "cmp -s \
    '$T/tokens/dev.kch' '$T/dev.kch.nobody' && test \
    \"\$(stat -c %u '$T/tokens/dev.kch')\" = $nobody"
rm -f "$T/tokens/dev.kch.wal"
# nor in a directory of root's under one nobody owns: nobody can rename
# it away and put their own in its place between the check and the open
mkdir -p "$T/nbhome" && chown nobody "$T/nbhome" && chmod 755 "$T/nbhome" &&
    mkdir -m 750 "$T/nbhome/tokens" && mkdir -p "$T/nbconf/lists" || exit 99
printf 'tokens_dir = %s/nbhome/tokens\n' "$T" > "$T/nbconf/listgate.conf"
run "$LISTGATE" --allow-root --config "$T/nbconf" train --quiet --list dev \
    --ham "$DATA/ham1.eml"
check "--allow-root, root's tokens directory in one nobody owns: refused (1)" \
    sh -c "test $rc -eq 1 && test ! -e '$T/nbhome/tokens/dev.kch'"
check "... naming the directory above it and its owner" says \
    "tokens directory $T/nbhome/tokens: $T/nbhome above it belongs to another user"
run "$LISTGATE" --allow-root --config "$T/nbconf" tokens --list dev \
    "$DATA/ham1.eml"
check "... reading (tokens) still works there" test "$rc" -eq 0
# the same reached through a link of root's: the directories above the
# one the link names count
ln -s "$T/nbhome/tokens" "$T/nblink" || exit 99
printf 'tokens_dir = %s/nblink\n' "$T" > "$T/nbconf/listgate.conf"
run "$LISTGATE" --allow-root --config "$T/nbconf" train --quiet --list dev \
    --ham "$DATA/ham1.eml"
check "... and through a link to it: refused (1)" \
    sh -c "test $rc -eq 1 && test ! -e '$T/nbhome/tokens/dev.kch'"
check "... naming the directory above the one linked to" says \
    "$T/nbhome above it belongs to another user"
cp "$DATA/ham2.eml" "$T/root-only.eml" && chmod 600 "$T/root-only.eml" ||
    exit 99
run lg train --quiet --list dev --ham "$T/root-only.eml"
check "root with user = nobody: a file only root may read is refused" \
    test "$rc" -eq 1
check "... saying listgate left root for nobody" says \
    "root-only.eml: Permission denied (listgate left root for user nobody, the \`user' of listgate.conf)"
lg filter --list dev -f a@b -- dev@b < "$DATA/ham-test.eml" > "$T/out" 2> "$T/err"
check "filter as root with user = nobody: delivered (0)" test $? -eq 0
set -- $(cat "$T/tokens/id.dev" 2>/dev/null) x x x
check "... deliver runs as nobody" test "$1" = "$nobody"
check "... with nobody's group" test "$2" = "$(id -g nobody)"
check "... and nobody's home" sh -c "grep -q ' $(getent passwd nobody | cut -d: -f6)\$' '$T/tokens/id.dev'"
printf 'tokens_dir = %s/tokens\nmta = postfix\nuser = nobody\ngroup = daemon\n' \
    "$T" > "$CONF/listgate.conf"
lg filter --list dev -f a@b -- dev@b < "$DATA/ham-test.eml" > "$T/out" 2> "$T/err"
set -- $(cat "$T/tokens/id.dev" 2>/dev/null) x x x
check "group = daemon: deliver runs with gid daemon" test "$2" = "$daemon_gid"
# the list's file is opened after the switch: one nobody cannot read
chmod 600 "$CONF/lists/dev.conf"
run lg config check --list dev
check "lists/dev.conf is read as nobody (0600 root: refused)" says \
    "lists/dev.conf: cannot open: Permission denied"
run lgr config check --list dev
check "... and as root with --allow-root" test "$rc" -eq 0
chmod 644 "$CONF/lists/dev.conf"
# so is the token file: one only root can read
chown root "$T/tokens/dev.kch" && chmod 600 "$T/tokens/dev.kch"
run lg score --list dev "$DATA/ham2.eml"
check "the token file is opened as nobody (0600 root: refused)" test "$rc" -ne 0
run lgr score --list dev "$DATA/ham2.eml"
check "--allow-root stays root (and reads it)" test "$rc" -eq 0
rm -f "$T/tokens/dev.kch"
run lgr train --quiet --list dev --ham "$DATA/ham1.eml"
check "--allow-root with user set: no token file made in nobody's directory" \
    sh -c "test $rc -eq 1 && test ! -e '$T/tokens/dev.kch'"

# --- users.conf keeps its owner when root changes it --------------------------
# (the web page runs as its user and must still read it; that user must
# still take its lock)
# root that becomes nobody may not write in the configuration
# directory: told to run it with --allow-root, as the README says
printf 'cat-secret-123\n' | lg user add cat --lists dev > "$T/out" 2> "$T/err"
check "user add as root with user = nobody, in root's directory: exit 1" \
    test $? -eq 1
check "... saying who cannot write where, and to use --allow-root" says \
    "listgate runs as user nobody, who may not write beside $CONF/users.conf: run it as the owner of that directory, or as root with \`listgate --config $CONFR --allow-root user ...'"
printf 'ann-secret-123\n' | lgr user add ann --lists dev > /dev/null 2>&1 || exit 99
chown nobody "$CONF/users.conf" && rm -f "$CONF/users.conf.lock" || exit 99
printf 'ben-secret-123\n' | lgr user add ben --lists dev > /dev/null 2>&1
check "root adds an account to nobody's users.conf: it stays nobody's" \
    test "$(stat -c %u "$CONF/users.conf")" = "$nobody"
check "... mode 0600" test "$(stat -c %a "$CONF/users.conf")" = 600
check "... and so does the lock file root made" \
    test "$(stat -c %u "$CONF/users.conf.lock")" = "$nobody"
check "... with both accounts" test "$(grep -cE '^(ann|ben):' "$CONF/users.conf")" -eq 2

# --- init as the list user, where root made the secret's directory
# (install -d makes the parents of the tokens directory root's) ---------------
mkdir -p "$T/iconf/lists" "$T/ivar/tokens" && chown nobody "$T/ivar/tokens" ||
    exit 99
printf 'tokens_dir = %s/ivar/tokens\nsecret_file = %s/ivar/secret\n' "$T" "$T" \
    > "$T/iconf/listgate.conf"
run runuser -u nobody -- "$LISTGATE" --config "$T/iconf" init
check "init as a user who may not write the secret's directory: exit 1" \
    test "$rc" -eq 1
check "... naming the secret, the user, the directory and what to do" says \
    "cannot create the secret $T/ivar/secret: nobody may not write in $T/ivar (Permission denied): give that directory to the user that runs listgate"

# --- the tokens directory's owner cannot have root write elsewhere ----------
# root (--allow-root: one-off administration) working on the lists of a
# tokens directory the list user owns: a link the list user put there in
# place of the member_check cache must not make root create or write the
# file it points to
mkdir -p "$T/mconf/lists" "$T/mtok" "$T/rootonly" || exit 99
chown nobody "$T/mtok" && chmod 750 "$T/mtok" && chmod 700 "$T/rootonly" ||
    exit 99
printf '#!/bin/sh\nexit 0\n' > "$T/member.sh" && chmod 755 "$T/member.sh" ||
    exit 99
printf 'tokens_dir = %s/mtok\n' "$T" > "$T/mconf/listgate.conf"
printf 'member_check = %s/member.sh {sender}\nmember_cache_s = 3600\n' "$T" \
    > "$T/mconf/lists/dev.conf"
runuser -u nobody -- ln -s "$T/rootonly/members" "$T/mtok/dev.members" ||
    exit 99
run "$LISTGATE" --allow-root --config "$T/mconf" tokens --list dev \
    "$DATA/ham1.eml"
check "root: a link in place of the member cache is not followed" \
    test ! -e "$T/rootonly/members"
check "... and the post still gets its member_check answer" \
    grep -q '^member:yes' "$T/out"
: > "$T/rootonly/empty"
rm -f "$T/mtok/dev.members"
runuser -u nobody -- ln -s "$T/rootonly/empty" "$T/mtok/dev.members" ||
    exit 99
run "$LISTGATE" --allow-root --config "$T/mconf" tokens --list dev \
    "$DATA/ham1.eml"
check "... nor one to an empty file of root's (left empty)" \
    test ! -s "$T/rootonly/empty"

# --- the member cache is the filter's too ------------------------------------
# the tokens directory's owner (nobody here, `listgate' in
# docs/postfix.md) makes the member_check cache; the filter runs as the
# MTA's user (daemon here), in the token files' group, in a directory it
# may not write, and adds the answers it hears to the cache
mkdir -p "$T/gconf/lists" "$T/gtok" || exit 99
chown nobody:daemon "$T/gtok" && chmod 750 "$T/gtok" || exit 99
printf '#!/bin/sh\necho "$1" >> %s/gcalls\nexit 0\n' "$T" > "$T/gmember.sh" &&
    chmod 755 "$T/gmember.sh" && : > "$T/gcalls" && chmod 666 "$T/gcalls" ||
    exit 99
printf 'tokens_dir = %s/gtok\n' "$T" > "$T/gconf/listgate.conf"
printf 'member_check = %s/gmember.sh {sender}\nmember_cache_s = 3600\n' "$T" \
    > "$T/gconf/lists/dev.conf"
# tokenize a post from $2 as user $1 (group daemon), quietly
gtok() {
	printf 'From: %s\nSubject: hi\n\nhello there\n' "$2" > "$T/gpost.eml" &&
	    chmod 644 "$T/gpost.eml" &&
	    runuser -u "$1" -g daemon -- "$LISTGATE" --config "$T/gconf" \
	    tokens --list dev "$T/gpost.eml" > /dev/null 2>&1
}
gcalls() { grep -c "^$1\$" "$T/gcalls"; }
gtok nobody owner@example.org
check "the tokens directory's owner makes the member cache 0660" \
    test "$(stat -c %a "$T/gtok/dev.members" 2>/dev/null)" = 660
gtok daemon filter@example.org
gtok daemon filter@example.org
check "... and the filter's user, of its group, adds to it: one check for two posts" \
    test "$(gcalls filter@example.org)" -eq 1
# a cache its owner made 0640 (as listgate did before): the filter's
# user reads the answers in it, and the owner's next open gives it 0660
chmod 640 "$T/gtok/dev.members" || exit 99
gtok daemon owner@example.org
check "a 0640 cache: the filter's user reads its answers (no check asked)" \
    test "$(gcalls owner@example.org)" -eq 1
gtok nobody owner@example.org
check "... and its owner's next open makes it 0660 again" \
    test "$(stat -c %a "$T/gtok/dev.members")" = 660
# root (--allow-root: a one-off score or tokens) asks without making the
# cache in the owner's directory: one of root's there would shut the
# owner out of it for good
rm -f "$T/gtok/dev.members"
printf 'From: root@example.org\nSubject: hi\n\nhello there\n' > "$T/gpost.eml"
"$LISTGATE" --allow-root --config "$T/gconf" tokens --list dev \
    "$T/gpost.eml" > "$T/out" 2>&1
check "root makes no member cache in the owner's tokens directory" \
    test ! -e "$T/gtok/dev.members"
check "... and still gets the answer" grep -q '^member:yes' "$T/out"
gtok nobody later@example.org
gtok nobody later@example.org
check "... which the owner then makes and uses: one check for two posts" \
    test "$(gcalls later@example.org)" -eq 1

# --- a directory root makes is not swapped before its mode is set -----------
# init (as root, --allow-root) makes a missing tokens directory inside
# one nobody owns; between its mkdir and setting the mode (exactly
# 0750), nobody puts a link to a file of root's in its place: the file's
# mode must stay.  strace holds the mkdir's return for 2 s to open that
# window every time.
if command -v strace >/dev/null 2>&1; then
	mkdir -p "$T/mkconf/lists" "$T/mkhome" && chown nobody "$T/mkhome" &&
	    chmod 755 "$T/mkhome" || exit 99
	: > "$T/rootonly/victim" && chmod 600 "$T/rootonly/victim" || exit 99
	printf 'tokens_dir = %s/mkhome/tokens\nsecret_file = %s/mksecret\n' \
	    "$T" "$T" > "$T/mkconf/listgate.conf"
	# (-P: only the mkdir of the tokens directory, by its path or,
	# for mkdirat, by the descriptor of the directory above it)
	strace -f -o /dev/null -P "$T/mkhome" -P "$T/mkhome/tokens" \
	    -e trace=mkdir,mkdirat -e inject=mkdir,mkdirat:delay_exit=2000000 \
	    "$LISTGATE" --allow-root --config "$T/mkconf" init \
	    > "$T/out" 2> "$T/err" &
	spid=$!
	i=0
	while [ ! -d "$T/mkhome/tokens" ] && [ $i -lt 100 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	runuser -u nobody -- sh -c "mv '$T/mkhome/tokens' '$T/mkhome/old' &&
	    ln -s '$T/rootonly/victim' '$T/mkhome/tokens'"
	wait $spid
	rc=$?
	check "init: a link put in place of the directory it made is not followed" \
	    test "$(stat -c %a "$T/rootonly/victim")" = 600
	check "... and init fails, saying so" test "$rc" -eq 1
	# train (as root, --allow-root) takes group and others' write away
	# from a tokens directory of its own (made 0775 by an earlier
	# version) inside one nobody owns: between its look at the
	# directory and the change, nobody puts a link to a file of root's
	# in its place; the file's mode must stay
	mkdir -p "$T/chconf/lists" "$T/chhome" && chown nobody "$T/chhome" &&
	    mkdir -m 775 "$T/chhome/tokens" || exit 99
	chmod 775 "$T/chhome/tokens" || exit 99
	: > "$T/rootonly/victim2" && chmod 4755 "$T/rootonly/victim2" || exit 99
	printf 'tokens_dir = %s/chhome/tokens\n' "$T" > "$T/chconf/listgate.conf"
	strace -f -o /dev/null -P "$T/chhome/tokens" \
	    -e trace=stat,newfstatat,statx \
	    -e inject=stat,newfstatat,statx:delay_exit=2000000:when=1 \
	    "$LISTGATE" --allow-root --config "$T/chconf" train --list dev \
	    --ham "$DATA/ham1.eml" \
	    > "$T/out" 2> "$T/err" &
	spid=$!
	sleep 1
	runuser -u nobody -- sh -c "mv '$T/chhome/tokens' '$T/chhome/old' &&
	    ln -s '$T/rootonly/victim2' '$T/chhome/tokens'"
	wait $spid
	check "train: a link put in place of the tokens directory is not chmodded" \
	    test "$(stat -c %a "$T/rootonly/victim2")" = 4755
else
	echo "# SKIP the mkdir and chmod races: no strace"
fi

# a user makes its directories under one it may only search (0711, of
# another user's), as mkdir by name let it: only a directory it made is
# opened for reading (its mode set through it)
mkdir -p "$T/x711/inner" && chmod 711 "$T/x711" &&
    chown nobody "$T/x711/inner" || exit 99
run runuser -u nobody -- "$LISTGATE" --config "$T/x711/inner/conf" init
check "init under a directory nobody may only search makes its directories ($rc)" \
    test -d "$T/x711/inner/conf/lists" -a -d "$T/x711/inner/conf/tokens"

pg_part
echo "1..$n"
[ $fails -eq 0 ]
