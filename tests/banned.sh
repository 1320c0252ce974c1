#!/bin/sh
# banned.sh - functions that have no place in listgate's C code
# (unbounded copies, shell execution, silent number parsing)
top=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
files=$(find "$top/gate" "$top/db" "$top/listcfg" -name '*.[ch]' | sort)
[ -n "$files" ] || { echo "no C files found under $top"; exit 99; }
# shellcheck disable=SC2086
bad=$(grep -nE '(^|[^a-z_])(strcpy|strcat|sprintf|vsprintf|strtok|atoi|atol|gets|system|popen)[[:space:]]*\(' \
	$files 2>/dev/null)
if [ -n "$bad" ]; then
	echo "banned functions used:"
	echo "$bad"
	exit 1
fi
# the check itself must be able to fail
printf 'x = atoi(s);\n' | grep -qE '(^|[^a-z_])atoi[[:space:]]*\(' || exit 99
echo "no banned functions"
exit 0
