#!/bin/sh
# mancheck.sh - the man pages format without warnings and match the code
#
# Runs under `make check` (needs $top_srcdir).  Each page must format
# with `groff -man -ww` and print nothing on stderr; listgate(1) must
# have a section for every subcommand in gate/cmd/listgate.c and the limits
# of gate/util/lglimits.h; listgate.conf(5) must describe every key of the
# table `listgate config keys` prints ($LISTGATE), each with its default
# and both ends of its range, and no other; each command's section of
# listgate(1) must describe every option of `listgate COMMAND --help`
# (with the same short letter and, where the section tags it, the same
# name for its argument), and that help every option the section
# tags or its SYNOPSIS line names.  Skips (77) when groff is not
# installed.
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
# count the "ok - ..." and "not ok - ..." lines of file $1 (written by a
# pipeline's subshell, whose own counts would be lost)
counted() {
	while read -r r; do
		case $r in
		"ok - "*) ok "${r#ok - }" ;;
		*) bad "${r#not ok - }" ;;
		esac
	done <"$1"
}

for page in "$man1" "$man5"; do
	if groff -man -Tutf8 -ww -z "$page" >"$T/out" 2>&1 && [ ! -s "$T/out" ]; then
		ok "$(basename "$page") formats without warnings"
	else
		bad "$(basename "$page") formats without warnings"
		sed 's/^/# /' "$T/out"
	fi
	# a control byte (a form feed typed for \f, say) formats without a
	# warning, but prints as garbage
	if LC_ALL=C tr -d '\t\n' <"$page" | LC_ALL=C grep -q '[[:cntrl:]]'; then
		bad "$(basename "$page") holds no control bytes"
		LC_ALL=C grep -n '[[:cntrl:]]' "$page" | sed 's/^/# line /' | cut -c1-72
	else
		ok "$(basename "$page") holds no control bytes"
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

# listgate.conf(5) against the table of keys (`listgate config keys`):
# every key described in its section with the table's default, no
# description of a key the table lacks.  In GLOBAL SETTINGS and LIST
# SETTINGS (their .SS subsections included) a key's entry is a .TP
# paragraph tagged `.B key " = " ...` (or .BI, .BR); every .TP there
# must be one.
if [ -z "${LISTGATE:-}" ] || [ ! -x "$LISTGATE" ]; then
	bad "\$LISTGATE names the program (the keys come from config keys)"
elif ! "$LISTGATE" --allow-root config keys >"$T/keys" 2>"$T/keys.err" ||
    [ "$(grep -vc '^#' "$T/keys")" -eq 0 ]; then
	bad "listgate config keys prints the table"
	sed 's/^/# /' "$T/keys.err"
else
	# "entry SECTION KEY TEXT" per key entry (macros dropped from the
	# text), "badtag SECTION TAG" per .TP that is no key
	awk '
	function flush() { if (key != "") print "entry", sec0, key, text; key = "" }
	/^\.SH GLOBAL SETTINGS/ { flush(); sec = "global"; prev = $0; next }
	/^\.SH LIST SETTINGS/ { flush(); sec = "list"; prev = $0; next }
	/^\.SH / { flush(); sec = ""; prev = $0; next }
	/^\.(TP|SS|PP|IP)/ { flush() }
	sec != "" && prev == ".TP" {
		if ($0 ~ /^\.B[IR]? [a-z][a-z0-9_]* " = "/) {
			key = $2; sec0 = sec; text = ""
		} else
			print "badtag", sec, $0
		prev = $0; next
	}
	key != "" {
		line = $0
		sub(/^\.[A-Za-z]+ ?/, "", line)
		gsub(/\\f[BIRP]/, "", line)
		gsub(/"/, "", line)
		text = text " " line
	}
	{ prev = $0 }
	END { flush() }
	' "$man5" >"$T/entries"
	tab=$(printf '\t')
	while IFS=$tab read -r k file type def range doc; do
		case $k in "#"*) continue ;; esac
		e=$(awk -v s="$file" -v k="$k" \
		    '$1 == "entry" && $2 == s && $3 == k' "$T/entries")
		if [ -z "$e" ]; then
			bad "listgate.conf.5 describes $file key '$k'"
			continue
		fi
		ok "listgate.conf.5 describes $file key '$k'"
		re=$(printf '%s\n' "$def" | sed 's/[].[*^$\\]/\\&/g')
		if printf '%s\n' "$e" | grep -Eq "Default: *$re( |\.|,|\$)"; then
			ok "listgate.conf.5: $file $k default is $def"
		else
			bad "listgate.conf.5: $file $k default is $def"
		fi
	done <"$T/keys"
	# the other way: the page describes only keys of the table
	awk '$1 == "entry" { print $2, $3 }' "$T/entries" >"$T/described"
	while read -r s k; do
		if awk -F "$tab" -v s="$s" -v k="$k" \
		    '$1 == k && $2 == s { f = 1 } END { exit !f }' "$T/keys"; then
			ok "listgate.conf.5: $s key '$k' is in the table"
		else
			bad "listgate.conf.5: $s key '$k' is in the table"
		fi
	done <"$T/described"
	# a number's range: both ends stated in the key's entry ("from 1
	# to 3600", "above 0 and at most 1000"), as config keys prints them
	while IFS=$tab read -r k file type def range doc; do
		case $k in "#"*) continue ;; esac
		case $range in [[\(]*,*[]\)]) ;; *) continue ;; esac
		case $range in *" or "*) continue ;; esac
		e=$(awk -v s="$file" -v k="$k" \
		    '$1 == "entry" && $2 == s && $3 == k' "$T/entries")
		[ -n "$e" ] || continue
		lo=${range#?}; lo=${lo%%,*}
		hi=${range#*, }; hi=${hi%?}
		for v in "$lo" "$hi"; do
			re=$(printf '%s\n' "$v" | sed 's/\./\\./g')
			if printf '%s\n' "$e" |
			    grep -Eq "(^|[^0-9.])$re([^0-9]|\$)"; then
				ok "listgate.conf.5: $file $k range $range states $v"
			else
				bad "listgate.conf.5: $file $k range $range states $v"
			fi
		done
	done <"$T/keys"
	awk '$1 == "badtag" { $1 = ""; print }' "$T/entries" >"$T/badtags"
	while read -r s tag; do
		bad "listgate.conf.5: a .TP in the $s settings that is no key: $tag"
	done <"$T/badtags"
fi

# listgate(1) against each command's --help: every option the help
# lists is in the command's section (its short letter with it, where
# the section tags the option), every option a section tags in a .TP
# paragraph is in the help unless the entry says it is not, and every
# option of the command's SYNOPSIS line is in the help.
if [ -n "${LISTGATE:-}" ] && [ -x "$LISTGATE" ] && [ -n "$cmds" ]; then
	# the SYNOPSIS, "CMD --opt" per option of each command's line
	awk '
	/^\.SH SYNOPSIS/ { on = 1; next }
	/^\.SH / { on = 0 }
	!on { next }
	/^\.ti / { c = ""; first = 1; next }
	first && /^\.B listgate/ {
		n = split($0, w, " ")
		if (n >= 3) { c = w[3]; first = 0 }
	}
	first && /^\.BR [a-z]+ \| [a-z]+$/ { c = $2 " " $4; first = 0; next }
	c != "" {
		line = $0
		while (match(line, /\\-\\-[a-z][a-z\\-]*/)) {
			o = substr(line, RSTART, RLENGTH); gsub(/\\/, "", o)
			nc = split(c, cs, " ")
			for (i = 1; i <= nc; i++) print cs[i], o
			line = substr(line, RSTART + RLENGTH)
		}
	}' "$man1" | sort -u >"$T/synopsis"
	for c in $cmds; do
		"$LISTGATE" --allow-root "$c" --help </dev/null >"$T/help" 2>&1
		# the helps of the commands that share the section (approve,
		# reject, discard), for options the section tags for one of them
		grep "^\.SS .*\b$c\b" "$man1" | tr ', ' '\n\n' | sort -u |
		    while read -r w; do
			case " $(echo $cmds) " in *" $w "*) ;; *) continue ;; esac
			"$LISTGATE" --allow-root "$w" --help </dev/null 2>&1
		done >"$T/helps"
		# the command's sections: approve, reject, discard share one,
		# config has two
		awk -v c="$c" '
		/^\.SH / { on = 0; cmds = $0 ~ /^\.SH COMMANDS/ }
		/^\.SS / { on = 0 }
		cmds && /^\.SS / {
			t = substr($0, 5); gsub(/,/, " ", t)
			n = split(t, w, " ")
			for (i = 1; i <= n; i++) if (w[i] == c) on = 1
			next
		}
		on' "$man1" | sed 's/\\-/-/g; s/\\f[BIRP]//g' >"$T/sec"
		# the help: "-x --long" or "- --long" per option
		sed -n 's/^ *\(-[A-Za-z]\), \(--[a-z][a-z-]*\).*/\1 \2/p
		    s/^ *\(--[a-z][a-z-]*\).*/- \1/p' "$T/help" |
		    grep -v -e ' --help$' >"$T/hopts"
		# and "--long ARG" per option the help gives an argument
		# (one blank after the option, then the argument's name)
		sed -n 's/^ *\(-[A-Za-z], \)\{0,1\}\(--[a-z][a-z-]*\) \([^ ][^ ]*\).*/\2 \3/p' \
		    "$T/help" >"$T/hargs"
		while read -r s l; do
			if grep -q -e "$l\([^a-z-]\|\$\)" "$T/sec"; then
				ok "listgate.1 documents $c $l"
			else
				bad "listgate.1 documents $c $l (in $c --help)"
			fi
			# where the section tags the long option: its argument
			# named as the help names it ("--sender S" in the help
			# and "--sender SENDER" in the page read as two things)
			t=$(awk -v l="$l" 'p == ".TP" && index($0, l " ") ||
			    p == ".TP" && index($0, l "\"") { print } { p = $0 }' \
			    "$T/sec" | head -n 1)
			if [ -n "$t" ]; then
				ha=$(awk -v l="$l" '$1 == l { print $2; exit }' \
				    "$T/hargs")
				ma=$(printf '%s\n' "$t" | awk -v l="$l" \
				    '{ print substr($0, index($0, l) + length(l)) }' |
				    tr -d '" \\')
				if [ "$ha" = "$ma" ]; then
					ok "listgate.1: $c $l takes ${ha:-no argument}"
				else
					bad "listgate.1: $c $l takes ${ma:-no argument}, $c --help says ${ha:-none}"
				fi
			fi
			[ "$s" = - ] && continue
			# where the section tags the long option, the same letter
			if [ -z "$t" ]; then
				:	# described in the text, not tagged
			elif printf '%s\n' "$t" | grep -q -e '-[A-Za-z] ", "'; then
				case $t in
				*"$s \", \""*) ok "listgate.1: $c $l is $s" ;;
				*) bad "listgate.1: $c $l is $s, as $c --help says" ;;
				esac
			# a tag without the short option: the entry names it
			elif awk -v l="$l" -v s="$s" '
			    p == ".TP" && index($0, l) { on = 1; next }
			    /^\.(TP|SS|SH)/ { on = 0 }
			    on && index($0 " ", s " ") { f = 1 }
			    { p = $0 }
			    END { exit !f }' "$T/sec"; then
				ok "listgate.1: $c $l is $s"
			else
				bad "listgate.1: $c $l is $s, as $c --help says"
			fi
		done <"$T/hopts"
		# the section's tagged options, and the synopsis's, in the help
		{
			awk 'p == ".TP" {
				line = $0
				while (match(line, /--[a-z][a-z-]*/)) {
					print substr(line, RSTART, RLENGTH)
					line = substr(line, RSTART + RLENGTH)
				}
			}
			{ p = $0 }' "$T/sec" | sort -u | while read -r l; do
				# "Not in --help" in the entry: a debugging option
				awk -v l="$l" '
				p == ".TP" && index($0, l) { on = 1; next }
				/^\.(TP|SS|SH|PP)/ { on = 0 }
				on && /Not in/ { f = 1 }
				{ p = $0 }
				END { exit !f }' "$T/sec" || echo "$l"
			done
			awk -v c="$c" '$1 == c { print $2 }' "$T/synopsis"
		} | sort -u | while read -r l; do
			case $l in --config|--allow-root|--help|--version) continue ;; esac
			if grep -q -e "$l\([^a-z-]\|\$\)" "$T/help" "$T/helps"; then
				echo "ok - listgate $c --help lists $l (listgate.1)"
			else
				echo "not ok - listgate $c --help lists $l (listgate.1)"
			fi
		done >"$T/rev"
		counted "$T/rev"
		# and the help's usage lines (up to the first blank line)
		# name every option of the command's SYNOPSIS line
		sed '/^$/q' "$T/help" >"$T/husage"
		awk -v c="$c" '$1 == c { print $2 }' "$T/synopsis" |
		    while read -r l; do
			case $l in --config|--allow-root|--help|--version) continue ;; esac
			if grep -q -e "$l\([^a-z-]\|\$\)" "$T/husage"; then
				echo "ok - listgate $c --help's usage names $l (listgate.1 SYNOPSIS)"
			else
				echo "not ok - listgate $c --help's usage names $l (listgate.1 SYNOPSIS)"
			fi
		done >"$T/rev"
		counted "$T/rev"
	done
fi

echo "1..$n"
[ $fails -eq 0 ]
