/*
 * check_evidence.c - the pieces of gate/evidence that need no process
 * or server: which sender member_check is asked about, the answer
 * cache (hit, TTL, a torn record, a foreign file, a full disk), which
 * addresses a DNSBL is asked about, the name asked (against a forked
 * UDP server that says what it was asked and answers "no such name"),
 * and how often the system resolver's resolv.conf is read (this file
 * defines fopen, which c-ares then calls: see resolv_once)
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <check.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gate/evidence/dnsbl.h"
#include "gate/evidence/mcache.h"
#include "gate/evidence/member.h"
#include "gate/util/netlist.h"
#include "tests/smalldisk.h"

struct sender_case {
	const char *post, *envelope, *want;	/* want NULL: none */
};

static const struct sender_case senders[] = {
	{ "From: A <a@example.org>\n\nx\n", NULL, "a@example.org" },
	{ "Return-Path: <r@example.org>\nFrom: a@example.org\n\nx\n", NULL,
	  "r@example.org" },
	{ "Return-Path: <>\nFrom: a@example.org\n\nx\n", NULL, NULL },
	{ "From: a@example.org\n\nx\n", "env@example.org", "env@example.org" },
	{ "From: a@example.org\n\nx\n", "", NULL },
	{ "From: a@example.org\n\nx\n", "<>", NULL },
	{ "From: b@example.org (Bee)\n\nx\n", NULL, "b@example.org" },
	{ "From: \"x, y\" <c@example.org>\n\nx\n", NULL, "c@example.org" },
	{ "From: <-oQ/tmp/x@example.org>\n\nx\n", NULL, NULL },
	{ "From: <a b@example.org>\n\nx\n", NULL, NULL },
	{ "From: nobody\n\nx\n", NULL, NULL },
	{ "Subject: none\n\nx\n", NULL, NULL },
	{ "From: <dani\xc3\xabl@example.org>\n\nx\n", NULL,
	  "dani\xc3\xabl@example.org" },
};

START_TEST(which_sender)
{
	const struct sender_case *c = &senders[_i];
	char out[LG_MAX_SENDER_BYTES];
	int r;

	r = member_sender((const unsigned char *)c->post, strlen(c->post),
	    c->envelope, out, sizeof(out));
	if (c->want == NULL)
		ck_assert_msg(r == 0, "%s: got %s", c->post, out);
	else {
		ck_assert_msg(r == 1, "%s: none", c->post);
		ck_assert_str_eq(out, c->want);
	}
}
END_TEST

START_TEST(sender_too_long)
{
	char post[1200], out[LG_MAX_SENDER_BYTES];

	memset(post, 'a', sizeof(post));
	memcpy(post, "From: <", 7);
	memcpy(post + 900, "@example.org>\n\nx\n", 18);
	ck_assert_int_eq(member_sender((unsigned char *)post, strlen(post),
	    NULL, out, sizeof(out)), 0);
}
END_TEST

/* the entries of directory d but . and .. */
static int
count_entries(const char *d)
{
	DIR *dp = opendir(d);
	struct dirent *e;
	int n = 0;

	ck_assert_ptr_nonnull(dp);
	while ((e = readdir(dp)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			n++;
	closedir(dp);
	return n;
}

START_TEST(cache)
{
	char dir[] = "/tmp/check_evidence.XXXXXX", path[300];
	struct mcache *c, *c2;
	struct stat st;
	unsigned char junk[64];
	int fd, i;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/l.members", dir);
	ck_assert_ptr_nonnull(c = mcache_open(path));
	ck_assert_int_eq(mcache_get(c, "a@example.org", 1000, 60), MEMBER_NONE);
	mcache_put(c, "a@example.org", MEMBER_YES, 1000);
	mcache_put(c, "b@example.org", MEMBER_NO, 1000);
	mcache_put(c, "n@example.org", MEMBER_NONE, 1000);
	ck_assert_int_eq(mcache_get(c, "A@Example.ORG", 1030, 60), MEMBER_YES);
	ck_assert_int_eq(mcache_get(c, "b@example.org", 1060, 60), MEMBER_NO);
	ck_assert_int_eq(mcache_get(c, "b@example.org", 1061, 60), MEMBER_NONE);
	ck_assert_int_eq(mcache_get(c, "n@example.org", 1001, 60), MEMBER_NONE);
	ck_assert_int_eq(mcache_get(c, "a@example.org", 1001, 0), MEMBER_NONE);
	/* a clock set back: not believed */
	ck_assert_int_eq(mcache_get(c, "a@example.org", 999, 60), MEMBER_NONE);
	/* another process sees the same answers */
	ck_assert_ptr_nonnull(c2 = mcache_open(path));
	ck_assert_int_eq(mcache_get(c2, "a@example.org", 1001, 60),
	    MEMBER_YES);
	mcache_put(c2, "a@example.org", MEMBER_NO, 1002);
	ck_assert_int_eq(mcache_get(c, "a@example.org", 1003, 60), MEMBER_NO);
	mcache_close(c2);
	/* many senders: still bounded, the newest kept */
	for (i = 0; i < 3 * MCACHE_SLOTS; i++) {
		char s[64];

		snprintf(s, sizeof(s), "u%d@example.org", i);
		mcache_put(c, s, MEMBER_YES, 2000 + i);
	}
	ck_assert_int_eq(mcache_get(c, "u12287@example.org", 20000, 100000),
	    MEMBER_YES);
	mcache_close(c);
	/* a torn record (bytes from two writers) reads as absent */
	ck_assert_ptr_nonnull(c = mcache_open(path));
	mcache_put(c, "t@example.org", MEMBER_YES, 5000);
	mcache_close(c);
	fd = open(path, O_RDWR);
	ck_assert_int_ge(fd, 0);
	{
		/* flip the stamp byte of every record: each check fails */
		off_t off;
		unsigned char b;

		for (off = 16 + 8; off < 16 + (off_t)MCACHE_SLOTS * 16;
		    off += 16) {
			ck_assert_int_eq(pread(fd, &b, 1, off), 1);
			b ^= 0x5a;
			ck_assert_int_eq(pwrite(fd, &b, 1, off), 1);
		}
	}
	close(fd);
	ck_assert_ptr_nonnull(c = mcache_open(path));
	ck_assert_int_eq(mcache_get(c, "t@example.org", 5001, 60), MEMBER_NONE);
	mcache_close(c);
	/* a damaged file (another size, a header not ours) is not
	 * believed: an empty cache takes its place, which works */
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT, 0600);
	memset(junk, 'x', sizeof(junk));
	ck_assert_int_eq(write(fd, junk, sizeof(junk)), (int)sizeof(junk));
	close(fd);
	ck_assert_ptr_nonnull(c = mcache_open(path));
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_size, 16 + MCACHE_SLOTS * 16);
	ck_assert_int_eq(mcache_get(c, "a@example.org", 1001, 60), MEMBER_NONE);
	mcache_put(c, "a@example.org", MEMBER_YES, 1000);
	ck_assert_int_eq(mcache_get(c, "a@example.org", 1001, 60), MEMBER_YES);
	/* its header overwritten while c has it mapped: the next open
	 * replaces it, c goes on with the old one (no SIGBUS) */
	fd = open(path, O_WRONLY);
	ck_assert_int_eq(pwrite(fd, junk, 8, 0), 8);
	close(fd);
	ck_assert_ptr_nonnull(c2 = mcache_open(path));
	ck_assert_int_eq(mcache_get(c2, "a@example.org", 1001, 60),
	    MEMBER_NONE);
	mcache_put(c2, "b@example.org", MEMBER_NO, 1000);
	ck_assert_int_eq(mcache_get(c2, "b@example.org", 1001, 60), MEMBER_NO);
	mcache_put(c, "c@example.org", MEMBER_YES, 1000);
	ck_assert_int_eq(mcache_get(c, "c@example.org", 1001, 60), MEMBER_YES);
	mcache_close(c);
	mcache_close(c2);
	ck_assert_ptr_nonnull(c = mcache_open(path));
	ck_assert_int_eq(mcache_get(c, "b@example.org", 1001, 60), MEMBER_NO);
	mcache_close(c);
	/* and no file is left beside it */
	ck_assert_int_eq(count_entries(dir), 1);
	/* a link in its place is never followed nor replaced */
	unlink(path);
	ck_assert_int_eq(symlink("elsewhere", path), 0);
	ck_assert_ptr_null(mcache_open(path));
	ck_assert_int_eq(lstat(path, &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	ck_assert_int_eq(mcache_get(NULL, "a@example.org", 1, 60), MEMBER_NONE);
	mcache_put(NULL, "a@example.org", MEMBER_YES, 1);
	unlink(path);
	snprintf(path, sizeof(path), "%s/missing/l.members", dir);
	ck_assert_ptr_null(mcache_open(path));
	rmdir(dir);
}
END_TEST

/*
 * The file cut short in place while a process has it open (`: >
 * L.members` to empty the cache, a restore in place): that process
 * reads no answer from it and goes on, and the next open makes it a
 * cache again.  Before, the file was mapped, and the first look into
 * it past its new end killed the process (listgate web, which keeps it
 * open for days) with SIGBUS.
 */
START_TEST(cache_cut_short)
{
	char dir[] = "/tmp/check_evidence.XXXXXX", path[300];
	struct mcache *c, *c2;
	int i;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/l.members", dir);
	for (i = 0; i < 2; i++) {
		ck_assert_ptr_nonnull(c = mcache_open(path));
		mcache_put(c, "a@example.org", MEMBER_YES, 1000);
		ck_assert_int_eq(mcache_get(c, "a@example.org", 1001, 60),
		    MEMBER_YES);
		/* emptied, or cut to its header and a few records */
		ck_assert_int_eq(truncate(path, i == 0 ? 0 : 16 + 3 * 16), 0);
		ck_assert_int_eq(mcache_get(c, "a@example.org", 1001, 60),
		    MEMBER_NONE);
		mcache_put(c, "b@example.org", MEMBER_NO, 1000);
		ck_assert_ptr_nonnull(c2 = mcache_open(path));
		mcache_put(c2, "d@example.org", MEMBER_YES, 1000);
		ck_assert_int_eq(mcache_get(c2, "d@example.org", 1001, 60),
		    MEMBER_YES);
		mcache_close(c2);
		mcache_close(c);
		unlink(path);
	}
	rmdir(dir);
}
END_TEST

/*
 * A full disk: a cache made before it filled up goes on (its blocks
 * were allocated when it was made), and a cache file with holes (as a
 * sparse copy or restore leaves it) is no cache.  Before, a file with
 * holes was mapped as it was, and the first answer written into a hole
 * killed the filter with SIGBUS.  Needs root, for a small tmpfs in a
 * mount namespace of this test's own.
 */
START_TEST(cache_full_disk)
{
	static const unsigned char hdr[16] = "LGMEMBR1";
	char dir[] = "/tmp/check_evidence.XXXXXX", mnt[300], path[400];
	char sparse[400];
	struct mcache *c;
	int fd, i;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	if (!smalldisk_mount("cache_full_disk", dir, "size=256k", mnt,
	    sizeof(mnt))) {
		rmdir(dir);
		return;
	}
	snprintf(path, sizeof(path), "%s/l.members", mnt);
	snprintf(sparse, sizeof(sparse), "%s/s.members", mnt);
	/* a cache file with holes: its header, then nothing up to its
	 * last byte */
	fd = open(sparse, O_WRONLY | O_CREAT | O_EXCL, 0660);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, hdr, sizeof(hdr)), (int)sizeof(hdr));
	ck_assert_int_eq(pwrite(fd, "", 1, 16 + (off_t)MCACHE_SLOTS * 16 - 1),
	    1);
	close(fd);
	ck_assert_ptr_nonnull(c = mcache_open(path));
	smalldisk_fill(mnt);
	for (i = 0; i < MCACHE_SLOTS; i++) {
		char s[64];

		snprintf(s, sizeof(s), "u%d@example.org", i);
		mcache_put(c, s, MEMBER_YES, 1000);
	}
	ck_assert_int_eq(mcache_get(c, "u7@example.org", 1001, 60),
	    MEMBER_YES);
	mcache_close(c);
	c = mcache_open(sparse);
	for (i = 0; i < MCACHE_SLOTS; i++) {
		char s[64];

		snprintf(s, sizeof(s), "u%d@example.org", i);
		mcache_put(c, s, MEMBER_YES, 1000);
	}
	ck_assert_int_eq(mcache_get(c, "u7@example.org", 1001, 60),
	    c != NULL ? MEMBER_YES : MEMBER_NONE);
	mcache_close(c);
	/* (the tmpfs goes with this test's mount namespace; its mount
	 * point and directory stay behind without this) */
	ck_assert_int_eq(umount2(mnt, MNT_DETACH), 0);
	rmdir(mnt);
	rmdir(dir);
}
END_TEST

/* the IANA special-purpose registries (RFC 6890 and after): only what
 * they call globally reachable, or do not list, is asked about */
START_TEST(public_addresses)
{
	static const char *const yes[] = { "66.187.233.211", "8.8.8.8",
	    "2a00:1450:4001::1", "::ffff:8.8.8.8", "192.0.0.9",
	    "192.0.0.10", "192.0.1.1", "192.88.98.1", "192.88.100.1",
	    "198.20.0.1", "223.255.255.254", "64:ff9b::66.187.233.211",
	    "2002:4255:e9d3::1", "2001:1::1", "2001:1::2", "2001:3::1",
	    "2001:4:112::1", "2001:20::1", "2001:30::1", "2001:200::1",
	    "2001:db9::1", "2003::1", "2620:4f:8000::1", "3ffe::1",
	    "3fff:1000::1", NULL };
	static const char *const no[] = { "10.1.2.3", "127.0.0.1",
	    "172.16.52.254", "192.168.0.1", "169.254.1.1", "100.64.0.1",
	    "192.0.2.1", "198.51.100.7", "203.0.113.5", "224.0.0.1", "0.1.2.3",
	    "::1", "fe80::1", "fc00::1", "2001:db8::1",
	    /* 192.0.0.0/24, IETF protocol assignments */
	    "192.0.0.1", "192.0.0.8", "192.0.0.170", "192.0.0.255",
	    "192.88.99.1", "198.18.0.1", "198.19.255.255", "240.0.0.1",
	    "255.255.255.255", "100.127.255.255", "172.31.0.1",
	    "::", "::ffff:10.0.0.1", "::ffff:192.0.0.1", "::10.0.0.1",
	    /* NAT64: the IPv4 address decides */
	    "64:ff9b::10.0.0.1", "64:ff9b::192.168.1.1", "64:ff9b:1::1",
	    "64:ff9b:1::8.8.8.8", "100::1", "5f00::1", "fd00::1", "ff02::1",
	    /* 2001::/23 */
	    "2001::1", "2001:0:4136:e378::1", "2001:1::4", "2001:2::1",
	    "2001:10::1", "2001:40::1", "2001:1ff::1", "2001:db8:ffff::1",
	    /* 6to4 of an address that is not public */
	    "2002:0a00:0001::1", "2002:c0a8:0101::1", "2002:7f00:1::1",
	    "3fff::1", "3fff:fff::1", NULL };
	unsigned char a[16];
	size_t i;

	for (i = 0; yes[i] != NULL; i++) {
		ck_assert(netlist_addr(yes[i], strlen(yes[i]), a) != 0);
		ck_assert_msg(dnsbl_public(a), "%s", yes[i]);
	}
	for (i = 0; no[i] != NULL; i++) {
		ck_assert(netlist_addr(no[i], strlen(no[i]), a) != 0);
		ck_assert_msg(!dnsbl_public(a), "%s", no[i]);
	}
}
END_TEST

/* the name a DNSBL is asked for the address addr in zone "bl.test",
 * into name: a forked server on loopback writes each name it is asked to
 * a pipe, dotted, and answers NXDOMAIN */
static void
asked_name(const char *addr, char *name, size_t namesz)
{
	struct sockaddr_in sin, from;
	socklen_t sl = sizeof(sin);
	struct netlist zones;
	struct dnsbl *d = NULL;
	struct pollfd p[DNSBL_MAX_FDS];
	unsigned char a[16], q[512];
	char server[64], why[128];
	int fd, pfd[2], fam, wait_ms, st;
	ssize_t n, k;
	size_t np, i, o;
	pid_t pid;

	fd = socket(AF_INET, SOCK_DGRAM, 0);
	ck_assert_int_ge(fd, 0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sin, &sl), 0);
	ck_assert_int_eq(pipe(pfd), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(pfd[0]);
		for (;;) {
			sl = sizeof(from);
			n = recvfrom(fd, q, sizeof(q), 0,
			    (struct sockaddr *)&from, &sl);
			if (n < 12)
				_exit(0);
			/* the question's name, dotted */
			for (i = 12, o = 0; i < (size_t)n && q[i] != 0 &&
			    o + q[i] + 1 < (size_t)namesz;
			    i += (size_t)q[i] + 1) {
				if (o > 0)
					name[o++] = '.';
				memcpy(name + o, q + i + 1, q[i]);
				o += q[i];
			}
			name[o++] = '\n';
			if (write(pfd[1], name, o) < 0)
				_exit(1);
			q[2] = 0x81;	/* a response, recursion desired */
			q[3] = 0x83;	/* recursion available, NXDOMAIN */
			q[6] = q[7] = q[8] = q[9] = q[10] = q[11] = 0;
			(void)sendto(fd, q, (size_t)i + 5, 0,
			    (struct sockaddr *)&from, sl);
		}
	}
	close(fd);
	close(pfd[1]);
	snprintf(server, sizeof(server), "127.0.0.1:%u",
	    (unsigned)ntohs(sin.sin_port));
	ck_assert_int_eq(netlist_parse("bl.test", &zones, why, sizeof(why)),
	    0);
	fam = netlist_addr(addr, strlen(addr), a);
	ck_assert_int_ne(fam, 0);
	ck_assert_int_eq(dnsbl_start(&d, server, &zones, a, fam, 2000, why,
	    sizeof(why)), 0);
	ck_assert_msg(d != NULL, "%s", why);
	do {
		np = dnsbl_pollfds(d, p, DNSBL_MAX_FDS, &wait_ms);
		poll(p, np, wait_ms);
	} while (!dnsbl_step(d, p, np));
	dnsbl_free(d);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	n = 0;
	while ((size_t)n + 1 < namesz && (k = read(pfd[0], name + n,
	    namesz - 1 - (size_t)n)) > 0)
		n += k;
	close(pfd[0]);
	name[n] = '\0';
	if (n > 0 && name[n - 1] == '\n')
		name[n - 1] = '\0';
}

/* while set, /etc/resolv.conf as c-ares opens it: this file instead,
 * and each open counted */
static const char *resolv_path;
static int resolv_opens;

FILE *fopen(const char *path, const char *mode);

/* the C library's fopen, but for resolv.conf while resolv_path is set
 * (defined in the program, it is the one c-ares's calls reach) */
FILE *
fopen(const char *path, const char *mode)
{
	static FILE *(*next)(const char *, const char *);

	if (next == NULL &&
	    (*(void **)&next = dlsym(RTLD_NEXT, "fopen")) == NULL) {
		errno = ENOSYS;
		return NULL;
	}
	if (resolv_path != NULL && path != NULL &&
	    strcmp(path, "/etc/resolv.conf") == 0) {
		resolv_opens++;
		path = resolv_path;
	}
	return next(path, mode);
}

/* a lookup through the system's resolvers reads resolv.conf once, two
 * nameservers in it too (they share the time: the channel was made
 * again, and read it again, for every post) */
START_TEST(resolv_once)
{
	char path[] = "/tmp/lg-resolv.XXXXXX", why[128];
	static const char conf[] = "nameserver 127.0.0.1\n"
	    "nameserver 127.0.0.2\n";
	struct netlist zones;
	struct dnsbl *d = NULL;
	unsigned char a[16];
	int fd, fam;

	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, conf, sizeof(conf) - 1),
	    (ssize_t)sizeof(conf) - 1);
	close(fd);
	ck_assert_int_eq(netlist_parse("bl.test", &zones, why, sizeof(why)),
	    0);
	fam = netlist_addr("66.187.233.211", 14, a);
	ck_assert_int_ne(fam, 0);
	resolv_path = path;
	resolv_opens = 0;
	ck_assert_int_eq(dnsbl_start(&d, NULL, &zones, a, fam, 1000, why,
	    sizeof(why)), 0);
	resolv_path = NULL;
	unlink(path);
	ck_assert_msg(d != NULL, "%s", why);
	dnsbl_free(d);
	ck_assert_int_eq(resolv_opens, 1);
}
END_TEST

/* an IPv4 address is asked as reversed octets, written as IPv4 or as
 * IPv4-mapped IPv6 (::ffff:a.b.c.d, a relay on a dual-stack socket) or
 * NAT64 (64:ff9b::a.b.c.d): zones list it that way only; an IPv6
 * address, 6to4 included, as nibbles */
static const char *const query_cases[][2] = {
	{ "66.187.233.211", "211.233.187.66.bl.test" },
	{ "::ffff:66.187.233.211", "211.233.187.66.bl.test" },
	{ "IPv6:::FFFF:66.187.233.211", "211.233.187.66.bl.test" },
	{ "64:ff9b::66.187.233.211", "211.233.187.66.bl.test" },
	{ "2a00:1450:4001:81c::2005", "5.0.0.2.0.0.0.0.0.0.0.0.0.0.0.0."
	  "c.1.8.0.1.0.0.4.0.5.4.1.0.0.a.2.bl.test" },
	{ "2002:4255:e9d3::1", "1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0."
	  "3.d.9.e.5.5.2.4.2.0.0.2.bl.test" },
};

START_TEST(query_names)
{
	char name[600];

	asked_name(query_cases[_i][0], name, sizeof(name));
	ck_assert_str_eq(name, query_cases[_i][1]);
}
END_TEST

static Suite *
evidence_suite(void)
{
	Suite *s = suite_create("evidence");
	TCase *tc;

	tc = tcase_create("member");
	tcase_add_loop_test(tc, which_sender, 0,
	    (int)(sizeof(senders) / sizeof(senders[0])));
	tcase_add_test(tc, sender_too_long);
	tcase_add_test(tc, cache);
	tcase_add_test(tc, cache_cut_short);
	tcase_add_test(tc, cache_full_disk);
	suite_add_tcase(s, tc);
	tc = tcase_create("dnsbl");
	tcase_add_test(tc, public_addresses);
	tcase_add_loop_test(tc, query_names, 0,
	    (int)(sizeof(query_cases) / sizeof(query_cases[0])));
	tcase_add_test(tc, resolv_once);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(evidence_suite());
	int nf;

	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
