/*
 * verdict.c - a score against a list's cutoffs
 */
#include "config.h"

#include "gate/verdict.h"

enum verdict
verdict_of(double score, double ham_cutoff, double spam_cutoff)
{
	if (score < ham_cutoff)
		return VERDICT_HAM;
	if (score >= spam_cutoff)
		return VERDICT_SPAM;
	return VERDICT_UNSURE;
}

const char *
verdict_name(enum verdict v)
{
	switch (v) {
	case VERDICT_HAM:
		return "ham";
	case VERDICT_UNSURE:
		return "unsure";
	case VERDICT_SPAM:
		return "spam";
	}
	return "unsure";
}
