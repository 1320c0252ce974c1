#!/bin/sh
# queue_check.sh - run the Check suite of the queue and journal
# (tests/check_queue) against a private PostgreSQL started by tests/pg.sh
set -u
: "${top_srcdir:?set by make check}"
: "${top_builddir:?set by make check}"
exec sh "$top_srcdir/tests/pg.sh" run "$top_builddir/tests/check_queue"
