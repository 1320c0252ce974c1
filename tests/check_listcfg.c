/*
 * check_listcfg.c - configuration files: defaults, every key, every
 * error with its file:line, list names, template expansion, the table
 * of keys itself
 *
 * Each test writes its files under a fresh mkdtemp directory.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#include "gate/moderate/cookie.h"
#include "gate/util/buf.h"
#include "listcfg/cfgfile.h"
#include "listcfg/keys.h"
#include "listcfg/listcfg.h"
#include "listcfg/tmpl.h"
#include "gate/util/xalloc.h"

static char tmpdir[PATH_MAX];

/* a fresh directory with lists/ in it */
static void
setup(void)
{
	char p[PATH_MAX + 8];
	const char *t = getenv("TMPDIR");

	snprintf(tmpdir, sizeof(tmpdir), "%s/check_listcfg.XXXXXX",
	    t && *t ? t : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	snprintf(p, sizeof(p), "%s/lists", tmpdir);
	ck_assert_int_eq(mkdir(p, 0700), 0);
}

/* remove what the tests made (no recursion needed beyond two levels) */
static void
teardown(void)
{
	char cmd[PATH_MAX + 32];
	pid_t pid;
	int st;

	snprintf(cmd, sizeof(cmd), "%s", tmpdir);
	if ((pid = fork()) == 0) {
		execl("/bin/rm", "rm", "-rf", "--", cmd, (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		waitpid(pid, &st, 0);
}

/* write len bytes to tmpdir/rel */
static void
write_file(const char *rel, const char *data, size_t len)
{
	char p[PATH_MAX + 64];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", tmpdir, rel);
	f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
}

/* load the global config and list t with the given lists/t.conf text */
static int
load_list_text(const char *text, size_t len, struct listcfg_list *l,
    char *err, size_t errsz)
{
	struct listcfg_global g;
	int rc;

	write_file("lists/t.conf", text, len);
	ck_assert_int_eq(listcfg_load_global(tmpdir, &g, err, errsz), 0);
	rc = listcfg_load_list(&g, "t", l, err, errsz);
	listcfg_free_global(&g);
	return rc;
}

START_TEST(defaults_without_files)
{
	struct listcfg_global g;
	struct listcfg_list l;
	char err[512], want[PATH_MAX + 16], real[PATH_MAX];

	ck_assert_int_eq(listcfg_load_global(tmpdir, &g, err, sizeof(err)), 0);
	ck_assert_ptr_nonnull(realpath(tmpdir, real));
	ck_assert_str_eq(g.dir, real);
	snprintf(want, sizeof(want), "%s/tokens", real);
	ck_assert_str_eq(g.tokens_dir, want);
	ck_assert_ptr_null(g.conninfo);
	ck_assert_ptr_null(g.sync_conninfo);
	ck_assert_int_eq(g.log_facility, LOG_MAIL);
	ck_assert_int_eq(g.mta, LISTCFG_MTA_QMAIL);
	ck_assert_uint_eq(g.lock_wait_ms, 5000);
	ck_assert_uint_eq(g.timeout_s, 300);
	ck_assert_ptr_null(g.site_list);

	ck_assert_int_eq(listcfg_load_list(&g, "dev", &l, err, sizeof(err)),
	    0);
	ck_assert_str_eq(l.name, "dev");
	ck_assert_int_eq(l.has_file, 0);
	ck_assert_double_eq(l.ham_cutoff, LG_DEFAULT_HAM_CUTOFF);
	ck_assert_double_eq(l.spam_cutoff, LG_DEFAULT_SPAM_CUTOFF);
	ck_assert(l.discard_cutoff > 1);
	ck_assert_ptr_null(l.deliver);
	ck_assert_ptr_null(l.release);
	ck_assert_ptr_null(l.moderators);
	ck_assert_int_eq(l.on_error, ON_ERROR_DEFER);
	ck_assert_int_eq(l.oversize, OVERSIZE_HOLD);
	ck_assert_uint_eq(l.max_scan_bytes, LG_MAX_SCAN_BYTES);
	ck_assert_uint_eq(l.max_post_bytes, LG_DEFAULT_MAX_POST_BYTES);
	ck_assert_uint_eq(l.hold_expiry_days, 14);
	ck_assert_uint_eq(l.timeout_s, 300);
	/* the same as the core's defaults: tests/check_settings.c */
	ck_assert_double_eq(l.robs, LG_DEFAULT_ROBS);
	ck_assert_double_eq(l.robx, LG_DEFAULT_ROBX);
	ck_assert_double_eq(l.min_dev, LG_DEFAULT_MIN_DEV);
	ck_assert_uint_eq(l.max_tokens, LG_DEFAULT_MAX_TOKENS);
	ck_assert_double_eq(l.site_weight, LG_DEFAULT_SITE_WEIGHT);
	listcfg_free_list(&l);
	listcfg_free_global(&g);
}
END_TEST

START_TEST(every_global_key)
{
	static const char text[] =
	    "# global\n"
	    "\n"
	    "tokens_dir = var/tok   # relative to the config dir\n"
	    "database = host=/tmp dbname=lg user=x\n"
	    "sync_database = host=/tmp port=5433 dbname=lg user=x\n"
	    "log_facility = local3\n"
	    "mta = postfix\n"
	    "lock_wait_ms = 250\n"
	    "site_list = site\n"
	    "timeout = 60\r\n";
	struct listcfg_global g;
	char err[512], want[PATH_MAX + 16], real[PATH_MAX];

	write_file("listgate.conf", text, sizeof(text) - 1);
	ck_assert_int_eq(listcfg_load_global(tmpdir, &g, err, sizeof(err)), 0);
	ck_assert_ptr_nonnull(realpath(tmpdir, real));
	snprintf(want, sizeof(want), "%s/var/tok", real);
	ck_assert_str_eq(g.tokens_dir, want);
	ck_assert_str_eq(g.conninfo, "host=/tmp dbname=lg user=x");
	ck_assert_str_eq(g.sync_conninfo, "host=/tmp port=5433 dbname=lg user=x");
	ck_assert_int_eq(g.log_facility, LOG_LOCAL3);
	ck_assert_int_eq(g.mta, LISTCFG_MTA_POSTFIX);
	ck_assert_uint_eq(g.lock_wait_ms, 250);
	ck_assert_uint_eq(g.timeout_s, 60);
	ck_assert_str_eq(g.site_list, "site");
	listcfg_free_global(&g);

	write_file("listgate.conf", "tokens_dir = \"/var/lib/lg tok\"\n",
	    31);
	ck_assert_int_eq(listcfg_load_global(tmpdir, &g, err, sizeof(err)), 0);
	ck_assert_str_eq(g.tokens_dir, "/var/lib/lg tok");
	listcfg_free_global(&g);
}
END_TEST

START_TEST(every_list_key)
{
	static const char text[] =
	    "ham_cutoff = 0.3\n"
	    "spam_cutoff = 0.9    # comment\n"
	    "discard_cutoff = 0.999\n"
	    "deliver = /usr/sbin/sendmail -i -f {sender} -- dev@lists.example\n"
	    "release = /usr/bin/ezmlm-send \"/var/lists/my list\" a#b \"c #d\""
	    " #comment\n"
	    "moderators = alice@example.org , bob@example.net\n"
	    "on_error = pass\n"
	    "max_scan_bytes = 65536\n"
	    "max_post_bytes = 100000\n"
	    "oversize = defer\n"
	    "hold_expiry_days = 30\n"
	    "timeout = 120\n"
	    "robs = 0.1\n"
	    "robx = 0.6\n"
	    "min_dev = 0.2\n"
	    "max_tokens = 200\n"
	    "site_weight = 10\n";
	struct listcfg_list l;
	char err[512];

	ck_assert_int_eq(load_list_text(text, sizeof(text) - 1, &l, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(l.has_file, 1);
	ck_assert_double_eq(l.ham_cutoff, 0.3);
	ck_assert_double_eq(l.spam_cutoff, 0.9);
	ck_assert_double_eq(l.discard_cutoff, 0.999);
	ck_assert_str_eq(l.deliver[0], "/usr/sbin/sendmail");
	ck_assert_str_eq(l.deliver[3], "{sender}");
	ck_assert_str_eq(l.deliver[5], "dev@lists.example");
	ck_assert_ptr_null(l.deliver[6]);
	ck_assert_str_eq(l.release[0], "/usr/bin/ezmlm-send");
	ck_assert_str_eq(l.release[1], "/var/lists/my list");
	ck_assert_str_eq(l.release[2], "a#b");
	ck_assert_str_eq(l.release[3], "c #d");
	ck_assert_ptr_null(l.release[4]);
	ck_assert_str_eq(l.moderators[0], "alice@example.org");
	ck_assert_str_eq(l.moderators[1], "bob@example.net");
	ck_assert_ptr_null(l.moderators[2]);
	ck_assert_int_eq(l.on_error, ON_ERROR_PASS);
	ck_assert_uint_eq(l.max_scan_bytes, 65536);
	ck_assert_uint_eq(l.max_post_bytes, 100000);
	ck_assert_int_eq(l.oversize, OVERSIZE_DEFER);
	ck_assert_uint_eq(l.hold_expiry_days, 30);
	ck_assert_uint_eq(l.timeout_s, 120);
	ck_assert_double_eq(l.robs, 0.1);
	ck_assert_double_eq(l.robx, 0.6);
	ck_assert_double_eq(l.min_dev, 0.2);
	ck_assert_uint_eq(l.max_tokens, 200);
	ck_assert_double_eq(l.site_weight, 10);
	listcfg_free_list(&l);

	ck_assert_int_eq(load_list_text("site_weight = 0\n", 16, &l, err,
	    sizeof(err)), 0);
	ck_assert_double_eq(l.site_weight, 0);
	listcfg_free_list(&l);

	ck_assert_int_eq(load_list_text("discard_cutoff = off\n", 21, &l, err,
	    sizeof(err)), 0);
	ck_assert(l.discard_cutoff > 1);
	listcfg_free_list(&l);
}
END_TEST

/* one bad lists/t.conf and the message it must give */
static const struct {
	const char *text;
	const char *want;	/* after "PATH/lists/" */
} list_errors[] = {
	{ "ham_cutoff = 0.1\nfoo = 1\n", "t.conf:2: unknown key `foo'" },
	{ "member_check = ezmlm-issub {sender}\n",
	  "t.conf:1: member_check: unsafe template: the program `ezmlm-issub' "
	  "must be an absolute path" },
	{ "member_check = /usr/bin/x {sendr}\n",
	  "t.conf:1: member_check: unknown placeholder `{sendr}'" },
	{ "member_check = /usr/bin/x -- {recipient}\n",
	  "t.conf:1: member_check: unknown placeholder `{recipient}'" },
	/* an LMTP destination is for deliver and release only */
	{ "member_check = lmtp:127.0.0.1:24 {sender}\n",
	  "t.conf:1: member_check: unsafe template: the program "
	  "`lmtp:127.0.0.1:24' must be an absolute path" },
	{ "deliver = /usr/bin/x {sender}\n",
	  "t.conf:1: deliver: unsafe template: {sender} begins argument 1" },
	{ "member_check_ms = 0\n", "t.conf:1: member_check_ms: 0 is out of "
	  "range [1, 5000]" },
	{ "member_cache_s = -1\n", "t.conf:1: member_cache_s: `-1' is not a "
	  "whole number" },
	{ "ham_cutoff = 0.1\n\nham_cutoff = 0.2\n",
	  "t.conf:3: duplicate key `ham_cutoff' (first set on line 1)" },
	{ "spam_cutoff = abc\n", "t.conf:1: spam_cutoff: `abc' is not a number" },
	{ "spam_cutoff = 0.9x\n", "t.conf:1: spam_cutoff: `0.9x' is not a number" },
	{ "ham_cutoff = 1.5\n", "t.conf:1: ham_cutoff: 1.5 is out of range" },
	{ "ham_cutoff = -0.1\n", "t.conf:1: ham_cutoff: -0.1 is out of range" },
	{ "robx = nan\n", "t.conf:1: robx: `nan' is not a number" },
	{ "robs = inf\n", "t.conf:1: robs: `inf' is not a number" },
	{ "ham_cutoff = 0x1p-1\n", "t.conf:1: ham_cutoff: `0x1p-1' is not a number" },
	{ "robs = 0\n", "t.conf:1: robs: must be above 0 (got 0)" },
	{ "robs = -1\n", "t.conf:1: robs: -1 is out of range [0, 1000]" },
	{ "robx = 0\n", "t.conf:1: robx: must be strictly between 0 and 1 "
	  "(got 0)" },
	{ "robx = 1\n", "t.conf:1: robx: must be strictly between 0 and 1" },
	{ "min_dev = 0.5\n", "t.conf:1: min_dev: must be below 0.5" },
	{ "spam_cutoff = 0.3\n# c\nham_cutoff = 0.4\n",
	  "t.conf:3: ham_cutoff 0.4 is above spam_cutoff 0.3" },
	{ "ham_cutoff = 0.4\n# c\nspam_cutoff = 0.3\n",
	  "t.conf:3: ham_cutoff 0.4 is above spam_cutoff 0.3" },
	{ "\nham_cutoff = 0.99995\n",
	  "t.conf:2: ham_cutoff 0.99995 is above spam_cutoff 0.9999" },
	{ "discard_cutoff = 0.5\n",
	  "t.conf:1: discard_cutoff 0.5 is below spam_cutoff 0.9999" },
	/* each value as written, not rounded to 6 digits ("ham_cutoff 1
	 * is above spam_cutoff 1") */
	{ "ham_cutoff = 0.9999997\nspam_cutoff = 0.9999996\n",
	  "t.conf:2: ham_cutoff 0.9999997 is above spam_cutoff 0.9999996" },
	{ "spam_cutoff = 0.9999997958\ndiscard_cutoff = 0.9999997957\n",
	  "t.conf:2: discard_cutoff 0.9999997957 is below spam_cutoff "
	  "0.9999997958" },
	{ "discard_cutoff = maybe\n",
	  "t.conf:1: discard_cutoff: `maybe' is not a number" },
	{ "site_weight = 1001\n",
	  "t.conf:1: site_weight: 1001 is out of range [0, 1000]" },
	{ "site_weight = auto\n",
	  "t.conf:1: site_weight: `auto' is not a number" },
	/* a byte order mark: invisible, and "expected `key = value'" on a
	 * line that reads as one */
	{ "\xef\xbb\xbfham_cutoff = 0.3\r\nspam_cutoff = 0.99\r\n",
	  "t.conf:1: the file starts with a byte order mark (bytes EF BB BF, "
	  "which an editor's \"UTF-8 with BOM\" writes): save it without one" },
	{ "\xef\xbb\xbf# dev\n", "t.conf:1: the file starts with a byte order "
	  "mark" },
	{ "ham_cutoff 0.4\n", "t.conf:1: expected `key = value'" },
	{ "= 0.4\n", "t.conf:1: expected `key = value'" },
	{ "Ham_cutoff = 0.4\n", "t.conf:1: expected `key = value'" },
	{ "deliver =\n", "t.conf:1: deliver: empty value" },
	{ "moderators = # none\n", "t.conf:1: moderators: empty value" },
	{ "moderators = \"\"\n", "t.conf:1: moderators: empty value" },
	/* CR line ends: one line, a comment whose settings nobody reads */
	{ "# dev\rspam_cutoff = 0.5\rrelease = /usr/bin/x\r",
	  "t.conf:1: carriage return inside the line" },
	{ "ham_cutoff = 0.2\r\nrelease = /usr/bin/x a\rb\r\n",
	  "t.conf:2: carriage return inside the line" },
	{ "ham_cutoff = \"\" # none\n", "t.conf:1: ham_cutoff: empty value" },
	{ "\n\ndeliver = /bin/cat {foo}\n",
	  "t.conf:3: deliver: unknown placeholder `{foo}'" },
	{ "deliver = /bin/cat {sender\n",
	  "t.conf:1: deliver: unknown placeholder" },
	{ "release = cat {sender}\n",
	  "t.conf:1: release: unsafe template: the program `cat' must be an "
	  "absolute path" },
	{ "deliver = /bin/{list}\n",
	  "t.conf:1: deliver: unsafe template: a placeholder in the program" },
	{ "deliver = {sender}\n",
	  "t.conf:1: deliver: unsafe template: a placeholder in the program" },
	{ "deliver = \"\" x\n", "t.conf:1: deliver: unsafe template: empty" },
	/* an envelope value must not begin an unprotected argument */
	{ "deliver = /usr/bin/x {sender}\n",
	  "t.conf:1: deliver: unsafe template: {sender} begins argument 1, "
	  "where a value starting with '-' would be read as an option" },
	{ "release = /usr/bin/x a {recipient}\n",
	  "t.conf:1: release: unsafe template: {recipient} begins argument 2" },
	{ "release = /usr/bin/x {recipient}@example.org\n",
	  "t.conf:1: release: unsafe template: {recipient} begins argument 1" },
	{ "deliver = /usr/bin/x -f{sender} {recipient}\n",
	  "t.conf:1: deliver: unsafe template: {recipient} begins argument 2" },
	{ "deliver = /usr/bin/x --from=a {sender}\n",
	  "t.conf:1: deliver: unsafe template: {sender} begins argument 2" },
	{ "deliver = /usr/bin/x - {sender}\n",
	  "t.conf:1: deliver: unsafe template: {sender} begins argument 2" },
	{ "deliver = /usr/bin/x {sender} -- {recipient}\n",
	  "t.conf:1: deliver: unsafe template: {sender} begins argument 1" },
	{ "deliver = /bin/cat \"abc\n", "t.conf:1: deliver: unterminated quote" },
	{ "deliver = /bin/cat \"a\\nb\"\n", "t.conf:1: deliver: bad escape" },
	{ "database = x\n", "t.conf:1: unknown key `database'" },
	{ "on_error = maybe\n",
	  "t.conf:1: on_error: `maybe' is neither defer nor pass" },
	{ "oversize = pass\n",
	  "t.conf:1: oversize: `pass' is neither hold nor defer" },
	{ "max_tokens = -1\n", "t.conf:1: max_tokens: `-1' is not a whole number" },
	{ "max_tokens = 20001\n", "t.conf:1: max_tokens: 20001 is out of range" },
	{ "hold_expiry_days = 0\n",
	  "t.conf:1: hold_expiry_days: 0 is out of range" },
	{ "max_scan_bytes = 99999999999999999999999\n",
	  "t.conf:1: max_scan_bytes: 99999999999999999999999 is out of range" },
	{ "max_post_bytes = 1023\n",
	  "t.conf:1: max_post_bytes: 1023 is out of range" },
	{ "timeout = 10s\n", "t.conf:1: timeout: `10s' is not a whole number" },
	{ "timeout = \"10\" x\n", "t.conf:1: timeout: text after the quoted" },
	{ "moderators = a@b.example, nope\n",
	  "t.conf:1: moderators: `nope' is not an address" },
	{ "moderators = a@b.example,,c@d\n",
	  "t.conf:1: moderators: `' is not an address" },
	/* LMTP destinations */
	{ "deliver = lmtp:127.0.0.1 dev@lists.example.org\n",
	  "t.conf:1: deliver: bad LMTP destination `lmtp:127.0.0.1': want "
	  "lmtp:HOST:PORT" },
	{ "deliver = lmtp:127.0.0.1:0 dev@lists.example.org\n",
	  "t.conf:1: deliver: bad LMTP destination `lmtp:127.0.0.1:0': the "
	  "port must be a number from 1 to 65535" },
	{ "deliver = lmtp:127.0.0.1:65536 dev@lists.example.org\n",
	  "the port must be a number from 1 to 65535" },
	{ "deliver = lmtp:127.0.0.1:24x dev@lists.example.org\n",
	  "the port must be a number" },
	{ "deliver = lmtp:127.0.0.1: dev@lists.example.org\n",
	  "the port must be a number" },
	{ "deliver = lmtp:mail_host:24 dev@lists.example.org\n",
	  "bad LMTP destination `lmtp:mail_host:24'" },
	{ "deliver = lmtp::24 dev@lists.example.org\n",
	  "bad LMTP destination `lmtp::24'" },
	{ "deliver = lmtp:[::1:24 dev@lists.example.org\n",
	  "want lmtp:[IPv6-ADDRESS]:PORT" },
	{ "deliver = lmtp:[x::1]:24 dev@lists.example.org\n",
	  "want lmtp:[IPv6-ADDRESS]:PORT" },
	{ "deliver = lmtp:unix:run/lmtp dev@lists.example.org\n",
	  "t.conf:1: deliver: bad LMTP destination `lmtp:unix:run/lmtp': "
	  "the socket path after lmtp:unix: must be absolute" },
	{ "release = \"lmtp:unix:/run/a b\" dev@lists.example.org\n",
	  "t.conf:1: release: LMTP socket path with a blank" },
	{ "deliver = lmtp:127.0.0.1:8024\n",
	  "t.conf:1: deliver: an LMTP destination needs the recipient address "
	  "after it" },
	{ "deliver = lmtp:127.0.0.1:8024 # dev@lists.example.org\n",
	  "an LMTP destination needs the recipient address" },
	{ "deliver = lmtp:127.0.0.1:8024 a@example.org b@example.org\n",
	  "t.conf:1: deliver: an LMTP destination takes exactly one "
	  "recipient" },
	{ "deliver = lmtp:127.0.0.1:8024 dev\n",
	  "t.conf:1: deliver: LMTP recipient `dev' is not an address" },
	{ "deliver = lmtp:127.0.0.1:8024 \"a b@example.org\"\n",
	  "LMTP recipient `a b@example.org' is not an address" },
	{ "deliver = lmtp:127.0.0.1:8024 <dev@lists.example.org>\n",
	  "is not an address" },
	{ "deliver = lmtp:{list}:8024 dev@lists.example.org\n",
	  "a placeholder in the program" },
	{ "deliver = lmtp:127.0.0.1:8024 {moderator}@x.example\n",
	  "unknown placeholder `{moderator}'" },
	{ "notify = lmtp:127.0.0.1:8024 mod@example.org\n",
	  "t.conf:1: notify: unsafe template: the program "
	  "`lmtp:127.0.0.1:8024' must be an absolute path" },
};

START_TEST(list_error_names_file_and_line)
{
	struct listcfg_list l;
	char err[1024];
	const char *t = list_errors[_i].text;

	err[0] = '\0';
	ck_assert_int_eq(load_list_text(t, strlen(t), &l, err, sizeof(err)),
	    -1);
	ck_assert_msg(strstr(err, "/lists/") != NULL &&
	    strstr(err, list_errors[_i].want) != NULL,
	    "case %d: got `%s', want `%s'", _i, err, list_errors[_i].want);
	ck_assert_ptr_null(l.deliver);
	ck_assert_ptr_null(l.moderators);
}
END_TEST

START_TEST(overlong_line_nul_byte_too_many_words)
{
	struct listcfg_list l;
	struct buf b = BUF_INIT(1u << 20);
	char err[1024];
	int i;

	buf_adds(&b, "# x\nrobs = 0.1 # ");
	for (i = 0; i < LG_MAX_CONF_LINE; i++)
		buf_addc(&b, 'a');
	buf_adds(&b, "\n");
	ck_assert_int_eq(load_list_text((char *)b.data, b.len, &l, err,
	    sizeof(err)), -1);
	ck_assert_msg(strstr(err, "t.conf:2: line too long") != NULL, "%s",
	    err);

	ck_assert_int_eq(load_list_text("ham_cutoff = 0.1\nspam\0_cutoff = 0.9\n",
	    36, &l, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "t.conf:2: NUL byte") != NULL, "%s", err);

	buf_reset(&b);
	buf_adds(&b, "\n\n\n\ndeliver = /bin/echo");
	for (i = 0; i < LG_MAX_ARGV; i++)
		buf_adds(&b, " w");
	ck_assert_int_eq(load_list_text((char *)b.data, b.len, &l, err,
	    sizeof(err)), -1);
	ck_assert_msg(strstr(err, "t.conf:5: deliver: too many words") !=
	    NULL, "%s", err);

	/* exactly LG_MAX_ARGV words is fine */
	buf_reset(&b);
	buf_adds(&b, "deliver = /bin/echo");
	for (i = 1; i < LG_MAX_ARGV; i++)
		buf_adds(&b, " w");
	ck_assert_int_eq(load_list_text((char *)b.data, b.len, &l, err,
	    sizeof(err)), 0);
	ck_assert_ptr_nonnull(l.deliver[LG_MAX_ARGV - 1]);
	ck_assert_ptr_null(l.deliver[LG_MAX_ARGV]);
	listcfg_free_list(&l);
	buf_free(&b);
}
END_TEST

START_TEST(global_errors)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
		{ "mta = exim\n",
		  "listgate.conf:1: mta: `exim' is neither qmail nor postfix" },
		{ "\nlog_facility = kern\n",
		  "listgate.conf:2: log_facility: unknown facility `kern'" },
		{ "log_facility = kern\n", "`kern' (mail, user, daemon, "
		  "local0, local1, local2, local3, local4, local5, local6, "
		  "local7)" },
		{ "lock_wait_ms = 9999999\n",
		  "listgate.conf:1: lock_wait_ms: 9999999 is out of range" },
		{ "timeout = 0\n", "listgate.conf:1: timeout: 0 is out of range" },
		{ "trusted_relays = 192.0.2.0/24, mx.example.org 10.0.0.0/40\n",
		  "listgate.conf:1: trusted_relays: `10.0.0.0/40' is neither an "
		  "address, a network (ADDR/BITS) nor a host name" },
		{ "trusted_relays = a;b\n", "listgate.conf:1: trusted_relays: "
		  "`a;b' is neither" },
		{ "dnsbl_zones = a.test b.test c.test d.test e.test f.test "
		  "g.test h.test i.test\n", "listgate.conf:1: dnsbl_zones: want "
		  "at most 8 zones" },
		{ "dnsbl_zones = 127.0.0.1\n", "listgate.conf:1: dnsbl_zones: "
		  "want at most 8 zones (DNS names)" },
		{ "dns_server = localhost:53\n", "listgate.conf:1: dns_server: "
		  "`localhost:53' is not ADDR:PORT" },
		{ "dns_timeout_ms = 6000\n", "listgate.conf:1: dns_timeout_ms: "
		  "6000 is out of range [1, 5000]" },
		{ "ham_cutoff = 0.4\n", "listgate.conf:1: unknown key `ham_cutoff'" },
		{ "mta = qmail\nmta = postfix\n",
		  "listgate.conf:2: duplicate key `mta'" },
		{ "site_list = ../etc\n", "listgate.conf:1: site_list: "
		  "`../etc' is not a list name" },
		/* "" is an empty value too: not the configuration
		 * directory as tokens_dir or secret_file, not libpq's
		 * defaults as the database */
		{ "tokens_dir = \"\"\n", "listgate.conf:1: tokens_dir: empty "
		  "value" },
		{ "# d\ndatabase = \"\"  # none\n", "listgate.conf:2: database: "
		  "empty value" },
		{ "sync_database = \"\"\n", "listgate.conf:1: sync_database: "
		  "empty value" },
		{ "secret_file = \"\"\n", "listgate.conf:1: secret_file: empty "
		  "value" },
		{ "holder_socket = \"\"\n", "listgate.conf:1: holder_socket: "
		  "empty value" },
		{ "web_allowed_hosts = \"\"\n", "listgate.conf:1: "
		  "web_allowed_hosts: empty value" },
		{ "trusted_relays = \"\"\n", "listgate.conf:1: trusted_relays: "
		  "empty value" },
	};
	struct listcfg_global g;
	char err[1024], p[PATH_MAX + 32];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		write_file("listgate.conf", cases[i].text,
		    strlen(cases[i].text));
		ck_assert_int_eq(listcfg_load_global(tmpdir, &g, err,
		    sizeof(err)), -1);
		ck_assert_msg(strstr(err, cases[i].want) != NULL,
		    "got `%s', want `%s'", err, cases[i].want);
		ck_assert_ptr_null(g.dir);
	}
	/* missing directory, a file instead of one, a directory for a file */
	snprintf(p, sizeof(p), "%s/nonexistent", tmpdir);
	ck_assert_int_eq(listcfg_load_global(p, &g, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "configuration directory"));
	snprintf(p, sizeof(p), "%s/listgate.conf", tmpdir);
	ck_assert_int_eq(listcfg_load_global(p, &g, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "not a directory"));
	ck_assert_int_eq(unlink(p), 0);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	ck_assert_int_eq(listcfg_load_global(tmpdir, &g, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "listgate.conf: not a regular file"));
	ck_assert_int_eq(rmdir(p), 0);
	/* a FIFO: refused at once, not waited on for a writer */
	ck_assert_int_eq(mkfifo(p, 0600), 0);
	ck_assert_int_eq(listcfg_load_global(tmpdir, &g, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "listgate.conf: not a regular file"));
	ck_assert_int_eq(unlink(p), 0);
}
END_TEST

/* what root reads before it opens anything else: user, group, mta; the
 * rest of the file is not looked at (its format is) */
START_TEST(owner_keys)
{
	static const char text[] =
	    "no_such_key = 1\n"
	    "timeout = forever\n"
	    "user = listgate\n"
	    "group = lists\n"
	    "mta = postfix\n";
	struct listcfg_global g;
	char err[1024], *user, *group;
	int mta;

	write_file("listgate.conf", text, sizeof(text) - 1);
	ck_assert_msg(listcfg_load_owner(tmpdir, &user, &group, &mta, err,
	    sizeof(err)) == 0, "%s", err);
	ck_assert_str_eq(user, "listgate");
	ck_assert_str_eq(group, "lists");
	ck_assert_int_eq(mta, LISTCFG_MTA_POSTFIX);
	xfree(user);
	xfree(group);
	/* the full load still finds the errors */
	ck_assert_int_eq(listcfg_load_global(tmpdir, &g, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "listgate.conf:1: unknown key"));

	/* a file without mta: its default, what filter and moderate would
	 * take had they not been refused */
	write_file("listgate.conf", "tokens_dir = t\n", 15);
	ck_assert_int_eq(listcfg_load_owner(tmpdir, &user, &group, &mta, err,
	    sizeof(err)), 0);
	ck_assert_ptr_null(user);
	ck_assert_ptr_null(group);
	ck_assert_int_eq(mta, LISTCFG_MTA_QMAIL);
	/* no file at all: not set (-1) */
	{
		char fp[4096 + 16];

		ck_assert_int_lt(snprintf(fp, sizeof(fp), "%s/listgate.conf",
		    tmpdir), (int)sizeof(fp));
		ck_assert_int_eq(unlink(fp), 0);
		mta = 7;
		ck_assert_int_eq(listcfg_load_owner(tmpdir, &user, &group,
		    &mta, err, sizeof(err)), 0);
		ck_assert_ptr_null(user);
		ck_assert_int_eq(mta, -1);
	}

	write_file("listgate.conf", "user = a b\n", 11);
	ck_assert_int_eq(listcfg_load_owner(tmpdir, &user, &group, &mta, err,
	    sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "listgate.conf:1: user: `a b' is "
	    "not a user name"));
	write_file("listgate.conf", "\ngroup = -x\n", 12);
	ck_assert_int_eq(listcfg_load_global(tmpdir, &g, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "listgate.conf:2: group: `-x' is "
	    "not a group name"));
}
END_TEST

/* configuration another user could change is refused: by the full load,
 * by the owner keys' reader, for lists/ and its files */
/* a file that is a symbolic link to nothing (its target moved, a typo)
 * is an error naming the link and its target, not a list without a
 * file of its own: the list ran on the defaults (no moderators, no
 * release, the default cutoffs) and config check said "no file:
 * defaults"; listgate.conf too */
START_TEST(dangling_link_refused)
{
	struct listcfg_global g;
	struct listcfg_list l;
	char err[1024], p[PATH_MAX + 32];

	ck_assert_int_eq(listcfg_load_global(tmpdir, &g, err, sizeof(err)), 0);
	snprintf(p, sizeof(p), "%s/lists/t.conf", tmpdir);
	ck_assert_int_eq(symlink("../shared/t.conf", p), 0);
	ck_assert_int_eq(listcfg_load_list(&g, "t", &l, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "lists/t.conf: a symbolic link to "
	    "../shared/t.conf, which does not exist") != NULL, "%s", err);
	ck_assert_int_eq(listcfg_check_list_file(&g, "t", p, err,
	    sizeof(err)), -1);
	/* a list with no file at all still takes the defaults */
	ck_assert_int_eq(listcfg_load_list(&g, "u", &l, err, sizeof(err)), 0);
	listcfg_free_list(&l);
	listcfg_free_global(&g);
	snprintf(p, sizeof(p), "%s/listgate.conf", tmpdir);
	ck_assert_int_eq(symlink("/nonexistent/listgate.conf", p), 0);
	ck_assert_int_eq(listcfg_load_global(tmpdir, &g, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "listgate.conf: a symbolic link to "
	    "/nonexistent/listgate.conf, which does not exist") != NULL, "%s",
	    err);
}
END_TEST

START_TEST(untrusted_files_refused)
{
	struct listcfg_global g;
	struct listcfg_list l;
	char err[1024], p[PATH_MAX + 32], *user, *group;
	int mta;

	write_file("listgate.conf", "user = x\n", 9);
	snprintf(p, sizeof(p), "%s/listgate.conf", tmpdir);
	ck_assert_int_eq(chmod(p, 0620), 0);
	ck_assert_int_eq(listcfg_load_global(tmpdir, &g, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "listgate.conf: writable by its group "
	    "(mode 0620)") != NULL, "%s", err);
	ck_assert_int_eq(listcfg_load_owner(tmpdir, &user, &group, &mta, err,
	    sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "writable by its group"));
	ck_assert_int_eq(chmod(p, 0602), 0);
	ck_assert_int_eq(listcfg_load_global(tmpdir, &g, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "writable by everyone"));
	ck_assert_int_eq(chmod(p, 0600), 0);
	ck_assert_int_eq(listcfg_load_global(tmpdir, &g, err, sizeof(err)), 0);

	write_file("lists/t.conf", "robs = 1\n", 9);
	snprintf(p, sizeof(p), "%s/lists/t.conf", tmpdir);
	ck_assert_int_eq(chmod(p, 0666), 0);
	ck_assert_int_eq(listcfg_load_list(&g, "t", &l, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "lists/t.conf: writable by everyone"));
	ck_assert_int_eq(chmod(p, 0644), 0);
	snprintf(p, sizeof(p), "%s/lists", tmpdir);
	ck_assert_int_eq(chmod(p, 0770), 0);
	ck_assert_int_eq(listcfg_load_list(&g, "t", &l, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "lists: writable by its group"));
	ck_assert_int_eq(chmod(p, 0700), 0);
	ck_assert_int_eq(listcfg_load_list(&g, "t", &l, err, sizeof(err)), 0);
	listcfg_free_list(&l);
	listcfg_free_global(&g);
	ck_assert_int_eq(chmod(tmpdir, 0777), 0);
	ck_assert_int_eq(listcfg_load_global(tmpdir, &g, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "writable by everyone (mode 0777)"));
	ck_assert_int_eq(chmod(tmpdir, 0700), 0);
}
END_TEST

START_TEST(bad_list_name_builds_no_path)
{
	struct listcfg_global g;
	struct listcfg_list l;
	char err[512], out[PATH_MAX];

	ck_assert_int_eq(listcfg_load_global(tmpdir, &g, err, sizeof(err)), 0);
	ck_assert_int_eq(listcfg_load_list(&g, "../x", &l, err, sizeof(err)),
	    -1);
	ck_assert_ptr_nonnull(strstr(err, "bad list name"));
	ck_assert_int_eq(listcfg_tokens_path(&g, "../x", out, sizeof(out)), -1);
	ck_assert_int_eq(listcfg_tokens_path(&g, "dev", out, sizeof(out)), 0);
	ck_assert_ptr_nonnull(strstr(out, "/tokens/dev.kch"));
	ck_assert_int_eq(listcfg_tokens_path(&g, "dev", out, 8), -1);
	listcfg_free_global(&g);
}
END_TEST

static const struct {
	const char *name;
	int ok;
} names[] = {
	{ "dev", 1 }, { "a", 1 }, { "0", 1 }, { "list-2.users_x", 1 },
	{ "a.b", 1 }, { "a-", 1 },
	{ "", 0 }, { "A", 0 }, { "Dev", 0 }, { "../x", 0 }, { "a/b", 0 },
	{ ".x", 0 }, { "-x", 0 }, { "_x", 0 }, { "a..b", 0 }, { "a b", 0 },
	{ "a\n", 0 }, { "caf\xc3\xa9", 0 }, { "a\\b", 0 }, { "..", 0 },
};

START_TEST(name_table)
{
	ck_assert_msg(listcfg_name_ok(names[_i].name) == names[_i].ok,
	    "name `%s': want %d", names[_i].name, names[_i].ok);
}
END_TEST

START_TEST(name_length)
{
	char n[LG_MAX_LIST_NAME + 2];

	memset(n, 'a', sizeof(n));
	n[LG_MAX_LIST_NAME] = '\0';
	ck_assert_int_eq(listcfg_name_ok(n), 1);	/* 64 bytes */
	n[LG_MAX_LIST_NAME] = 'a';
	n[LG_MAX_LIST_NAME + 1] = '\0';
	ck_assert_int_eq(listcfg_name_ok(n), 0);	/* 65 bytes */
	ck_assert_int_eq(listcfg_name_ok(NULL), 0);
}
END_TEST

START_TEST(expand_keeps_values_in_one_argument)
{
	static const char text[] =
	    "deliver = /usr/sbin/sendmail -f {sender} -- x{recipient}y "
	    "\"{list} {{sender}\"\n";
	static const char evil[] = "a b\"c';rm -rf / $(id) `id` {recipient}\n";
	struct listcfg_list l;
	struct tmpl_vars v = { .sender = evil, .recipient = "r@example.org",
	    .list = "dev" };
	char err[512];
	char **argv;

	ck_assert_int_eq(load_list_text(text, sizeof(text) - 1, &l, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(tmpl_expand(l.deliver, &v, &argv), 0);
	ck_assert_str_eq(argv[0], "/usr/sbin/sendmail");
	ck_assert_str_eq(argv[1], "-f");
	ck_assert_str_eq(argv[2], evil);	/* one argument, unchanged */
	ck_assert_str_eq(argv[3], "--");
	ck_assert_str_eq(argv[4], "xr@example.orgy");
	ck_assert_str_eq(argv[5], "dev {sender}");
	ck_assert_ptr_null(argv[6]);
	tmpl_free(argv);

	/* NULL and empty values give an empty argument, not a missing one */
	v.sender = NULL;
	ck_assert_int_eq(tmpl_expand(l.deliver, &v, &argv), 0);
	ck_assert_str_eq(argv[2], "");
	ck_assert_str_eq(argv[3], "--");
	tmpl_free(argv);
	listcfg_free_list(&l);
}
END_TEST

START_TEST(expand_refuses_unknown_and_huge)
{
	char *tmpl[] = { "/bin/echo", "{nope}", NULL };
	char *tmpl2[] = { "/bin/echo", "{sender}{sender}", NULL };
	struct tmpl_vars v = { .list = "dev" };
	char **argv;
	char *big;

	ck_assert_int_eq(tmpl_expand(tmpl, &v, &argv), -1);
	ck_assert_ptr_null(argv);
	big = malloc(LG_MAX_ARG_BYTES / 2 + 2);
	ck_assert_ptr_nonnull(big);
	memset(big, 'x', LG_MAX_ARG_BYTES / 2 + 1);
	big[LG_MAX_ARG_BYTES / 2 + 1] = '\0';
	v.sender = big;
	ck_assert_int_eq(tmpl_expand(tmpl2, &v, &argv), -1);
	big[LG_MAX_ARG_BYTES / 2 - 1] = '\0';
	ck_assert_int_eq(tmpl_expand(tmpl2, &v, &argv), 0);
	ck_assert_uint_eq(strlen(argv[1]), LG_MAX_ARG_BYTES - 2);
	tmpl_free(argv);
	free(big);
}
END_TEST

/* where an envelope value may begin an argument: after `--' or an
 * option word; {list} anywhere (a checked name never starts with '-') */
static const char *const protected_ok[] = {
	"deliver = /usr/sbin/sendmail -i -f {sender} -- {recipient}\n",
	"deliver = /usr/bin/x -- a {recipient} {sender}\n",
	"deliver = /usr/bin/x -f {sender}{recipient}\n",
	"deliver = /usr/bin/x {list}\n",
	"deliver = /usr/bin/x {list}{sender}\n",
	"deliver = /usr/bin/x x{sender} a{recipient}b\n",
	"deliver = /usr/bin/x --from={sender} \"{{sender}\"\n",
	"deliver = /usr/bin/x --sender {sender} --rcpt {recipient}\n",
};

START_TEST(protected_placeholders_load)
{
	struct listcfg_list l;
	char err[1024];
	const char *t = protected_ok[_i];

	err[0] = '\0';
	ck_assert_msg(load_list_text(t, strlen(t), &l, err, sizeof(err)) == 0,
	    "case %d: %s", _i, err);
	listcfg_free_list(&l);
}
END_TEST

/* defence in depth: tmpl_expand refuses what tmpl_parse would have
 * refused, when the value really starts with '-' */
START_TEST(expand_refuses_option_like_values)
{
	char *bare[] = { "/bin/x", "{sender}", NULL };
	char *two[] = { "/bin/x", "{sender}{recipient}", NULL };
	char *list[] = { "/bin/x", "{list}", NULL };
	char *opt[] = { "/bin/x", "-f", "{sender}", NULL };
	char *dd[] = { "/bin/x", "--", "a", "{recipient}", NULL };
	char *inner[] = { "/bin/x", "a{sender}", NULL };
	struct tmpl_vars v = { .sender = "-oQ/tmp/x", .recipient = "-r",
	    .list = "-dev" };
	char **argv = (char **)1;

	ck_assert_int_eq(tmpl_expand(bare, &v, &argv), TMPL_EUNSAFE);
	ck_assert_ptr_null(argv);
	ck_assert_int_eq(tmpl_expand(list, &v, &argv), TMPL_EUNSAFE);
	v.sender = "";
	ck_assert_int_eq(tmpl_expand(two, &v, &argv), TMPL_EUNSAFE);
	v.sender = "-oQ/tmp/x";
	ck_assert_int_eq(tmpl_expand(opt, &v, &argv), 0);
	ck_assert_str_eq(argv[2], "-oQ/tmp/x");
	tmpl_free(argv);
	ck_assert_int_eq(tmpl_expand(dd, &v, &argv), 0);
	ck_assert_str_eq(argv[3], "-r");
	tmpl_free(argv);
	ck_assert_int_eq(tmpl_expand(inner, &v, &argv), 0);
	ck_assert_str_eq(argv[1], "a-oQ/tmp/x");
	tmpl_free(argv);
	/* a harmless value in the same place is fine */
	v.sender = "a@example.org";
	ck_assert_int_eq(tmpl_expand(bare, &v, &argv), 0);
	ck_assert_str_eq(argv[1], "a@example.org");
	tmpl_free(argv);
}
END_TEST

/* LMTP destinations: an address, a name, IPv6, a Unix socket; the
 * recipient may come from the envelope without `--' (no program reads
 * it), and expands unchanged */
START_TEST(lmtp_templates)
{
	static const char text[] =
	    "deliver = lmtp:127.0.0.1:8024 dev@lists.example.org\n"
	    "release = lmtp:[::1]:24 {recipient}\n";
	static const char text2[] =
	    "deliver = lmtp:localhost:8024 {list}@lists.example.org\n"
	    "release = lmtp:unix:/var/lib/mailman3/lmtp.sock "
	    "dev+x@[192.0.2.1]\n";
	struct tmpl_vars v = { .sender = "-s@x", .recipient = "-r@x",
	    .list = "dev" };
	struct listcfg_list l;
	struct tmpl_lmtp d;
	char err[512], **argv;

	ck_assert_msg(load_list_text(text, sizeof(text) - 1, &l, err,
	    sizeof(err)) == 0, "%s", err);
	ck_assert_str_eq(l.deliver[0], "lmtp:127.0.0.1:8024");
	ck_assert_str_eq(l.deliver[1], "dev@lists.example.org");
	ck_assert_ptr_null(l.deliver[2]);
	ck_assert_int_eq(tmpl_lmtp_parse(l.deliver[0], &d, err, sizeof(err)),
	    0);
	ck_assert_int_eq(d.unix_socket, 0);
	ck_assert_str_eq(d.host, "127.0.0.1");
	ck_assert_str_eq(d.port, "8024");
	ck_assert_int_eq(tmpl_lmtp_parse(l.release[0], &d, err, sizeof(err)),
	    0);
	ck_assert_str_eq(d.host, "::1");
	ck_assert_str_eq(d.port, "24");
	/* a recipient starting with '-' is just an address here */
	ck_assert_int_eq(tmpl_expand(l.release, &v, &argv), 0);
	ck_assert_str_eq(argv[1], "-r@x");
	tmpl_free(argv);
	listcfg_free_list(&l);

	ck_assert_msg(load_list_text(text2, sizeof(text2) - 1, &l, err,
	    sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(tmpl_expand(l.deliver, &v, &argv), 0);
	ck_assert_str_eq(argv[0], "lmtp:localhost:8024");
	ck_assert_str_eq(argv[1], "dev@lists.example.org");
	tmpl_free(argv);
	ck_assert_int_eq(tmpl_lmtp_parse(l.release[0], &d, err, sizeof(err)),
	    0);
	ck_assert_int_eq(d.unix_socket, 1);
	ck_assert_str_eq(d.path, "/var/lib/mailman3/lmtp.sock");
	listcfg_free_list(&l);

	ck_assert_int_eq(tmpl_is_lmtp("lmtp:x"), 1);
	ck_assert_int_eq(tmpl_is_lmtp("/usr/bin/lmtp:x"), 0);
	ck_assert_int_eq(tmpl_is_lmtp(NULL), 0);
	ck_assert_int_eq(tmpl_addr_ok("a@b.example"), 1);
	ck_assert_int_eq(tmpl_addr_ok("a.@b.example"), 0);
	ck_assert_int_eq(tmpl_addr_ok("a@b.example."), 0);
	ck_assert_int_eq(tmpl_addr_ok("a@-b.example"), 0);
}
END_TEST

/* the moderation keys: addresses by commas or blanks, one moderation
 * address, the delimiter's character, notify's own placeholders */
START_TEST(moderation_keys)
{
	static const char text[] =
	    "moderators = a@b.example c@d.example,e@f.example ,  g@h.example\n"
	    "moderation_address = dev-moderate@lists.example.org\n"
	    "recipient_delimiter = -\n"
	    "notify = /usr/sbin/sendmail -i -f dev-owner@x.example -- "
	    "{moderator} {list} {sender} {id}\n"
	    "cookie_days = 3\n"
	    "notify_max_per_hour = 0\n"
	    "sender_notice = yes\n";
	struct tmpl_vars v = { .sender = "s@x", .list = "t",
	    .moderator = "m@x", .id = "42" };
	struct listcfg_list l;
	char err[512], **argv;

	ck_assert_msg(load_list_text(text, sizeof(text) - 1, &l, err,
	    sizeof(err)) == 0, "%s", err);
	ck_assert_str_eq(l.moderators[0], "a@b.example");
	ck_assert_str_eq(l.moderators[1], "c@d.example");
	ck_assert_str_eq(l.moderators[2], "e@f.example");
	ck_assert_str_eq(l.moderators[3], "g@h.example");
	ck_assert_ptr_null(l.moderators[4]);
	ck_assert_str_eq(l.moderation_address,
	    "dev-moderate@lists.example.org");
	ck_assert_int_eq(l.recipient_delimiter, '-');
	ck_assert_uint_eq(l.cookie_days, 3);
	ck_assert_uint_eq(l.notify_max_per_hour, 0);
	ck_assert_int_eq(l.sender_notice, 1);
	ck_assert_int_eq(tmpl_expand(l.notify, &v, &argv), 0);
	ck_assert_str_eq(argv[5], "m@x");
	ck_assert_str_eq(argv[6], "t");
	ck_assert_str_eq(argv[7], "s@x");
	ck_assert_str_eq(argv[8], "42");
	tmpl_free(argv);
	listcfg_free_list(&l);

	/* defaults */
	ck_assert_int_eq(load_list_text("", 0, &l, err, sizeof(err)), 0);
	ck_assert_int_eq(l.recipient_delimiter, '+');
	ck_assert_uint_eq(l.cookie_days, 14);
	ck_assert_uint_eq(l.notify_max_per_hour, 30);
	ck_assert_int_eq(l.sender_notice, 0);
	ck_assert_ptr_null(l.moderation_address);
	ck_assert_ptr_null(l.notify);
	listcfg_free_list(&l);

	/* {moderator} and {id} belong to notify, {recipient} does not */
	ck_assert_int_eq(load_list_text("release = /bin/x {moderator}\n", 29,
	    &l, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "unknown placeholder `{moderator}'") !=
	    NULL, "%s", err);
	ck_assert_int_eq(load_list_text("notify = /bin/x {recipient}\n", 28,
	    &l, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "known: {sender} {list} {moderator} {id}")
	    != NULL, "%s", err);
	ck_assert_int_eq(load_list_text("moderation_address = a@b c@d\n", 30,
	    &l, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "t.conf:1: moderation_address") != NULL,
	    "%s", err);
	ck_assert_int_eq(load_list_text("recipient_delimiter = %\n", 24,
	    &l, err, sizeof(err)), -1);
	ck_assert_int_eq(load_list_text("moderators = a@b, ,c@d\n", 23,
	    &l, err, sizeof(err)), -1);
}
END_TEST

/* an address a notice could not go to is refused where it is written:
 * longer than the outbox keeps (320 bytes), or with a character that
 * means something in a header */
START_TEST(moderator_addresses_checked)
{
	static const char *const bad[] = {
		"moderators = c\"d@e.example\n",
		"moderators = c\x7f@e.example\n",
		"moderators = c@@e.example\n",
		"moderation_address = dev-moderate@lists.example.org>\n",
		"moderation_address = <dev-moderate@lists.example.org\n",
		"moderation_address = dev:moderate@lists.example.org\n",
		"moderation_address = \xc3\xa9@lists.example.org\n",
	};
	/* what lists had before: a moderator at an address literal, or
	 * with UTF-8, still loads (a notice to it fails alone) */
	static const char *const kept[] = {
		"moderators = postmaster@[192.0.2.1]\n",
		"moderators = ok@example.org, j\xc3\xb6rg@example.de\n",
	};
	struct buf b = BUF_INIT(4096);
	struct listcfg_list l;
	char err[1024];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(load_list_text(bad[i], strlen(bad[i]), &l, err,
		    sizeof(err)) == -1, "loaded: %s", bad[i]);
		ck_assert_msg(strstr(err, "t.conf:1: ") != NULL &&
		    strstr(err, "' is not an address") != NULL, "%s: %s",
		    bad[i], err);
	}
	for (i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
		ck_assert_msg(load_list_text(kept[i], strlen(kept[i]), &l, err,
		    sizeof(err)) == 0, "%s: %s", kept[i], err);
		listcfg_free_list(&l);
	}
	/* 320 bytes load, 321 do not: the file, the line, the key */
	buf_adds(&b, "moderators = a@b.example, ");
	for (i = 0; i < 308; i++)
		buf_addc(&b, 'x');
	buf_adds(&b, "@example.org\n");
	ck_assert_msg(load_list_text(buf_str(&b), b.len, &l, err,
	    sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(strlen(l.moderators[1]), 320);
	listcfg_free_list(&l);
	buf_reset(&b);
	buf_adds(&b, "moderators = a@b.example, ");
	for (i = 0; i < 309; i++)
		buf_addc(&b, 'x');
	buf_adds(&b, "@example.org\n");
	ck_assert_int_eq(load_list_text(buf_str(&b), b.len, &l, err,
	    sizeof(err)), -1);
	ck_assert_msg(strstr(err, "t.conf:1: moderators: `xxxx") != NULL &&
	    strstr(err, "is too long (321 bytes; at most 320)") != NULL, "%s",
	    err);
	ck_assert_ptr_null(l.moderators);
	buf_free(&b);
}
END_TEST

/*
 * moderation_address: every action address made of it
 * (LOCAL{delim}ACTION-ID-COOKIE@DOMAIN) has to fit in the 320 bytes
 * `listgate moderate' takes, for the longest action and post number and
 * whatever the delimiter.  264 bytes load, and their action addresses
 * parse back; 265 (or the 320 a moderator may have) are refused where
 * they are written, with the limit that works.  Before, 320 loaded and
 * every reply to a notice was dropped as "not an action address".
 */
START_TEST(moderation_address_fits_action_addresses)
{
	static const char delims[] = "+-=_.";
	static const size_t lens[] = { 264, 265, 320 };
	static const enum cookie_action acts[] = { COOKIE_APPROVE,
	    COOKIE_REJECT, COOKIE_DISCARD };
	struct cookie_key key;
	struct cookie_addr a;
	static const unsigned char sha[32] = { 1 };
	struct buf b = BUF_INIT(4096);
	struct listcfg_list l;
	char err[1024], c[COOKIE_CHARS + 1], addr[COOKIE_MAX_ADDR + 1];
	char want[128];
	size_t i, j, k;

	memset(&key, 0, sizeof(key));
	for (i = 0; i < COOKIE_MIN_KEY; i++)
		key.k[i] = (unsigned char)(i * 7 + 1);
	key.len = COOKIE_MIN_KEY;
	for (i = 0; delims[i] != '\0'; i++)
		for (j = 0; j < sizeof(lens) / sizeof(lens[0]); j++) {
			buf_reset(&b);
			buf_adds(&b, "recipient_delimiter = ");
			buf_addc(&b, delims[i]);
			buf_adds(&b, "\nmoderation_address = ");
			for (k = 0; k < lens[j] - strlen("@lists.example.org");
			    k++)
				buf_addc(&b, 'm');
			buf_adds(&b, "@lists.example.org\n");
			if (j > 0) {
				ck_assert_msg(load_list_text(buf_str(&b), b.len,
				    &l, err, sizeof(err)) == -1,
				    "%zu bytes loaded", lens[j]);
				ck_assert_msg(strstr(err, "t.conf:2: "
				    "moderation_address: `mmmm") != NULL, "%s",
				    err);
				snprintf(want, sizeof(want), "is too long (%zu "
				    "bytes; at most 264", lens[j]);
				ck_assert_msg(strstr(err, want) != NULL, "%s",
				    err);
				ck_assert_ptr_null(l.moderation_address);
				continue;
			}
			ck_assert_msg(load_list_text(buf_str(&b), b.len, &l,
			    err, sizeof(err)) == 0, "%s", err);
			ck_assert_uint_eq(strlen(l.moderation_address), 264);
			/* the longest: every action, the largest post number */
			for (k = 0; k < 3; k++) {
				cookie_make(&key, "t", INT64_MAX, acts[k],
				    (time_t)0x7fffffff, sha, "m@x.example", c);
				ck_assert_int_eq(cookie_address(
				    l.moderation_address, l.recipient_delimiter,
				    acts[k], INT64_MAX, c, addr, sizeof(addr)),
				    0);
				ck_assert_int_eq(cookie_parse(addr, strlen(addr),
				    &a), COOKIE_OK);
				ck_assert(a.id == INT64_MAX);
				ck_assert_int_eq(a.action, acts[k]);
				ck_assert_int_eq(a.delim, delims[i]);
			}
			listcfg_free_list(&l);
		}
	buf_free(&b);
}
END_TEST

/* web_allowed_hosts: names as written, normalized; a Host header's
 * name without its port, addresses and localhost told apart */
START_TEST(allowed_hosts)
{
	char out[4][LG_MAX_HOST_NAME + 1], why[300], h[LG_MAX_HOST_NAME + 1];
	size_t n = 0;

	ck_assert_int_eq(listcfg_hosts_parse("Lists.Example.ORG., "
	    "127.0.0.1 [0:0::1]\tx_y.example", out, 4, &n, why,
	    sizeof(why)), 0);
	ck_assert_uint_eq(n, 4);
	ck_assert_str_eq(out[0], "lists.example.org");
	ck_assert_str_eq(out[1], "127.0.0.1");
	ck_assert_str_eq(out[2], "[::1]");
	ck_assert_str_eq(out[3], "x_y.example");
	ck_assert_int_eq(listcfg_hosts_parse("a b c d e", out, 4, &n, why,
	    sizeof(why)), -1);
	ck_assert_int_eq(listcfg_hosts_parse("lists.example.org:443", out, 4,
	    &n, why, sizeof(why)), -1);
	ck_assert_ptr_nonnull(strstr(why, "without a port"));
	ck_assert_int_eq(listcfg_hosts_parse("a..b", NULL, 4, NULL, why,
	    sizeof(why)), -1);
	ck_assert_int_eq(listcfg_hosts_parse("*.example.org", NULL, 4, NULL,
	    why, sizeof(why)), -1);
	ck_assert_int_eq(listcfg_hosts_parse("[::1", NULL, 4, NULL, why,
	    sizeof(why)), -1);

	ck_assert_int_eq(listcfg_host_header("LISTS.example.org.:8443", h), 1);
	ck_assert_str_eq(h, "lists.example.org");
	ck_assert_int_eq(listcfg_host_header("evil.example", h), 1);
	ck_assert_str_eq(h, "evil.example");
	ck_assert_int_eq(listcfg_host_header("127.0.0.1:8180", h), 2);
	ck_assert_int_eq(listcfg_host_header("[0::1]:8180", h), 2);
	ck_assert_str_eq(h, "[::1]");
	ck_assert_int_eq(listcfg_host_header("[::1]", h), 2);
	ck_assert_int_eq(listcfg_host_header("localhost:80", h), 2);
	ck_assert_int_eq(listcfg_host_header("LocalHost.", h), 2);
	ck_assert_int_eq(listcfg_host_header("", h), 0);
	ck_assert_int_eq(listcfg_host_header(":80", h), 0);
	ck_assert_int_eq(listcfg_host_header("a.example:", h), 0);
	ck_assert_int_eq(listcfg_host_header("a.example:x", h), 0);
	ck_assert_int_eq(listcfg_host_header("a.example:123456", h), 0);
	ck_assert_int_eq(listcfg_host_header("::1", h), 0);
	ck_assert_int_eq(listcfg_host_header("a example", h), 0);
	ck_assert_int_eq(listcfg_host_header("a.example/x", h), 0);
	ck_assert_int_eq(listcfg_host_header("a@b.example", h), 0);
}
END_TEST

START_TEST(print_reads_back)
{
	static const char text[] =
	    "ham_cutoff = 0.123456789\n"
	    "deliver = /usr/bin/x \"a b\" 'q' \"c\\\"d\\\\e\" -f#g {sender} \"\"\n"
	    "moderators = a@b.example, c@d.example\n"
	    "min_dev = 0.1\n";
	struct listcfg_list l, l2;
	char err[512], *out = NULL;
	size_t outlen = 0, i;
	FILE *f;

	ck_assert_int_eq(load_list_text(text, sizeof(text) - 1, &l, err,
	    sizeof(err)), 0);
	f = open_memstream(&out, &outlen);
	ck_assert_ptr_nonnull(f);
	listcfg_print_list(f, &l);
	fclose(f);
	ck_assert_msg(load_list_text(out, outlen, &l2, err, sizeof(err)) == 0,
	    "%s\n%s", err, out);
	ck_assert_double_eq(l2.ham_cutoff, 0.123456789);
	ck_assert_double_eq(l2.min_dev, 0.1);
	for (i = 0; l.deliver[i] != NULL; i++)
		ck_assert_str_eq(l2.deliver[i], l.deliver[i]);
	ck_assert_ptr_null(l2.deliver[i]);
	ck_assert_str_eq(l2.deliver[3], "c\"d\\e");
	ck_assert_str_eq(l2.deliver[6], "");
	ck_assert_str_eq(l2.moderators[1], "c@d.example");
	listcfg_free_list(&l);
	listcfg_free_list(&l2);
	free(out);
}
END_TEST

/* print into a second directory and load that: 0, or -1 with err */
static int
print_and_reload(const struct listcfg_global *g, const struct listcfg_list *l,
    struct listcfg_global *g2, struct listcfg_list *l2, char *err,
    size_t errsz)
{
	char dir[PATH_MAX + 16], path[PATH_MAX + 48];
	FILE *f;
	int rc;

	snprintf(dir, sizeof(dir), "%s/again", tmpdir);
	mkdir(dir, 0700);
	snprintf(path, sizeof(path), "%s/lists", dir);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/listgate.conf", dir);
	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	ck_assert_int_eq(listcfg_print_global(f, g), 0);
	ck_assert_int_eq(fclose(f), 0);
	snprintf(path, sizeof(path), "%s/lists/t.conf", dir);
	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	ck_assert_int_eq(listcfg_print_list(f, l), 0);
	ck_assert_int_eq(fclose(f), 0);
	if ((rc = listcfg_load_global(dir, g2, err, errsz)) == 0 &&
	    (rc = listcfg_load_list(g2, "t", l2, err, errsz)) < 0)
		listcfg_free_global(g2);
	return rc;
}

/* values whose quoting and escaping grow them still print as lines that
 * load back (found by fuzz_listcfg: a line over the old 4096 bytes) */
START_TEST(long_values_print_back)
{
	struct listcfg_global g, g2;
	struct listcfg_list l, l2;
	struct buf b = BUF_INIT(1u << 20);
	char err[1024], *out = NULL;
	size_t outlen = 0;
	FILE *f;
	int i;

	/* a path of 3000 backslashes prints as 6000; a word of 2000
	 * quotes as 4000; a database whose mask would grow sevenfold */
	buf_adds(&b, "tokens_dir = /");
	for (i = 0; i < 3000; i++)
		buf_addc(&b, '\\');
	buf_adds(&b, "\ndatabase = dbname=user=a");
	for (i = 0; i < 1500; i++)
		buf_addc(&b, '\'');
	buf_adds(&b, "\nsync_database = dbname=user=a");
	for (i = 0; i < 1000; i++)
		buf_addc(&b, '\'');
	buf_adds(&b, "\n");
	write_file("listgate.conf", (char *)b.data, b.len);
	buf_reset(&b);
	buf_adds(&b, "deliver = /bin/x \"");
	for (i = 0; i < 2000; i++)
		buf_adds(&b, "\\\"");
	buf_adds(&b, "\" y\n");
	write_file("lists/t.conf", (char *)b.data, b.len);
	ck_assert_msg(listcfg_load_global(tmpdir, &g, err, sizeof(err)) == 0,
	    "%s", err);
	ck_assert_msg(listcfg_load_list(&g, "t", &l, err, sizeof(err)) == 0,
	    "%s", err);
	ck_assert_uint_eq(strlen(g.tokens_dir), 3001);
	ck_assert_uint_eq(strlen(l.deliver[1]), 2000);
	ck_assert_msg(print_and_reload(&g, &l, &g2, &l2, err, sizeof(err)) ==
	    0, "the printout does not load: %s", err);
	ck_assert(strcmp(g2.tokens_dir, g.tokens_dir) == 0);
	ck_assert(strcmp(l2.deliver[1], l.deliver[1]) == 0);
	ck_assert_str_eq(l2.deliver[2], "y");
	/* the database too long to show masked is masked whole */
	ck_assert_str_eq(g2.conninfo, "********");
	/* the one that fits is shown masked (4006 bytes, 7000 printed) */
	ck_assert_uint_gt(strlen(g2.sync_conninfo), 4000);
	ck_assert_msg(strncmp(g2.sync_conninfo, "dbname='user=\\'a\\\\\\'",
	    20) == 0, "%.40s", g2.sync_conninfo);
	f = open_memstream(&out, &outlen);
	listcfg_print_global(f, &g);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(out, "\ndatabase = ********\n"));
	free(out);
	listcfg_free_list(&l2);
	listcfg_free_global(&g2);
	listcfg_free_list(&l);
	listcfg_free_global(&g);

	/* an address may start with '#' (a comment after a blank): the
	 * list is then printed quoted whole (found by CI's fuzz_listcfg:
	 * "a@b.example,#x@c.example" lost its second address) */
	write_file("listgate.conf", "", 0);
	ck_assert_msg(load_list_text("moderators = a@b.example,#x@c.example,"
	    "y#z@d.example\n", 52, &l, err, sizeof(err)) == 0, "%s", err);
	ck_assert_str_eq(l.moderators[1], "#x@c.example");
	ck_assert_int_eq(listcfg_load_global(tmpdir, &g, err, sizeof(err)), 0);
	ck_assert_msg(print_and_reload(&g, &l, &g2, &l2, err, sizeof(err)) ==
	    0, "the printout does not load: %s", err);
	ck_assert_str_eq(l2.moderators[0], "a@b.example");
	ck_assert_str_eq(l2.moderators[1], "#x@c.example");
	ck_assert_str_eq(l2.moderators[2], "y#z@d.example");
	ck_assert_ptr_null(l2.moderators[3]);
	listcfg_free_list(&l2);
	listcfg_free_global(&g2);
	listcfg_free_list(&l);
	listcfg_free_global(&g);

	/* a configuration directory whose path leaves no room for the
	 * paths in it (tokens_dir's default would not print as a value),
	 * or holds a line break, is refused */
	{
		char deep[PATH_MAX + 16], comp[241];
		size_t dl;

		memset(comp, 'd', 240);
		comp[240] = '\0';
		dl = (size_t)snprintf(deep, sizeof(deep), "%s", tmpdir);
		while (dl < LG_MAX_CONF_VALUE - 256) {
			dl += (size_t)snprintf(deep + dl, sizeof(deep) - dl,
			    "/%s", comp);
			ck_assert_int_eq(mkdir(deep, 0700), 0);
		}
		ck_assert_int_eq(listcfg_load_global(deep, &g, err,
		    sizeof(err)), -1);
		ck_assert_msg(strstr(err, "its path is longer than") != NULL,
		    "%s", err);
		snprintf(deep, sizeof(deep), "%s/a\nb", tmpdir);
		ck_assert_int_eq(mkdir(deep, 0700), 0);
		ck_assert_int_eq(listcfg_load_global(deep, &g, err,
		    sizeof(err)), -1);
		ck_assert_msg(strstr(err, "a line break in its path") != NULL,
		    "%s", err);
	}

	/* values past LG_MAX_CONF_VALUE are refused, naming the key */
	buf_reset(&b);
	buf_adds(&b, "deliver = /bin/x");
	for (i = 0; i < 9; i++) {
		buf_adds(&b, " ");
		for (int j = 0; j < 500; j++)
			buf_addc(&b, 'w');
	}
	buf_adds(&b, "\n");
	ck_assert_int_eq(load_list_text((char *)b.data, b.len, &l, err,
	    sizeof(err)), -1);
	ck_assert_msg(strstr(err, "t.conf:1: deliver: value too long") != NULL,
	    "%s", err);
	/* 1000 addresses "a@b,...": 3999 bytes, 5997 printed with ", " */
	buf_reset(&b);
	buf_adds(&b, "moderators = a@b");
	for (i = 1; i < 1000; i++)
		buf_adds(&b, ",a@b");
	buf_adds(&b, "\n");
	ck_assert_int_eq(load_list_text((char *)b.data, b.len, &l, err,
	    sizeof(err)), -1);
	ck_assert_msg(strstr(err, "t.conf:1: moderators: value too long") !=
	    NULL, "%s", err);
	buf_reset(&b);
	buf_adds(&b, "tokens_dir = ");
	for (i = 0; i < LG_MAX_CONF_VALUE - 2; i++)
		buf_addc(&b, 'p');
	buf_adds(&b, "\n");
	write_file("listgate.conf", (char *)b.data, b.len);
	ck_assert_int_eq(listcfg_load_global(tmpdir, &g, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "listgate.conf:1: tokens_dir: path too long") !=
	    NULL, "%s", err);
	buf_free(&b);
}
END_TEST

START_TEST(password_not_printed)
{
	static const char text[] = "database = host=/tmp password=s3cret\n";
	struct listcfg_global g;
	char err[512], *out = NULL;
	size_t outlen = 0;
	FILE *f;

	write_file("listgate.conf", text, sizeof(text) - 1);
	ck_assert_int_eq(listcfg_load_global(tmpdir, &g, err, sizeof(err)), 0);
	f = open_memstream(&out, &outlen);
	listcfg_print_global(f, &g);
	fclose(f);
	ck_assert_ptr_null(strstr(out, "s3cret"));
	ck_assert_ptr_nonnull(strstr(out, "host='/tmp'"));
	listcfg_free_global(&g);
	free(out);
}
END_TEST

START_TEST(dir_precedence)
{
	setenv("LISTGATE_CONFIG", "/from/env", 1);
	ck_assert_str_eq(listcfg_dir("/from/opt"), "/from/opt");
	ck_assert_str_eq(listcfg_dir(NULL), "/from/env");
	unsetenv("LISTGATE_CONFIG");
	ck_assert_str_eq(listcfg_dir(NULL), LG_SYSCONFDIR);
}
END_TEST

START_TEST(allocation_failures_fail_cleanly)
{
	static const char text[] =
	    "deliver = /usr/bin/x a \"b c\" -f {sender}\n"
	    "release = /usr/bin/y {list}\n"
	    "moderators = a@b.example, c@d.example\n";
	struct listcfg_global g;
	struct listcfg_list l;
	char err[512];
	unsigned long n;
	int rc, ok = 0;

	write_file("lists/t.conf", text, sizeof(text) - 1);
	for (n = 1; n < 200 && !ok; n++) {
		xalloc_fail_at(n);
		rc = listcfg_load_global(tmpdir, &g, err, sizeof(err));
		if (rc == 0) {
			rc = listcfg_load_list(&g, "t", &l, err, sizeof(err));
			if (rc == 0) {
				listcfg_free_list(&l);
				ok = xalloc_count() < n;
			}
			listcfg_free_global(&g);
		}
		xalloc_fail_at(0);
	}
	ck_assert(ok);
}
END_TEST

/* every row of the table is one the loader, the printer and the man
 * page check can work with */
START_TEST(table_is_sane)
{
	const struct keys_row *k, *j, *g;
	size_t n[2] = { 0, 0 }, c, i;
	const char *p;
	int v;

	for (k = keys_table; k->name != NULL; k++) {
		ck_assert_msg(k->scope == KEYS_GLOBAL || k->scope == KEYS_LIST,
		    "%s: scope", k->name);
		n[k->scope]++;
		/* a name the reader can read, set once per file */
		ck_assert_msg(strlen(k->name) < CFGFILE_MAX_KEY &&
		    k->name[0] >= 'a' && k->name[0] <= 'z' &&
		    strspn(k->name, "abcdefghijklmnopqrstuvwxyz0123456789_") ==
		    strlen(k->name), "%s: name", k->name);
		for (j = keys_table; j < k; j++)
			ck_assert_msg(j->scope != k->scope ||
			    strcmp(j->name, k->name) != 0, "%s twice", k->name);
		/* one line of description, no tabs (config keys) */
		ck_assert_msg(k->doc != NULL && k->doc[0] != '\0' &&
		    strpbrk(k->doc, "\t\n") == NULL, "%s: doc", k->name);
		if (k->def_global != NULL) {
			ck_assert_msg(k->scope == KEYS_LIST, "%s: def_global",
			    k->name);
			g = keys_find(KEYS_GLOBAL, k->def_global);
			ck_assert_msg(g != NULL && g->type == k->type &&
			    g->lo >= k->lo && g->hi <= k->hi,
			    "%s: def_global %s", k->name, k->def_global);
		}
		switch (k->type) {
		case KEYS_DOUBLE:
		case KEYS_DOUBLE_OFF:
		case KEYS_UNSIGNED:
		case KEYS_SIZE:
			ck_assert_msg(k->lo <= k->hi, "%s: range", k->name);
			if (k->type == KEYS_UNSIGNED)
				ck_assert_msg(k->hi <= UINT_MAX &&
				    k->lo == (unsigned)k->lo &&
				    k->hi == (unsigned)k->hi, "%s", k->name);
			if (k->type == KEYS_SIZE)
				ck_assert_msg(k->hi <= (double)SIZE_MAX &&
				    k->hi <= (double)ULONG_MAX, "%s", k->name);
			if (k->def_global != NULL)
				break;
			/* the default is in range ("off" above it) */
			if (k->type == KEYS_DOUBLE_OFF && k->def > k->hi)
				break;
			ck_assert_msg(k->def >= k->lo && k->def <= k->hi &&
			    !((k->flags & KEYS_LO_OPEN) && k->def <= k->lo) &&
			    !((k->flags & KEYS_HI_OPEN) && k->def >= k->hi),
			    "%s: default %g out of range", k->name, k->def);
			if (k->type == KEYS_UNSIGNED || k->type == KEYS_SIZE)
				ck_assert_msg(k->def == (unsigned long)k->def,
				    "%s: default", k->name);
			break;
		case KEYS_ENUM:
			ck_assert_msg(k->choices != NULL && k->def_s != NULL,
			    "%s: choices and a default", k->name);
			for (c = 0; k->choices[c] != NULL; c++)
				ck_assert_msg(k->choices[c][0] != '\0' &&
				    strpbrk(k->choices[c], " \t|,") == NULL,
				    "%s: choice `%s'", k->name, k->choices[c]);
			ck_assert_msg(c >= 2, "%s: choices", k->name);
			v = -1;
			for (i = 0; i < c; i++)
				if (strcmp(k->choices[i], k->def_s) == 0)
					v = (int)i;
			ck_assert_msg(v >= 0, "%s: default %s not a choice",
			    k->name, k->def_s);
			ck_assert_str_eq(keys_choice(k, k->values ?
			    k->values[v] : v), k->def_s);
			break;
		case KEYS_ARGV:
		case KEYS_ADDRS:
			ck_assert_msg(k->def_s == NULL && k->def_global == NULL,
			    "%s: no defaults for lists of words", k->name);
			break;
		default:
			break;
		}
		ck_assert_ptr_eq(keys_find(k->scope, k->name), k);
		p = keys_type_name(k->type);
		ck_assert_msg(p != NULL && strcmp(p, "?") != 0, "%s", k->name);
	}
	/* the reader remembers this many keys per file for duplicates */
	ck_assert_uint_lt(n[KEYS_GLOBAL], CFGFILE_MAX_SEEN);
	ck_assert_uint_lt(n[KEYS_LIST], CFGFILE_MAX_SEEN);
	ck_assert_ptr_null(keys_find(KEYS_LIST, "database"));
	ck_assert_ptr_null(keys_find(KEYS_GLOBAL, "nosuchkey"));
}
END_TEST

/* the choices of the enum keys are in the order of listcfg's enums */
START_TEST(choices_match_enums)
{
	const struct keys_row *k;

	k = keys_find(KEYS_LIST, "on_error");
	ck_assert_ptr_nonnull(k);
	ck_assert_str_eq(keys_choice(k, ON_ERROR_DEFER), "defer");
	ck_assert_str_eq(keys_choice(k, ON_ERROR_PASS), "pass");
	k = keys_find(KEYS_GLOBAL, "mta");
	ck_assert_ptr_nonnull(k);
	ck_assert_str_eq(keys_choice(k, LISTCFG_MTA_QMAIL), "qmail");
	ck_assert_str_eq(keys_choice(k, LISTCFG_MTA_POSTFIX), "postfix");
	k = keys_find(KEYS_GLOBAL, "log_facility");
	ck_assert_ptr_nonnull(k);
	ck_assert_str_eq(keys_choice(k, LOG_MAIL), "mail");
	ck_assert_str_eq(keys_choice(k, LOG_LOCAL7), "local7");
}
END_TEST

/* the table printed: one line per key, six fields */
START_TEST(keys_print_as_a_table)
{
	const struct keys_row *k;
	char *out = NULL, *line, *save = NULL;
	size_t outlen = 0, nkeys = 0, nlines = 0, tabs;
	FILE *f;

	for (k = keys_table; k->name != NULL; k++)
		nkeys++;
	f = open_memstream(&out, &outlen);
	ck_assert_ptr_nonnull(f);
	listcfg_print_keys(f);
	fclose(f);
	for (line = strtok_r(out, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		for (tabs = 0; strchr(line, '\t') != NULL;
		    line = strchr(line, '\t') + 1)
			tabs++;
		ck_assert_uint_eq(tabs, 5);
		nlines++;
	}
	ck_assert_uint_eq(nlines, nkeys + 1);
	free(out);
}
END_TEST

/* a key of the other file says where it belongs */
START_TEST(wrong_file_says_where)
{
	struct listcfg_global g;
	char err[1024];

	write_file("listgate.conf", "robx = 0.7\n", 11);
	ck_assert_int_eq(listcfg_load_global(tmpdir, &g, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "listgate.conf:1: unknown key `robx' (it "
	    "belongs in lists/L.conf)") != NULL, "%s", err);
}
END_TEST

/* each value type through keys_set, on rows of a struct of the test's
 * own (string has no key yet; the others as the table uses them) */
struct fake {
	char *s, *path;
	size_t z;
	double d;
};

static const struct keys_row fake_rows[] = {
	{ .name = "s", .type = KEYS_STRING, .off = offsetof(struct fake, s) },
	{ .name = "path", .type = KEYS_PATH,
	  .off = offsetof(struct fake, path) },
	{ .name = "z", .type = KEYS_SIZE, .off = offsetof(struct fake, z),
	  .lo = 1024, .hi = 2048 },
	{ .name = "d", .type = KEYS_DOUBLE_OFF, .off = offsetof(struct fake, d),
	  .lo = 0, .hi = 1 },
};

START_TEST(every_type_through_keys_set)
{
	struct fake fk;
	struct cfgfile cf;
	char err[512];

	memset(&fk, 0, sizeof(fk));
	memset(&cf, 0, sizeof(cf));
	cf.path = "f.conf";
	cf.line = 3;
	cf.err = err;
	cf.errsz = sizeof(err);
	ck_assert_int_eq(keys_set(&fake_rows[0], &cf, "\"a b #c\" # d", &fk,
	    "/etc/x"), 0);
	ck_assert_str_eq(fk.s, "a b #c");
	ck_assert_int_eq(keys_set(&fake_rows[0], &cf, "x y  # d", &fk,
	    "/etc/x"), 0);
	ck_assert_str_eq(fk.s, "x y");
	ck_assert_int_eq(keys_set(&fake_rows[1], &cf, "rel/dir", &fk,
	    "/etc/x/"), 0);
	ck_assert_str_eq(fk.path, "/etc/x/rel/dir");
	ck_assert_int_eq(keys_set(&fake_rows[1], &cf, "/abs", &fk, "/etc/x"), 0);
	ck_assert_str_eq(fk.path, "/abs");
	ck_assert_int_eq(keys_set(&fake_rows[2], &cf, "2048", &fk, NULL), 0);
	ck_assert_uint_eq(fk.z, 2048);
	ck_assert_int_eq(keys_set(&fake_rows[2], &cf, "99999999999999999999",
	    &fk, NULL), -1);
	ck_assert_str_eq(err, "f.conf:3: z: 99999999999999999999 is out of "
	    "range [1024, 2048]");
	ck_assert_uint_eq(fk.z, 2048);
	ck_assert_int_eq(keys_set(&fake_rows[3], &cf, "off", &fk, NULL), 0);
	ck_assert(fk.d > 1);
	ck_assert_int_eq(keys_set(&fake_rows[3], &cf, "0.5", &fk, NULL), 0);
	ck_assert_double_eq(fk.d, 0.5);
	ck_assert_int_eq(keys_set(&fake_rows[3], &cf, "Off", &fk, NULL), -1);
	ck_assert_str_eq(err, "f.conf:3: d: `Off' is not a number");
	xfree(fk.s);
	xfree(fk.path);
}
END_TEST

static Suite *
listcfg_suite(void)
{
	Suite *s = suite_create("listcfg");
	TCase *tc;

	tc = tcase_create("load");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, defaults_without_files);
	tcase_add_test(tc, every_global_key);
	tcase_add_test(tc, every_list_key);
	tcase_add_test(tc, print_reads_back);
	tcase_add_test(tc, long_values_print_back);
	tcase_add_test(tc, password_not_printed);
	tcase_add_test(tc, dir_precedence);
	tcase_add_test(tc, allocation_failures_fail_cleanly);
	suite_add_tcase(s, tc);

	tc = tcase_create("errors");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, list_error_names_file_and_line, 0,
	    sizeof(list_errors) / sizeof(list_errors[0]));
	tcase_add_test(tc, overlong_line_nul_byte_too_many_words);
	tcase_add_test(tc, global_errors);
	tcase_add_test(tc, bad_list_name_builds_no_path);
	tcase_add_test(tc, owner_keys);
	tcase_add_test(tc, untrusted_files_refused);
	tcase_add_test(tc, dangling_link_refused);
	suite_add_tcase(s, tc);

	tc = tcase_create("names");
	tcase_add_loop_test(tc, name_table, 0, sizeof(names) / sizeof(names[0]));
	tcase_add_test(tc, name_length);
	tcase_add_test(tc, allowed_hosts);
	suite_add_tcase(s, tc);

	tc = tcase_create("table");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, table_is_sane);
	tcase_add_test(tc, choices_match_enums);
	tcase_add_test(tc, keys_print_as_a_table);
	tcase_add_test(tc, wrong_file_says_where);
	tcase_add_test(tc, every_type_through_keys_set);
	suite_add_tcase(s, tc);

	tc = tcase_create("templates");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, expand_keeps_values_in_one_argument);
	tcase_add_test(tc, expand_refuses_unknown_and_huge);
	tcase_add_test(tc, expand_refuses_option_like_values);
	tcase_add_loop_test(tc, protected_placeholders_load, 0,
	    sizeof(protected_ok) / sizeof(protected_ok[0]));
	tcase_add_test(tc, moderation_keys);
	tcase_add_test(tc, moderation_address_fits_action_addresses);
	tcase_add_test(tc, moderator_addresses_checked);
	tcase_add_test(tc, lmtp_templates);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(listcfg_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
