/*
 * mcache.h - member_check answers kept for a while, so the pass path
 * asks the list manager once per sender and TTL, not once per post
 *
 * One small file per list, tokens_dir/L.members: a fixed table of
 * MCACHE_SLOTS records (64 KiB), shared by every process of the list,
 * each record read and written whole (pread, pwrite).  A record holds a
 * hash of the sender (the first 8 bytes of its SHA-256: no address is
 * stored), the answer, the time it was heard and a check value: a
 * record torn by two writers at once fails its check and reads as
 * absent, and so does one past the end of a file cut short.  Only yes
 * and no are kept.  A file of another size or with a header not ours is
 * damaged: an empty one is renamed over it (processes that have it open
 * keep theirs).  A file that cannot be opened or replaced is no cache
 * at all, never an error.  Never logs, never exits.
 */
#ifndef LG_MCACHE_H
#define LG_MCACHE_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "gate/evidence/member.h"

#define MCACHE_SLOTS	4096	/* a list with more distinct senders a TTL
				 * just asks again for the ones pushed out */
#define MCACHE_PROBE	8	/* slots looked at per sender */

struct mcache;

/* open (creating it when its directory is this user's; replacing a
 * damaged one) the cache file at path:
 * NULL when there is none to be had (a symbolic link or a file with
 * more than one name in its place is none, and is left alone).  The
 * owner gives it mode 0660 whatever the umask, for the filter (the MTA's
 * user, in the token files' group) to add its answers; a file this user
 * may only read is a cache it reads */
struct mcache *mcache_open(const char *path);
void mcache_close(struct mcache *c);

/* the answer heard for sender at most ttl seconds before now, or
 * MEMBER_NONE */
enum member_answer mcache_get(struct mcache *c, const char *sender,
    time_t now, unsigned ttl);

/* keep an answer (MEMBER_YES or MEMBER_NO) heard now */
void mcache_put(struct mcache *c, const char *sender, enum member_answer a,
    time_t now);

#endif
