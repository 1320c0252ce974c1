/*
 * tokdb.c - a list's token store on a Kyoto Cabinet file hash database
 *
 * Trusts the file only as far as its meta records: a file without them,
 * or written by another tokenizer or format version, is refused with a
 * message that says what to do.  Token records are decoded defensively
 * (a malformed record reads as absent counts, never out of bounds).
 * Fails with a return code and a message; never exits, never logs.
 *
 * Record layout (format 1):
 *   token key  -> varint spam, varint ham, varint day (LEB128, 3-15 bytes)
 *   "\0..." keys are meta records (no token starts with a NUL byte):
 *     "\0format" u32 LE, "\0tokver" u32 LE, "\0nspam" u32 LE,
 *     "\0nham" u32 LE, "\0pos" i64 LE.
 */
#include "config.h"

#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <kclangc.h>

#include "gate/util/clock.h"
#include "db/tokdb.h"
#include "gate/tok.h"		/* TOK_VERSION, recorded in the file */
#include "gate/util/xalloc.h"

#define TOKDB_FORMAT	1

/* meta record keys; sizeof - 1 keeps the leading NUL */
#define K_FORMAT	"\0format"
#define K_TOKVER	"\0tokver"
#define K_NSPAM		"\0nspam"
#define K_NHAM		"\0nham"
#define K_POS		"\0pos"
/* "\0dec" and a post's SHA-256: a moderator's decision on it */
#define K_DEC		"\0dec"
/* how many decision records there are (absent: none) */
#define K_NDEC		"\0ndec"
#define DEC_KLEN	(KLEN(K_DEC) + TOKDB_SHA256_LEN)
#define KLEN(k)		(sizeof(k) - 1)
#define NMETA		5

/* tuning of a new file: buckets for ~1M tokens, linear chains (no tree
 * links per record), automatic defragmentation; mmap the first 256 MiB */
#define TUNE_CREATE	"#bnum=1000000#opts=l#dfunit=8"
#define TUNE_OPEN	"#msiz=268435456"

struct tokdb {
	KCDB *kc;
	int mode;
	int intran;
	int mem;		/* the in-memory twin */
	char *path;
	char list[80];		/* the list it stands for, for messages */
	char emsg[1024];
};

/* remember a message for tokdb_errmsg: Kyoto Cabinet's error, and what
 * to do about a damaged file */
static void
seterr(struct tokdb *db, const char *what)
{
	snprintf(db->emsg, sizeof(db->emsg), "token file %s: %s: %s; if the "
	    "file is damaged, `listgate rebuild --list %s` recreates it from "
	    "the journal", db->path, what, kcdbemsg(db->kc), db->list);
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

/* decode a token record: its length (at most n), or 0 when malformed */
static size_t
dec_count_len(const unsigned char *p, size_t n, struct tokcount *c)
{
	size_t a, b, d;

	if ((a = get_varint(p, n, &c->spam)) == 0 ||
	    (b = get_varint(p + a, n - a, &c->ham)) == 0 ||
	    (d = get_varint(p + a + b, n - a - b, &c->day)) == 0) {
		memset(c, 0, sizeof(*c));
		return 0;
	}
	return a + b + d;
}

/* decode a token record: 0, or -1 when malformed */
static int
dec_count(const unsigned char *p, size_t n, struct tokcount *c)
{
	return dec_count_len(p, n, c) == 0 ? -1 : 0;
}

/* encode a token record into p (at least 15 bytes): its length */
static size_t
enc_count(unsigned char *p, const struct tokcount *c)
{
	size_t n;

	n = put_varint(p, c->spam);
	n += put_varint(p + n, c->ham);
	n += put_varint(p + n, c->day);
	return n;
}

/* read a u32 meta record: 1 found, 0 absent, -1 malformed/error */
static int
meta_u32(struct tokdb *db, const char *k, size_t klen, uint32_t *v_r)
{
	unsigned char b[8];
	int32_t n;

	n = kcdbgetbuf(db->kc, k, klen, (char *)b, sizeof(b));
	if (n < 0)
		return kcdbecode(db->kc) == KCENOREC ? 0 : -1;
	if (n != 4)
		return -1;
	*v_r = get_u32(b);
	return 1;
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

/* check the format and tokenizer versions: 0, or a TOKDB_E* code */
static int
check_meta(struct tokdb *db, char *err, size_t errsz)
{
	uint32_t fmt, tv;
	char list[80];
	int r1, r2;

	list_of(db->path, list, sizeof(list));
	r1 = meta_u32(db, K_FORMAT, KLEN(K_FORMAT), &fmt);
	r2 = meta_u32(db, K_TOKVER, KLEN(K_TOKVER), &tv);
	if (r1 <= 0 || r2 <= 0) {
		snprintf(err, errsz, "token file %s is not a listgate token "
		    "file (no version records): run `listgate rebuild "
		    "--list %s` to recreate it from the journal, or move it "
		    "away and retrain the list",
		    db->path, list);
		return TOKDB_ERR;
	}
	if (fmt != TOKDB_FORMAT || tv != TOK_VERSION) {
		snprintf(err, errsz, "token file %s was written by another "
		    "version of listgate (format %u, tokenizer %u; this "
		    "program uses format %u, tokenizer %u): run `listgate "
		    "rebuild --list %s` to recreate it from the journal, or "
		    "move it away and retrain the list", db->path,
		    (unsigned)fmt, (unsigned)tv, (unsigned)TOKDB_FORMAT,
		    (unsigned)TOK_VERSION, list);
		return TOKDB_EVERSION;
	}
	return 0;
}

/* the message for a token file that is not there */
static void
missing(const char *path, const char *list, char *err, size_t errsz)
{
	snprintf(err, errsz, "token file %s does not exist: `listgate sync` "
	    "or `listgate rebuild --list %s` recreates it from the journal "
	    "(without a database, train the list first: listgate train "
	    "--list %s --spam/--ham ...)", path, list, list);
}

/* a damaged file: TOKDB_EDAMAGED with a message naming the fault */
static int
damaged(struct tokdb *db, const char *what, char *err, size_t errsz)
{
	snprintf(err, errsz, "token file %s is damaged (%s): run `listgate "
	    "rebuild --list %s` to recreate it from the journal, or move it "
	    "away and retrain the list", db->path, what, db->list);
	return TOKDB_EDAMAGED;
}

/* the cheap part of the check, at every open: the message counts and
 * the journal position, where present, have their sizes */
static int
check_counts(struct tokdb *db, char *err, size_t errsz)
{
	unsigned char b[16];
	uint32_t v;
	int32_t n;

	if (meta_u32(db, K_NSPAM, KLEN(K_NSPAM), &v) < 0 ||
	    meta_u32(db, K_NHAM, KLEN(K_NHAM), &v) < 0)
		return damaged(db, "malformed message counts", err, errsz);
	n = kcdbgetbuf(db->kc, K_POS, KLEN(K_POS), (char *)b, sizeof(b));
	if ((n < 0 && kcdbecode(db->kc) != KCENOREC) || (n >= 0 && n != 8))
		return damaged(db, "malformed journal position", err, errsz);
	return 0;
}

/* sleep ms milliseconds */
static void
sleep_ms(double ms)
{
	struct timespec ts;

	if (ms <= 0)
		return;
	ts.tv_sec = (time_t)(ms / 1000.0);
	ts.tv_nsec = (long)((ms - (double)ts.tv_sec * 1000.0) * 1e6);
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
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
 * 0644 by earlier versions): a failure (not the owner) changes nothing */
static void
tighten_mode(const char *path, const struct stat *st)
{
	if ((st->st_mode & 0777 & ~(mode_t)TOKDB_FILE_MODE) != 0)
		(void)chmod(path, st->st_mode & 07777 &
		    ~(0777 & ~(mode_t)TOKDB_FILE_MODE));
}

/* did the last open fail because another process holds the lock? */
static int
lock_busy(KCDB *kc)
{
	return kcdbecode(kc) == KCESYSTEM &&
	    (strstr(kcdbemsg(kc), "fcntl") != NULL ||
	    strstr(kcdbemsg(kc), "lock") != NULL);
}

int
tokdb_open(const char *path, int mode, unsigned wait_ms,
    struct tokdb **db_r, char *err, size_t errsz)
{
	struct tokdb *db;
	struct stat st;
	char kpath[4096];
	uint32_t kmode;
	double start, delay = 1.0;
	int writer = (mode & TOKDB_WRITE) != 0, created = 0, r;

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
	if (db->mem) {
		/* stash database: same API, no file, no locks */
		kmode = KCOWRITER | KCOCREATE;
		r = snprintf(kpath, sizeof(kpath), ":");
		created = 1;
	} else {
		if (stat(path, &st) < 0) {
			if (errno != ENOENT || !(writer && (mode & TOKDB_CREATE))) {
				r = errno == ENOENT ? TOKDB_ENOENT : TOKDB_ERR;
				if (r == TOKDB_ENOENT)
					missing(path, db->list, err, errsz);
				else
					snprintf(err, errsz, "token file %s: %s",
					    path, strerror(errno));
				tokdb_close(db);
				return r;
			}
			if (create_file(path) < 0) {
				snprintf(err, errsz, "cannot create the token "
				    "file %s: %s", path, strerror(errno));
				tokdb_close(db);
				return TOKDB_ERR;
			}
			created = 1;
		} else if (!S_ISREG(st.st_mode)) {
			snprintf(err, errsz, "token file %s is not a regular "
			    "file", path);
			tokdb_close(db);
			return TOKDB_ERR;
		} else if (writer)
			tighten_mode(path, &st);
		kmode = KCOTRYLOCK | (writer ? KCOWRITER : KCOREADER);
		if (writer && (mode & TOKDB_CREATE))
			kmode |= KCOCREATE;
		r = snprintf(kpath, sizeof(kpath), "%s%s%s", path,
		    created ? TUNE_CREATE : "", TUNE_OPEN);
	}
	if (r < 0 || (size_t)r >= sizeof(kpath)) {
		snprintf(err, errsz, "token file %s: path too long", path);
		tokdb_close(db);
		return TOKDB_ERR;
	}
	start = clock_now_ms();
	while (!kcdbopen(db->kc, kpath, kmode)) {
		double left = (double)wait_ms - (clock_now_ms() - start);

		if (lock_busy(db->kc) && left > 0) {
			sleep_ms(delay < left ? delay : left);
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
		} else {
			snprintf(err, errsz, "token file %s cannot be opened "
			    "(%s); if it is damaged, run `listgate rebuild "
			    "--list %s` to recreate it from the journal, or move "
			    "it away and retrain the list",
			    path, kcdbemsg(db->kc), db->list);
			r = kcdbecode(db->kc) == KCEBROKEN ? TOKDB_EDAMAGED :
			    TOKDB_ERR;
		}
		kcdbdel(db->kc);
		db->kc = NULL;
		/* an empty file created above is no token file */
		if (created && !db->mem && stat(path, &st) == 0 &&
		    st.st_size == 0)
			unlink(path);
		tokdb_close(db);
		return r;
	}
	/* a writer may have created the file just now: give it its meta */
	if (writer && kcdbcount(db->kc) == 0) {
		if (init_meta(db) < 0) {
			snprintf(err, errsz, "%s", db->emsg);
			tokdb_close(db);
			return TOKDB_ERR;
		}
	}
	if ((r = check_meta(db, err, errsz)) != 0 ||
	    (r = check_counts(db, err, errsz)) != 0) {
		tokdb_close(db);
		return r;
	}
	*db_r = db;
	return 0;
}

void
tokdb_close(struct tokdb *db)
{
	if (db == NULL)
		return;
	if (db->kc) {
		if (db->intran)
			kcdbendtran(db->kc, 0);
		kcdbclose(db->kc);
		kcdbdel(db->kc);
	}
	xfree(db->path);
	xfree(db);
}

int
tokdb_get(struct tokdb *db, const void *tok, size_t len,
    struct tokcount *c_r)
{
	unsigned char b[32];
	int32_t n;

	memset(c_r, 0, sizeof(*c_r));
	if (len == 0 || *(const unsigned char *)tok == 0)
		return 0;		/* never a token key */
	n = kcdbgetbuf(db->kc, tok, len, (char *)b, sizeof(b));
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
tokdb_msgcounts(struct tokdb *db, uint32_t *nspam_r, uint32_t *nham_r)
{
	*nspam_r = *nham_r = 0;
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
	if (!kcdbbegintran(db->kc, 0)) {
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
	const char *k;

	if (!db->intran)
		return plainerr(db, "learning outside a transaction");
	memset(&v, 0, sizeof(v));
	v.spam = spam != 0;
	v.dir = dir < 0 ? -1 : 1;
	v.day = day;
	n = toklist_count(tl);
	for (i = 0; i < n; i++) {
		k = toklist_get(tl, i, &len);
		if (len == 0 || k[0] == 0)
			continue;	/* could clash with a meta key */
		v.isnew = v.removed = 0;
		if (!kcdbaccept(db->kc, k, len, visit_full, visit_empty, &v,
		    1)) {
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
	unsigned char b[8];
	uint64_t v = 0;
	int32_t n;
	int i;

	*pos_r = 0;
	n = kcdbgetbuf(db->kc, K_POS, KLEN(K_POS), (char *)b, sizeof(b));
	if (n < 0) {
		if (kcdbecode(db->kc) == KCENOREC)
			return 0;
		seterr(db, "cannot read the journal position");
		return -1;
	}
	if (n != 8) {
		snprintf(db->emsg, sizeof(db->emsg), "token file %s: malformed "
		    "journal position; the file is damaged: `listgate rebuild "
		    "--list %s` recreates it from the journal", db->path,
		    db->list);
		return -1;
	}
	for (i = 7; i >= 0; i--)
		v = v << 8 | b[i];
	*pos_r = (int64_t)v;
	return 0;
}

int
tokdb_set_pos(struct tokdb *db, int64_t pos)
{
	unsigned char b[8];
	uint64_t v = (uint64_t)pos;
	int i;

	if (!db->intran)
		return plainerr(db, "journal position set outside a transaction");
	for (i = 0; i < 8; i++, v >>= 8)
		b[i] = v & 0xff;
	if (!kcdbset(db->kc, K_POS, KLEN(K_POS), (const char *)b, 8)) {
		seterr(db, "cannot write the journal position");
		return -1;
	}
	return 0;
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
	if (it->stopped || ksiz == 0 || kbuf[0] == 0)
		return KCVISNOP;
	if (dec_count((const unsigned char *)vbuf, vsiz, &c) < 0)
		return KCVISNOP;
	if (it->fn(kbuf, ksiz, &c, it->ctx) != 0)
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

int
tokdb_set_decided(struct tokdb *db, const unsigned char *sha, int state,
    uint32_t day)
{
	char k[DEC_KLEN];
	unsigned char b[5];
	uint32_t ndec = 0;
	int had;

	if (!db->intran)
		return plainerr(db, "decision recorded outside a transaction");
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

int
tokdb_get_decided(struct tokdb *db, const unsigned char *sha, int *state_r,
    uint32_t *day_r)
{
	char k[DEC_KLEN];
	unsigned char b[8];
	int32_t n;

	*state_r = TOKDB_UNDECIDED;
	*day_r = 0;
	dec_key(sha, k);
	n = kcdbgetbuf(db->kc, k, sizeof(k), (char *)b, sizeof(b));
	if (n < 0) {
		if (kcdbecode(db->kc) == KCENOREC)
			return 0;
		seterr(db, "cannot read a decision");
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
	if (k[0] != 0)
		return dec_count_len((const unsigned char *)v, vs, &c) == vs ?
		    NULL : "a token record whose counts do not decode";
	for (i = 0; i < NMETA; i++)
		if (ks == meta_keys[i].klen && memcmp(k, meta_keys[i].k,
		    ks) == 0)
			return vs == meta_keys[i].vlen ? NULL :
			    "a meta record of the wrong size";
	if (ks == KLEN(K_NDEC) && memcmp(k, K_NDEC, ks) == 0)
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
		if (ks > 0 && k[0] == 0)
			nmeta++;
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
