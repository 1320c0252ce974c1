#!/bin/sh
# mancheck.sh - the man pages format without warnings and match the code
#
# Runs under `make check` (needs $top_srcdir).  Each page must format
# with `groff -man -ww` and print nothing on stderr; listgate(1) must
# have a section for every subcommand in gate/cmd/listgate.c and the limits
# of gate/util/lglimits.h; listgate.conf(5) must describe every key that
# listcfg/keys.c accepts, each with the default that `listgate config
# check` prints.  Skips (77) when groff is not installed.
set -u

: "${top_srcdir:?set by make check}"
command -v groff >/dev/null 2>&1 || { echo "groff not installed: skip"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/lg-mancheck.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
man1=$top_srcdir/docs/listgate.1
man5=$top_srcdir/docs/listgate.conf.5

fails=0
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() { n=$((n + 1)); echo "not ok $n - $1"; fails=$((fails + 1)); }

for page in "$man1" "$man5"; do
	if groff -man -Tutf8 -ww -z "$page" >"$T/out" 2>&1 && [ ! -s "$T/out" ]; then
		ok "$(basename "$page") formats without warnings"
	else
		bad "$(basename "$page") formats without warnings"
		sed 's/^/# /' "$T/out"
	fi
done

# every subcommand of the command table has its own section
cmds=$(sed -n 's/^[[:space:]]*{ "\([a-z]*\)", cmd_.*/\1/p' \
    "$top_srcdir/gate/cmd/listgate.c")
[ -n "$cmds" ] || bad "found the command table in gate/cmd/listgate.c"
for c in $cmds; do
	if grep -Eq "^\.SS (.*[ ,])?$c([ ,]|\$)" "$man1"; then
		ok "listgate.1 documents '$c'"
	else
		bad "listgate.1 documents '$c'"
	fi
done

# the limits section states the compiled-in limits
sed -n '/^\.SH LIMITS/,/^\.SH [^L]/p' "$man1" >"$T/limits"
for l in LG_MAX_HEADER_FIELDS LG_MAX_BOUNDARY LG_MAX_MIME_DEPTH \
    LG_MAX_MIME_PARTS LG_MAX_TOKEN_BYTES LG_MAX_TOKENS_PER_POST \
    LG_MAX_LIST_NAME; do
	v=$(sed -n "s/^#define ${l}[[:space:]]*\([0-9][0-9]*\)[[:space:]]*\$/\1/p" \
	    "$top_srcdir/gate/util/lglimits.h")
	if [ -n "$v" ] && grep -q "^\.B $v\$" "$T/limits"; then
		ok "listgate.1 LIMITS states $l ($v)"
	else
		bad "listgate.1 LIMITS states $l (${v:-not found})"
	fi
done

# every configuration key the parser knows is described
keys=$(grep -o 'strcmp(key, "[a-z_]*")' "$top_srcdir/listcfg/keys.c" |
    sed 's/.*"\([a-z_]*\)".*/\1/' | sort -u)
[ -n "$keys" ] || bad "found the keys in listcfg/keys.c"
for k in $keys; do
	if grep -q "^\.B[IR]\{0,1\} $k " "$man5"; then
		ok "listgate.conf.5 describes '$k'"
	else
		bad "listgate.conf.5 describes '$k'"
	fi
done

# every default the page states is the one `config check` prints
if [ -n "${LISTGATE:-}" ] && [ -x "$LISTGATE" ]; then
	mkdir "$T/conf"
	if "$LISTGATE" --config "$T/conf" config check --list x >"$T/eff" 2>&1; then
		# the text of each key's entry, macros dropped: "SECTION KEY TEXT"
		awk '
		/^\.SH GLOBAL/ { sec = "global" }
		/^\.SH LIST/ { sec = "list" }
		/^\.SH / && !/^\.SH (GLOBAL|LIST)/ { sec = "" }
		/^\.(TP|SS|SH)/ { if (key != "") print sec0, key, text; key = "" }
		sec != "" && /^\.B[IR]? [a-z_]+ / && prev == ".TP" {
			key = $2; sec0 = sec; text = ""; prev = $0; next
		}
		key != "" {
			line = $0
			sub(/^\.[A-Za-z]+ ?/, "", line)
			gsub(/\\f[BIRP]/, "", line)
			gsub(/"/, "", line)
			text = text " " line
		}
		{ prev = $0 }
		END { if (key != "") print sec0, key, text }
		' "$man5" >"$T/entries"
		sec=global
		while read -r k eq v; do
			case $k in
			"#") case $eq in lists/*) sec=list ;; esac; continue ;;
			""|tokens_dir) continue ;;
			esac
			e=$(awk -v s="$sec" -v k="$k" '$1 == s && $2 == k' "$T/entries")
			if printf '%s\n' "$e" | grep -q "Default: the global $k"; then
				ok "listgate.conf.5: $sec $k defaults to the global one"
			elif printf '%s\n' "$e" | grep -Eq "Default: *$v( |\.|\$)"; then
				ok "listgate.conf.5: $sec $k default is $v"
			else
				bad "listgate.conf.5: $sec $k default is $v"
			fi
		done <"$T/eff"
	else
		bad "config check runs in an empty configuration directory"
		sed 's/^/# /' "$T/eff"
	fi
fi

echo "1..$n"
[ $fails -eq 0 ]
