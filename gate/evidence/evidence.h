/*
 * evidence.h - evidence beyond the words, gathered for one post: the
 * sender's subscription (member_check, its answers cached) and the
 * DNSBL answers about the first untrusted relay, both at once
 *
 * The tokens (member:yes, member:no, dnsbl:ZONE:127.0.0.N) join the
 * post's tokens before it is scored or learnt, in every command
 * (gate/app/posttok.h); each list learns what they are worth.  Nothing
 * here can fail a post: a time-out, a command that fails or a resolver
 * that does not answer is no evidence.  Within one run (posttok_init:
 * a command's posts of one list, one sync of one list), after
 * EVIDENCE_GIVE_UP time-outs in a row a source is not asked again (a
 * rebuild replaying thousands of posts against a dead resolver would
 * otherwise wait out every one; the tokens are the same: none).  Each
 * list's member_check is a source of its own: its time-outs are
 * counted from the first post of that list after another list's.  So is
 * each DNSBL zone: one whose servers are gone is given up, the others
 * are still asked.
 */
#ifndef LG_EVIDENCE_H
#define LG_EVIDENCE_H

#include "gate/app/posttok.h"

#define EVIDENCE_GIVE_UP	3

/* the gatherer, for posttok_set_evidence() */
const struct posttok_evidence *evidence_gatherer(void);

#endif
