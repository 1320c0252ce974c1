/*
 * tokdb.c - a list's token store on a Kyoto Cabinet file hash database
 *
 * Trusts the file only as far as its meta records: a file without them,
 * or written by another tokenizer or format version, is refused with a
 * message that says what to do.  Token records are decoded defensively
 * (a malformed record reads as absent counts, never out of bounds).
 * Fails with a return code and a message; never exits, never logs.
 *
 * Record layout (format 2):
 *   key: the token's 64-bit SipHash-2-4 under a fixed key (tokdb_key),
 *        8 bytes big-endian; the token text is not stored
 *   value: varint spam, varint ham, varint zigzag(day - TOKDB_DAY0)
 *        (LEB128; 3 to 4 bytes for most tokens)
 *   meta records have keys of other lengths, starting with a NUL byte:
 *     "\0format" u32 LE, "\0tokver" u32 LE, "\0nspam" u32 LE,
 *     "\0nham" u32 LE, "\0pos" i64 LE.
 * Format 1 keyed records by the token text itself and stored the day as
 * it is; tokdb_convert rewrites such a file.
 *
 * The file is tuned small: no alignment padding, 32-bit offsets, one
 * link per record (a record costs about 20 bytes) and one or two 4-byte
 * buckets per token (a chain of one record or less on average).  Kyoto Cabinet cannot grow a hash table in place, so
 * a writer that has filled it (tokdb_compact) rewrites the file with
 * two buckets per token and renames it over the old one; readers keep
 * the file they opened, and writers check after taking the lock that
 * the file they locked is still the one at the path.  Bulk mode
 * (TOKDB_BULK) replaces the file the same way: its changes gather in
 * memory and go into a private copy without transactions.  Whoever
 * renames a file over the path holds a reader's lock on the old one
 * (filters go on, writers wait) and flock() (one replacer at a time).
 */
#include "config.h"

#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <kclangc.h>

#include "gate/util/clock.h"
#include "db/fgrow.h"
#include "db/tokdb.h"
#include "gate/tok.h"		/* TOK_VERSION, recorded in the file */
#include "gate/util/fs.h"
#include "gate/util/siphash.h"
#include "gate/util/suggest.h"
#include "gate/util/xalloc.h"

#define TOKDB_FORMAT	2
/* format 1: token text keys; tokdb_convert reads it */
#define FORMAT_TEXT	1

/* the fixed SipHash key of token keys ("listgate", "tokens" 0 2): the
 * same on every host, so token files built apart compare equal */
#define KEY_K0		0x657461677473696cULL
#define KEY_K1		0x02000073656b6f74ULL
/* bytes of a token key */
#define KEYLEN		8
/* days are stored relative to 2020-01-01 (zigzag, so earlier days still
 * fit): two bytes until about 2042 */
#define TOKDB_DAY0	18262u

/* meta record keys; sizeof - 1 keeps the leading NUL */
#define K_FORMAT	"\0format"
#define K_TOKVER	"\0tokver"
#define K_NSPAM		"\0nspam"
#define K_NHAM		"\0nham"
/* the journal position: the last event applied (8 bytes), then that
 * event's mark (8 more, journal.h; absent: not recorded, a file from
 * before listgate recorded it, or set without one) */
#define K_POS		"\0pos"
/* "\0dec" and a post's SHA-256: a moderator's decision on it */
#define K_DEC		"\0dec"
/* how many decision records there are (absent: none) */
#define K_NDEC		"\0ndec"
/* the feature families the tokens were made with (absent: not recorded,
 * a file from before listgate recorded them) */
#define K_FEATS		"\0feats"
#define DEC_KLEN	(KLEN(K_DEC) + TOKDB_SHA256_LEN)
#define KLEN(k)		(sizeof(k) - 1)
#define NMETA		5

/* a meta key never has the length of a token key */
_Static_assert(KLEN(K_FORMAT) != KEYLEN && KLEN(K_TOKVER) != KEYLEN &&
    KLEN(K_NSPAM) != KEYLEN && KLEN(K_NHAM) != KEYLEN &&
    KLEN(K_POS) != KEYLEN && KLEN(K_NDEC) != KEYLEN &&
    KLEN(K_FEATS) != KEYLEN, "meta keys must differ in length from token keys");

/*
 * Tuning of a new file: no alignment (apow 0), 4-byte offsets (opts s:
 * files up to 4 GiB), linear chains (one link per record, opts l), a
 * small free-block pool (fpow 6), automatic defragmentation (dfunit,
 * set at every open: Kyoto Cabinet does not keep it).  The
 * bucket count is fixed at creation: TOKDB_BNUM_MIN for a new file,
 * BUCKETS_PER_TOKEN per token when compacted.  mmap the first 256 MiB.
 */
#define TUNE_CREATE	"#apow=0#fpow=6#opts=ls#bnum=%ld"
#define TUNE_OPEN	"#msiz=268435456#dfunit=8"
#define TOKDB_BNUM_MIN	8191L
/* buckets per token when a file is (re)written, and the load (tokens per
 * bucket) past which a writer compacts the file */
#define BUCKETS_PER_TOKEN	2
#define LOAD_MAX		1

/* the steps of one counter in bulk mode: their sum and the lowest
 * running sum (<= 0).  Counts never go below zero, step by step; so a
 * count c ends at c + sum + max(0, -(c + low)), exactly what the steps
 * one by one would leave */
struct pstep {
	int32_t sum, low;
};

/* a token's pending changes in bulk mode */
struct pend {
	uint64_t key;
	struct pstep c[2];	/* ham, spam */
	uint32_t day;		/* of the last learning step ... */
	uint8_t hasday;		/* ... when there was one */
	uint8_t used;
};

/* a moderator's decision recorded in bulk mode, written out with the
 * token changes */
struct pdec {
	unsigned char sha[TOKDB_SHA256_LEN];
	uint32_t day;
	int state;
};

/* bulk mode keeps at most this many tokens' changes in memory (32 bytes
 * each) before writing them out to its private file */
#define PEND_MAX	(1u << 20)
/* tokens looked up ahead in the pending table (bulk_learn) */
#define PF_AHEAD	8

struct tokdb {
	KCDB *kc;
	int mode;
	int intran;
	int mem;		/* the in-memory twin */
	char *path;		/* the file kc has open */
	char list[80];		/* the list it stands for, for messages */
	char emsg[1024];
	/* bulk mode (TOKDB_BULK): changes gather in memory (pend) and go
	 * into a private file without transactions (kc, opened when they
	 * are first written out), renamed over dest when published */
	int bulk;
	int poisoned;		/* a batch was aborted: never publish */
	int ready;		/* written out and synced: publishing only
				 * renames (tokdb_publish_ready) */
	char *dest;		/* the token file the private file replaces,
				 * NULL: path is the caller's new file */
	struct tokdb *old;	/* dest open as a reader (its shared lock) */
	int lockfd;		/* dest, flock()ed against other replacers */
	long bnum;		/* kc's buckets */
	struct pend *pend;	/* pending token changes, open addressing */
	size_t npend, cappend;
	long nnew;		/* pending keys absent from the base file */
	struct pstep msg[2];	/* pending message counts: ham, spam */
	struct pdec *pdec;	/* pending decisions, in order */
	size_t npdec, cappdec;
	int64_t pos, pmark;	/* pending journal position, mark ... */
	int setpos;		/* ... when set */
	uint32_t feats;		/* pending feature families ... */
	int setfeats;		/* ... when set */
	int created;		/* this open made the file (tokdb_created) */
	/* a reader's cache (tokdb_cache): open addressing by key, key 0
	 * never kept; NULL when off.  Keys are SipHash under a key in the
	 * source, so anyone can make tokens whose keys share low bits: the
	 * slot is the top bits of key times a random odd number, and a
	 * probe stops after RC_PROBES slots (then the read is uncached) */
	struct rcache *rc;
	size_t nrc, caprc;
	unsigned rcbits;	/* log2(caprc) */
	uint64_t rcmul;
};

/* one kept read: found (1) or absent (0) */
struct rcache {
	uint64_t key;
	struct tokcount c;
	int found;
};

/* the errno of the system call Kyoto Cabinet just saw fail (its
 * KCESYSTEM), or 0: read before anything else may change errno */
static int
sys_errno(KCDB *kc)
{
	int e = errno;

	return kcdbecode(kc) == KCESYSTEM ? e : 0;
}

/* remember a message for tokdb_errmsg: Kyoto Cabinet's error, and what
 * to do about a damaged file */
static void
seterr(struct tokdb *db, const char *what)
{
	/* (first: errno is still the failed call's, Kyoto Cabinet keeps
	 * only "mywrite failed") */
	int e = sys_errno(db->kc), g = fgrow_last_error();

	if (g != 0)
		e = g;
	if (e == ENOSPC || e == EDQUOT)
		snprintf(db->emsg, sizeof(db->emsg), "token file %s: %s: %s: "
		    "%s (the file keeps what was committed; free space on "
		    "its disk and try again)", db->path, what,
		    kcdbemsg(db->kc), strerror(e));
	else if (e != 0)
		snprintf(db->emsg, sizeof(db->emsg), "token file %s: %s: %s: "
		    "%s; if the file is damaged, `%s rebuild --list %s` "
		    "recreates it from the journal", db->path, what,
		    kcdbemsg(db->kc), strerror(e), suggest_cmd(), db->list);
	else
		snprintf(db->emsg, sizeof(db->emsg), "token file %s: %s: %s; "
		    "if the file is damaged, `%s rebuild --list %s` "
		    "recreates it from the journal", db->path, what,
		    kcdbemsg(db->kc), suggest_cmd(), db->list);
}

/* remember an error of our own (no Kyoto Cabinet message): -1 */
static int
plainerr(struct tokdb *db, const char *what)
{
	snprintf(db->emsg, sizeof(db->emsg), "token file %s: %s", db->path,
	    what);
	return -1;
}

/* little-endian fixed-width helpers */
static void
put_u32(unsigned char *p, uint32_t v)
{
	p[0] = v & 0xff;
	p[1] = (v >> 8) & 0xff;
	p[2] = (v >> 16) & 0xff;
	p[3] = (v >> 24) & 0xff;
}

/* read a little-endian u32 */
static uint32_t
get_u32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

static void
put_le64(unsigned char *p, uint64_t v)
{
	put_u32(p, (uint32_t)v);
	put_u32(p + 4, (uint32_t)(v >> 32));
}

static uint64_t
get_le64(const unsigned char *p)
{
	return (uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32;
}

/* append a LEB128 varint; returns the bytes written (at most 5) */
static size_t
put_varint(unsigned char *p, uint32_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (unsigned char)v;
	return n;
}

/* read a LEB128 varint of at most 5 bytes: bytes used, or 0 if malformed */
static size_t
get_varint(const unsigned char *p, size_t n, uint32_t *v_r)
{
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < n && i < 5; i++) {
		v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if ((p[i] & 0x80) == 0) {
			if (v > UINT32_MAX)
				return 0;
			*v_r = (uint32_t)v;
			return i + 1;
		}
	}
	return 0;
}

/* decode a token record of format fmt: its length (at most n), or 0
 * when malformed */
static size_t
dec_count_fmt(const unsigned char *p, size_t n, struct tokcount *c,
    int fmt)
{
	size_t a, b, d;
	uint32_t z;

	if ((a = get_varint(p, n, &c->spam)) == 0 ||
	    (b = get_varint(p + a, n - a, &c->ham)) == 0 ||
	    (d = get_varint(p + a + b, n - a - b, &z)) == 0) {
		memset(c, 0, sizeof(*c));
		return 0;
	}
	if (fmt == FORMAT_TEXT)
		c->day = z;
	else		/* zigzag: even is day0 + z/2, odd is day0 - (z+1)/2 */
		c->day = (z & 1) ? TOKDB_DAY0 - (z >> 1) - 1 :
		    TOKDB_DAY0 + (z >> 1);
	return a + b + d;
}

/* decode a token record: 0, or -1 when malformed */
static int
dec_count(const unsigned char *p, size_t n, struct tokcount *c)
{
	return dec_count_fmt(p, n, c, TOKDB_FORMAT) == 0 ? -1 : 0;
}

/* encode a token record into p (at least 15 bytes): its length */
static size_t
enc_count(unsigned char *p, const struct tokcount *c)
{
	uint32_t z;
	size_t n;

	z = c->day >= TOKDB_DAY0 ? (c->day - TOKDB_DAY0) << 1 :
	    ((TOKDB_DAY0 - c->day - 1) << 1) | 1;
	if (c->day >= TOKDB_DAY0 && c->day - TOKDB_DAY0 > UINT32_MAX >> 1)
		z = UINT32_MAX - 1;	/* past year 5.8 million: saturate */
	n = put_varint(p, c->spam);
	n += put_varint(p + n, c->ham);
	n += put_varint(p + n, z);
	return n;
}

uint64_t
tokdb_key(const void *tok, size_t len)
{
	return siphash24(KEY_K0, KEY_K1, tok, len);
}

/* the 8 key bytes of a token key, big-endian */
static void
put_key(unsigned char *p, uint64_t k)
{
	int i;

	for (i = KEYLEN - 1; i >= 0; i--, k >>= 8)
		p[i] = (unsigned char)(k & 0xff);
}

/* the token key in 8 key bytes */
static uint64_t
get_key(const unsigned char *p)
{
	uint64_t k = 0;
	int i;

	for (i = 0; i < KEYLEN; i++)
		k = k << 8 | p[i];
	return k;
}

/* read a u32 meta record of kc: 1 found, 0 absent, -1 malformed/error */
static int
kc_u32(KCDB *kc, const char *k, size_t klen, uint32_t *v_r)
{
	unsigned char b[8];
	int32_t n;

	n = kcdbgetbuf(kc, k, klen, (char *)b, sizeof(b));
	if (n < 0)
		return kcdbecode(kc) == KCENOREC ? 0 : -1;
	if (n != 4)
		return -1;
	*v_r = get_u32(b);
	return 1;
}

/* read a u32 meta record: 1 found, 0 absent, -1 malformed/error */
static int
meta_u32(struct tokdb *db, const char *k, size_t klen, uint32_t *v_r)
{
	return kc_u32(db->kc, k, klen, v_r);
}

/* write a u32 meta record: 0 or -1 */
static int
set_u32(struct tokdb *db, const char *k, size_t klen, uint32_t v)
{
	unsigned char b[4];

	put_u32(b, v);
	if (!kcdbset(db->kc, k, klen, (const char *)b, sizeof(b))) {
		seterr(db, "cannot write");
		return -1;
	}
	return 0;
}

/* write the meta records of a new, empty store: 0 or -1 */
static int
init_meta(struct tokdb *db)
{
	unsigned char b[8];

	memset(b, 0, sizeof(b));
	if (!kcdbbegintran(db->kc, 0)) {
		seterr(db, "cannot begin a transaction");
		return -1;
	}
	if (set_u32(db, K_FORMAT, KLEN(K_FORMAT), TOKDB_FORMAT) < 0 ||
	    set_u32(db, K_TOKVER, KLEN(K_TOKVER), TOK_VERSION) < 0 ||
	    set_u32(db, K_NSPAM, KLEN(K_NSPAM), 0) < 0 ||
	    set_u32(db, K_NHAM, KLEN(K_NHAM), 0) < 0 ||
	    !kcdbset(db->kc, K_POS, KLEN(K_POS), (const char *)b, 8)) {
		seterr(db, "cannot write");
		kcdbendtran(db->kc, 0);
		return -1;
	}
	if (!kcdbendtran(db->kc, 1)) {
		seterr(db, "cannot commit");
		return -1;
	}
	return 0;
}

/* the list name a token file path stands for (tokens_dir/L.kch), for
 * messages; "L" when the path does not look like that */
static void
list_of(const char *path, char *out, size_t outsz)
{
	const char *b = strrchr(path, '/');
	size_t n;

	b = b ? b + 1 : path;
	n = strlen(b);
	if (n <= 4 || strcmp(b + n - 4, ".kch") != 0 || b[0] == '.' ||
	    n - 4 >= outsz) {
		snprintf(out, outsz, "L");
		return;
	}
	memcpy(out, b, n - 4);
	out[n - 4] = 0;
}

/* the message for a file of another version (format fmt, tokenizer tv) */
static void
version_msg(const char *path, uint32_t fmt, uint32_t tv, char *err,
    size_t errsz)
{
	char list[80];
	const char *how;

	list_of(path, list, sizeof(list));
	/* only an older format of this tokenizer can be converted without
	 * the journal: say so, rather than send a standalone list's
	 * administrator to a rebuild that refuses (or, for rebuild itself
	 * meeting a newer file, to run again what was just run) */
	if (fmt > TOKDB_FORMAT || tv > TOK_VERSION)
		how = "it rebuilds the file from the training journal; "
		    "without a database a file written by a newer listgate "
		    "cannot be converted: use that listgate, or move the "
		    "file away and train the list again";
	else if (tv != TOK_VERSION)
		how = "it rebuilds the file from the training journal; "
		    "without a database a file of another tokenizer cannot "
		    "be converted: move it away and train the list again";
	else
		how = "it rebuilds the file from the training journal, or "
		    "converts it when no database is configured";
	snprintf(err, errsz, "token file %s was written by another version "
	    "of listgate (format %u, tokenizer %u; this program uses format "
	    "%u, tokenizer %u): run `%s rebuild --list %s` (%s)", path,
	    (unsigned)fmt, (unsigned)tv, (unsigned)TOKDB_FORMAT,
	    (unsigned)TOK_VERSION, suggest_cmd(), list, how);
}

/* read the format and tokenizer versions: 0, or TOKDB_ERR (with err) for
 * a file without them */
static int
read_versions(struct tokdb *db, uint32_t *fmt_r, uint32_t *tv_r, char *err,
    size_t errsz)
{
	char list[80];

	if (meta_u32(db, K_FORMAT, KLEN(K_FORMAT), fmt_r) <= 0 ||
	    meta_u32(db, K_TOKVER, KLEN(K_TOKVER), tv_r) <= 0) {
		list_of(db->path, list, sizeof(list));
		snprintf(err, errsz, "token file %s is not a listgate token "
		    "file (no version records): run `%s rebuild "
		    "--list %s` to recreate it from the journal, or move it "
		    "away and retrain the list",
		    db->path, suggest_cmd(), list);
		return TOKDB_ERR;
	}
	return 0;
}

/* check the format and tokenizer versions: 0, or a TOKDB_E* code */
static int
check_meta(struct tokdb *db, char *err, size_t errsz)
{
	uint32_t fmt, tv;

	if (read_versions(db, &fmt, &tv, err, errsz) < 0)
		return TOKDB_ERR;
	if (fmt != TOKDB_FORMAT || tv != TOK_VERSION) {
		version_msg(db->path, fmt, tv, err, errsz);
		return TOKDB_EVERSION;
	}
	return 0;
}

int
tokdb_dangling(const char *path, char *err, size_t errsz)
{
	char to[1024];
	struct stat st;
	ssize_t n;

	if (lstat(path, &st) < 0 || !S_ISLNK(st.st_mode) ||
	    stat(path, &st) == 0 || errno != ENOENT)
		return 0;
	if ((n = readlink(path, to, sizeof(to) - 1)) < 0)
		n = 0;
	to[n] = '\0';
	snprintf(err, errsz, "token file %s is a symbolic link to %s, which "
	    "does not exist (moved, or on a file system not mounted): "
	    "restore the file it names, or remove the link", path,
	    n > 0 ? to : "?");
	return 1;
}

/* the message for a token file that is not there */
static void
missing(const char *path, const char *list, char *err, size_t errsz)
{
	const char *lg = suggest_cmd();
	size_t n;

	/* a link to nothing: train never puts a new file over it */
	if (tokdb_dangling(path, err, errsz)) {
		n = strlen(err);
		snprintf(err + n, errsz - n, "; or `%s sync` or `%s rebuild "
		    "--list %s` recreates the token file from the journal in "
		    "the link's place (without a database, remove the link "
		    "and train the list: %s train --list %s --spam/--ham ...)",
		    lg, lg, list, lg, list);
		return;
	}
	snprintf(err, errsz, "token file %s does not exist: `%s sync` "
	    "or `%s rebuild --list %s` recreates it from the journal "
	    "(without a database, train the list first: %s train "
	    "--list %s --spam/--ham ...)", path, lg, lg, list, lg, list);
}

/* a damaged file: TOKDB_EDAMAGED with a message naming the fault */
static int
damaged(struct tokdb *db, const char *what, char *err, size_t errsz)
{
	snprintf(err, errsz, "token file %s is damaged (%s): run `%s "
	    "rebuild --list %s` to recreate it from the journal, or move it "
	    "away and retrain the list", db->path, what, suggest_cmd(),
	    db->list);
	return TOKDB_EDAMAGED;
}

/* the cheap part of the check, at every open: the message counts and
 * the journal position, where present, have their sizes */
static int
check_counts(struct tokdb *db, char *err, size_t errsz)
{
	unsigned char b[24];
	uint32_t v;
	int32_t n;

	if (meta_u32(db, K_NSPAM, KLEN(K_NSPAM), &v) < 0 ||
	    meta_u32(db, K_NHAM, KLEN(K_NHAM), &v) < 0)
		return damaged(db, "malformed message counts", err, errsz);
	n = kcdbgetbuf(db->kc, K_POS, KLEN(K_POS), (char *)b, sizeof(b));
	if ((n < 0 && kcdbecode(db->kc) != KCENOREC) ||
	    (n >= 0 && n != 8 && n != 16))
		return damaged(db, "malformed journal position", err, errsz);
	return 0;
}

/*
 * A new token file: created empty with mode TOKDB_FILE_MODE exactly
 * (whatever the umask), so that Kyoto Cabinet fills it in and never
 * creates it with its own 0644.  Someone else creating it first is fine.
 * 0, or -1 with errno.
 */
static int
create_file(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	    TOKDB_FILE_MODE);

	if (fd < 0)
		return errno == EEXIST ? 0 : -1;
	if (fchmod(fd, TOKDB_FILE_MODE) < 0) {
		int e = errno;

		close(fd);
		unlink(path);
		errno = e;
		return -1;
	}
	return close(fd);
}

/* a writer takes away what TOKDB_FILE_MODE does not allow (files made
 * 0644 by earlier versions), in st too: a failure (not the owner)
 * changes nothing */
static void
tighten_mode(const char *path, struct stat *st)
{
	mode_t m = st->st_mode & 07777 & ~(0777 & ~(mode_t)TOKDB_FILE_MODE);

	if ((st->st_mode & 07777) != m && chmod(path, m) == 0)
		st->st_mode = (st->st_mode & ~(mode_t)07777) | m;
}

int
tokdb_dir_check(const char *dir, char *err, size_t errsz)
{
	struct stat st;

	if (stat(dir, &st) < 0) {
		snprintf(err, errsz, "tokens directory %s: %s", dir,
		    strerror(errno));
		return -1;
	}
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
		snprintf(err, errsz, "tokens directory %s is writable by %s "
		    "(mode %04o): another user could put files of their own "
		    "among the token files; give listgate a directory only "
		    "its owner may write (chmod go-w %s, or another "
		    "tokens_dir)", dir, (st.st_mode & S_IWOTH) ? "everyone" :
		    "its group", (unsigned)(st.st_mode & 07777), dir);
		return -1;
	}
	return 0;
}

int
tokdb_dir_foreign(const char *dir, uid_t *owner_r, char *at, size_t atsz)
{
	struct stat st;
	char p[PATH_MAX];
	size_t n;
	char *sl;

	/* the directory the path names, links resolved: those above a
	 * link's target count, not those above the link */
	if (geteuid() != 0 || realpath(dir, p) == NULL || (n = strlen(p)) == 0)
		return 0;	/* (a missing one: the open says so) */
	/* the directory and each one above it: another user who owns one,
	 * or may write one (not sticky), can rename what is below and put
	 * a directory of their own in its place */
	for (;;) {
		if (stat(p, &st) < 0)
			return 0;	/* the open says what is missing */
		if (st.st_uid != 0 || ((st.st_mode & (S_IWGRP | S_IWOTH)) &&
		    !(st.st_mode & S_ISVTX))) {
			if (owner_r != NULL)
				*owner_r = st.st_uid;
			if (at != NULL && atsz > 0)
				snprintf(at, atsz, "%s", p);
			return 1;
		}
		while (n > 1 && p[n - 1] == '/')
			p[--n] = '\0';
		if ((sl = strrchr(p, '/')) == NULL || strcmp(p, "/") == 0)
			return 0;
		n = sl == p ? 1 : (size_t)(sl - p);
		p[n] = '\0';
	}
}

/* tokdb_dir_check of path's directory, when there is one (a missing
 * directory is the missing file's error, reported by the open); a
 * writer running as root also needs a directory of root's */
static int
dir_trusted(const char *path, int writer, char *err, size_t errsz)
{
	char dir[4200], at[PATH_MAX];
	uid_t owner = 0;
	const char *slash = strrchr(path, '/');
	struct stat st;
	size_t n;

	if (slash == NULL)
		snprintf(dir, sizeof(dir), ".");
	else {
		n = slash == path ? 1 : (size_t)(slash - path);
		if (n >= sizeof(dir))
			n = sizeof(dir) - 1;
		memcpy(dir, path, n);
		dir[n] = '\0';
	}
	if (stat(dir, &st) < 0)
		return 0;
	if (tokdb_dir_check(dir, err, errsz) < 0)
		return -1;
	/* Kyoto Cabinet opens PATH.wal (O_TRUNC), a rebuild renames and
	 * chowns by name, all following links: root must not do so where
	 * another user may put links (--allow-root in the list user's
	 * tokens directory), or that user has it truncate, write or give
	 * them any file */
	if (writer && tokdb_dir_foreign(dir, &owner, at, sizeof(at))) {
		struct passwd *pw = getpwuid(owner);
		char name[64], rdir[PATH_MAX];
		/* the tokens directory itself, or one above it? */
		int self = realpath(dir, rdir) != NULL && strcmp(at, rdir) == 0;

		if (pw != NULL)
			snprintf(name, sizeof(name), "%s", pw->pw_name);
		else
			snprintf(name, sizeof(name), "%lu",
			    (unsigned long)owner);
		if (self && owner != 0)
			snprintf(err, errsz, "tokens directory %s belongs to "
			    "%s: root does not write token files in a "
			    "directory another user owns (that user could make "
			    "it write or truncate any file through a link "
			    "there); run listgate as %s (runuser -u %s -- "
			    "listgate ..., or without --allow-root and with "
			    "user = %s in listgate.conf)", dir, name, name,
			    name, name);
		else
			snprintf(err, errsz, "tokens directory %s: %s above it "
			    "%s: root does not write token files where another "
			    "user could put a directory of their own in the "
			    "tokens directory's place (and make it write or "
			    "truncate any file through a link there); run "
			    "listgate as the tokens directory's user, or give "
			    "%s to root (chown root, chmod go-w)", dir, at,
			    owner != 0 ? "belongs to another user" :
			    "may be written by others", at);
		if (owner != 0 && !self) {
			size_t k = strlen(err);

			snprintf(err + k, errsz - k, " (its owner: %s)", name);
		}
		return -1;
	}
	return 0;
}

/* did the last open fail because another process holds the lock? */
static int
lock_busy(KCDB *kc)
{
	return kcdbecode(kc) == KCESYSTEM &&
	    (strstr(kcdbemsg(kc), "fcntl") != NULL ||
	    strstr(kcdbemsg(kc), "lock") != NULL);
}

/* identity of a file: did a compaction put another file at the path? */
static int
same_file(const struct stat *a, const struct stat *b)
{
	return a->st_ino == b->st_ino && a->st_dev == b->st_dev;
}

/* 1 when Kyoto Cabinet's write-ahead log of path is there, not empty */
static int
wal_left(const char *path)
{
	char wal[4300];
	struct stat st;
	int n = snprintf(wal, sizeof(wal), "%s.wal", path);

	return n > 0 && (size_t)n < sizeof(wal) && stat(wal, &st) == 0 &&
	    S_ISREG(st.st_mode) && st.st_size > 0;
}

/*
 * Kyoto Cabinet, opening a file that a writer left in a transaction
 * (killed, crashed), rolls it back and may rebuild it (reorganize_file:
 * a new file renamed over it), created with our group and the umask:
 * filters in the token files' group could no longer read it.  Give the
 * file at path the group and mode it had before (was), when it is
 * another file now and ours to change; failures are left alone (a
 * reader is seldom its owner).
 */
static void
keep_group_mode(const char *path, const struct stat *was)
{
	struct stat now;

	if (stat(path, &now) < 0 || same_file(was, &now) ||
	    (now.st_uid != geteuid() && geteuid() != 0))
		return;
	/* root (--allow-root) gives it back to its owner too: a file left
	 * root's would refuse that owner's next sync */
	if (geteuid() == 0 && now.st_uid != was->st_uid &&
	    chown(path, was->st_uid, was->st_gid) < 0)
		return;
	if (now.st_gid != was->st_gid && chown(path, (uid_t)-1, was->st_gid) < 0)
		return;
	if ((now.st_mode & 07777) != (was->st_mode & 07777))
		(void)chmod(path, was->st_mode & 07777);
}

/*
 * A file about to be renamed over the token file at dest (a bulk
 * writer's copy, a compaction, a rebuilt file) was made with this
 * process's group: give it dest's group, and no more of a mode than
 * dest had (within TOKDB_FILE_MODE), or filters reading the token file
 * through its group defer every post once it is in place (and, made by
 * root, dest's owner).  Nothing when
 * dest is missing; failures (not in dest's group) are left alone, as
 * in keep_group_mode.
 */
static void
take_group_mode(const char *path, const char *dest)
{
	struct stat was, now;
	mode_t m;

	if (stat(dest, &was) < 0 || stat(path, &now) < 0 ||
	    same_file(&was, &now))
		return;
	/* root (--allow-root: a rebuild, tune --apply, a bulk train) gives
	 * the new file dest's owner too, or that owner's next sync, the
	 * token files' writer, could not write it */
	if (geteuid() == 0 && now.st_uid != was.st_uid &&
	    chown(path, was.st_uid, was.st_gid) < 0)
		return;
	if (now.st_gid != was.st_gid && chown(path, (uid_t)-1, was.st_gid) < 0)
		return;
	m = was.st_mode & 07777 & (mode_t)TOKDB_FILE_MODE;
	if ((now.st_mode & 07777) != m)
		(void)chmod(path, m);
}

/*
 * Open path with Kyoto Cabinet, waiting up to wait_ms for the lock.  A
 * writer also makes sure the file it locked is still the one at path
 * (a compaction may have renamed a new file over it meanwhile) and
 * otherwise opens again.  bnum tunes a file created now.  0, or a
 * TOKDB_E* code with err.
 */
static int
open_kc(struct tokdb *db, const char *path, int mode, unsigned wait_ms,
    long bnum, char *err, size_t errsz)
{
	struct stat st, st2;
	char kpath[4200], tune[128];
	uint32_t kmode;
	double start, delay = 1.0, left;
	int writer = (mode & TOKDB_WRITE) != 0, created, r, e, se;

	if (strcmp(path, ":") != 0 && dir_trusted(path, writer, err,
	    errsz) < 0)
		return TOKDB_ERR;
	start = clock_now_ms();
	for (;;) {
		created = 0;
		if (stat(path, &st) < 0) {
			e = errno;
			/* a link to nothing is no missing file, but one away
			 * (on a disk not mounted): read as none, a list's
			 * scores went on with the site store alone, and a
			 * writer created the file it names */
			if (e == ENOENT && tokdb_dangling(path, err, errsz)) {
				missing(path, db->list, err, errsz);
				return TOKDB_ERR;
			}
			errno = e;
			if (errno != ENOENT || !(writer && (mode & TOKDB_CREATE))) {
				r = errno == ENOENT ? TOKDB_ENOENT : TOKDB_ERR;
				if (r == TOKDB_ENOENT)
					missing(path, db->list, err, errsz);
				else
					snprintf(err, errsz, "token file %s: %s",
					    path, strerror(errno));
				return r;
			}
			if (create_file(path) < 0) {
				snprintf(err, errsz, "cannot create the token "
				    "file %s: %s", path, strerror(errno));
				return TOKDB_ERR;
			}
			created = 1;
		} else if (!S_ISREG(st.st_mode)) {
			snprintf(err, errsz, "token file %s is not a regular "
			    "file", path);
			return TOKDB_ERR;
		} else if (writer)
			tighten_mode(path, &st);
		kmode = KCOTRYLOCK | (writer ? KCOWRITER : KCOREADER);
		if (writer && (mode & TOKDB_CREATE))
			kmode |= KCOCREATE;
		snprintf(tune, sizeof(tune), TUNE_CREATE, bnum);
		/* an empty file (a writer killed before Kyoto Cabinet wrote
		 * its header, or emptied by hand) is made afresh by this
		 * writer: tuned as a new one, or it got Kyoto Cabinet's
		 * defaults, a million buckets (7 MB for 20000 tokens, never
		 * compacted back) */
		r = snprintf(kpath, sizeof(kpath), "%s%s%s", path,
		    created || ((kmode & KCOCREATE) && st.st_size == 0) ?
		    tune : "", TUNE_OPEN);
		if (r < 0 || (size_t)r >= sizeof(kpath)) {
			snprintf(err, errsz, "token file %s: path too long",
			    path);
			return TOKDB_ERR;
		}
		if (kcdbopen(db->kc, kpath, kmode)) {
			if (!created)
				keep_group_mode(path, &st);
			/* a writer must hold the lock of the file at path */
			if (!writer || created || (stat(path, &st2) == 0 &&
			    same_file(&st, &st2)))
				return 0;
			kcdbclose(db->kc);
			if ((double)wait_ms - (clock_now_ms() - start) > 0)
				continue;
			snprintf(err, errsz, "token file %s was replaced "
			    "while waiting for its lock; gave up after %u ms",
			    path, wait_ms);
			return TOKDB_ELOCK;
		}
		se = sys_errno(db->kc);
		left = (double)wait_ms - (clock_now_ms() - start);
		if (lock_busy(db->kc) && left > 0) {
			clock_sleep_ms(delay < left ? delay : left);
			if (delay < TOKDB_POLL_MAX_MS)
				delay *= 2;
			if (delay > TOKDB_POLL_MAX_MS)
				delay = TOKDB_POLL_MAX_MS;
			continue;
		}
		if (lock_busy(db->kc)) {
			snprintf(err, errsz, "token file %s is locked by a "
			    "trainer; gave up after %u ms", path, wait_ms);
			r = TOKDB_ELOCK;
		} else if (kcdbecode(db->kc) == KCENOREPOS) {
			missing(path, db->list, err, errsz);
			r = TOKDB_ENOENT;
		} else if (kcdbecode(db->kc) == KCENOPERM && writer &&
		    stat(path, &st2) == 0 && st2.st_uid != geteuid() &&
		    fs_dir_owned(path)) {
			/* another user's file (made by root: `train
			 * --allow-root`) in the tokens directory of the user
			 * this runs as: "run as their owner" sent that user
			 * to run as root, which makes more such files */
			struct passwd *pw = getpwuid(st2.st_uid);
			char owner[64], me[64];

			if (pw != NULL)
				snprintf(owner, sizeof(owner), "%s", pw->pw_name);
			else
				snprintf(owner, sizeof(owner), "%lu",
				    (unsigned long)st2.st_uid);
			if ((pw = getpwuid(geteuid())) != NULL)
				snprintf(me, sizeof(me), "%s", pw->pw_name);
			else
				snprintf(me, sizeof(me), "%lu",
				    (unsigned long)geteuid());
			snprintf(err, errsz, "token file %s cannot be opened for "
			    "writing (%s): it belongs to %s, not to %s, whom "
			    "this command runs as: give it to %s (chown %s "
			    "%s), keeping its group", path, kcdbemsg(db->kc),
			    owner, me, me, me, path);
			r = TOKDB_ERR;
		} else if (kcdbecode(db->kc) == KCENOPERM && !writer &&
		    stat(path, &st2) == 0 && st2.st_uid != geteuid() &&
		    !(st2.st_mode & S_IRGRP)) {
			/* a file its group may not read (copied in under
			 * umask 077, chmod 600): "needs the token files'
			 * group" sent the reader's user, which may well be in
			 * it, to be added to it */
			snprintf(err, errsz, "token file %s cannot be opened for "
			    "reading (%s): its mode %04o lets no one but its "
			    "owner read it, and its readers (filter) read token "
			    "files through their group: chmod g+r %s", path,
			    kcdbemsg(db->kc), (unsigned)(st2.st_mode & 07777),
			    path);
			r = TOKDB_ERR;
		} else if (kcdbecode(db->kc) == KCENOPERM) {
			/* not damaged: run by the wrong user (rebuilding or
			 * moving it away, standalone, would lose its training) */
			snprintf(err, errsz, "token file %s cannot be opened for "
			    "%s (%s): %s", path, writer ? "writing" : "reading",
			    kcdbemsg(db->kc), writer ? "the commands that write "
			    "token files run as their owner (the user of "
			    "listgate.conf)" : "its reader needs the token "
			    "files' group");
			r = TOKDB_ERR;
		} else if (!writer && wal_left(path)) {
			/* a writer died inside a transaction: its undo log
			 * is there, and only the file's owner may roll it
			 * back (any writer does, when it opens the file) */
			snprintf(err, errsz, "token file %s cannot be opened "
			    "(%s): a writer died in a transaction and left "
			    "%s.wal; the owner of the token files rolls it "
			    "back by opening it: `%s sync --list %s`, or "
			    "without a database `%s score --list %s "
			    "--db-dump > /dev/null`", path, kcdbemsg(db->kc),
			    path, suggest_cmd(), db->list, suggest_cmd(),
			    db->list);
			r = TOKDB_ERR;
		} else if ((e = fgrow_last_error()) != 0 || se == ENOSPC ||
		    se == EDQUOT) {
			snprintf(err, errsz, "token file %s cannot be opened "
			    "(%s: %s); free space on its disk and try again",
			    path, kcdbemsg(db->kc), strerror(e ? e : se));
			r = TOKDB_ERR;
		} else if (se != 0) {
			/* the system's reason: too many open files, out of
			 * memory, a disk error */
			snprintf(err, errsz, "token file %s cannot be opened "
			    "(%s: %s); if it is damaged, run `%s rebuild "
			    "--list %s` to recreate it from the journal, or "
			    "move it away and retrain the list",
			    path, kcdbemsg(db->kc), strerror(se), suggest_cmd(),
			    db->list);
			r = TOKDB_ERR;
		} else {
			snprintf(err, errsz, "token file %s cannot be opened "
			    "(%s); if it is damaged, run `%s rebuild "
			    "--list %s` to recreate it from the journal, or "
			    "move it away and retrain the list",
			    path, kcdbemsg(db->kc), suggest_cmd(), db->list);
			r = kcdbecode(db->kc) == KCEBROKEN ? TOKDB_EDAMAGED :
			    TOKDB_ERR;
		}
		/* an empty file created above is no token file */
		if (created && stat(path, &st2) == 0 && st2.st_size == 0)
			unlink(path);
		return r;
	}
}

/* a handle on path with its Kyoto Cabinet object, not yet open: 0, or
 * TOKDB_ERR with err */
static int
new_handle(const char *path, int mode, struct tokdb **db_r, char *err,
    size_t errsz)
{
	struct tokdb *db;

	*db_r = NULL;
	if (path == NULL || *path == 0) {
		snprintf(err, errsz, "no token file given");
		return TOKDB_ERR;
	}
	if (strchr(path, '#') != NULL) {
		snprintf(err, errsz, "token file %s: a path must not contain "
		    "'#' (Kyoto Cabinet reads it as tuning options)", path);
		return TOKDB_ERR;
	}
	if ((db = xcalloc(1, sizeof(*db))) == NULL ||
	    (db->path = xstrdup(path)) == NULL ||
	    (db->kc = kcdbnew()) == NULL) {
		if (db)
			xfree(db->path);
		xfree(db);
		snprintf(err, errsz, "token file %s: out of memory", path);
		return TOKDB_ERR;
	}
	db->mode = mode;
	db->mem = strcmp(path, ":") == 0;
	list_of(path, db->list, sizeof(db->list));
	db->lockfd = -1;
	*db_r = db;
	return 0;
}

/* open without looking at the version records (conversion reads older
 * formats): 0, or a TOKDB_E* code with err */
static int
open_any(const char *path, int mode, unsigned wait_ms, long bnum,
    struct tokdb **db_r, char *err, size_t errsz)
{
	struct tokdb *db;
	int r;

	if ((r = new_handle(path, mode, &db, err, errsz)) != 0)
		return r;
	if (db->mem) {
		/* stash database: same API, no file, no locks */
		if (!kcdbopen(db->kc, ":", KCOWRITER | KCOCREATE)) {
			snprintf(err, errsz, "in-memory token store: %s",
			    kcdbemsg(db->kc));
			tokdb_close(db);
			return TOKDB_ERR;
		}
	} else if ((r = open_kc(db, path, mode, wait_ms, bnum, err,
	    errsz)) != 0) {
		kcdbdel(db->kc);
		db->kc = NULL;
		tokdb_close(db);
		return r;
	}
	/* a writer may have created the file just now: give it its meta */
	if ((mode & TOKDB_WRITE) && kcdbcount(db->kc) == 0) {
		if (init_meta(db) < 0) {
			snprintf(err, errsz, "%s", db->emsg);
			tokdb_close(db);
			return TOKDB_ERR;
		}
		db->created = 1;
	}
	*db_r = db;
	return 0;
}

static int open_bulk(const char *path, int mode, unsigned wait_ms,
    struct tokdb **db_r, char *err, size_t errsz);
static void clean_stale(const char *path);
static long kc_bnum(KCDB *kc);
static int bulk_grow(struct tokdb *db);
static long bulk_learn(struct tokdb *db, const struct toklist *tl, int spam,
    int dir, uint32_t day);
static KCDB *base_kc(const struct tokdb *db);
static struct pend *pend_find(const struct tokdb *db, uint64_t key);
static int pend_counts(const unsigned char *v, size_t vsiz,
    const struct pend *e, struct tokcount *c);
static uint32_t pstep_apply(uint32_t c, const struct pstep *p);

int
tokdb_open(const char *path, int mode, unsigned wait_ms,
    struct tokdb **db_r, char *err, size_t errsz)
{
	struct tokdb *db;
	int r;

	*db_r = NULL;
	if ((mode & TOKDB_BULK) && strcmp(path, ":") != 0)
		return open_bulk(path, mode, wait_ms, db_r, err, errsz);
	if ((r = open_any(path, mode & ~TOKDB_BULK, wait_ms, TOKDB_BNUM_MIN,
	    &db, err,
	    errsz)) != 0)
		return r;
	if ((r = check_meta(db, err, errsz)) != 0 ||
	    (r = check_counts(db, err, errsz)) != 0) {
		tokdb_close(db);
		return r;
	}
	/* a writer removes what a killed rewrite of this file left (a sync
	 * with nothing to apply never rewrites it) */
	if ((mode & TOKDB_WRITE) && !db->mem)
		clean_stale(path);
	*db_r = db;
	return 0;
}

void
tokdb_close(struct tokdb *db)
{
	if (db == NULL)
		return;
	if (db->kc) {
		if (db->intran && !db->bulk)
			kcdbendtran(db->kc, 0);
		kcdbclose(db->kc);
		kcdbdel(db->kc);
	}
	if (db->bulk && db->dest != NULL && db->path != NULL) {
		/* an unpublished private copy: thrown away */
		unlink(db->path);
	}
	if (db->lockfd >= 0)
		close(db->lockfd);
	tokdb_close(db->old);
	xfree(db->rc);
	xbigfree(db->pend, db->cappend, sizeof(*db->pend));
	xfree(db->pdec);
	xfree(db->dest);
	xfree(db->path);
	xfree(db);
}

/* slots looked at for one key at most */
#define RC_PROBES	32
/* the first table: 2^RC_BITS0 slots */
#define RC_BITS0	12

int
tokdb_cache(struct tokdb *db)
{
	uint64_t m = 0;

	/* a writer's counts move; so may an in-memory store's */
	if ((db->mode & TOKDB_WRITE) != 0 || db->mem)
		return -1;
	if (db->rc != NULL)
		return 0;
	if (getrandom(&m, sizeof(m), GRND_NONBLOCK) != (ssize_t)sizeof(m))
		m = (uint64_t)(clock_now_s() * 1e9) * 0x9e3779b97f4a7c15ULL ^
		    (uint64_t)getpid() << 32;
	db->rcmul = m | 1;
	db->rcbits = RC_BITS0;
	db->caprc = (size_t)1 << RC_BITS0;
	db->nrc = 0;
	if ((db->rc = xcalloc(db->caprc, sizeof(*db->rc))) == NULL)
		db->caprc = 0;		/* out of memory: reads go on uncached */
	return 0;
}

/* the slot of key in a table of 2^bits: its entry, the empty one where
 * it would go, or NULL after RC_PROBES slots */
static struct rcache *
rc_slot(struct rcache *t, unsigned bits, uint64_t mul, uint64_t key)
{
	size_t mask = ((size_t)1 << bits) - 1;
	size_t i = (size_t)((key * mul) >> (64 - bits)), n;

	for (n = 0; n < RC_PROBES; n++, i = (i + 1) & mask)
		if (t[i].key == 0 || t[i].key == key)
			return &t[i];
	return NULL;
}

/* keep a read; never fails (a full or unallocatable cache keeps less) */
static void
rc_put(struct tokdb *db, uint64_t key, const struct tokcount *c, int found)
{
	struct rcache *e, *t, *d;
	size_t i, cap;

	if (key == 0 || db->caprc == 0)
		return;
	if ((db->nrc + 1) * 2 > db->caprc && db->caprc < TOKDB_CACHE_MAX) {
		cap = db->caprc * 2;
		if ((t = xcalloc(cap, sizeof(*t))) != NULL) {
			for (i = 0; i < db->caprc; i++)
				if (db->rc[i].key != 0 && (d = rc_slot(t,
				    db->rcbits + 1, db->rcmul,
				    db->rc[i].key)) != NULL)
					*d = db->rc[i];
			xfree(db->rc);
			db->rc = t;
			db->caprc = cap;
			db->rcbits++;
			/* what found no slot within RC_PROBES is dropped */
			for (db->nrc = 0, i = 0; i < cap; i++)
				db->nrc += t[i].key != 0;
		}
	}
	if ((db->nrc + 1) * 2 > db->caprc)
		return;			/* full: keep no more */
	if ((e = rc_slot(db->rc, db->rcbits, db->rcmul, key)) == NULL)
		return;
	if (e->key == 0)
		db->nrc++;
	e->key = key;
	e->c = *c;
	e->found = found;
}

/* tokdb_get from the file */
static int
get_uncached(struct tokdb *db, uint64_t key, struct tokcount *c_r)
{
	unsigned char b[32], k[KEYLEN];
	int32_t n;

	put_key(k, key);
	if (db->bulk) {
		KCDB *base = base_kc(db);

		n = base ? kcdbgetbuf(base, (const char *)k, KEYLEN, (char *)b,
		    sizeof(b)) : -1;
		return pend_counts(n > 0 ? b : NULL, n > 0 ? ((size_t)n >
		    sizeof(b) ? sizeof(b) : (size_t)n) : 0,
		    pend_find(db, key), c_r);
	}
	n = kcdbgetbuf(db->kc, (const char *)k, KEYLEN, (char *)b, sizeof(b));
	if (n < 0) {
		if (kcdbecode(db->kc) == KCENOREC)
			return 0;
		seterr(db, "cannot read");
		return -1;
	}
	if (dec_count(b, (size_t)n > sizeof(b) ? sizeof(b) : (size_t)n,
	    c_r) < 0)
		return 0;		/* malformed record: as if absent */
	return 1;
}

int
tokdb_get(struct tokdb *db, const void *tok, size_t len,
    struct tokcount *c_r)
{
	struct rcache *e;
	uint64_t key;
	int r;

	memset(c_r, 0, sizeof(*c_r));
	if (len == 0)
		return 0;		/* never a token */
	key = tokdb_key(tok, len);
	if (db->caprc > 0 && key != 0 &&
	    (e = rc_slot(db->rc, db->rcbits, db->rcmul, key)) != NULL &&
	    e->key == key) {
		*c_r = e->c;
		return e->found;
	}
	if ((r = get_uncached(db, key, c_r)) >= 0)
		rc_put(db, key, c_r, r);
	return r;
}

size_t
tokdb_cached(const struct tokdb *db)
{
	return db->nrc;
}

int
tokdb_msgcounts(struct tokdb *db, uint32_t *nspam_r, uint32_t *nham_r)
{
	*nspam_r = *nham_r = 0;
	if (db->bulk) {
		KCDB *base = base_kc(db);

		if (base != NULL && (kc_u32(base, K_NSPAM, KLEN(K_NSPAM),
		    nspam_r) < 0 || kc_u32(base, K_NHAM, KLEN(K_NHAM),
		    nham_r) < 0))
			return plainerr(db, "cannot read message counts");
		*nham_r = pstep_apply(*nham_r, &db->msg[0]);
		*nspam_r = pstep_apply(*nspam_r, &db->msg[1]);
		return 0;
	}
	if (meta_u32(db, K_NSPAM, KLEN(K_NSPAM), nspam_r) < 0 ||
	    meta_u32(db, K_NHAM, KLEN(K_NHAM), nham_r) < 0) {
		seterr(db, "cannot read message counts");
		return -1;
	}
	return 0;
}

int
tokdb_begin(struct tokdb *db)
{
	if (!(db->mode & TOKDB_WRITE) && !db->mem)
		return plainerr(db, "opened read-only");
	if (db->intran)
		return plainerr(db, "transaction already open");
	if (db->poisoned)
		return plainerr(db, "a batch was rolled back: the private copy "
		    "is thrown away");
	if (!db->bulk && !kcdbbegintran(db->kc, 0)) {
		seterr(db, "cannot begin a transaction");
		return -1;
	}
	db->intran = 1;
	return 0;
}

/* end the open transaction */
static int
endtran(struct tokdb *db, int commit)
{
	if (!db->intran)
		return plainerr(db, "no transaction open");
	db->intran = 0;
	if (db->bulk) {
		/* no transactions in a private copy: what a rolled-back batch
		 * wrote stays there, so the copy is never published */
		if (!commit)
			db->poisoned = 1;
		return 0;
	}
	if (!kcdbendtran(db->kc, commit)) {
		seterr(db, commit ? "cannot commit" : "cannot roll back");
		return -1;
	}
	return 0;
}

int
tokdb_commit(struct tokdb *db)
{
	return endtran(db, 1);
}

int
tokdb_abort(struct tokdb *db)
{
	return endtran(db, 0);
}

/* what one visit of a token record should do */
struct visit {
	int spam, dir;
	uint32_t day;
	int isnew, removed;
	unsigned char out[16];
};

/* the token exists: change its counts, or remove it at zero */
static const char *
visit_full(const char *kbuf, size_t ksiz, const char *vbuf, size_t vsiz,
    size_t *sp, void *opq)
{
	struct visit *v = opq;
	struct tokcount c;
	uint32_t *n;

	(void)kbuf;
	(void)ksiz;
	dec_count((const unsigned char *)vbuf, vsiz, &c);
	n = v->spam ? &c.spam : &c.ham;
	if (v->dir > 0) {
		if (*n < UINT32_MAX)
			(*n)++;
		c.day = v->day;
	} else {
		if (*n > 0)
			(*n)--;
		if (c.spam == 0 && c.ham == 0) {
			v->removed = 1;
			return KCVISREMOVE;
		}
	}
	*sp = enc_count(v->out, &c);
	return (const char *)v->out;
}

/* the token is absent: learning creates it, unlearning does nothing */
static const char *
visit_empty(const char *kbuf, size_t ksiz, size_t *sp, void *opq)
{
	struct visit *v = opq;
	struct tokcount c;

	(void)kbuf;
	(void)ksiz;
	if (v->dir < 0)
		return KCVISNOP;
	c.spam = v->spam ? 1 : 0;
	c.ham = v->spam ? 0 : 1;
	c.day = v->day;
	v->isnew = 1;
	*sp = enc_count(v->out, &c);
	return (const char *)v->out;
}

long
tokdb_learn(struct tokdb *db, const struct toklist *tl, int spam,
    int dir, uint32_t day)
{
	struct visit v;
	size_t i, n, len;
	uint32_t cnt;
	long changed = 0;
	unsigned char key[KEYLEN];
	const char *k;

	if (!db->intran)
		return plainerr(db, "learning outside a transaction");
	if (db->bulk)
		return bulk_learn(db, tl, spam, dir, day);
	memset(&v, 0, sizeof(v));
	v.spam = spam != 0;
	v.dir = dir < 0 ? -1 : 1;
	v.day = day;
	n = toklist_count(tl);
	for (i = 0; i < n; i++) {
		k = toklist_get(tl, i, &len);
		if (len == 0)
			continue;
		put_key(key, tokdb_key(k, len));
		v.isnew = v.removed = 0;
		if (!kcdbaccept(db->kc, (const char *)key, KEYLEN, visit_full,
		    visit_empty, &v, 1)) {
			seterr(db, "cannot update a token");
			return -1;
		}
		changed += v.dir > 0 ? v.isnew : v.removed;
	}
	if (meta_u32(db, v.spam ? K_NSPAM : K_NHAM,
	    v.spam ? KLEN(K_NSPAM) : KLEN(K_NHAM), &cnt) < 0) {
		seterr(db, "cannot read message counts");
		return -1;
	}
	if (v.dir > 0 && cnt < UINT32_MAX)
		cnt++;
	else if (v.dir < 0 && cnt > 0)
		cnt--;
	if (set_u32(db, v.spam ? K_NSPAM : K_NHAM,
	    v.spam ? KLEN(K_NSPAM) : KLEN(K_NHAM), cnt) < 0)
		return -1;
	return changed;
}

int
tokdb_get_pos(struct tokdb *db, int64_t *pos_r)
{
	int64_t mark;

	return tokdb_get_pos_mark(db, pos_r, &mark);
}

int
tokdb_get_pos_mark(struct tokdb *db, int64_t *pos_r, int64_t *mark_r)
{
	unsigned char b[24];
	int32_t n;

	*pos_r = 0;
	*mark_r = 0;
	if (db->bulk && db->setpos) {
		*pos_r = db->pos;
		*mark_r = db->pmark;
		return 0;
	}
	if (db->bulk && base_kc(db) == NULL)
		return 0;
	n = kcdbgetbuf(db->bulk ? base_kc(db) : db->kc, K_POS, KLEN(K_POS),
	    (char *)b, sizeof(b));
	if (n < 0) {
		if (kcdbecode(db->bulk ? base_kc(db) : db->kc) == KCENOREC)
			return 0;
		seterr(db, "cannot read the journal position");
		return -1;
	}
	if (n != 8 && n != 16) {
		snprintf(db->emsg, sizeof(db->emsg), "token file %s: malformed "
		    "journal position; the file is damaged: `%s rebuild "
		    "--list %s` recreates it from the journal", db->path,
		    suggest_cmd(), db->list);
		return -1;
	}
	*pos_r = (int64_t)get_le64(b);
	if (n == 16)
		*mark_r = (int64_t)get_le64(b + 8);
	return 0;
}

int
tokdb_set_pos(struct tokdb *db, int64_t pos)
{
	return tokdb_set_pos_mark(db, pos, 0);
}

/* write the position record: 8 bytes, 16 with a mark */
static int
put_pos(struct tokdb *db, int64_t pos, int64_t mark)
{
	unsigned char b[16];

	put_le64(b, (uint64_t)pos);
	put_le64(b + 8, (uint64_t)mark);
	if (!kcdbset(db->kc, K_POS, KLEN(K_POS), (const char *)b, mark != 0 ?
	    16 : 8)) {
		seterr(db, "cannot write the journal position");
		return -1;
	}
	return 0;
}

int
tokdb_set_pos_mark(struct tokdb *db, int64_t pos, int64_t mark)
{
	if (!db->intran)
		return plainerr(db, "journal position set outside a transaction");
	if (db->bulk) {
		db->pos = pos;
		db->pmark = mark;
		db->setpos = 1;
		return 0;
	}
	return put_pos(db, pos, mark);
}

int
tokdb_get_feats(struct tokdb *db, uint32_t *feats_r)
{
	KCDB *kc;
	int r;

	*feats_r = 0;
	if (db->bulk && db->setfeats) {
		*feats_r = db->feats;
		return 1;
	}
	if ((kc = db->bulk ? base_kc(db) : db->kc) == NULL)
		return 0;	/* a new file, nothing recorded yet */
	if ((r = kc_u32(kc, K_FEATS, KLEN(K_FEATS), feats_r)) < 0) {
		snprintf(db->emsg, sizeof(db->emsg), "token file %s: cannot "
		    "read the record of its feature families (damaged?): "
		    "`%s rebuild --list %s` recreates the file from the "
		    "journal", db->path, suggest_cmd(), db->list);
		return -1;
	}
	if (r > 0 && (*feats_r & ~TOKDB_FEAT_ALL) != 0) {
		/* another version's tokens: learning ours in would mix */
		snprintf(db->emsg, sizeof(db->emsg), "token file %s was built "
		    "with feature families this listgate does not know "
		    "(0x%x): `%s rebuild --list %s` rebuilds it from the "
		    "journal as this version makes tokens", db->path,
		    (unsigned)*feats_r, suggest_cmd(), db->list);
		return -1;
	}
	return r;
}

int
tokdb_created(const struct tokdb *db)
{
	return db->created;
}

int
tokdb_set_feats(struct tokdb *db, uint32_t feats)
{
	if (db->bulk) {
		db->feats = feats;
		db->setfeats = 1;
		return 0;
	}
	if (db->intran)
		return set_u32(db, K_FEATS, KLEN(K_FEATS), feats);
	/* outside one (a writer recording a file it just created, before
	 * it has anything to learn): a transaction of its own */
	if (tokdb_begin(db) < 0)
		return -1;
	if (set_u32(db, K_FEATS, KLEN(K_FEATS), feats) < 0) {
		tokdb_abort(db);
		return -1;
	}
	return tokdb_commit(db);
}

long
tokdb_ntokens(struct tokdb *db)
{
	int64_t n = kcdbcount(db->kc);
	uint32_t ndec;

	if (n < 0) {
		seterr(db, "cannot count records");
		return -1;
	}
	/* neither the meta records nor the decisions are tokens */
	if (meta_u32(db, K_NDEC, KLEN(K_NDEC), &ndec) > 0)
		n -= 1 + (int64_t)ndec;
	if (meta_u32(db, K_FEATS, KLEN(K_FEATS), &ndec) > 0)
		n--;
	return n >= NMETA ? (long)(n - NMETA) : 0;
}

/* state passed through kcdbiterate to the caller's function */
struct iter {
	tokdb_iter_fn fn;
	void *ctx;
	int stopped;
};

/* one record of the iteration: hand token records to the caller */
static const char *
iter_visit(const char *kbuf, size_t ksiz, const char *vbuf, size_t vsiz,
    size_t *sp, void *opq)
{
	struct iter *it = opq;
	struct tokcount c;

	(void)sp;
	if (it->stopped || ksiz != KEYLEN)
		return KCVISNOP;	/* a meta record */
	if (dec_count((const unsigned char *)vbuf, vsiz, &c) < 0)
		return KCVISNOP;
	if (it->fn(get_key((const unsigned char *)kbuf), &c, it->ctx) != 0)
		it->stopped = 1;
	return KCVISNOP;
}

int
tokdb_iterate(struct tokdb *db, tokdb_iter_fn fn, void *ctx)
{
	struct iter it;

	it.fn = fn;
	it.ctx = ctx;
	it.stopped = 0;
	if (!kcdbiterate(db->kc, iter_visit, &it, 0)) {
		seterr(db, "cannot iterate");
		return -1;
	}
	return it.stopped ? 1 : 0;
}

const char *
tokdb_errmsg(struct tokdb *db)
{
	return db->emsg[0] ? db->emsg : "no error";
}

uint32_t
tokdb_today(void)
{
	time_t t = time(NULL);

	return t < 0 ? 0 : (uint32_t)(t / 86400);
}

/* the key of the decision record for a post's digest */
static void
dec_key(const unsigned char *sha, char *k)
{
	memcpy(k, K_DEC, KLEN(K_DEC));
	memcpy(k + KLEN(K_DEC), sha, TOKDB_SHA256_LEN);
}

/* record (or remove) a decision in db->kc: 0, or -1 */
static int
dec_apply(struct tokdb *db, const unsigned char *sha, int state,
    uint32_t day)
{
	char k[DEC_KLEN];
	unsigned char b[5];
	uint32_t ndec = 0;
	int had;

	dec_key(sha, k);
	had = kcdbcheck(db->kc, k, sizeof(k)) >= 0;
	if (!had && kcdbecode(db->kc) != KCENOREC) {
		seterr(db, "cannot read a decision");
		return -1;
	}
	if (meta_u32(db, K_NDEC, KLEN(K_NDEC), &ndec) < 0)
		return plainerr(db, "malformed count of decisions");
	if (state == TOKDB_UNDECIDED) {
		if (!had)
			return 0;
		if (!kcdbremove(db->kc, k, sizeof(k))) {
			seterr(db, "cannot remove a decision");
			return -1;
		}
		return set_u32(db, K_NDEC, KLEN(K_NDEC), ndec > 0 ? ndec - 1 :
		    0);
	}
	put_u32(b, day);
	b[4] = (unsigned char)state;
	if (!kcdbset(db->kc, k, sizeof(k), (const char *)b, sizeof(b))) {
		seterr(db, "cannot record a decision");
		return -1;
	}
	return had ? 0 : set_u32(db, K_NDEC, KLEN(K_NDEC), ndec + 1);
}

/* bulk mode: a decision kept for bulk_flush, in order (a later one on
 * the same post wins there): 0, or -1 */
static int
pdec_add(struct tokdb *db, const unsigned char *sha, int state,
    uint32_t day)
{
	struct pdec *n;
	size_t cap;

	if (db->npdec == db->cappdec) {
		cap = db->cappdec ? 2 * db->cappdec : 64;
		if (cap > SIZE_MAX / sizeof(*n) ||
		    (n = xrealloc(db->pdec, cap * sizeof(*n))) == NULL)
			return plainerr(db, "out of memory");
		db->pdec = n;
		db->cappdec = cap;
	}
	memcpy(db->pdec[db->npdec].sha, sha, TOKDB_SHA256_LEN);
	db->pdec[db->npdec].day = day;
	db->pdec[db->npdec].state = state;
	db->npdec++;
	return 0;
}

int
tokdb_set_decided(struct tokdb *db, const unsigned char *sha, int state,
    uint32_t day)
{
	if (!db->intran)
		return plainerr(db, "decision recorded outside a transaction");
	if (db->bulk)
		return pdec_add(db, sha, state, day);
	return dec_apply(db, sha, state, day);
}

int
tokdb_get_decided(struct tokdb *db, const unsigned char *sha, int *state_r,
    uint32_t *day_r)
{
	KCDB *kc = db->bulk ? base_kc(db) : db->kc;
	char k[DEC_KLEN];
	unsigned char b[8];
	int32_t n;
	size_t i;

	*state_r = TOKDB_UNDECIDED;
	*day_r = 0;
	for (i = db->npdec; i-- > 0; )	/* bulk mode: the latest pending */
		if (memcmp(db->pdec[i].sha, sha, TOKDB_SHA256_LEN) == 0) {
			*state_r = db->pdec[i].state;
			*day_r = db->pdec[i].day;
			return *state_r != TOKDB_UNDECIDED;
		}
	if (kc == NULL)
		return 0;		/* a new file, not yet written */
	dec_key(sha, k);
	n = kcdbgetbuf(kc, k, sizeof(k), (char *)b, sizeof(b));
	if (n < 0) {
		if (kcdbecode(kc) == KCENOREC)
			return 0;
		/* (not seterr: in bulk mode db->kc may be none yet) */
		snprintf(db->emsg, sizeof(db->emsg), "token file %s: cannot "
		    "read a decision: %s; if the file is damaged, `%s "
		    "rebuild --list %s` recreates it from the journal",
		    db->path, kcdbemsg(kc), suggest_cmd(), db->list);
		return -1;
	}
	if (n != 5 || (b[4] != TOKDB_RELEASED && b[4] != TOKDB_REFUSED))
		return plainerr(db, "malformed decision record");
	*state_r = b[4];
	*day_r = get_u32(b);
	return 1;
}

/* one meta record's key and size, for tokdb_check */
static const struct {
	const char *k;
	size_t klen, vlen;
} meta_keys[NMETA] = {
	{ K_FORMAT, KLEN(K_FORMAT), 4 }, { K_TOKVER, KLEN(K_TOKVER), 4 },
	{ K_NSPAM, KLEN(K_NSPAM), 4 }, { K_NHAM, KLEN(K_NHAM), 4 },
	{ K_POS, KLEN(K_POS), 8 },
};

/* is this record well formed?  NULL, or what is wrong */
static const char *
check_record(const char *k, size_t ks, const char *v, size_t vs)
{
	struct tokcount c;
	size_t i;

	if (ks == 0)
		return "a record with an empty key";
	if (ks == KEYLEN)
		return dec_count_fmt((const unsigned char *)v, vs, &c,
		    TOKDB_FORMAT) == vs ? NULL :
		    "a token record whose counts do not decode";
	if (k[0] != 0)
		return "a record whose key is neither a token's nor a meta "
		    "record's";
	for (i = 0; i < NMETA; i++)
		if (ks == meta_keys[i].klen && memcmp(k, meta_keys[i].k,
		    ks) == 0)
			return vs == meta_keys[i].vlen || (ks == KLEN(K_POS) &&
			    memcmp(k, K_POS, ks) == 0 && vs == 16) ? NULL :
			    "a meta record of the wrong size";
	if ((ks == KLEN(K_NDEC) && memcmp(k, K_NDEC, ks) == 0) ||
	    (ks == KLEN(K_FEATS) && memcmp(k, K_FEATS, ks) == 0))
		return vs == 4 ? NULL : "a meta record of the wrong size";
	if (ks == DEC_KLEN && memcmp(k, K_DEC, KLEN(K_DEC)) == 0)
		return vs == 5 && (v[4] == TOKDB_RELEASED ||
		    v[4] == TOKDB_REFUSED) ? NULL : "a malformed decision record";
	return "an unknown meta record";
}

/* big-endian bytes */
static uint64_t
get_be(const unsigned char *p, int n)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

/* read n bytes at off: 0, or -1 */
static int
pread_all(int fd, void *buf, size_t n, off_t off)
{
	ssize_t r;

	while (n > 0) {
		r = pread(fd, buf, n, off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		buf = (char *)buf + r;
		n -= (size_t)r;
		off += r;
	}
	return 0;
}

/* Kyoto Cabinet's file hash database, format 6 (kchashdb.h): a 64-byte
 * header, the free block pool, the bucket array, the records */
#define KCH_FMTVER	6
#define KCH_TYPE	0x30	/* HashDB */
#define KCH_TSMALL	1	/* 4-byte addresses (else 6) */
#define KCH_FBPWIDTH	6
#define KCH_RECMAGIC	0xcc
#define BUCKET_READ	65536

/*
 * The buckets, which iterating the records never reads: each one in use
 * must point at a record (its magic byte) in the record area.  Damage
 * there (most of a young file is its bucket array) breaks the lookup of
 * a token not yet learnt, or the next one learnt.  NULL when sound (or
 * the file is of a format this code does not know: then unchecked),
 * else what is wrong, in what.
 */
static const char *
check_buckets(struct tokdb *db, char *what, size_t whatsz)
{
	unsigned char head[64], *buf = NULL, magic;
	uint64_t bnum, lsiz, boff, roff, off, i, n, j, align;
	unsigned apow, fpow, width;
	const char *bad = NULL;
	struct stat st;
	int fd;

	if (db->mem || (fd = open(db->path, O_RDONLY | O_CLOEXEC)) < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || pread_all(fd, head, sizeof(head), 0) < 0 ||
	    memcmp(head, "KC\n", 4) != 0 || head[6] != KCH_FMTVER ||
	    head[8] != KCH_TYPE)
		goto out;	/* not a layout this code knows */
	apow = head[9];
	fpow = head[10];
	width = (head[11] & KCH_TSMALL) ? 4 : 6;
	bnum = get_be(head + 16, 8);
	lsiz = get_be(head + 40, 8);
	if (apow > 15 || fpow > 20 || bnum == 0 || bnum > (1ULL << 40)) {
		bad = "a damaged file header";
		goto out;
	}
	align = 1ULL << apow;
	boff = 64 + (fpow > 0 ? KCH_FBPWIDTH * (1ULL << fpow) + width * 2 +
	    2 : 0);
	roff = boff + width * bnum;
	if (roff % align != 0)
		roff += align - roff % align;
	if (lsiz > (uint64_t)st.st_size || roff > lsiz) {
		bad = "a file header whose sizes do not fit the file";
		goto out;
	}
	if ((buf = xmalloc(BUCKET_READ)) == NULL)
		goto out;	/* (unchecked rather than failed) */
	for (i = 0; i < bnum && bad == NULL; i += n) {
		n = bnum - i < BUCKET_READ / width ? bnum - i :
		    BUCKET_READ / width;
		if (pread_all(fd, buf, n * width, (off_t)(boff + i * width)) <
		    0) {
			bad = "a bucket array that cannot be read";
			break;
		}
		for (j = 0; j < n && bad == NULL; j++) {
			off = get_be(buf + j * width, (int)width) << apow;
			if (off == 0)
				continue;
			if (off < roff || off >= lsiz)
				bad = "a bucket that points outside the records";
			else if (pread_all(fd, &magic, 1, (off_t)off) < 0 ||
			    magic != KCH_RECMAGIC)
				bad = "a bucket that points at no record";
			if (bad != NULL)
				snprintf(what, whatsz, "%s (bucket %llu of "
				    "%llu)", bad, (unsigned long long)(i + j),
				    (unsigned long long)bnum);
		}
	}
out:
	xfree(buf);
	close(fd);
	return bad == NULL ? NULL : what[0] ? what : bad;
}

int
tokdb_check(struct tokdb *db, long *ntokens_r, char *err, size_t errsz)
{
	KCCUR *cur;
	char *k, *v2, what[200];
	const char *v, *bad = NULL;
	size_t ks, vs, vs2;
	int64_t want, nrec = 0, nmeta = 0;
	int code;

	if (ntokens_r != NULL)
		*ntokens_r = 0;
	if ((want = kcdbcount(db->kc)) < 0) {
		snprintf(what, sizeof(what), "cannot count its records: %s",
		    kcdbemsg(db->kc));
		return damaged(db, what, err, errsz);
	}
	if ((cur = kcdbcursor(db->kc)) == NULL) {
		snprintf(err, errsz, "token file %s: out of memory", db->path);
		return TOKDB_ERR;
	}
	if (!kccurjump(cur) && kcdbecode(db->kc) != KCENOREC) {
		snprintf(what, sizeof(what), "cannot read its first record: "
		    "%s", kcdbemsg(db->kc));
		kccurdel(cur);
		return damaged(db, what, err, errsz);
	}
	/* (more records than the header says would be damage too: stop) */
	while (bad == NULL && nrec <= want &&
	    (k = kccurget(cur, &ks, &v, &vs, 1)) != NULL) {
		nrec++;
		if (ks != KEYLEN)
			nmeta++;	/* meta and decision records */
		if ((bad = check_record(k, ks, v, vs)) == NULL) {
			/* the same record again through its hash chain */
			v2 = kcdbget(db->kc, k, ks, &vs2);
			if (v2 == NULL || vs2 != vs || memcmp(v2, v, vs) != 0)
				bad = "a record that its key does not find "
				    "again (damaged hash chains or key)";
			kcfree(v2);
		}
		kcfree(k);
	}
	code = kccurecode(cur);
	if (bad == NULL && nrec <= want && code != KCENOREC) {
		snprintf(what, sizeof(what), "cannot read record %lld: %s",
		    (long long)nrec + 1, kccuremsg(cur));
		bad = what;
	}
	kccurdel(cur);
	if (bad == NULL && nrec != want) {
		snprintf(what, sizeof(what), "%lld records where its header "
		    "counts %lld", (long long)nrec, (long long)want);
		bad = what;
	}
	if (bad == NULL) {
		what[0] = 0;
		bad = check_buckets(db, what, sizeof(what));
	}
	if (bad != NULL)
		return damaged(db, bad, err, errsz);
	if (ntokens_r != NULL)
		*ntokens_r = (long)(nrec - nmeta);
	return 0;
}

/* --- rewriting a file: compaction and conversion ------------------------ */

static int hold_for_replace(const char *path, unsigned wait_ms,
    struct tokdb **src_r, int *fd_r, char *err, size_t errsz);
static int close_synced(struct tokdb *db, const char *final, char *err,
    size_t errsz);

/* what rewrite() is asked to do */
#define RW_IF_FULL	0	/* only when the buckets are overfull */
#define RW_ALWAYS	1	/* a current file, rewritten anyway */
#define RW_CONVERT	2	/* also an older format of the same tokenizer */

/* the bucket count of an open file (0 when unknown) */
static long
kc_bnum(KCDB *kc)
{
	char *st = kcdbstatus(kc), *p;
	long v = 0;

	/* "name\tvalue\n" lines in name order; bnum comes before the one
	 * binary field (opaque) */
	for (p = st; p != NULL && *p != 0; ) {
		if (strncmp(p, "bnum\t", 5) == 0) {
			v = strtol(p + 5, NULL, 10);
			break;
		}
		if ((p = strchr(p, '\n')) != NULL)
			p++;
	}
	kcfree(st);
	return v > 0 ? v : 0;
}

/* the kinds of private copy a process builds beside a token file (see
 * tokdb_tmp_name); what a killed one left of each is cleaned up */
static const char *const tmp_kinds[] = { "compact", "new", "rebuild",
    "relay" };

int
tokdb_tmp_name(const char *path, const char *kind, long pid, char *out,
    size_t outsz)
{
	const char *base = strrchr(path, '/');
	size_t dlen, blen;
	int n;

	base = base != NULL ? base + 1 : path;
	dlen = (size_t)(base - path);
	blen = strlen(base);
	if (blen > 4 && strcmp(base + blen - 4, ".kch") == 0)
		blen -= 4;
	n = snprintf(out, outsz, "%.*s.%.*s.%s-%ld.kch", (int)dlen, path,
	    (int)blen, base, kind, pid);
	return n < 0 || (size_t)n >= outsz ? -1 : 0;
}

/* the pid in name (digits up to the first non-digit, *end_r), or 0 */
static long
name_pid(const char *name, char **end_r)
{
	long pid;

	if (*name < '0' || *name > '9')
		return 0;
	errno = 0;
	pid = strtol(name, end_r, 10);
	return errno || pid <= 0 ? 0 : pid;
}

/*
 * What may follow the pid of a private copy's name: ".kch", with ".wal"
 * or TOKDB_GROW_SUFFIX or nothing after it; 1 when end is that.  Or,
 * when nested, one of the copy's own private copies: ".KIND-PID.kch"
 * and the same (a rebuild's later batches go through a bulk copy of its
 * new file: ..LIST.rebuild-PID.compact-PID.kch, and its relay), 2 with
 * that PID in *pid_r.
 */
static int
stale_tail(const char *end, long *pid_r)
{
	char *e;
	size_t k, n;

	if (strncmp(end, ".kch", 4) == 0 && (end[4] == 0 ||
	    strcmp(end + 4, ".wal") == 0 ||
	    strcmp(end + 4, TOKDB_GROW_SUFFIX) == 0))
		return 1;
	if (*end != '.')
		return 0;
	for (k = 0; k < sizeof(tmp_kinds) / sizeof(tmp_kinds[0]); k++) {
		n = strlen(tmp_kinds[k]);
		if (strncmp(end + 1, tmp_kinds[k], n) == 0 &&
		    end[1 + n] == '-')
			break;
	}
	if (k == sizeof(tmp_kinds) / sizeof(tmp_kinds[0]) ||
	    (*pid_r = name_pid(end + 2 + n, &e)) == 0 ||
	    stale_tail(e, pid_r) != 1)
		return 0;
	return 2;
}

/* remove the private copies of path (with their .wal, the copy one
 * moved aside to grow, and the copies of such a copy) that a process
 * now gone left behind (killed mid-way) */
static void
clean_stale(const char *path)
{
	char dir[4200], prefix[600], p[4400], *end;
	const char *base = strrchr(path, '/'), *name;
	struct dirent *de;
	size_t pl, k;
	long pid, inner;
	DIR *d;

	if (base == NULL) {
		snprintf(dir, sizeof(dir), ".");
		base = path;
	} else {
		snprintf(dir, sizeof(dir), "%.*s", (int)(base - path), path);
		base++;
	}
	if ((d = opendir(dir[0] ? dir : "/")) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		/* ".BASE.KIND-PID...", or a copy's copy "..BASE.KIND-PID..."
		 * (no list's name starts with a dot) */
		name = de->d_name[0] == '.' && de->d_name[1] == '.' ?
		    de->d_name + 1 : de->d_name;
		for (k = 0; k < sizeof(tmp_kinds) / sizeof(tmp_kinds[0]);
		    k++) {
			/* ".BASE.KIND-" */
			if (tokdb_tmp_name(base, tmp_kinds[k], 0, prefix,
			    sizeof(prefix)) < 0)
				continue;
			pl = strlen(prefix) - strlen("0.kch");
			if (strncmp(name, prefix, pl) == 0)
				break;
		}
		if (k == sizeof(tmp_kinds) / sizeof(tmp_kinds[0]))
			continue;
		inner = 0;
		if ((pid = name_pid(name + pl, &end)) == 0 ||
		    stale_tail(end, &inner) != (name == de->d_name ? 1 : 2))
			continue;
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;	/* still at work (or not ours) */
		if (inner != 0 && inner != pid &&
		    (kill((pid_t)inner, 0) == 0 || errno != ESRCH))
			continue;
		if ((size_t)snprintf(p, sizeof(p), "%s/%s", dir[0] ? dir : "",
		    de->d_name) < sizeof(p))
			unlink(p);
	}
	closedir(d);
}

/* merging a converted record into the new file: counts add up (two
 * texts with one key, which SipHash makes as good as impossible) */
struct merge {
	struct tokcount c;
	unsigned char out[16];
};

static const char *
merge_full(const char *kbuf, size_t ksiz, const char *vbuf, size_t vsiz,
    size_t *sp, void *opq)
{
	struct merge *m = opq;
	struct tokcount c;

	(void)kbuf;
	(void)ksiz;
	dec_count((const unsigned char *)vbuf, vsiz, &c);
	c.spam = c.spam > UINT32_MAX - m->c.spam ? UINT32_MAX :
	    c.spam + m->c.spam;
	c.ham = c.ham > UINT32_MAX - m->c.ham ? UINT32_MAX : c.ham + m->c.ham;
	if (m->c.day > c.day)
		c.day = m->c.day;
	*sp = enc_count(m->out, &c);
	return (const char *)m->out;
}

static const char *
merge_empty(const char *kbuf, size_t ksiz, size_t *sp, void *opq)
{
	struct merge *m = opq;

	(void)kbuf;
	(void)ksiz;
	*sp = enc_count(m->out, &m->c);
	return (const char *)m->out;
}

/*
 * Copy every record of src into dst: meta records as they are; token
 * records as they are, or with conv (src is format 1) keyed by
 * tokdb_key of their text and re-encoded.  0, or -1 with err.
 */
static int
copy_records(struct tokdb *src, struct tokdb *dst, int conv, char *err,
    size_t errsz)
{
	struct merge m;
	unsigned char key[KEYLEN];
	const char *vbuf;
	char *kbuf;
	size_t ksiz, vsiz;
	KCCUR *cur;
	int rc = 0;

	if ((cur = kcdbcursor(src->kc)) == NULL) {
		snprintf(err, errsz, "token file %s: out of memory", src->path);
		return -1;
	}
	if (!kccurjump(cur)) {
		rc = kccurecode(cur) == KCENOREC ? 0 : -1;
		if (rc < 0)
			snprintf(err, errsz, "token file %s: cannot read: %s",
			    src->path, kccuremsg(cur));
		kccurdel(cur);
		return rc;
	}
	while ((kbuf = kccurget(cur, &ksiz, &vbuf, &vsiz, 1)) != NULL) {
		if (conv && ksiz > 0 && kbuf[0] != 0) {
			/* a format 1 token record: malformed ones are
			 * dropped, as they read as absent anyway */
			if (dec_count_fmt((const unsigned char *)vbuf, vsiz,
			    &m.c, FORMAT_TEXT) > 0) {
				put_key(key, tokdb_key(kbuf, ksiz));
				if (!kcdbaccept(dst->kc, (const char *)key,
				    KEYLEN, merge_full, merge_empty, &m, 1))
					rc = -1;
			}
		} else if (!kcdbset(dst->kc, kbuf, ksiz, vbuf, vsiz))
			rc = -1;
		kcfree(kbuf);
		if (rc < 0) {
			snprintf(err, errsz, "token file %s: cannot write: %s",
			    dst->path, kcdbemsg(dst->kc));
			break;
		}
	}
	if (rc == 0 && kccurecode(cur) != KCENOREC) {
		snprintf(err, errsz, "token file %s: cannot read: %s",
		    src->path, kccuremsg(cur));
		rc = -1;
	}
	kccurdel(cur);
	return rc;
}

/* (tokdb.h; renamed over the link, the new file took the link's place,
 * on the tokens directory's disk) */
const char *
tokdb_replace_target(const char *path, char *out)
{
	struct stat st;

	if (lstat(path, &st) < 0 || !S_ISLNK(st.st_mode) ||
	    realpath(path, out) == NULL)
		return path;
	return out;
}

/*
 * Rewrite the token file at path into a fresh file with room for its
 * tokens, renamed over dst_path (path itself, or another name; see the
 * top of this file).  The old file is
 * held with a reader's lock meanwhile: filters go on reading it,
 * writers wait and then find the new file.  2 converted from format 1,
 * 1 rewritten, 0 nothing to do (RW_IF_FULL and the file not full), or a
 * TOKDB_E* code with err.
 */
static int
rewrite(const char *path, const char *dst_path, unsigned wait_ms, int how,
    char *err, size_t errsz)
{
	struct tokdb *src = NULL, *dst = NULL, *held = NULL;
	char tmp[4400] = "", list[80], real[PATH_MAX];
	const char *target;
	uint32_t fmt, tv;
	long ntok, bnum;
	int64_t count;
	int conv = 0, r, lockfd = -1, heldfd = -1;

	if (strcmp(path, ":") == 0)
		return 0;		/* nothing to rewrite in memory */
	if ((r = hold_for_replace(path, wait_ms, &src, &lockfd, err,
	    errsz)) != 0)
		return r;
	if ((r = read_versions(src, &fmt, &tv, err, errsz)) != 0)
		goto out;
	if (fmt != TOKDB_FORMAT || tv != TOK_VERSION) {
		r = TOKDB_EVERSION;
		if (how != RW_CONVERT || fmt > TOKDB_FORMAT) {
			version_msg(path, fmt, tv, err, errsz);
			goto out;
		}
		if (tv != TOK_VERSION) {
			list_of(path, list, sizeof(list));
			snprintf(err, errsz, "token file %s was built by "
			    "another tokenizer (version %u; this program uses "
			    "%u): its tokens cannot be converted.  Configure "
			    "the database so that `%s rebuild --list %s` "
			    "rebuilds it from the training journal, or move it "
			    "away and retrain the list", path, (unsigned)tv,
			    (unsigned)TOK_VERSION, suggest_cmd(), list);
			goto out;
		}
		conv = fmt == FORMAT_TEXT;
	}
	count = kcdbcount(src->kc);
	ntok = count > NMETA ? (long)(count - NMETA) : 0;
	if (how == RW_IF_FULL && !conv) {
		bnum = kc_bnum(src->kc);
		if (bnum == 0 || ntok <= LOAD_MAX * bnum) {
			r = 0;
			goto out;
		}
	}
	bnum = ntok * BUCKETS_PER_TOKEN;
	if (bnum < TOKDB_BNUM_MIN)
		bnum = TOKDB_BNUM_MIN;
	/* the new file goes beside the one it replaces, a link's target */
	target = tokdb_replace_target(dst_path, real);
	clean_stale(dst_path);
	if (target != dst_path)
		clean_stale(target);
	r = TOKDB_ERR;
	if (tokdb_tmp_name(target, "compact", (long)getpid(), tmp,
	    sizeof(tmp)) < 0) {
		snprintf(err, errsz, "token file %s: path too long", dst_path);
		goto out;
	}
	unlink(tmp);
	if (new_handle(tmp, TOKDB_WRITE | TOKDB_CREATE, &dst, err,
	    errsz) != 0)
		goto out;
	if (open_kc(dst, tmp, TOKDB_WRITE | TOKDB_CREATE, 0, bnum, err,
	    errsz) != 0) {
		kcdbdel(dst->kc);
		dst->kc = NULL;
		goto out;
	}
	if (copy_records(src, dst, conv, err, errsz) < 0)
		goto out;
	if (conv && set_u32(dst, K_FORMAT, KLEN(K_FORMAT), TOKDB_FORMAT) < 0) {
		snprintf(err, errsz, "%s", dst->emsg);
		goto out;
	}
	if (close_synced(dst, target, err, errsz) < 0)
		goto out;
	/* another file goes in place of dst_path: hold that one as well,
	 * so that no writer has it open (inside a transaction, its
	 * write-ahead log, named after the path, would be taken for the new
	 * file's by the next writer: records lost, readers faulting past the
	 * end).  One that is missing, or too damaged to open, has no
	 * writers. */
	if (strcmp(path, dst_path) != 0) {
		r = hold_for_replace(dst_path, wait_ms, &held, &heldfd, err,
		    errsz);
		if (r == TOKDB_ELOCK)
			goto out;
		r = TOKDB_ERR;
	}
	take_group_mode(tmp, target);
	if (rename(tmp, target) < 0) {
		snprintf(err, errsz, "cannot rename %s to %s: %s", tmp,
		    target, strerror(errno));
		goto out;
	}
	tmp[0] = 0;
	r = conv ? 2 : 1;
out:
	if (dst != NULL) {
		tokdb_close(dst);
		if (tmp[0] != 0)
			unlink(tmp);
	}
	/* only now may the next replacer, or a writer, have the file */
	if (heldfd >= 0)
		close(heldfd);
	tokdb_close(held);
	if (lockfd >= 0)
		close(lockfd);
	tokdb_close(src);
	return r;
}

/* --- replacing a file: the locks, the copy, bulk mode -------------------- */

/*
 * One file under two lists' names (tokens/a.kch a hard link of
 * tokens/b.kch): a new file renamed over one name leaves the other with
 * the old one, and the two lists part without a word at the first
 * compaction, rebuild or bulk write.  1 with the other name (in the
 * directory of the file the link at path leads to, where the new file
 * goes) in other, else 0.  Other names elsewhere (a backup made with
 * cp -al) and dot names (a private copy linked into place a moment ago)
 * do not count: to part from those is what they are for.
 */
static int
shared_name(const char *path, const struct stat *st, char *other,
    size_t othersz)
{
	char real[PATH_MAX], dir[PATH_MAX];
	const char *target, *base;
	struct dirent *e;
	struct stat es;
	size_t n;
	DIR *d;
	int found = 0;

	if (st->st_nlink < 2)
		return 0;
	target = tokdb_replace_target(path, real);
	base = strrchr(target, '/');
	if (base == NULL) {
		snprintf(dir, sizeof(dir), ".");
		base = target;
	} else {
		snprintf(dir, sizeof(dir), "%.*s", base == target ? 1 :
		    (int)(base - target), target);
		base++;
	}
	if ((d = opendir(dir)) == NULL)
		return 0;
	while (!found && (e = readdir(d)) != NULL) {
		n = strlen(e->d_name);
		if (e->d_name[0] == '.' || n <= 4 ||
		    strcmp(e->d_name + n - 4, ".kch") != 0 ||
		    strcmp(e->d_name, base) == 0)
			continue;
		if (fstatat(dirfd(d), e->d_name, &es, AT_SYMLINK_NOFOLLOW) ==
		    0 && S_ISREG(es.st_mode) && same_file(&es, st)) {
			snprintf(other, othersz, "%s%s%s", strcmp(dir, ".") ==
			    0 ? "" : dir, strcmp(dir, "/") == 0 ||
			    strcmp(dir, ".") == 0 ? "" : "/", e->d_name);
			found = 1;
		}
	}
	closedir(d);
	return found;
}

/*
 * What a process that renames a new file over path (a compaction, a
 * bulk writer publishing its copy) holds meanwhile: a reader's lock on
 * the file (Kyoto Cabinet's shared fcntl lock, through *src_r), so that
 * filters go on reading and writers wait, and flock(LOCK_EX) on a
 * descriptor of it (*fd_r), so that no other replacer works at once
 * (fcntl and flock locks are independent on Linux).  Both are had on the
 * file that is at path once they are had, or tried again until wait_ms
 * is over.  Release: close *fd_r (which drops the fcntl lock too) after
 * the rename, then tokdb_close(*src_r).  0, or a TOKDB_E* code with err.
 */
static int
hold_for_replace(const char *path, unsigned wait_ms, struct tokdb **src_r,
    int *fd_r, char *err, size_t errsz)
{
	struct stat st0, st1, st2;
	struct tokdb *src;
	double start = clock_now_ms(), left, delay = 1.0;
	int fd, r, had;

	*src_r = NULL;
	*fd_r = -1;
	for (;;) {
		left = (double)wait_ms - (clock_now_ms() - start);
		had = stat(path, &st0) == 0;
		if ((r = open_any(path, TOKDB_READ, left > 0 ? (unsigned)left :
		    0, 0, &src, err, errsz)) != 0)
			return r;
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
			snprintf(err, errsz, "token file %s: %s", path,
			    strerror(errno));
			tokdb_close(src);
			return TOKDB_ERR;
		}
		if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
			int e = errno;

			close(fd);
			tokdb_close(src);
			if (e != EWOULDBLOCK) {
				snprintf(err, errsz, "token file %s: flock: %s",
				    path, strerror(e));
				return TOKDB_ERR;
			}
			left = (double)wait_ms - (clock_now_ms() - start);
			if (left <= 0) {
				snprintf(err, errsz, "token file %s is being "
				    "rewritten by another process; gave up "
				    "after %u ms", path, wait_ms);
				return TOKDB_ELOCK;
			}
			clock_sleep_ms(delay < left ? delay : left);
			if (delay < TOKDB_POLL_MAX_MS)
				delay *= 2;
			continue;
		}
		if (had && fstat(fd, &st1) == 0 && stat(path, &st2) == 0 &&
		    same_file(&st0, &st1) && same_file(&st1, &st2)) {
			char other[PATH_MAX + 8];

			if (shared_name(path, &st1, other, sizeof(other))) {
				snprintf(err, errsz, "token file %s is the same "
				    "file as %s (a hard link: one file for two "
				    "lists): not replaced, which would leave %s "
				    "with the old file.  A token file is one "
				    "list's (its journal position too): give "
				    "each list a copy of its own", path, other,
				    other);
				close(fd);
				tokdb_close(src);
				return TOKDB_ERR;
			}
			*src_r = src;
			*fd_r = fd;
			return 0;
		}
		/* replaced meanwhile: have the new one */
		close(fd);
		tokdb_close(src);
		if ((double)wait_ms - (clock_now_ms() - start) <= 0) {
			snprintf(err, errsz, "token file %s was replaced while "
			    "waiting for it; gave up after %u ms", path,
			    wait_ms);
			return TOKDB_ELOCK;
		}
	}
}

/*
 * Write the file at path out again, with writes of RELAY_CHUNK bytes,
 * into a new file that takes its name (the private copy, not yet
 * published), synced, with the copy's mode.  Kyoto Cabinet wrote it page
 * by page through its mapping, so the page cache holds it in 4 KiB
 * pages; written in large pieces it is held in large folios (2 MiB
 * where the kernel and the file system can), and a reader's mapping of
 * it then costs a few page faults instead of one for every 64 KiB it
 * touches.  Where a page fault costs 10 us or more (a virtual machine),
 * that was a tenth of a filter run.  The copy's own pages go unwritten.
 * 0, or -1 when this could not be done (the file at path is then
 * untouched); final names the relay's temporary file, which clean_stale
 * knows.
 */
#define RELAY_CHUNK	(4L << 20)

static int
relay_file(const char *path, const char *final)
{
	char tmp[4200];
	struct stat st;
	unsigned char *buf = NULL;
	size_t bufsz = 0;
	off_t off;
	ssize_t n, k, w;
	int in, out = -1, made = 0, ok;

	if ((in = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	if (fstat(in, &st) < 0 || st.st_size <= 0 ||
	    tokdb_tmp_name(final, "relay", (long)getpid(), tmp,
	    sizeof(tmp)) < 0)
		goto fail;
	bufsz = st.st_size < RELAY_CHUNK ? (size_t)st.st_size :
	    (size_t)RELAY_CHUNK;
	/* huge pages for the buffer too: 4 MiB of small ones would cost a
	 * thousand page faults */
	if ((buf = xbigcalloc(1, bufsz)) == NULL)
		goto fail;
	unlink(tmp);		/* a process of this pid before us */
	if ((out = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	    0600)) < 0)
		goto fail;
	made = 1;
	if (fchmod(out, st.st_mode & 0777) < 0)
		goto fail;
	for (off = 0; off < st.st_size; off += n) {
		if ((n = pread(in, buf, bufsz, off)) <= 0) {
			if (n < 0 && errno == EINTR) {
				n = 0;
				continue;
			}
			goto fail;	/* an error, or the file shrank */
		}
		for (w = 0; w < n; w += k)
			if ((k = pwrite(out, buf + w, (size_t)(n - w),
			    off + w)) <= 0) {
				if (k < 0 && errno == EINTR) {
					k = 0;
					continue;
				}
				goto fail;
			}
	}
	ok = fsync(out) == 0;
	if (close(out) < 0)
		ok = 0;
	out = -1;
	if (!ok || rename(tmp, path) < 0)
		goto fail;
	xbigfree(buf, 1, bufsz);
	close(in);
	return 0;
fail:
	if (out >= 0)
		close(out);
	if (made)
		unlink(tmp);
	xbigfree(buf, 1, bufsz);
	close(in);
	return -1;
}

/* close db's file and put it on disk: 0, or -1 with err.  final: where
 * a private copy will be published, and it is written out afresh in
 * large pieces (relay_file) where that can be done; NULL: db's file is
 * not known to be private (a new file may be the live one, which others
 * may already wait to lock), and it is synced as it is. */
static int
close_synced(struct tokdb *db, const char *final, char *err, size_t errsz)
{
	int ok, fd;

	ok = kcdbclose(db->kc);
	if (!ok)
		snprintf(err, errsz, "token file %s: cannot close: %s",
		    db->path, kcdbemsg(db->kc));
	kcdbdel(db->kc);
	db->kc = NULL;
	if (!ok)
		return -1;
	if (final != NULL && relay_file(db->path, final) == 0)
		return 0;
	if ((fd = open(db->path, O_RDONLY | O_CLOEXEC)) < 0 || fsync(fd) < 0) {
		snprintf(err, errsz, "token file %s: cannot sync: %s",
		    db->path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

/* copy the file open at in to a new file at dst (same permissions): 0,
 * or -1 with err */
static int
copy_file(int in, const char *dst, char *err, size_t errsz)
{
	struct stat st;
	char buf[65536];
	off_t off = 0;
	ssize_t n, w, k;
	int out, plain = 0;

	if (fstat(in, &st) < 0 || (out = open(dst, O_WRONLY | O_CREAT |
	    O_EXCL | O_CLOEXEC, 0600)) < 0) {
		snprintf(err, errsz, "token file %s: %s", dst, strerror(errno));
		return -1;
	}
	/* the same mode exactly, whatever the umask */
	if (fchmod(out, st.st_mode & 0777) < 0)
		goto fail;
	while (off < st.st_size) {
		if (!plain) {
			n = copy_file_range(in, &off, out, NULL,
			    (size_t)(st.st_size - off), 0);
			if (n > 0)
				continue;
			if (n == 0)
				break;
			if (errno == EINTR)
				continue;
			if (errno != EXDEV && errno != ENOSYS &&
			    errno != EINVAL && errno != EOPNOTSUPP)
				goto fail;
			plain = 1;	/* copy_file_range cannot: read, write */
		}
		if ((n = pread(in, buf, sizeof(buf), off)) < 0) {
			if (errno == EINTR)
				continue;
			goto fail;
		}
		if (n == 0)
			break;
		for (w = 0; w < n; w += k) {
			if ((k = pwrite(out, buf + w, (size_t)(n - w),
			    off + w)) < 0) {
				if (errno == EINTR) {
					k = 0;
					continue;
				}
				goto fail;
			}
		}
		off += n;
	}
	if (close(out) < 0) {
		out = -1;
		goto fail;
	}
	return 0;
fail:
	snprintf(err, errsz, "token file %s: cannot copy: %s", dst,
	    strerror(errno));
	if (out >= 0)
		close(out);
	unlink(dst);
	return -1;
}

/* --- bulk mode: changes in memory, one private file, one rename --------- */

/* one step (+1 or -1) of a counter */
static void
pstep_add(struct pstep *p, int d)
{
	if (d > 0) {
		if (p->sum < INT32_MAX)
			p->sum++;
	} else if (p->sum > INT32_MIN + 1) {
		p->sum--;
		if (p->sum < p->low)
			p->low = p->sum;
	}
}

/* a count after its pending steps (see struct pstep) */
static uint32_t
pstep_apply(uint32_t c, const struct pstep *p)
{
	int64_t v = (int64_t)c + p->sum, floor = (int64_t)c + p->low;

	if (floor < 0)
		v -= floor;
	if (v < 0)
		v = 0;
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

/* the file bulk mode reads counts from: its private file once open,
 * else the file it replaces (NULL for a new file not yet written) */
static KCDB *
base_kc(const struct tokdb *db)
{
	if (db->kc != NULL)
		return db->kc;
	return db->old != NULL ? db->old->kc : NULL;
}

/* the pending entry of key, NULL when none */
static struct pend *
pend_find(const struct tokdb *db, uint64_t key)
{
	size_t i, m;

	if (db->cappend == 0)
		return NULL;
	m = db->cappend - 1;
	for (i = (size_t)key & m; db->pend[i].used; i = (i + 1) & m)
		if (db->pend[i].key == key)
			return &db->pend[i];
	return NULL;
}

/* the pending entry of key, made when missing (*made_r = 1); NULL when
 * out of memory.  The table is kept at most half full. */
static struct pend *
pend_get(struct tokdb *db, uint64_t key, int *made_r)
{
	struct pend *e, *nt;
	size_t i, m, j, ncap;

	*made_r = 0;
	if ((e = pend_find(db, key)) != NULL)
		return e;
	if (2 * (db->npend + 1) > db->cappend) {
		ncap = db->cappend ? 2 * db->cappend : 4096;
		if ((nt = xbigcalloc(ncap, sizeof(*nt))) == NULL)
			return NULL;
		for (j = 0; j < db->cappend; j++) {
			if (!db->pend[j].used)
				continue;
			for (i = (size_t)db->pend[j].key & (ncap - 1); nt[i].used;
			    i = (i + 1) & (ncap - 1))
				;
			nt[i] = db->pend[j];
		}
		xbigfree(db->pend, db->cappend, sizeof(*db->pend));
		db->pend = nt;
		db->cappend = ncap;
	}
	m = db->cappend - 1;
	for (i = (size_t)key & m; db->pend[i].used; i = (i + 1) & m)
		;
	e = &db->pend[i];
	memset(e, 0, sizeof(*e));
	e->key = key;
	e->used = 1;
	db->npend++;
	*made_r = 1;
	return e;
}

/* a token looked up ahead: its key (when not empty) */
struct ahead {
	uint64_t key;
	int empty;
};

/* the key of token i of tl, its slot in the pending table asked into
 * the cache */
static struct ahead
pend_prefetch(const struct tokdb *db, const struct toklist *tl, size_t i)
{
	struct ahead a = { 0, 1 };
	const char *k;
	size_t len;

	k = toklist_get(tl, i, &len);
	if (len == 0)
		return a;
	a.key = tokdb_key(k, len);
	a.empty = 0;
	if (db->cappend != 0)
		__builtin_prefetch(&db->pend[(size_t)a.key &
		    (db->cappend - 1)], 1);
	return a;
}

/* forget every pending change (they are written out) */
static void
pend_clear(struct tokdb *db)
{
	if (db->pend != NULL)
		memset(db->pend, 0, db->cappend * sizeof(*db->pend));
	db->npend = 0;
	db->nnew = 0;
	db->npdec = 0;
	memset(db->msg, 0, sizeof(db->msg));
}

/* a token record's counts with its pending changes (any may be NULL:
 * no record, no changes); 1 when the token then exists */
static int
pend_counts(const unsigned char *v, size_t vsiz, const struct pend *e,
    struct tokcount *c)
{
	if (v == NULL || dec_count(v, vsiz, c) < 0)
		memset(c, 0, sizeof(*c));
	if (e != NULL) {
		c->ham = pstep_apply(c->ham, &e->c[0]);
		c->spam = pstep_apply(c->spam, &e->c[1]);
		if (e->hasday)
			c->day = e->day;
	}
	return c->spam != 0 || c->ham != 0;
}

/* writing one pending entry into the private file */
struct pvisit {
	const struct pend *e;
	unsigned char out[16];
};

static const char *
pend_full(const char *kbuf, size_t ksiz, const char *vbuf, size_t vsiz,
    size_t *sp, void *opq)
{
	struct pvisit *pv = opq;
	struct tokcount c;

	(void)kbuf;
	(void)ksiz;
	if (!pend_counts((const unsigned char *)vbuf, vsiz, pv->e, &c))
		return KCVISREMOVE;
	*sp = enc_count(pv->out, &c);
	return (const char *)pv->out;
}

static const char *
pend_empty(const char *kbuf, size_t ksiz, size_t *sp, void *opq)
{
	struct pvisit *pv = opq;
	struct tokcount c;

	(void)kbuf;
	(void)ksiz;
	if (!pend_counts(NULL, 0, pv->e, &c))
		return KCVISNOP;
	*sp = enc_count(pv->out, &c);
	return (const char *)pv->out;
}

/* a new private file at db->path with room for ntok tokens and the meta
 * records, open in db->kc: 0, or -1 with db->emsg */
static int
bulk_create(struct tokdb *db, long ntok)
{
	char err[512];
	long bnum = ntok * BUCKETS_PER_TOKEN;

	if (bnum < TOKDB_BNUM_MIN)
		bnum = TOKDB_BNUM_MIN;
	unlink(db->path);
	if ((db->kc = kcdbnew()) == NULL)
		return plainerr(db, "out of memory");
	if (open_kc(db, db->path, TOKDB_WRITE | TOKDB_CREATE, 0, bnum, err,
	    sizeof(err)) != 0) {
		kcdbdel(db->kc);
		db->kc = NULL;
		snprintf(db->emsg, sizeof(db->emsg), "%s", err);
		return -1;
	}
	if (init_meta(db) < 0)
		return -1;
	db->bnum = kc_bnum(db->kc);
	return 0;
}

/*
 * Write the pending changes out to the private file, opening it first:
 * a copy of the old file (byte for byte when the new tokens fit in its
 * hash table, else record by record into a larger one), or a new file
 * sized for them; a file already open is rewritten larger when they
 * would overfill it.  0, or -1 with db->emsg (the copy is then spoilt).
 */
static int
bulk_flush(struct tokdb *db)
{
	struct pvisit pv;
	char err[512];
	uint32_t n;
	size_t i;
	long ntok;
	int k;

	if (db->kc == NULL && db->old == NULL) {
		/* a new file */
		if (bulk_create(db, db->nnew) < 0)
			goto fail;
	} else if (db->kc == NULL) {
		ntok = (long)(kcdbcount(db->old->kc) - NMETA) + db->nnew;
		if (ntok <= LOAD_MAX * kc_bnum(db->old->kc)) {
			if (copy_file(db->lockfd, db->path, err,
			    sizeof(err)) < 0 || (db->kc = kcdbnew()) == NULL) {
				snprintf(db->emsg, sizeof(db->emsg), "%s", err);
				goto fail;
			}
			if (open_kc(db, db->path, TOKDB_WRITE, 0, 0, err,
			    sizeof(err)) != 0) {
				kcdbdel(db->kc);
				db->kc = NULL;
				snprintf(db->emsg, sizeof(db->emsg), "%s", err);
				goto fail;
			}
			db->bnum = kc_bnum(db->kc);
		} else if (bulk_create(db, ntok) < 0 ||
		    copy_records(db->old, db, 0, err, sizeof(err)) < 0) {
			if (db->emsg[0] == 0)
				snprintf(db->emsg, sizeof(db->emsg), "%s", err);
			goto fail;
		}
	} else if ((long)(kcdbcount(db->kc) - NMETA) + db->nnew >
	    LOAD_MAX * db->bnum && bulk_grow(db) < 0)
		goto fail;
	for (i = 0; i < db->cappend; i++) {
		if (!db->pend[i].used)
			continue;
		unsigned char key[KEYLEN];

		put_key(key, db->pend[i].key);
		pv.e = &db->pend[i];
		if (!kcdbaccept(db->kc, (const char *)key, KEYLEN, pend_full,
		    pend_empty, &pv, 1)) {
			seterr(db, "cannot update a token");
			goto fail;
		}
	}
	for (k = 0; k < 2; k++) {
		const char *mk = k ? K_NSPAM : K_NHAM;
		size_t ml = k ? KLEN(K_NSPAM) : KLEN(K_NHAM);

		if (meta_u32(db, mk, ml, &n) < 0) {
			seterr(db, "cannot read message counts");
			goto fail;
		}
		if (set_u32(db, mk, ml, pstep_apply(n, &db->msg[k])) < 0)
			goto fail;
	}
	for (i = 0; i < db->npdec; i++)
		if (dec_apply(db, db->pdec[i].sha, db->pdec[i].state,
		    db->pdec[i].day) < 0)
			goto fail;
	if (db->setfeats && set_u32(db, K_FEATS, KLEN(K_FEATS),
	    db->feats) < 0)
		goto fail;
	if (db->setpos && put_pos(db, db->pos, db->pmark) < 0)
		goto fail;
	pend_clear(db);
	return 0;
fail:
	db->poisoned = 1;
	return -1;
}

/*
 * TOKDB_BULK: a writer without transactions.  An existing file is held
 * as by a replacer (its readers go on, other writers wait) and read for
 * the base counts; a missing one (with TOKDB_CREATE) is the caller's
 * private new file.  Changes gather in memory until published (or too
 * many: bulk_flush).  0, or a TOKDB_E* code with err.
 */
static int
open_bulk(const char *path, int mode, unsigned wait_ms,
    struct tokdb **db_r, char *err, size_t errsz)
{
	struct tokdb *db = NULL, *old = NULL;
	struct stat st;
	char tmp[4400], real[PATH_MAX];
	const char *target;
	int r, fd = -1;

	*db_r = NULL;
	if (stat(path, &st) < 0 && errno == ENOENT &&
	    (mode & TOKDB_CREATE)) {
		/* a new file, the caller's own: made when first written */
		if ((r = new_handle(path, mode, &db, err, errsz)) != 0)
			return r;
		kcdbdel(db->kc);	/* opened when first written */
		db->kc = NULL;
		db->bulk = 1;
		db->created = 1;
		*db_r = db;
		return 0;
	}
	if ((r = hold_for_replace(path, wait_ms, &old, &fd, err, errsz)) != 0)
		return r;
	if ((r = check_meta(old, err, errsz)) != 0)
		goto fail;
	r = TOKDB_ERR;
	/* the private copy is made beside the file it replaces, a link's
	 * target (the link stays) */
	target = tokdb_replace_target(path, real);
	clean_stale(path);
	if (target != path)
		clean_stale(target);
	if (tokdb_tmp_name(target, "compact", (long)getpid(), tmp,
	    sizeof(tmp)) < 0) {
		snprintf(err, errsz, "token file %s: path too long", path);
		goto fail;
	}
	unlink(tmp);
	if (new_handle(tmp, mode, &db, err, errsz) != 0)
		goto fail;
	kcdbdel(db->kc);		/* opened when first written */
	db->kc = NULL;
	if ((db->dest = xstrdup(target)) == NULL) {
		snprintf(err, errsz, "token file %s: out of memory", path);
		tokdb_close(db);
		goto fail;
	}
	db->bulk = 1;
	db->old = old;
	db->lockfd = fd;
	*db_r = db;
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	tokdb_close(old);
	return r;
}

/* the private file would outgrow its hash table: rewrite it with room
 * for the pending new tokens and go on in the new one: 0, or -1 */
static int
bulk_grow(struct tokdb *db)
{
	struct tokdb *src = NULL;
	char err[512], tmp[4400];
	long ntok = (long)(kcdbcount(db->kc) - NMETA) + db->nnew;
	int ok;

	/* the file moves aside; a fresh one takes its name and records */
	if (snprintf(tmp, sizeof(tmp), "%s" TOKDB_GROW_SUFFIX, db->path) >=
	    (int)sizeof(tmp))
		return plainerr(db, "path too long");
	ok = kcdbclose(db->kc);
	kcdbdel(db->kc);
	db->kc = NULL;
	if (!ok || rename(db->path, tmp) < 0)
		return plainerr(db, "cannot move the private file aside");
	if (new_handle(tmp, TOKDB_READ, &src, err, sizeof(err)) != 0 ||
	    open_kc(src, tmp, TOKDB_READ, 0, 0, err, sizeof(err)) != 0 ||
	    bulk_create(db, 2 * ntok) < 0 ||
	    copy_records(src, db, 0, err, sizeof(err)) < 0) {
		if (db->emsg[0] == 0)
			snprintf(db->emsg, sizeof(db->emsg), "%s", err);
		tokdb_close(src);
		unlink(tmp);
		return -1;
	}
	tokdb_close(src);
	unlink(tmp);
	return 0;
}

/* a bulk writer with nothing to write out */
static int
bulk_unchanged(const struct tokdb *db)
{
	return db->dest != NULL && db->kc == NULL && db->npend == 0 &&
	    db->npdec == 0 && !db->setpos && !db->setfeats &&
	    db->msg[0].sum == 0 && db->msg[0].low == 0 &&
	    db->msg[1].sum == 0 && db->msg[1].low == 0;
}

/* 0, or -1 with err when db cannot be published */
static int
bulk_publishable(const struct tokdb *db, char *err, size_t errsz)
{
	if (db->bulk && !db->poisoned && !db->intran)
		return 0;
	snprintf(err, errsz, "token file %s: %s", db->dest ? db->dest :
	    db->path, !db->bulk ? "not a bulk writer" : db->intran ?
	    "a batch is still open" : "a batch was rolled back or "
	    "failed, nothing is published");
	return -1;
}

/*
 * A new file that will be synced as it is (close_synced without a
 * final: no relay writes it out afresh): start writing what the bulk
 * write put in it out to the disk now, so that its fsync, once its
 * position is known, waits only for the few pages written since (the
 * trainer's follower writes before the journal's commit, and has the
 * commit's round trips to wait for meanwhile).  Best effort: the fsync
 * still makes it durable.
 */
static void
start_writeback(struct tokdb *db)
{
	int fd;

	if (db->dest != NULL || db->path == NULL ||
	    (fd = open(db->path, O_RDONLY | O_CLOEXEC)) < 0)
		return;
	(void)sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
	close(fd);
}

int
tokdb_publish_ready(struct tokdb *db, char *err, size_t errsz)
{
	if (bulk_publishable(db, err, errsz) < 0)
		return -1;
	if (db->ready || bulk_unchanged(db))
		return 0;
	if (bulk_flush(db) < 0) {
		snprintf(err, errsz, "%s", db->emsg);	/* names the file */
		db->poisoned = 1;
		return -1;
	}
	if (close_synced(db, db->dest, err, errsz) < 0) {
		db->poisoned = 1;
		return -1;
	}
	db->ready = 1;
	return 0;
}

int
tokdb_bulk_write(struct tokdb *db, char *err, size_t errsz)
{
	if (!db->bulk || db->poisoned || db->ready) {
		snprintf(err, errsz, "token file %s: %s", db->dest ? db->dest :
		    db->path, !db->bulk ? "not a bulk writer" : db->ready ?
		    "already written out" : "a batch was rolled back or "
		    "failed, nothing is published");
		return -1;
	}
	if (bulk_unchanged(db))
		return 0;
	if (bulk_flush(db) < 0) {
		snprintf(err, errsz, "%s", db->emsg);	/* names the file */
		db->poisoned = 1;
		return -1;
	}
	start_writeback(db);
	return 0;
}

int
tokdb_publish(struct tokdb *db, char *err, size_t errsz)
{
	if (bulk_publishable(db, err, errsz) < 0) {
		tokdb_close(db);
		return -1;
	}
	if (!db->ready && bulk_unchanged(db)) {
		tokdb_close(db);	/* nothing changed */
		return 0;
	}
	if (tokdb_publish_ready(db, err, errsz) < 0) {
		tokdb_close(db);
		return -1;
	}
	if (db->dest != NULL) {
		take_group_mode(db->path, db->dest);
		if (rename(db->path, db->dest) < 0) {
			snprintf(err, errsz, "cannot rename %s to %s: %s",
			    db->path, db->dest, strerror(errno));
			tokdb_close(db);
			return -1;
		}
		xfree(db->path);
		db->path = NULL;	/* nothing left to remove */
	}
	tokdb_close(db);		/* and the old file's locks go */
	return 0;
}

/* tokdb_learn in bulk mode: the changes go to memory */
static long
bulk_learn(struct tokdb *db, const struct toklist *tl, int spam, int dir,
    uint32_t day)
{
	struct pend *e;
	unsigned char key[KEYLEN];
	struct ahead ahead[PF_AHEAD], t;
	size_t i, n;
	long changed = 0;
	KCDB *base;
	int made;

	n = toklist_count(tl);
	base = base_kc(db);
	/* the table soon outgrows the caches: each token's slot is
	 * fetched PF_AHEAD tokens before it is needed */
	for (i = 0; i < PF_AHEAD && i < n; i++)
		ahead[i] = pend_prefetch(db, tl, i);
	for (i = 0; i < n; i++) {
		t = ahead[i % PF_AHEAD];
		if (i + PF_AHEAD < n)
			ahead[i % PF_AHEAD] = pend_prefetch(db, tl,
			    i + PF_AHEAD);
		if (t.empty)
			continue;
		if ((e = pend_get(db, t.key, &made)) == NULL) {
			db->poisoned = 1;
			return plainerr(db, "out of memory");
		}
		if (made) {
			put_key(key, e->key);
			if (base == NULL || kcdbcheck(base, (const char *)key,
			    KEYLEN) < 0) {
				db->nnew++;
				if (dir > 0)
					changed++;
			}
		}
		pstep_add(&e->c[spam != 0], dir);
		if (dir > 0) {
			e->day = day;
			e->hasday = 1;
		}
	}
	pstep_add(&db->msg[spam != 0], dir);
	if (db->npend >= PEND_MAX && bulk_flush(db) < 0)
		return -1;
	return changed;
}

int
tokdb_compact(const char *path, unsigned wait_ms, int force, char *err,
    size_t errsz)
{
	return rewrite(path, path, wait_ms, force ? RW_ALWAYS : RW_IF_FULL,
	    err, errsz);
}

int
tokdb_compact_into(const char *path, const char *dst, unsigned wait_ms,
    char *err, size_t errsz)
{
	if (strcmp(path, ":") == 0 || strcmp(dst, ":") == 0) {
		snprintf(err, errsz, "no token file to write");
		return TOKDB_ERR;
	}
	return rewrite(path, dst, wait_ms, RW_ALWAYS, err, errsz);
}

int
tokdb_convert(const char *path, unsigned wait_ms, char *err, size_t errsz)
{
	return rewrite(path, path, wait_ms, RW_CONVERT, err, errsz);
}
