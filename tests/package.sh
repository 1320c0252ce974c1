#!/bin/sh
# package.sh - the Debian package, built, installed, used and removed
#
#   sh tests/package.sh TARBALL        as root (tests/run-all.sh runs it
#                                      under CI with the tarball that
#                                      `make distcheck` made)
#
# Builds the package from the release tarball (dpkg-buildpackage -b -us
# -uc -j2, out of tree in a mktemp -d directory), runs lintian on it
# (any error or warning fails; the listing and lintian's output are
# printed as "# " lines), installs it with `apt-get install ./listgate_*.deb`
# and checks what postinst made: the system user and group listgate, the
# commented /etc/listgate/listgate.conf, /var/lib/listgate with its
# tokens directory and secret, each with its owner and mode, every unit
# disabled.  A reinstallation must leave a changed configuration and the
# secret as they were; one that finds a token file listgate refuses
# (postinst configure with the old version) says so.  Then, as the user
# listgate, with a clean environment, the installed /usr/bin/listgate
# runs init, migrate (a
# private PostgreSQL cluster, tests/pg.sh, whose socket the user
# reaches), train, filter (a post held, a post passed), held and approve
# (the list's release command runs); `systemd-analyze verify` checks the
# units, and listgate-notify.service has nothing that sets no_new_privs
# (its notify commands may run the setgid postdrop).  Last `apt-get
# purge`: nothing of the package may be left outside /etc and /var/lib
# (its `dpkg -L` list, and a list of every
# file under /usr, /bin, /sbin, /lib*, /opt, /srv and /var but
# /var/lib, /var/log, /var/cache, /var/tmp and /var/backups taken before
# the installation and after the purge: a new file there must belong to
# an installed package, i.e. a dependency apt brought in); /etc/listgate
# is gone and /var/lib/listgate kept (debian/listgate.postrm).  Removes
# /var/lib/listgate and, when this test created it, the user listgate at
# the end.
#
# Refuses to run (exit 1) when listgate is installed, or /etc/listgate or
# /var/lib/listgate exist: it would change an administrator's files.
# Needs dpkg-dev, debhelper, fakeroot, lintian, systemd and postgresql
# (tests/run-all.sh installs them).  TAP output; exit 0 when all pass.
set -u

if [ "$(id -u)" -ne 0 ]; then
	echo "package.sh: run as root (it installs and removes a package)" >&2
	exit 1
fi
tarball=${1:?usage: sh tests/package.sh TARBALL}
case $tarball in /*) ;; *) tarball=$(pwd)/$tarball ;; esac
top_srcdir=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${PG_TEST_DIR:-}" ]; then
	# the checks that would refuse, before a cluster is started
	if dpkg-query -W -f='${Status}' listgate 2>/dev/null |
	    grep -q 'installed'; then
		echo "package.sh: the package listgate is installed here" >&2
		exit 1
	fi
	for d in /etc/listgate /var/lib/listgate; do
		if [ -e "$d" ]; then
			echo "package.sh: $d exists: this test would change it" >&2
			exit 1
		fi
	done
	for c in dpkg-buildpackage dh lintian fakeroot systemd-analyze psql; do
		command -v "$c" >/dev/null 2>&1 || {
			echo "package.sh: $c is not installed" >&2
			exit 1
		}
	done
	exec sh "$top_srcdir/tests/pg.sh" run sh "$0" "$tarball"
fi

T=$(mktemp -d "${TMPDIR:-/tmp}/lg-package.XXXXXX") || exit 99
chmod 755 "$T"
had_user=0
getent passwd listgate >/dev/null && had_user=1
cleanup() {
	if dpkg-query -W -f='${Status}' listgate 2>/dev/null |
	    grep -q 'installed'; then
		apt-get purge -y -qq listgate >/dev/null 2>&1
	fi
	rm -rf /var/lib/listgate /etc/listgate
	if [ $had_user = 0 ] && getent passwd listgate >/dev/null; then
		userdel listgate 2>/dev/null
		groupdel listgate 2>/dev/null
	fi
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
. "$top_srcdir/tests/lib.sh"	# ok, bad, check (TAP)
export DEBIAN_FRONTEND=noninteractive
start=$(date +%s)

# as the user listgate, with nothing of this environment (PG*, HOME...)
lg() {
	runuser -u listgate -- env -i PATH=/usr/bin:/bin \
	    HOME=/var/lib/listgate USER=listgate /usr/bin/listgate "$@"
}
# apt's and dpkg's output as "# WHAT: " lines, without progress lines
quiet_log() {
	tr '\r' '\n' < "$2" | sed -e '/Reading database/d' \
	    -e '/^N: Download is performed unsandboxed/d' \
	    -e '/apt-utils is not installed/d' -e '/^$/d' -e "s/^/# $1: /"
}
# mode, owner and group of a path: "0750 root listgate"
perm() { stat -c '%04a %U %G' "$1"; }
sql() { psql -X -q -A -t -v ON_ERROR_STOP=1 -c "$1"; }
# the files under the directories a package may install to, but /etc
# and /var/lib (and the logs, caches and temporary files of /var)
snapshot() {
	find /usr /bin /sbin /lib /lib32 /lib64 /libx32 /opt /srv /var -xdev \
	    \( -path /var/lib -o -path /var/log -o -path /var/cache \
	    -o -path /var/tmp -o -path /var/backups \) -prune -o -print \
	    2>/dev/null | LC_ALL=C sort
}

# --- build -------------------------------------------------------------------
tar -xzf "$tarball" -C "$T" || { echo "Bail out! cannot unpack $tarball"; exit 1; }
src=$(find "$T" -mindepth 1 -maxdepth 1 -type d -name 'listgate-*' | head -n 1)
b0=$(date +%s)
(cd "$src" && dpkg-buildpackage -b -us -uc -j2) > "$T/build.log" 2>&1
brc=$?
if [ $brc -ne 0 ]; then
	tail -n 60 "$T/build.log" | sed 's/^/# /'
	echo "Bail out! dpkg-buildpackage failed (status $brc)"
	exit 1
fi
ok "dpkg-buildpackage -b -us -uc builds the package ($(( $(date +%s) - b0 )) s)"
deb=$(ls "$T"/listgate_*_*.deb)
echo "# dpkg -c $(basename "$deb"):"
dpkg -c "$deb" | sed 's/^/#   /'
dpkg-deb -f "$deb" Depends | sed 's/^/# Depends: /'
lintian --fail-on error,warning -I --pedantic "$T"/listgate_*.changes \
    > "$T/lintian" 2>&1
lrc=$?
sed -i '/running with root privileges/d' "$T/lintian"
if [ -s "$T/lintian" ]; then
	sed 's/^/# lintian: /' "$T/lintian"
else
	echo "# lintian -I --pedantic: no output"
fi
check "lintian: no error, no warning (status $lrc)" test $lrc -eq 0
check "the package ships the eight units" test \
    "$(dpkg -c "$deb" | grep -c 'lib/systemd/system/listgate-.*\.\(service\|timer\)$')" -eq 8

# --- install -----------------------------------------------------------------
snapshot > "$T/files.before"
(cd "$T" && apt-get install -y -qq "./$(basename "$deb")") > "$T/install.log" 2>&1
irc=$?
quiet_log install "$T/install.log"
if [ $irc -ne 0 ]; then
	echo "Bail out! apt-get install failed (status $irc)"
	exit 1
fi
ok "apt-get install ./$(basename "$deb")"
dpkg -L listgate | LC_ALL=C sort > "$T/dpkg-L"
check "the system user listgate: group listgate, home /var/lib/listgate, no shell" \
    test "$(getent passwd listgate | cut -d: -f4,6,7)" = \
    "$(getent group listgate | cut -d: -f3):/var/lib/listgate:/usr/sbin/nologin"
check "/etc/listgate: 0750 root:listgate" \
    test "$(perm /etc/listgate)" = "0750 root listgate"
check "/etc/listgate/lists: 0750 root:listgate" \
    test "$(perm /etc/listgate/lists)" = "0750 root listgate"
check "/etc/listgate/listgate.conf: 0640 root:listgate" \
    test "$(perm /etc/listgate/listgate.conf)" = "0640 root listgate"
check "/etc/listgate/users.conf: empty, 0600 listgate:listgate (listgate web reads it)" \
    sh -c "test ! -s /etc/listgate/users.conf &&
	test \"\$(stat -c '%04a %U %G' /etc/listgate/users.conf)\" = '0600 listgate listgate'"
check "listgate.conf is the package's commented file" \
    cmp -s /etc/listgate/listgate.conf /usr/share/listgate/listgate.conf
check "listgate.conf sets user, group and tokens_dir" sh -c \
    "grep -qx 'user = listgate' /etc/listgate/listgate.conf &&
     grep -qx 'group = listgate' /etc/listgate/listgate.conf &&
     grep -qx 'tokens_dir = /var/lib/listgate/tokens' /etc/listgate/listgate.conf"
check "/var/lib/listgate: 0750 listgate:listgate" \
    test "$(perm /var/lib/listgate)" = "0750 listgate listgate"
check "/var/lib/listgate/tokens: 0750 listgate:listgate" \
    test "$(perm /var/lib/listgate/tokens)" = "0750 listgate listgate"
check "listgate init made /var/lib/listgate/secret: 0600 listgate, 64 hex digits" \
    sh -c "test \"\$(stat -c '%04a %U' /var/lib/listgate/secret)\" = '0600 listgate' &&
	grep -Eqx '[0-9a-f]{64}' /var/lib/listgate/secret"
for u in listgate-web.service listgate-holder.service listgate-expire.timer \
    listgate-notify.timer listgate-sync.timer listgate-expire.service \
    listgate-notify.service listgate-sync.service; do
	e=$(systemctl --root=/ is-enabled "$u" 2>&1)
	case $u in
	*.timer | listgate-web.service | listgate-holder.service) want=disabled ;;
	*) want=static ;;	# started by their timers only
	esac
	check "$u is $want after installation ($e)" test "$e" = "$want"
done
lg config check > "$T/check.out" 2>&1
crc=$?
check "listgate config check passes on the installed configuration" \
    test $crc -eq 0
[ $crc -eq 0 ] || sed 's/^/# /' "$T/check.out"

# --- a reinstallation leaves the configuration and the secret alone -----
cp -p /var/lib/listgate/secret "$T/secret.before"
cat >> /etc/listgate/listgate.conf <<EOF
# the private test cluster (tests/pg.sh)
database = host=$PGHOST port=$PGPORT user=$PGUSER dbname=$PGDATABASE
EOF
chmod 0600 /etc/listgate/listgate.conf
chgrp root /etc/listgate/listgate.conf
cp -p /etc/listgate/listgate.conf "$T/conf.before"
(cd "$T" && apt-get install -y -qq --reinstall "./$(basename "$deb")") \
    > "$T/reinstall.log" 2>&1
check "apt-get install --reinstall" test $? -eq 0
check "reinstalling leaves a changed listgate.conf as it was" \
    cmp -s /etc/listgate/listgate.conf "$T/conf.before"
check "reinstalling leaves its mode and owner (0600 root:root)" \
    test "$(perm /etc/listgate/listgate.conf)" = "0600 root root"
check "reinstalling leaves the secret as it was" \
    cmp -s /var/lib/listgate/secret "$T/secret.before"
chmod 0640 /etc/listgate/listgate.conf
chgrp listgate /etc/listgate/listgate.conf

# --- an account of the web page, added as root as the guides say ----------
printf 'package-test-pw\n' | /usr/bin/listgate --allow-root user add pkg \
    --lists all > "$T/useradd.out" 2>&1
urc=$?
check "listgate --allow-root user add exits 0" test $urc -eq 0
[ $urc -eq 0 ] || sed 's/^/# user add: /' "$T/useradd.out"
check "... users.conf stays 0600 listgate:listgate" \
    test "$(perm /etc/listgate/users.conf)" = "0600 listgate listgate"
check "... and the user listgate (listgate web) reads the account" \
    sh -c "runuser -u listgate -- /usr/bin/listgate user list | grep -qx 'pkg all'"

# --- the installed program, as the user listgate --------------------------
mkdir -p "$T/data" && cp "$top_srcdir"/tests/data/train/*.eml "$T/data/" &&
    chmod 0755 "$T/data" && chmod 0644 "$T"/data/*.eml || exit 99
# the list's release command: the post into $T/released (the user
# listgate writes there)
mkdir "$T/out" && chown listgate "$T/out"
printf '#!/bin/sh\ncat > %s/out/released\n' "$T" > "$T/release.sh"
chmod 0755 "$T/release.sh"
printf 'release = /bin/sh %s/release.sh\nham_cutoff = 0.5\n' "$T" \
    > /etc/listgate/lists/dev.conf
chgrp listgate /etc/listgate/lists/dev.conf
chmod 0640 /etc/listgate/lists/dev.conf

lg init > "$T/init.out" 2>&1
check "listgate init exits 0 and changes nothing" sh -c \
    "test $? -eq 0 && grep -q 'secret /var/lib/listgate/secret exists: unchanged' '$T/init.out'"
lg migrate > "$T/migrate.out" 2>&1
mrc=$?
sed 's/^/# migrate: /' "$T/migrate.out"
check "listgate migrate exits 0" test $mrc -eq 0
check "the schema is in the private cluster" \
    test "$(sql 'SELECT count(*) FROM schema_migrations')" -ge 5
lg train -q --list dev --spam "$T"/data/spam1.eml "$T"/data/spam2.eml \
    "$T"/data/spam3.eml "$T"/data/spam4.eml > "$T/train.out" 2>&1 &&
lg train -q --list dev --ham "$T"/data/ham1.eml "$T"/data/ham2.eml \
    "$T"/data/ham3.eml "$T"/data/ham4.eml >> "$T/train.out" 2>&1
trc=$?
sed 's/^/# train: /' "$T/train.out"
check "listgate train --spam, --ham exit 0" test $trc -eq 0
check "the token file: /var/lib/listgate/tokens/dev.kch, 0640 listgate:listgate" \
    test "$(perm /var/lib/listgate/tokens/dev.kch 2>&1)" = "0640 listgate listgate"
check "the journal holds the 8 trained posts" \
    test "$(sql "SELECT count(*) FROM train_journal WHERE list = 'dev'" 2>/dev/null || echo x)" = 8
lg filter --list dev --mta qmail -f a@example.org -- dev@example.org \
    < "$T/data/spam-test.eml" > "$T/filter.out" 2>&1
frc=$?
check "filter holds spam-test.eml (exit 99)" test $frc -eq 99
lg filter --list dev --mta qmail -f b@example.org -- dev@example.org \
    < "$T/data/ham-test.eml" >> "$T/filter.out" 2>&1
frc=$?
check "filter passes ham-test.eml (exit 0)" test $frc -eq 0
[ $fails -eq 0 ] || sed 's/^/# filter: /' "$T/filter.out"
id=$(sql "SELECT id FROM held_posts WHERE list = 'dev' AND status = 'held'")
check "one post is held in PostgreSQL" test -n "$id"
lg held --list dev > "$T/held.out" 2>&1
check "listgate held lists it" grep -q "^ *$id\b" "$T/held.out"
lg approve --note package-test "$id" > "$T/approve.out" 2>&1
check "listgate approve releases it through the list's command" sh -c \
    "test $? -eq 0 && cmp -s '$T/out/released' '$T/data/spam-test.eml'"
[ $fails -eq 0 ] || sed 's/^/# /' "$T/held.out" "$T/approve.out"
for c in expire notify sync; do
	case $c in notify) a=--pending ;; *) a= ;; esac
	# shellcheck disable=SC2086
	lg $c $a --quiet > "$T/$c.out" 2>&1
	rc=$?
	check "listgate $c${a:+ $a} (the command of its timer) exits 0" \
	    test $rc -eq 0
	[ $rc -eq 0 ] || sed 's/^/# /' "$T/$c.out"
done

# --- an upgrade that leaves a token file the new listgate refuses --------------
# (--reinstall runs postinst configure with the old version, as an
# upgrade does): filter would defer every post of that list, so postinst
# says so; the upgrade itself goes through
printf 'not a token file\n' > /var/lib/listgate/tokens/old.kch &&
    chown listgate:listgate /var/lib/listgate/tokens/old.kch &&
    chmod 0640 /var/lib/listgate/tokens/old.kch &&
    install -o root -g listgate -m 0640 /dev/null \
    /etc/listgate/lists/old.conf || exit 99
(cd "$T" && apt-get install -y -qq --reinstall "./$(basename "$deb")") \
    > "$T/upgrade.log" 2>&1
urc=$?
check "an upgrade with a token file listgate refuses goes through (status $urc)" \
    test $urc -eq 0
check "... and postinst says that config check fails, and for which list" \
    sh -c "grep -q \"'listgate config check' fails\" '$T/upgrade.log' &&
	grep -q 'list old: token file /var/lib/listgate/tokens/old.kch' '$T/upgrade.log'"
[ $fails -eq 0 ] || quiet_log upgrade "$T/upgrade.log"
rm -f /var/lib/listgate/tokens/old.kch /etc/listgate/lists/old.conf
(cd "$T" && apt-get install -y -qq --reinstall "./$(basename "$deb")") \
    > "$T/upgrade2.log" 2>&1
check "... and says nothing once config check passes" sh -c \
    "test $? -eq 0 && ! grep -q -e '^listgate:' -e '^listgate config:' '$T/upgrade2.log'"
[ $fails -eq 0 ] || quiet_log upgrade "$T/upgrade2.log"

# --- an upgrade that brings a schema migration ---------------------------------
# (the newest migration hidden, as an older listgate's database would
# be): filter would defer every post it holds until migrate, so postinst
# names the migration; the upgrade itself goes through
newest=$(sql 'SELECT max(version) FROM schema_migrations')
newname=$(sql "SELECT version || '_' || name FROM schema_migrations
    WHERE version = $newest")
sql "CREATE TABLE pkg_hidden AS SELECT * FROM schema_migrations
    WHERE version = $newest; DELETE FROM schema_migrations
    WHERE version = $newest" || exit 99
(cd "$T" && apt-get install -y -qq --reinstall "./$(basename "$deb")") \
    > "$T/upgrade3.log" 2>&1
urc=$?
sql "INSERT INTO schema_migrations SELECT * FROM pkg_hidden;
    DROP TABLE pkg_hidden" || exit 99
check "an upgrade with a migration pending goes through (status $urc)" \
    test $urc -eq 0
check "... and postinst names the pending migration and says to migrate" \
    sh -c "grep -q \"needs the migration(s) 0*$newname.*'listgate migrate'\" \
	'$T/upgrade3.log'"
[ $fails -eq 0 ] || quiet_log upgrade "$T/upgrade3.log"

# --- the units -----------------------------------------------------------------
units=$(ls /lib/systemd/system/listgate-*.service /lib/systemd/system/listgate-*.timer)
# shellcheck disable=SC2086
systemd-analyze verify $units > "$T/verify" 2>&1
vrc=$?
sed 's/^/# verify: /' "$T/verify"
check "systemd-analyze verify: the 8 units, no complaint" \
    sh -c "test $vrc -eq 0 && test ! -s '$T/verify'"
for u in listgate-web listgate-holder listgate-sync listgate-expire; do
	f=/lib/systemd/system/$u.service
	check "$u.service: ProtectSystem=strict, NoNewPrivileges, PrivateTmp" sh -c \
	    "grep -qx 'ProtectSystem=strict' $f && grep -qx 'NoNewPrivileges=yes' $f &&
	     grep -qx 'PrivateTmp=yes' $f"
	# the rest of the sandbox of the units that run no setuid program
	miss=
	for k in PrivateDevices=yes ProtectKernelTunables=yes \
	    ProtectKernelModules=yes ProtectControlGroups=yes \
	    ProtectKernelLogs=yes ProtectClock=yes ProtectHostname=yes \
	    RestrictSUIDSGID=yes RestrictNamespaces=yes LockPersonality=yes \
	    RestrictRealtime=yes CapabilityBoundingSet= \
	    SystemCallArchitectures=native 'RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK'; do
		grep -qx "$k" $f || miss="$miss $k"
	done
	check "$u.service: the whole sandbox (missing:${miss:- none})" test -z "$miss"
done
# listgate-notify.service runs the lists' notify commands, Postfix's
# sendmail with its setgid postdrop or a setuid sendmail: nothing in it
# may set no_new_privs, and for a service with User= systemd sets it for
# each of these settings too (systemd.exec(5)), not for NoNewPrivileges
# alone
f=/lib/systemd/system/listgate-notify.service
nnp=
for k in NoNewPrivileges PrivateDevices ProtectHostname ProtectClock \
    ProtectKernelTunables ProtectKernelModules ProtectKernelLogs \
    RestrictAddressFamilies RestrictNamespaces LockPersonality \
    MemoryDenyWriteExecute RestrictRealtime RestrictSUIDSGID \
    SystemCallFilter SystemCallArchitectures SystemCallLog DynamicUser; do
	grep -E "^$k=" $f | grep -Evq "^$k=(no|false|off|0)?$" &&
	    nnp="$nnp $k"
done
check "listgate-notify.service: setgid programs run (no setting that implies NoNewPrivileges:${nnp:- none})" \
    test -z "$nnp"
# the periods the documentation gives (every 5 minutes, every minute):
# under systemd's default AccuracySec=1min a run starts at the end of
# the minute's window after its period, a minute late every time
for t in notify:5min sync:1min; do
	f=/lib/systemd/system/listgate-${t%%:*}.timer
	a=$(sed -n 's/^AccuracySec=//p' "$f")
	us=$(systemd-analyze timespan "${a:-1min}" 2>/dev/null |
	    sed -n 's/^ *[^ ]*s: \([0-9][0-9]*\)$/\1/p')
	check "listgate-${t%%:*}.timer: OnUnitActiveSec=${t#*:}, AccuracySec=${a:-(1min)} at most 1s" \
	    sh -c "grep -qx 'OnUnitActiveSec=${t#*:}' $f && test '${us:-x}' -le 1000000"
done
systemd-analyze security --offline=true \
    /lib/systemd/system/listgate-web.service 2>/dev/null | tail -n 1 |
    sed 's/^/# listgate-web.service: systemd-analyze security: /'

# --- purge ---------------------------------------------------------------------
# token files in the default tokens_dir, /etc/listgate/tokens (a source
# install's layout that the package found and kept)
install -d -o listgate -g listgate -m 0750 /etc/listgate/tokens &&
    cp -p /var/lib/listgate/tokens/dev.kch /etc/listgate/tokens/old.kch ||
    exit 99
apt-get purge -y -qq listgate > "$T/purge.log" 2>&1
prc=$?
quiet_log purge "$T/purge.log"
check "apt-get purge listgate" test $prc -eq 0
check "dpkg knows no listgate any more" sh -c \
    "! dpkg-query -W -f='\${Status}' listgate 2>/dev/null | grep -q installed"
left=
while read -r p; do
	case $p in /etc | /etc/* | /var/lib | /var/lib/*) continue ;; esac
	[ -e "$p" ] || [ -L "$p" ] || continue
	# a directory another package also owns (/usr/bin, /lib) stays
	[ "$p" = /. ] && continue
	[ -d "$p" ] && dpkg -S "$p" >/dev/null 2>&1 && continue
	left="$left $p"
done < "$T/dpkg-L"
check "nothing of dpkg -L listgate is left outside /etc and /var/lib" \
    test -z "$left"
[ -z "$left" ] || echo "# left:$left"
snapshot > "$T/files.after"
new=
for p in $(LC_ALL=C comm -13 "$T/files.before" "$T/files.after"); do
	dpkg -S "$p" >/dev/null 2>&1 || new="$new $p"
done
check "no new file outside /etc and /var/lib but a dependency's" test -z "$new"
[ -z "$new" ] || echo "# new:$new" | cut -c 1-2000
check "purge kept the token files under /etc/listgate" \
    cmp -s /etc/listgate/tokens/old.kch /var/lib/listgate/tokens/dev.kch
check "... and removed the rest of /etc/listgate" \
    test "$(ls -A /etc/listgate)" = tokens
rm -rf /etc/listgate
check "purge kept /var/lib/listgate (the token files, the secret)" \
    sh -c "test -s /var/lib/listgate/tokens/dev.kch && test -s /var/lib/listgate/secret"
check "purge kept the user listgate (it owns what is kept)" \
    sh -c 'getent passwd listgate > /dev/null'
echo "# package test: $(( $(date +%s) - start )) s"
echo "1..$n"
[ $fails -eq 0 ]
