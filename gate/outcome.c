/*
 * outcome.c - the one table from outcome to exit code, per MTA dialect
 *
 * Postfix turns any non-sysexits code into a bounce, so under Postfix
 * only 0, 69 and 75 can come out of here; qmail-local knows 0, 99, 100
 * and 111.
 */
#include "config.h"

#include <string.h>

#include "gate/outcome.h"

int
outcome_exit(enum outcome o, enum mta m)
{
	static const int qmail[] = {
		[OUT_PASS] = EXIT_QMAIL_OK, [OUT_HELD] = EXIT_QMAIL_DONE,
		[OUT_REJECT] = EXIT_QMAIL_HARD, [OUT_DEFER] = EXIT_QMAIL_SOFT,
	};
	static const int postfix[] = {
		[OUT_PASS] = EXIT_EX_OK, [OUT_HELD] = EXIT_EX_OK,
		[OUT_REJECT] = EXIT_EX_UNAVAILABLE, [OUT_DEFER] = EXIT_EX_TEMPFAIL,
	};

	if ((unsigned)o > OUT_DEFER)
		o = OUT_DEFER;
	/* the dialect unknown: only a pass (0 in both) is safe to say,
	 * anything else is left with the MTA */
	if (m == MTA_UNKNOWN)
		return o == OUT_PASS ? EXIT_EX_OK : EXIT_EX_TEMPFAIL;
	return m == MTA_POSTFIX ? postfix[o] : qmail[o];
}

const char *
outcome_name(enum outcome o)
{
	switch (o) {
	case OUT_PASS:
		return "pass";
	case OUT_HELD:
		return "held";
	case OUT_REJECT:
		return "reject";
	case OUT_DEFER:
		break;
	}
	return "defer";
}

int
mta_parse(const char *s, enum mta *m_r)
{
	if (strcmp(s, "qmail") == 0)
		*m_r = MTA_QMAIL;
	else if (strcmp(s, "postfix") == 0)
		*m_r = MTA_POSTFIX;
	else
		return -1;
	return 0;
}

const char *
mta_name(enum mta m)
{
	return m == MTA_POSTFIX ? "postfix" : m == MTA_UNKNOWN ? "unknown" :
	    "qmail";
}
