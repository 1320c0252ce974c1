# stress_lib.sh - shared by the lasting torture tests (torture_concurrent,
# torture_kill, torture_outage): sourced after lib.sh inside tests/pg.sh,
# with $T (a mktemp -d directory) and $LISTGATE set.  Not a test itself.
#
#   stress_mode            "long" when LISTGATE_TORTURE=long (the figures
#                          for the note), else "ci" (short, every case)
#   stress_conf DIR        a configuration directory: tokens_dir DIR/tokens,
#                          the private database, list "dev" whose deliver
#                          and release commands are sinks (below)
#   lg ARGS                listgate with that configuration (--allow-root
#                          when running as root and listgate knows it)
#   gen_posts DIR N SEED   N generated posts DIR/NNNNN.eml: ham, spam and
#                          mixed, some multipart, every 25th one large
#   gen_mbox FILE N SEED CLASS   N generated posts of one class, an mbox
#   sink_check             the sink's records against the posts: every
#                          record is a whole post (prints what is not)
#   sql QUERY              one psql query, unaligned, no header
#   temp_left DIR...       temporary files left in the directories
#
# The sinks: `deliver` and `release` run /bin/sh $T/sink.sh KIND, which
# reads the post (slowly when $T/slow exists: 1 KiB, pause, the rest, so
# that a kill lands mid-transfer), then appends "KIND SHA256 SIZE" to
# $T/sink.log in one write.  A post handed on in part leaves a record
# whose SHA-256 is no post's.  The command exits 0 whatever it read:
# like a real MTA's sendmail, it cannot tell a short post from a whole
# one.

stress_mode() {
	case ${LISTGATE_TORTURE:-} in
	long) echo long ;;
	*) echo ci ;;
	esac
}

# --allow-root when we are root and this listgate has that option
LG_ROOT=
if [ "$(id -u)" -eq 0 ] &&
    "$LISTGATE" --allow-root --help >/dev/null 2>&1; then
	LG_ROOT=--allow-root
fi

stress_conf() {
	_d=$1
	mkdir -p "$_d/lists" "$T/sink" || return 1
	{
		printf 'tokens_dir = %s/tokens\n' "$T"
		printf 'lock_wait_ms = %s\n' "${STRESS_LOCK_WAIT:-20000}"
		printf 'database = "host=%s port=%s user=%s dbname=%s"\n' \
		    "$PGHOST" "$PGPORT" "$PGUSER" "$PGDATABASE"
	} > "$_d/listgate.conf"
	{
		printf 'ham_cutoff = 0.5\nspam_cutoff = 0.9\n'
		printf 'deliver = /bin/sh %s/sink.sh deliver\n' "$T"
		printf 'release = /bin/sh %s/sink.sh release\n' "$T"
	} > "$_d/lists/dev.conf"
	cat > "$T/sink.sh" <<EOF
#!/bin/sh
# sink.sh KIND: take a post on standard input, record "KIND SHA256 SIZE"
tmp=\$(mktemp "$T/sink/in.XXXXXX") || exit 75
if [ -e "$T/slow" ]; then
	dd bs=1024 count=1 of="\$tmp" 2>/dev/null
	sleep 0.2
	cat >> "\$tmp"
else
	cat > "\$tmp"
fi
sum=\$(sha256sum < "\$tmp")
size=\$(wc -c < "\$tmp")
echo "\$1 \${sum%% *} \$size" >> "$T/sink.log"
rm -f "\$tmp"
exit 0
EOF
	: > "$T/sink.log"
}

lg() { "$LISTGATE" $LG_ROOT --config "$CONF" "$@"; }
sql() { psql -X -q -A -t -v ON_ERROR_STOP=1 -c "$1"; }

# gen_posts DIR N SEED: N posts, one file each.  About 45% ham words,
# 45% spam words, 10% both; every 7th is multipart/alternative with an
# HTML part; every 25th carries a 150 KiB body (a transfer that takes a
# while through a pipe).  Message-IDs are unique per SEED and index.
gen_posts() {
	mkdir -p "$1"
	awk -v dir="$1" -v n="$2" -v seed="$3" 'BEGIN {
		srand(seed);
		for (i = 0; i < n; i++) {
			f = sprintf("%s/%05d.eml", dir, i);
			r = rand();
			kind = r < 0.45 ? "h" : r < 0.9 ? "s" : "m";
			printf "From: %s <u%d@%s.example>\n", kind == "s" ? \
			    "Deals" : "Dev", int(rand() * 200), \
			    kind == "s" ? "offers" : "project" > f;
			printf "To: dev@lists.example.org\n" > f;
			printf "Subject: %s %d w%d\n", kind == "s" ? \
			    "Cheap offer" : "Re: build", i, \
			    int(rand() * 500) > f;
			printf "Message-ID: <%d.%d.%s@gen.example>\n", seed, i, \
			    kind > f;
			printf "MIME-Version: 1.0\n" > f;
			multi = i % 7 == 3;
			if (multi) {
				printf "Content-Type: multipart/alternative; boundary=\"b%d\"\n\n", i > f;
				printf "--b%d\nContent-Type: text/plain\n\n", i > f;
			} else
				printf "Content-Type: text/plain; charset=us-ascii\n\n" > f;
			nw = 30 + int(rand() * 150);
			for (k = 0; k < nw; k++) {
				v = kind == "m" ? (rand() < 0.5 ? "h" : "s") : kind;
				printf "%s%d%s", v, int(rand() * rand() * 800), \
				    k % 12 == 11 ? "\n" : " " > f;
			}
			if (kind != "h")
				printf "\nhttp://offer%d.example/buy now\n", \
				    int(rand() * 30) > f;
			else
				printf "\nthanks for the patch\n" > f;
			if (multi) {
				printf "--b%d\nContent-Type: text/html\n\n<p>%s%d <b>%s%d</b></p>\n--b%d--\n", \
				    i, kind == "h" ? "h" : "s", int(rand() * 100), \
				    kind == "h" ? "h" : "s", int(rand() * 100), i > f;
			}
			if (i % 25 == 24)
				for (k = 0; k < 2400; k++)
					printf "%s%d padding line %d of a long post, %s\n", \
					    kind == "s" ? "s" : "h", k % 300, k, \
					    "to make its transfer take a while" > f;
			close(f);
		}
	}'
}

# gen_mbox FILE N SEED CLASS: N posts of one class (ham or spam) as an mbox
gen_mbox() {
	awk -v n="$2" -v seed="$3" -v cls="$4" 'BEGIN {
		srand(seed);
		v = cls == "spam" ? "s" : "h";
		for (i = 0; i < n; i++) {
			printf "From trainer@example.org Thu Jan  1 00:00:00 1970\n";
			printf "From: u%d@%s.example\n", int(rand() * 200), \
			    cls == "spam" ? "offers" : "project";
			printf "Subject: %s %d-%d\n", cls == "spam" ? \
			    "Cheap offer" : "Re: build", seed, i;
			printf "Message-ID: <t%d.%d@gen.example>\n\n", seed, i;
			nw = 30 + int(rand() * 120);
			for (k = 0; k < nw; k++)
				printf "%s%d%s", v, int(rand() * rand() * 800), \
				    k % 12 == 11 ? "\n" : " ";
			printf "\n%s\n\n", cls == "spam" ? \
			    "http://offer1.example/buy now" : "thanks for the patch";
		}
	}' > "$1"
}

# the SHA-256 of every post under DIR: "SHA FILE" lines in $T/post.sums
post_sums() {
	(cd "$1" && sha256sum -- *.eml) | sed 's/  / /' > "$T/post.sums"
}

# sink_check: every record of $T/sink.log is a whole post of
# $T/post.sums; prints the bad records, returns 1 when there are any
sink_check() {
	awk 'NR == FNR { ok[$1] = 1; next }
	    !($2 in ok) { print "partial or unknown post in the sink: " $0; bad = 1 }
	    END { exit bad }' "$T/post.sums" "$T/sink.log"
}

# temp_left DIR...: the names of temporary files left behind (a token
# file being built, .NAME.new-PID.kch; a spool, lg-spool.*; the sink's)
temp_left() {
	find "$@" -mindepth 1 \( -name '.*' -o -name 'lg-*' -o -name '*.tmp' \
	    -o -name '*.new*' -o -name 'in.*' -o -name 'listgate.*' -o -name '*.wal' \) -print 2>/dev/null
}
