/*
 * verdict.h - what a score means for a list: ham, unsure or spam
 */
#ifndef LG_VERDICT_H
#define LG_VERDICT_H

enum verdict { VERDICT_HAM, VERDICT_UNSURE, VERDICT_SPAM };

/* ham below ham_cutoff, spam at or above spam_cutoff, unsure between */
enum verdict verdict_of(double score, double ham_cutoff, double spam_cutoff);
/* "ham" "unsure" "spam" */
const char *verdict_name(enum verdict v);

#endif
