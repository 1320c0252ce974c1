/*
 * outcome.h - what happened to a post, and the exit code per MTA dialect
 *
 * Only a command's main turns an outcome into an exit code, through
 * outcome_exit().  Under Postfix only sysexits codes ever leave the
 * program; under qmail only 0, 99, 100 and 111.
 */
#ifndef LG_OUTCOME_H
#define LG_OUTCOME_H

enum outcome {
	OUT_PASS,	/* delivered on (qmail: next .qmail line delivers) */
	OUT_HELD,	/* stored in the moderation queue (or discarded) */
	OUT_REJECT,	/* bounce: only where a list asks for it */
	OUT_DEFER	/* temporary failure: the MTA keeps the post */
};

enum mta {
	MTA_QMAIL,
	MTA_POSTFIX,
	/* not known yet (no --mta, listgate.conf not read): a temporary
	 * failure is 75, which Postfix and qmail-local both retry
	 * (qmail-local: any code but 0, 99, 100 and a few hard ones) */
	MTA_UNKNOWN
};

/* exit codes */
#define EXIT_QMAIL_OK		0
#define EXIT_QMAIL_DONE		99
#define EXIT_QMAIL_HARD		100
#define EXIT_QMAIL_SOFT		111
#define EXIT_EX_OK		0
#define EXIT_EX_USAGE		64
#define EXIT_EX_DATAERR		65
#define EXIT_EX_UNAVAILABLE	69
#define EXIT_EX_SOFTWARE	70
#define EXIT_EX_TEMPFAIL	75
#define EXIT_EX_NOPERM		77
#define EXIT_EX_CONFIG		78

/* the exit code for an outcome under a dialect */
int outcome_exit(enum outcome o, enum mta m);
/* "pass", "held", "reject", "defer" */
const char *outcome_name(enum outcome o);
/* parse "qmail"/"postfix": 0, or -1 unknown */
int mta_parse(const char *s, enum mta *m_r);
const char *mta_name(enum mta m);

#endif
