#!/bin/sh
# layering.sh - the layers of listgate point one way, and this test says so
#
#   sh tests/layering.sh [DIR]     check the tree at DIR (default: the
#                                  source tree); TAP output, exit 1 on a
#                                  violation
#
# Every C file belongs to the layer of its folder:
#
#   rank  layer     folder            may include
#   0     util      gate/util/        util
#   1     mail      gate/mail/        util, mail
#   2     core      gate/ (top)       util, mail, core
#   3     db        db/               util, mail, core, db
#   3     listcfg   listcfg/          util, listcfg
#   4     app       gate/app/         all of the above
#   5     (features: moderation, tune, web, evidence, holder, each its own folder
#         under gate/) the above and their own folder
#   6     cmd       gate/cmd/         everything
#
# A file may include its own folder's headers and those of lower ranks;
# two folders of the same rank never include each other (db and listcfg
# stand beside each other).  listcfg is stricter: util only.  Outside
# headers are confined too: <libpq-fe.h> to db/ (the queue and journal
# store), <kclangc.h> to db/tokdb.c, <microhttpd.h> to gate/web/.  So
# the parsers, the tokenizer and the Bayes maths can never reach db/ or
# libpq.  The check first proves on a small tree of its own that it
# catches a bad include, then checks the real one.
set -u

top=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
n=0
fails=0

# layer FILE: "RANK NAME" for a path relative to the tree, or nothing
layer() {
	case $1 in
	gate/util/*) echo "0 util" ;;
	gate/mail/*) echo "1 mail" ;;
	gate/app/*) echo "4 app" ;;
	gate/moderate/*) echo "5 moderate" ;;
	gate/tune/*) echo "5 tune" ;;
	gate/web/*) echo "5 web" ;;
	gate/evidence/*) echo "5 evidence" ;;
	gate/holder/*) echo "5 holder" ;;
	gate/cmd/*) echo "6 cmd" ;;
	gate/*/*) echo "? unknown" ;;
	gate/*) echo "2 core" ;;
	db/*) echo "3 db" ;;
	listcfg/*) echo "3 listcfg" ;;
	*) echo "? unknown" ;;
	esac
}

# check_tree DIR: print one line per violation; exit status 1 if any
check_tree() {
	d=$1
	viol=0
	files=$(cd "$d" && find gate db listcfg -name '*.[ch]' 2>/dev/null | sort)
	for f in $files; do
		set -- $(layer "$f")
		frank=$1 flayer=$2
		if [ "$frank" = "?" ]; then
			echo "$f: not in any layer (add its folder to tests/layering.sh)"
			viol=1
			continue
		fi
		# "local" includes: the path from the top of the tree
		incs=$(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$d/$f")
		for h in $incs; do
			[ "$h" = config.h ] && continue
			if [ ! -f "$d/$h" ]; then
				# a generated header lives in the build tree
				case $h in
				*/migrations_sql.h) ;;
				*) echo "$f: includes \"$h\", which is not a path from the top of the tree"
				   viol=1 ;;
				esac
				continue
			fi
			set -- $(layer "$h")
			hrank=$1 hlayer=$2
			[ "$hlayer" = "$flayer" ] && continue
			if [ "$hrank" = "?" ] || [ "$hrank" -ge "$frank" ]; then
				echo "$f ($flayer) includes $h ($hlayer): a layer may only include lower ones"
				viol=1
			elif [ "$flayer" = listcfg ] && [ "$hlayer" != util ]; then
				echo "$f (listcfg) includes $h ($hlayer): listcfg uses gate/util only"
				viol=1
			fi
		done
		# outside headers with an owner
		sys=$(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*<\([^>]*\)>.*/\1/p' "$d/$f")
		for h in $sys; do
			case $h in
			libpq-fe.h|libpq/*)
				case $f in db/*) ;; *)
					echo "$f includes <$h>: only db/ talks to libpq"
					viol=1 ;;
				esac ;;
			kclangc.h)
				[ "$f" = db/tokdb.c ] || {
					echo "$f includes <$h>: only db/tokdb.c talks to Kyoto Cabinet"
					viol=1; }
				;;
			microhttpd.h)
				case $f in gate/web/*) ;; *)
					echo "$f includes <$h>: only gate/web/ serves HTTP"
					viol=1 ;;
				esac ;;
			esac
		done
	done
	return $viol
}

ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() { n=$((n + 1)); echo "not ok $n - $1"; fails=$((fails + 1)); }

# --- the check must be able to fail: a small tree with known faults ------
T=$(mktemp -d "${TMPDIR:-/tmp}/layering.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM
mkdir -p "$T/gate/util" "$T/gate/mail" "$T/gate/cmd" "$T/db" "$T/listcfg"
: > "$T/gate/util/buf.h"
: > "$T/db/tokdb.h"
: > "$T/gate/tok.h"
: > "$T/gate/cmd/cmd.h"
printf '#include "gate/util/buf.h"\n#include "gate/tok.h"\n' > "$T/gate/bayes.c"
printf '#include "gate/util/buf.h"\n#include "db/tokdb.h"\n' > "$T/gate/cmd/cmd_x.c"
if check_tree "$T" >/dev/null; then
	ok "a clean small tree passes"
else
	bad "a clean small tree passes"
fi
for fault in 'gate/mail/mail.c:#include "db/tokdb.h"' \
    'gate/tok.c:#include "gate/cmd/cmd.h"' \
    'gate/util/log.c:#include "gate/tok.h"' \
    'listcfg/listcfg.c:#include "gate/tok.h"' \
    'listcfg/listcfg.c:#include "db/tokdb.h"' \
    'db/tokdb.c:#include "gate/cmd/cmd.h"' \
    'gate/bayes.c:#include <libpq-fe.h>' \
    'gate/tok.c:#include "buf.h"' \
    'gate/newfolder/x.c:#include "gate/util/buf.h"'; do
	file=${fault%%:*}
	line=${fault#*:}
	mkdir -p "$T/$(dirname "$file")"
	cp "$T/$file" "$T/$file.orig" 2>/dev/null || : > "$T/$file.orig"
	printf '%s\n' "$line" >> "$T/$file"
	if check_tree "$T" >/dev/null; then
		bad "the check catches $file: $line"
	else
		ok "the check catches $file: $line"
	fi
	mv "$T/$file.orig" "$T/$file"
	[ -s "$T/$file" ] || rm -f "$T/$file"
done

# --- the real tree -------------------------------------------------------
if out=$(check_tree "$top"); then
	ok "every include in gate/, db/ and listcfg/ points down the layers"
else
	bad "every include in gate/, db/ and listcfg/ points down the layers"
	printf '%s\n' "$out" | sed 's/^/# /'
fi
echo "1..$n"
[ $fails -eq 0 ]
