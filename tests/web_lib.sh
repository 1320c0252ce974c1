# web_lib.sh - shell functions shared by the tests of `listgate web`,
# sourced inside tests/pg.sh (a private PostgreSQL) after $T is made:
#
#   . "$top_srcdir/tests/web_lib.sh"
#   web_setup              configuration in $CONF (the secret in
#                          $T/secret): lists dev and other
#                          whose release command appends the post to
#                          $T/released.LIST; schema migrated; users
#                          alice (dev, password alice-secret-1), bob
#                          (all, bob-secret-12), carol (other,
#                          carol-secret-1)
#   web_start [ARGS]       start `listgate web --listen 127.0.0.1:0` in
#                          the background (pid $webpid, log $T/web.log),
#                          wait until it listens; $URL is its address
#   web_stop               SIGTERM it and wait; $webrc is its status
#   req METHOD PATH [CURL-ARGS]
#                          one request with curl: status in $code, body in
#                          $T/body, headers in $T/hdr
#
# Needs $LISTGATE, $top_srcdir, $T; curl.

CONF=$T/conf
lg() { "$LISTGATE" --allow-root --config "$CONF" "$@"; }
sql() { psql -X -q -A -t -v ON_ERROR_STOP=1 -c "$1"; }

web_setup() {
	mkdir -p "$CONF/lists" || return 1
	# the site's secret seals the messages listgate sends (a rejection's
	# notice to the post's sender)
	printf 'tokens_dir = %s/tokens\nsecret_file = %s/secret\n' "$T" "$T" \
	    > "$CONF/listgate.conf"
	cat > "$T/release.sh" <<EOS
#!/bin/sh
cat >> "$T/released.\$1" || exit 1
test ! -e "$T/fail"
EOS
	for l in dev other; do
		printf 'release = /bin/sh %s/release.sh {list}\n' "$T" \
		    > "$CONF/lists/$l.conf"
	done
	lg init > /dev/null || return 1
	lg migrate > /dev/null || return 1
	printf 'alice-secret-1\n' | lg user add alice --lists dev > /dev/null &&
	printf 'bob-secret-12\n' | lg user add bob --lists all > /dev/null &&
	printf 'carol-secret-1\n' | lg user add carol --lists other > /dev/null
}

web_start() {
	: > "$T/web.log"
	"$LISTGATE" --allow-root --config "$CONF" web --listen 127.0.0.1:0 "$@" \
	    2> "$T/web.log" &
	webpid=$!
	i=0
	while ! grep -q 'listening on' "$T/web.log" 2>/dev/null; do
		i=$((i + 1))
		if [ $i -gt 100 ] || ! kill -0 "$webpid" 2>/dev/null; then
			echo "# listgate web did not start:"
			sed 's/^/#   /' "$T/web.log"
			return 1
		fi
		sleep 0.1
	done
	port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' \
	    "$T/web.log" | head -n 1)
	URL=http://127.0.0.1:$port
}

web_stop() {
	kill -TERM "$webpid" 2>/dev/null
	wait "$webpid"
	webrc=$?
}

req() {
	m=$1
	p=$2
	shift 2
	code=$(curl -s -g --path-as-is -o "$T/body" -D "$T/hdr" \
	    -w '%{http_code}' -X "$m" "$@" "$URL$p")
}
