/*
 * tokcounts.h - a list's token store as the classifier's count source
 */
#ifndef LG_TOKCOUNTS_H
#define LG_TOKCOUNTS_H

#include "gate/classify.h"

struct tokdb;

/* point cc at db (which must stay open while cc is used) */
void tokcounts_tokdb(struct classify_counts *cc, struct tokdb *db);

#endif
