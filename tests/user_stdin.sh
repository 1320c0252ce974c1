#!/bin/sh
# user_stdin.sh - `listgate user add` reads the password from a standard
# input left non-blocking by whoever started it
#
# The O_NONBLOCK flag belongs to the open pipe, shared by every process
# holding it: a shell, a process manager or a program that set it on
# its end leaves it set for listgate too.  A password written a moment
# later (a slow decrypting pipe, a script) must be waited for, not read
# as "no password on standard input", as filter and train already do.
# Needs python3 (skipped without).  Works in a mktemp -d directory.
set -u

: "${LISTGATE:?set by make check}"
: "${top_srcdir:?set by make check}"
command -v python3 > /dev/null 2>&1 || { echo "1..0 # SKIP no python3"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-userstdin.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
CONF=$T/conf
mkdir -p "$CONF/lists" "$T/tokens"
printf 'tokens_dir = %s/tokens\n' "$T" > "$CONF/listgate.conf"
: > "$CONF/lists/dev.conf"	# (user add warns of a list not configured)

. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP)

# slow_nb TEXT CMD...: CMD with standard input a non-blocking pipe, TEXT
# written to it half a second after CMD started; CMD's exit status
slow_nb() {
	python3 - "$@" <<'PY'
import os, subprocess, sys, time
text = sys.argv[1].encode()
r, w = os.pipe()
os.set_blocking(r, False)
p = subprocess.Popen(sys.argv[2:], stdin=r)
os.close(r)
time.sleep(0.5)
try:
    os.write(w, text)
except BrokenPipeError:
    pass
os.close(w)
sys.exit(p.wait())
PY
}

slow_nb 'alice-secret-1
' "$LISTGATE" --allow-root --config "$CONF" user add alice --lists dev \
    > "$T/out" 2> "$T/err"
rc=$?
check "user add waits for a password on a non-blocking pipe (exit $rc)" \
    test $rc -eq 0
check "and says the user was added" grep -q "user alice added" "$T/out"
check "and nothing on standard error" test ! -s "$T/err"
check "the account is in users.conf" grep -q "^alice" "$CONF/users.conf"

# an empty pipe at its end is still no password
slow_nb '' "$LISTGATE" --allow-root --config "$CONF" user add bob \
    --lists dev > "$T/out" 2> "$T/err"
rc=$?
check "an empty non-blocking pipe: no password (exit $rc)" test $rc -eq 1
check "which it says" grep -q "no password on standard input" "$T/err"

# a list that is not configured (a typo: deb for dev) is warned of, the
# account still made (a list may be configured after it): the account
# saw nothing of it on the web page, and nothing said why
printf 'fay-secret-12\n' | "$LISTGATE" --allow-root --config "$CONF" user add \
    fay --lists deb,dev > "$T/out" 2> "$T/err"
rc=$?
check "user add with a list not configured: exit 0 (exit $rc)" test $rc -eq 0
check "... warning of it" grep -qx "listgate user: warning: no list deb is configured ($CONF/lists/deb.conf): the account sees it once it is" "$T/err"
check "... and of it alone" test "$(wc -l < "$T/err")" -eq 1
check "... the account made" grep -q "^fay:.*:deb,dev$" "$CONF/users.conf"

# add of an account that exists, without --replace, says so before the
# password is asked for (on a terminal: twice, then "exists")
"$LISTGATE" --allow-root --config "$CONF" user add alice --lists dev \
    < /dev/null > "$T/out" 2> "$T/err"
rc=$?
check "user add of an existing account: exit 1 (exit $rc)" test $rc -eq 1
check "... saying it exists, before reading a password" \
    grep -qx "listgate user: user alice exists (--replace sets a new password and lists)" "$T/err"
check "... and nothing else" test "$(wc -l < "$T/err")" -eq 1

# --lists too long for the account's line of users.conf (300 names of
# 57 bytes: 1000 lists are allowed, 16384 bytes a line) was refused
# only when the file was written: after the password was asked for
# (twice on a terminal) and hashed, and as a failure, not the usage
# error a bad list name is.  Refused now before standard input is read
# (what is left of it here is the password, for cat)
long=$(awk 'BEGIN { for (i = 0; i < 300; i++) printf "%s%03d%s", i ? "," : "", i, "-abcdefghijklmnopqrstuvwxyz-abcdefghijklmnopqrstuvwxyz" }')
cp "$CONF/users.conf" "$T/users.before"
printf 'gil-secret-12\n' > "$T/pw"
{
	"$LISTGATE" --allow-root --config "$CONF" user add gil --lists "$long" \
	    > "$T/out" 2> "$T/err"
	echo $? > "$T/rc"
	cat > "$T/rest"
} < "$T/pw"
rc=$(cat "$T/rc")
check "user add with --lists too long for users.conf: exit 2 (exit $rc)" \
    test "$rc" -eq 2
check "... saying so" grep -qx "listgate user: --lists: 17399 bytes of list names, more than the 16124 a line of users.conf holds beside the name and its hash (16384 bytes a line)" "$T/err"
check "... before reading the password" grep -qx "gil-secret-12" "$T/rest"
check "... and before warning of each list not configured" \
    test "$(wc -l < "$T/err")" -eq 1
check "... users.conf left alone" cmp -s "$CONF/users.conf" "$T/users.before"

# a configuration directory that is not there (a --config misspelt):
# list said "(no users: no users.conf)" and exit 0; add read the
# password, hashed it and failed on its lock file; said now, as every
# command says it, before anything is read
printf 'hal-secret-12\n' > "$T/pw"
{
	"$LISTGATE" --allow-root --config "$T/noconf" user add hal --lists dev \
	    > "$T/out" 2> "$T/err"
	echo $? > "$T/rc"
	cat > "$T/rest"
} < "$T/pw"
rc=$(cat "$T/rc")
check "user add in a configuration directory that is not there: exit 1 (exit $rc)" \
    test "$rc" -eq 1
check "... saying so" grep -qx "listgate user: $T/noconf: configuration directory: No such file or directory" "$T/err"
check "... before reading the password" grep -qx "hal-secret-12" "$T/rest"
"$LISTGATE" --allow-root --config "$T/noconf" user list > "$T/out" 2> "$T/err"
rc=$?
check "user list there: exit 1, not \"no users\" (exit $rc: $(cat "$T/out"))" \
    test "$rc" -eq 1
check "... saying so" grep -qx "listgate user: $T/noconf: configuration directory: No such file or directory" "$T/err"
check "... and that alone" test ! -s "$T/out"
test ! -e "$T/noconf" || exit 99

# a users.conf that cannot be read (a mode others may read), and a
# directory listgate's user may not write in, were said only after
# the password was read (asked twice on a terminal) and hashed: the
# load and the lock file refused it then.  Now before it is read
R=$T/roconf
mkdir -p "$R/lists" || exit 99
printf 'tokens_dir = %s/tokens\n' "$T" > "$R/listgate.conf"
printf 'ann:$y$j9T$abcdefghijklmnop$0123456789012345678901234567890123456789012:all\n' \
    > "$R/users.conf"
chmod 644 "$R/users.conf"
printf 'ida-secret-12\n' > "$T/pw"
{
	"$LISTGATE" --allow-root --config "$R" user add ida --lists all \
	    > "$T/out" 2> "$T/err"
	echo $? > "$T/rc"
	cat > "$T/rest"
} < "$T/pw"
rc=$(cat "$T/rc")
check "user add beside a users.conf others may read: exit 1 (exit $rc)" \
    test "$rc" -eq 1
check "... saying so" grep -q "users.conf: mode 0644 lets others read" "$T/err"
check "... before reading the password" grep -qx "ida-secret-12" "$T/rest"
rm -f "$R/users.conf"
if [ "$(id -u)" -eq 0 ] && getent passwd nobody > /dev/null &&
    getent group nogroup > /dev/null; then
	chmod 755 "$T" "$R" "$R/lists"
	printf 'user = nobody\ngroup = nogroup\n' >> "$R/listgate.conf"
	{
		"$LISTGATE" --config "$R" user add ida --lists all \
		    > "$T/out" 2> "$T/err"
		echo $? > "$T/rc"
		cat > "$T/rest"
	} < "$T/pw"
	rc=$(cat "$T/rc")
	check "user add as a user who may not write the directory: exit 1 (exit $rc)" \
	    test "$rc" -eq 1
	check "... saying so" grep -q "^listgate user: $R: Permission denied: listgate runs as user nobody, who may not write beside $R/users.conf" "$T/err"
	check "... before reading the password" grep -qx "ida-secret-12" "$T/rest"
	chmod 700 "$T"
else
	echo "# SKIP user add in a directory it may not write: not root, or no nobody/nogroup"
fi

# the same password again with --replace keeps the hash (and the web
# sessions), but not one made with other yescrypt parameters than
# listgate's (mkpasswd -R, another libxcrypt): that one was kept for
# ever, 25 times cheaper to crack, its login's time telling the name
if command -v perl > /dev/null 2>&1 &&
    weak=$(perl -e 'print crypt("weak-secret-1", q($y$j75$abcdefghijklmnop$))') &&
    case $weak in '$y$j75$'*) true;; *) false;; esac; then
	printf 'weak:%s:dev\n' "$weak" >> "$CONF/users.conf"
	printf 'weak-secret-1\n' | "$LISTGATE" --allow-root --config "$CONF" \
	    user add weak --lists dev --replace > "$T/out" 2> "$T/err"
	rc=$?
	new=$(sed -n 's/^weak:\([^:]*\):.*/\1/p' "$CONF/users.conf")
	ours=$(sed -n 's/^alice:\(\$y\$[^$]*\$\).*/\1/p' "$CONF/users.conf")
	check "--replace, same password, other parameters: exit 0 (exit $rc)" test $rc -eq 0
	check "... the hash is made anew with listgate's parameters ($ours)" \
	    sh -c "test -n '$ours' && case '$new' in '$ours'*) true;; *) false;; esac"
	printf 'weak-secret-1\n' | "$LISTGATE" --allow-root --config "$CONF" \
	    user add weak --lists dev,other --replace > /dev/null 2>&1
	check "... and then kept by the same password again" \
	    grep -qF "weak:$new:dev,other" "$CONF/users.conf"
else
	echo "# SKIP a hash of other parameters: no perl, or its crypt has no yescrypt"
fi

# user list whose output cannot be written (a full disk) says so
if [ -w /dev/full ]; then
	"$LISTGATE" --allow-root --config "$CONF" user list > /dev/full 2> "$T/err"
	rc=$?
	check "user list to a full disk: exit 1 (exit $rc)" test $rc -eq 1
	check "... saying it" grep -q "listgate user: cannot write the standard output" "$T/err"
else
	echo "# SKIP user list to a full disk: no /dev/full"
fi

# del of an account that is not there names the file looked in (a
# --config or LISTGATE_CONFIG of another site?)
"$LISTGATE" --allow-root --config "$CONF" user del nosuch > "$T/out" 2> "$T/err"
rc=$?
check "user del of no account: exit 1 (exit $rc)" test $rc -eq 1
check "... naming users.conf" \
    grep -qx "listgate user: no user nosuch in $CONF/users.conf" "$T/err"
mkdir -p "$T/empty/lists" || exit 99
printf 'tokens_dir = %s/tokens\n' "$T" > "$T/empty/listgate.conf"
"$LISTGATE" --allow-root --config "$T/empty" user del nosuch > "$T/out" 2> "$T/err"
check "... and saying when there is no such file" \
    grep -qx "listgate user: no user nosuch in $T/empty/users.conf (there is no such file: no accounts yet)" "$T/err"

# a users.conf with CR line ends (edited by hand on an old Mac) is one
# line, all of it user add's head comment: its accounts were unread,
# and the next add wrote the file again with the new one alone
U=$T/crconf
mkdir -p "$U/lists" || exit 99
printf 'tokens_dir = %s/tokens\n' "$T" > "$U/listgate.conf"
for who in bob alice; do
	echo "password-$who" | "$LISTGATE" --allow-root --config "$U" user \
	    add "$who" --lists all > /dev/null 2>&1 || exit 99
done
tr '\n' '\r' < "$U/users.conf" > "$U/users.cr" && cat "$U/users.cr" > "$U/users.conf"
cp "$U/users.conf" "$T/users.before"
echo "password-carol" | "$LISTGATE" --allow-root --config "$U" user add \
    carol --lists all > /dev/null 2> "$T/err"
rc=$?
check "user add to a users.conf with CR line ends fails (exit $rc)" test $rc -eq 1
check "... naming the file and the line" \
    grep -q "users.conf:1: carriage return inside the line" "$T/err"
check "... and leaves the accounts in it alone" cmp -s "$U/users.conf" "$T/users.before"

# root (--allow-root, as `user add' itself advises when the list user
# may not write the configuration directory) making users.conf: it is
# for the `user' of listgate.conf, who runs listgate web and must read
# it, not root's own (the web page would not start: permission denied)
if [ "$(id -u)" -eq 0 ] && getent passwd nobody > /dev/null &&
    getent group nogroup > /dev/null; then
	W=$T/webconf
	mkdir -p "$W/lists" || exit 99
	chmod 755 "$T" "$W" "$W/lists"
	printf 'user = nobody\ngroup = nogroup\n' > "$W/listgate.conf"
	echo "password-dave" | "$LISTGATE" --allow-root --config "$W" user add \
	    dave --lists all > /dev/null 2> "$T/err"
	rc=$?
	check "root makes users.conf with user add (exit $rc)" test $rc -eq 0
	check "... giving it to the user of listgate.conf ($(stat -c %U:%G "$W/users.conf"))" \
	    test "$(stat -c %U:%G:%a "$W/users.conf")" = nobody:nogroup:600
	"$LISTGATE" --config "$W" user list > "$T/out" 2> "$T/err"
	rc=$?
	check "... who reads it (listgate leaving root for nobody: exit $rc)" \
	    sh -c "test $rc -eq 0 && grep -q '^dave all' '$T/out'"
	echo "password-erin" | "$LISTGATE" --allow-root --config "$W" user add \
	    erin --lists all > /dev/null 2> "$T/err"
	check "... and keeps it at the next add" \
	    test "$(stat -c %U:%G:%a "$W/users.conf")" = nobody:nogroup:600
else
	echo "# SKIP users.conf made by root: not root, or no nobody/nogroup"
fi

# a password too short, typed at a terminal, is refused at once: it was
# asked for again ("Again: ") and typed twice before the refusal
python3 - "$LISTGATE" "$CONF" > "$T/pty" 2>&1 <<'PY'
import os, pty, select, sys, time
lg, conf = sys.argv[1], sys.argv[2]
pid, fd = pty.fork()
if pid == 0:
    os.execv(lg, [lg, "--allow-root", "--config", conf, "user", "add",
        "kim", "--lists", "all"])
out = b""
def wait_for(what, t=5.0):
    global out
    end = time.time() + t
    while what not in out and time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.1)
        if r:
            try:
                out += os.read(fd, 4096)
            except OSError:
                return
wait_for(b"Password: ")
os.write(fd, b"short\n")
wait_for(b"password shorter than", 3)
wait_for(b"Again: ", 1)
if b"Again: " in out:
    os.kill(pid, 9)
os.waitpid(pid, 0)
sys.stdout.write(out.decode(errors="replace"))
PY
sed 's/^/# pty: /' "$T/pty"
check "a password too short at a terminal is refused" \
    grep -q "listgate user: password shorter than 8 characters" "$T/pty"
check "... before it is asked again" sh -c "! grep -q 'Again: ' '$T/pty'"

# ^Z at the password prompt, then fg: the shell gives the terminal back
# with echo on, and the password typed after fg was shown on it
if command -v bash > /dev/null 2>&1; then
	python3 - "$LISTGATE" "$CONF" > "$T/pty" 2>&1 <<'PY'
import os, pty, select, sys, time
lg, conf = sys.argv[1], sys.argv[2]
pid, fd = pty.fork()
if pid == 0:
    os.execvp("bash", ["bash", "--norc", "--noprofile", "-i"])
out = b""
def wait_for(what, seen=0, t=5.0):
    # until what occurs more than seen times in the output, or t s
    global out
    end = time.time() + t
    while out.count(what) <= seen and time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.1)
        if r:
            try:
                out += os.read(fd, 4096)
            except OSError:
                return
def say(s):
    os.write(fd, s)
wait_for(b"$", 0, 2)
say(b"PS1='> '; '%s' --allow-root --config '%s' user add zed --lists all\n"
    % (lg.encode(), conf.encode()))
wait_for(b"Password: ")
say(b"\x1a")
wait_for(b"Stopped")
say(b"fg\n")
wait_for(b"Password: ", 1, 10)
say(b"zed-is-a-Secret-9\n")
wait_for(b"Again: ")
say(b"zed-is-a-Secret-9\n")
wait_for(b"user zed added")
say(b"exit\n")
wait_for(b"exit", 1, 1)
sys.stdout.write(out.decode(errors="replace"))
PY
	sed 's/^/# pty: /' "$T/pty"
	check "^Z at the password prompt and fg: the password is not echoed" \
	    sh -c "! grep -q 'zed-is-a-Secret-9' '$T/pty'"
	check "... it is asked again and the account added" \
	    grep -q "user zed added" "$T/pty"
else
	echo "# SKIP ^Z at the password prompt: no bash"
fi

echo "1..$n"
[ $fails -eq 0 ]
