/*
 * pqload.c - libpq, loaded only when a command first talks to PostgreSQL
 *
 * libpq drags some twenty shared libraries (TLS, Kerberos, LDAP) into
 * every process that links it, which costs a filter run several
 * milliseconds before it reads a byte, on the pass path that never needs
 * a database.  So listgate does not link libpq: this file defines the
 * libpq functions listgate uses, and the first call dlopen()s libpq.so.5
 * and forwards.  Each definition is checked against libpq-fe.h by the
 * compiler.  When libpq cannot be loaded the entry points fail the way
 * libpq fails (NULL connection, CONNECTION_BAD, an error message), so the
 * callers' error paths (defer) apply unchanged.
 */
#include "config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <libpq-fe.h>

#include "db/queue_int.h"

#define LG_LIBPQ_SONAME "libpq.so.5"

static void *pq_lib;
static int pq_state;		/* 0 not tried, 1 loaded, -1 failed */
static char pq_err[256];

/* every libpq function listgate calls: X(return type, name, (params), (args)) */
#define PQ_FUNCS \
	X(PGconn *, PQconnectdbParams, (const char *const *keywords, \
	    const char *const *values, int expand_dbname), \
	    (keywords, values, expand_dbname)) \
	X(PGconn *, PQconnectdb, (const char *conninfo), (conninfo)) \
	X(PGconn *, PQconnectStartParams, (const char *const *keywords, \
	    const char *const *values, int expand_dbname), \
	    (keywords, values, expand_dbname)) \
	X(PostgresPollingStatusType, PQconnectPoll, (PGconn *conn), (conn)) \
	X(int, PQsocket, (const PGconn *conn), (conn)) \
	X(int, PQconsumeInput, (PGconn *conn), (conn)) \
	X(PQconninfoOption *, PQconninfo, (PGconn *conn), (conn)) \
	X(void, PQfinish, (PGconn *conn), (conn)) \
	X(ConnStatusType, PQstatus, (const PGconn *conn), (conn)) \
	X(PGTransactionStatusType, PQtransactionStatus, (const PGconn *conn), \
	    (conn)) \
	X(char *, PQerrorMessage, (const PGconn *conn), (conn)) \
	X(int, PQsetClientEncoding, (PGconn *conn, const char *encoding), \
	    (conn, encoding)) \
	X(PQnoticeProcessor, PQsetNoticeProcessor, (PGconn *conn, \
	    PQnoticeProcessor proc, void *arg), (conn, proc, arg)) \
	X(PQconninfoOption *, PQconninfoParse, (const char *conninfo, \
	    char **errmsg), (conninfo, errmsg)) \
	X(void, PQconninfoFree, (PQconninfoOption *connOptions), (connOptions)) \
	X(PGresult *, PQexec, (PGconn *conn, const char *query), (conn, query)) \
	X(PGresult *, PQexecParams, (PGconn *conn, const char *command, \
	    int nParams, const Oid *paramTypes, const char *const *paramValues, \
	    const int *paramLengths, const int *paramFormats, int resultFormat), \
	    (conn, command, nParams, paramTypes, paramValues, paramLengths, \
	    paramFormats, resultFormat)) \
	X(int, PQsendQueryParams, (PGconn *conn, const char *command, \
	    int nParams, const Oid *paramTypes, const char *const *paramValues, \
	    const int *paramLengths, const int *paramFormats, int resultFormat), \
	    (conn, command, nParams, paramTypes, paramValues, paramLengths, \
	    paramFormats, resultFormat)) \
	X(PGresult *, PQgetResult, (PGconn *conn), (conn)) \
	X(int, PQsetSingleRowMode, (PGconn *conn), (conn)) \
	X(int, PQenterPipelineMode, (PGconn *conn), (conn)) \
	X(int, PQexitPipelineMode, (PGconn *conn), (conn)) \
	X(int, PQpipelineSync, (PGconn *conn), (conn)) \
	X(int, PQputCopyData, (PGconn *conn, const char *buffer, int nbytes), \
	    (conn, buffer, nbytes)) \
	X(int, PQputCopyEnd, (PGconn *conn, const char *errormsg), \
	    (conn, errormsg)) \
	X(ExecStatusType, PQresultStatus, (const PGresult *res), (res)) \
	X(char *, PQcmdStatus, (PGresult *res), (res)) \
	X(char *, PQresultErrorMessage, (const PGresult *res), (res)) \
	X(char *, PQresultErrorField, (const PGresult *res, int fieldcode), \
	    (res, fieldcode)) \
	X(int, PQntuples, (const PGresult *res), (res)) \
	X(char *, PQgetvalue, (const PGresult *res, int tup_num, \
	    int field_num), (res, tup_num, field_num)) \
	X(int, PQgetlength, (const PGresult *res, int tup_num, \
	    int field_num), (res, tup_num, field_num)) \
	X(int, PQgetisnull, (const PGresult *res, int tup_num, \
	    int field_num), (res, tup_num, field_num)) \
	X(void, PQclear, (PGresult *res), (res)) \
	X(void, PQfreemem, (void *ptr), (ptr))

/* the resolved pointers */
#define X(ret, name, params, args) static ret (*p_##name) params;
PQ_FUNCS
#undef X

static pthread_once_t pq_once = PTHREAD_ONCE_INIT;

static void pq_load_once(void);

/* load libpq and resolve every function once (the first caller of any
 * thread does it, the others wait for it): 0, or -1 (pq_err says) */
static int
pq_load(void)
{
	pthread_once(&pq_once, pq_load_once);
	return pq_state > 0 ? 0 : -1;
}

const char *
pq_load_error(void)
{
	return pq_load() < 0 ? pq_err : NULL;
}

static void
pq_load_once(void)
{
	pq_state = -1;
	if ((pq_lib = dlopen(LG_LIBPQ_SONAME, RTLD_LAZY | RTLD_LOCAL)) == NULL) {
		snprintf(pq_err, sizeof(pq_err),
		    "cannot load %s (install the Debian package libpq5): %s\n",
		    LG_LIBPQ_SONAME, dlerror());
		return;
	}
#define X(ret, name, params, args) \
	if ((*(void **)&p_##name = dlsym(pq_lib, #name)) == NULL) { \
		snprintf(pq_err, sizeof(pq_err), \
		    "%s has no %s (libpq 14 or later is needed)\n", \
		    LG_LIBPQ_SONAME, #name); \
		return; \
	}
	PQ_FUNCS
#undef X
	pq_state = 1;
}

/*
 * The forwarding definitions.  Before a successful load only the entry
 * points can be reached (nothing else has a connection or a result to
 * pass), and they fail like libpq does for a NULL connection.
 */
PGconn *
PQconnectdbParams(const char *const *keywords, const char *const *values,
    int expand_dbname)
{
	if (pq_load() < 0)
		return NULL;
	return p_PQconnectdbParams(keywords, values, expand_dbname);
}

PGconn *
PQconnectStartParams(const char *const *keywords, const char *const *values,
    int expand_dbname)
{
	if (pq_load() < 0)
		return NULL;
	return p_PQconnectStartParams(keywords, values, expand_dbname);
}

PGconn *
PQconnectdb(const char *conninfo)
{
	if (pq_load() < 0)
		return NULL;
	return p_PQconnectdb(conninfo);
}

void
PQfinish(PGconn *conn)
{
	if (pq_load() == 0)
		p_PQfinish(conn);
}

ConnStatusType
PQstatus(const PGconn *conn)
{
	if (pq_load() < 0)
		return CONNECTION_BAD;
	return p_PQstatus(conn);
}

char *
PQerrorMessage(const PGconn *conn)
{
	if (pq_load() < 0)
		return pq_err;
	return p_PQerrorMessage(conn);
}

PQconninfoOption *
PQconninfoParse(const char *conninfo, char **errmsg)
{
	if (pq_load() < 0) {
		if (errmsg)
			*errmsg = NULL;
		return NULL;
	}
	return p_PQconninfoParse(conninfo, errmsg);
}

void
PQconninfoFree(PQconninfoOption *connOptions)
{
	if (pq_load() == 0)
		p_PQconninfoFree(connOptions);
}

void
PQclear(PGresult *res)
{
	if (pq_load() == 0)
		p_PQclear(res);
}

void
PQfreemem(void *ptr)
{
	if (pq_load() == 0)
		p_PQfreemem(ptr);
}

char *
PQresultErrorMessage(const PGresult *res)
{
	if (pq_load() < 0)
		return pq_err;
	return p_PQresultErrorMessage(res);
}

ExecStatusType
PQresultStatus(const PGresult *res)
{
	if (pq_load() < 0)
		return PGRES_FATAL_ERROR;
	return p_PQresultStatus(res);
}

/* the rest only ever see a connection or result that libpq made */
#define FWD(ret, name, params, args) \
ret name params { return p_##name args; }
FWD(int, PQsetClientEncoding, (PGconn *conn, const char *encoding),
    (conn, encoding))
FWD(PQnoticeProcessor, PQsetNoticeProcessor, (PGconn *conn,
    PQnoticeProcessor proc, void *arg), (conn, proc, arg))
FWD(PGTransactionStatusType, PQtransactionStatus, (const PGconn *conn),
    (conn))
FWD(PostgresPollingStatusType, PQconnectPoll, (PGconn *conn), (conn))
FWD(int, PQsocket, (const PGconn *conn), (conn))
FWD(int, PQconsumeInput, (PGconn *conn), (conn))
FWD(PQconninfoOption *, PQconninfo, (PGconn *conn), (conn))
FWD(PGresult *, PQexec, (PGconn *conn, const char *query), (conn, query))
FWD(PGresult *, PQexecParams, (PGconn *conn, const char *command,
    int nParams, const Oid *paramTypes, const char *const *paramValues,
    const int *paramLengths, const int *paramFormats, int resultFormat),
    (conn, command, nParams, paramTypes, paramValues, paramLengths,
    paramFormats, resultFormat))
FWD(int, PQsendQueryParams, (PGconn *conn, const char *command,
    int nParams, const Oid *paramTypes, const char *const *paramValues,
    const int *paramLengths, const int *paramFormats, int resultFormat),
    (conn, command, nParams, paramTypes, paramValues, paramLengths,
    paramFormats, resultFormat))
FWD(PGresult *, PQgetResult, (PGconn *conn), (conn))
FWD(int, PQenterPipelineMode, (PGconn *conn), (conn))
FWD(int, PQexitPipelineMode, (PGconn *conn), (conn))
FWD(int, PQpipelineSync, (PGconn *conn), (conn))
FWD(int, PQsetSingleRowMode, (PGconn *conn), (conn))
FWD(char *, PQcmdStatus, (PGresult *res), (res))
FWD(int, PQputCopyData, (PGconn *conn, const char *buffer, int nbytes),
    (conn, buffer, nbytes))
FWD(int, PQputCopyEnd, (PGconn *conn, const char *errormsg),
    (conn, errormsg))
FWD(char *, PQresultErrorField, (const PGresult *res, int fieldcode),
    (res, fieldcode))
FWD(int, PQntuples, (const PGresult *res), (res))
FWD(char *, PQgetvalue, (const PGresult *res, int tup_num, int field_num),
    (res, tup_num, field_num))
FWD(int, PQgetlength, (const PGresult *res, int tup_num, int field_num),
    (res, tup_num, field_num))
FWD(int, PQgetisnull, (const PGresult *res, int tup_num, int field_num),
    (res, tup_num, field_num))
#undef FWD
