/*
 * mhdload.c - libmicrohttpd, loaded only when `listgate web` starts
 *
 * Debian's libmicrohttpd links GnuTLS and nine more libraries; linked
 * into listgate they would be loaded by every filter run, on the pass
 * path that never serves HTTP (db/pqload.c does the same for libpq).  So
 * listgate does not link it: this file defines the few libmicrohttpd
 * functions gate/web uses, and the first call dlopen()s the library and
 * forwards.  Each definition is checked against <microhttpd.h> by the
 * compiler.  When the library cannot be loaded, MHD_start_daemon fails
 * (NULL) and mhdload_error() says why; nothing else can be reached
 * without a daemon.  The first call is MHD_start_daemon, made before any
 * thread starts.
 */
#include "config.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include <microhttpd.h>

#include "gate/web/mhdload.h"

#define LG_MHD_SONAME "libmicrohttpd.so.12"

static void *mhd_lib;
static int mhd_state;		/* 0 not tried, 1 loaded, -1 failed */
static char mhd_err[256];

/* every function gate/web calls: X(return type, name, (params)) */
#define MHD_FUNCS \
	X(struct MHD_Daemon *, MHD_start_daemon_va, (unsigned int flags, \
	    uint16_t port, MHD_AcceptPolicyCallback apc, void *apc_cls, \
	    MHD_AccessHandlerCallback dh, void *dh_cls, va_list ap)) \
	X(void, MHD_stop_daemon, (struct MHD_Daemon *daemon)) \
	X(MHD_socket, MHD_quiesce_daemon, (struct MHD_Daemon *daemon)) \
	X(const union MHD_DaemonInfo *, MHD_get_daemon_info, \
	    (struct MHD_Daemon *daemon, enum MHD_DaemonInfoType info_type, \
	    ...)) \
	X(const union MHD_ConnectionInfo *, MHD_get_connection_info, \
	    (struct MHD_Connection *connection, \
	    enum MHD_ConnectionInfoType info_type, ...)) \
	X(const char *, MHD_lookup_connection_value, \
	    (struct MHD_Connection *connection, enum MHD_ValueKind kind, \
	    const char *key)) \
	X(int, MHD_get_connection_values, \
	    (struct MHD_Connection *connection, enum MHD_ValueKind kind, \
	    MHD_KeyValueIterator iterator, void *iterator_cls)) \
	X(struct MHD_Response *, MHD_create_response_from_buffer, \
	    (size_t size, void *buffer, enum MHD_ResponseMemoryMode mode)) \
	X(enum MHD_Result, MHD_add_response_header, \
	    (struct MHD_Response *response, const char *header, \
	    const char *content)) \
	X(void, MHD_destroy_response, (struct MHD_Response *response)) \
	X(enum MHD_Result, MHD_queue_response, \
	    (struct MHD_Connection *connection, unsigned int status_code, \
	    struct MHD_Response *response))

#define X(ret, name, params) static ret (*p_##name) params;
MHD_FUNCS
#undef X

/* load the library and resolve every function once: 0, or -1 */
static int
mhd_load(void)
{
	if (mhd_state)
		return mhd_state > 0 ? 0 : -1;
	mhd_state = -1;
	if ((mhd_lib = dlopen(LG_MHD_SONAME, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		snprintf(mhd_err, sizeof(mhd_err),
		    "cannot load %s (install the Debian package "
		    "libmicrohttpd12): %s", LG_MHD_SONAME, dlerror());
		return -1;
	}
#define X(ret, name, params) \
	if ((*(void **)&p_##name = dlsym(mhd_lib, #name)) == NULL) { \
		snprintf(mhd_err, sizeof(mhd_err), "%s has no %s " \
		    "(libmicrohttpd 0.9.71 or later is needed)", \
		    LG_MHD_SONAME, #name); \
		return -1; \
	}
	MHD_FUNCS
#undef X
	mhd_state = 1;
	return 0;
}

const char *
mhdload_error(void)
{
	return mhd_err;
}

struct MHD_Daemon *
MHD_start_daemon(unsigned int flags, uint16_t port,
    MHD_AcceptPolicyCallback apc, void *apc_cls,
    MHD_AccessHandlerCallback dh, void *dh_cls, ...)
{
	struct MHD_Daemon *d;
	va_list ap;

	if (mhd_load() < 0)
		return NULL;
	va_start(ap, dh_cls);
	d = p_MHD_start_daemon_va(flags, port, apc, apc_cls, dh, dh_cls, ap);
	va_end(ap);
	return d;
}

/* the rest is only reached with a daemon, after a successful load; the
 * two info calls are only made with info types that take no argument */
void
MHD_stop_daemon(struct MHD_Daemon *daemon)
{
	p_MHD_stop_daemon(daemon);
}

MHD_socket
MHD_quiesce_daemon(struct MHD_Daemon *daemon)
{
	return p_MHD_quiesce_daemon(daemon);
}

const union MHD_DaemonInfo *
MHD_get_daemon_info(struct MHD_Daemon *daemon,
    enum MHD_DaemonInfoType info_type, ...)
{
	return p_MHD_get_daemon_info(daemon, info_type);
}

const union MHD_ConnectionInfo *
MHD_get_connection_info(struct MHD_Connection *connection,
    enum MHD_ConnectionInfoType info_type, ...)
{
	return p_MHD_get_connection_info(connection, info_type);
}

const char *
MHD_lookup_connection_value(struct MHD_Connection *connection,
    enum MHD_ValueKind kind, const char *key)
{
	return p_MHD_lookup_connection_value(connection, kind, key);
}

int
MHD_get_connection_values(struct MHD_Connection *connection,
    enum MHD_ValueKind kind, MHD_KeyValueIterator iterator,
    void *iterator_cls)
{
	return p_MHD_get_connection_values(connection, kind, iterator,
	    iterator_cls);
}

struct MHD_Response *
MHD_create_response_from_buffer(size_t size, void *buffer,
    enum MHD_ResponseMemoryMode mode)
{
	return p_MHD_create_response_from_buffer(size, buffer, mode);
}

enum MHD_Result
MHD_add_response_header(struct MHD_Response *response, const char *header,
    const char *content)
{
	return p_MHD_add_response_header(response, header, content);
}

void
MHD_destroy_response(struct MHD_Response *response)
{
	p_MHD_destroy_response(response);
}

enum MHD_Result
MHD_queue_response(struct MHD_Connection *connection,
    unsigned int status_code, struct MHD_Response *response)
{
	return p_MHD_queue_response(connection, status_code, response);
}
