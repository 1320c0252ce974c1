/*
 * evidence.c - gather member and DNSBL evidence for one post at once
 *
 * The post and its envelope are hostile: the sender reaches the
 * member_check only as one checked argument (gate/evidence/member.c),
 * the relay's address only as a parsed IP (gate/received.c).  Both
 * sources run in parallel in one poll loop bounded by their own
 * time-outs (member_check_ms, dns_timeout_ms).  Never logs, never
 * exits; -1 only when out of memory.
 */
#include "config.h"

#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "gate/evidence/dnsbl.h"
#include "gate/evidence/evidence.h"
#include "gate/evidence/mcache.h"
#include "gate/evidence/member.h"
#include "gate/util/clock.h"
#include "listcfg/listcfg.h"

/* what this process has seen so far (one thread gathers at a time:
 * filter, score and train are single-threaded, listgate web syncs from
 * one thread) */
struct ev_state {
	unsigned member_timeouts;	/* in a row, of member_list's check */
	char member_list[LG_MAX_LIST_NAME + 1];
	unsigned dns_timeouts;		/* posts in a row with no answer
					 * in time from any zone */
	struct mcache *cache;		/* the list's answer cache */
	char cache_list[LG_MAX_LIST_NAME + 1];
};

static struct ev_state state;

/* the first untrusted relay's address, from its src:ip: token: its
 * family, or 0 */
static int
relay_ip(const struct toklist *tl, unsigned char a[16])
{
	size_t i, n = toklist_count(tl), len;
	const char *t;

	for (i = 0; i < n; i++) {
		t = toklist_get(tl, i, &len);
		if (len > 7 && memcmp(t, "src:ip:", 7) == 0)
			return netlist_addr(t + 7, len - 7, a);
	}
	return 0;
}

/* the list's answer cache, opened once per list per process */
static struct mcache *
cache_for(const struct listcfg_global *g, const struct listcfg_list *l)
{
	char path[4200];

	if (l->member_cache_s == 0)
		return NULL;
	if (state.cache != NULL && strcmp(state.cache_list, l->name) == 0)
		return state.cache;
	mcache_close(state.cache);
	state.cache = NULL;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s.members",
	    g->tokens_dir, l->name) >= sizeof(path))
		return NULL;
	state.cache = mcache_open(path);
	snprintf(state.cache_list, sizeof(state.cache_list), "%s", l->name);
	return state.cache;
}

/* append "s" to the note */
static void
note_add(char *note, size_t notesz, const char *s)
{
	size_t k;

	if (note == NULL || notesz == 0)
		return;
	k = strlen(note);
	snprintf(note + k, notesz - k, "%s%s", k > 0 ? " " : "", s);
}

static int
gather(void *ctx, const struct listcfg_global *g,
    const struct listcfg_list *l, const unsigned char *msg, size_t len,
    const char *sender, struct toklist *tl, char *note, size_t notesz)
{
	struct pollfd p[DNSBL_MAX_FDS + 1];
	struct member_run m;
	struct dnsbl *d = NULL;
	struct netlist zones;
	struct mcache *mc = NULL;
	enum member_answer ans = MEMBER_NONE;
	unsigned char ip[16];
	char addr[LG_MAX_SENDER_BYTES], why[128], buf[160];
	size_t np, nd;
	unsigned nlisted, ntimeout;
	int asking = 0, dns_done = 1, fam, wait, fd, cached = 0;
	double left;
	time_t now = time(NULL);

	(void)ctx;
	memset(&m, 0, sizeof(m));
	m.pidfd = -1;
	/* --- the subscriber ------------------------------------------- */
	/* the time-outs counted are one list's: a sync of every list,
	 * or listgate web, goes from a list whose check hangs to one
	 * whose check answers */
	if (strcmp(state.member_list, l->name) != 0) {
		snprintf(state.member_list, sizeof(state.member_list), "%s",
		    l->name);
		state.member_timeouts = 0;
	}
	if (l->member_check != NULL) {
		if (!member_sender(msg, len, sender, addr, sizeof(addr)))
			note_add(note, notesz, "member=nosender");
		else if ((mc = cache_for(g, l)) != NULL && (ans = mcache_get(mc,
		    addr, now, l->member_cache_s)) != MEMBER_NONE)
			cached = 1;
		else if (state.member_timeouts >= EVIDENCE_GIVE_UP)
			note_add(note, notesz, "member=gave-up");
		else {
			member_start(&m, l->member_check, addr, l->name,
			    l->member_check_ms);
			asking = 1;
		}
	}
	/* --- the relay ------------------------------------------------ */
	if (g->dnsbl_zones != NULL && (fam = relay_ip(tl, ip)) != 0 &&
	    dnsbl_public(ip) &&
	    netlist_parse(g->dnsbl_zones, &zones, why, sizeof(why)) == 0 &&
	    zones.nname > 0) {
		if (state.dns_timeouts >= EVIDENCE_GIVE_UP)
			note_add(note, notesz, "dnsbl=gave-up");
		else if (dnsbl_start(&d, g->dns_server, &zones, ip, fam,
		    g->dns_timeout_ms, why, sizeof(why)) < 0) {
			member_stop(&m);
			return -1;
		} else if (d == NULL) {
			snprintf(buf, sizeof(buf), "dnsbl=error");
			note_add(note, notesz, buf);
		} else
			dns_done = 0;
	}
	/* --- both at once ---------------------------------------------- */
	while ((asking && m.pid > 0) || !dns_done) {
		np = 0;
		wait = 1000;
		if (!dns_done) {
			np = dnsbl_pollfds(d, p, DNSBL_MAX_FDS, &wait);
		}
		nd = np;
		if (asking && m.pid > 0) {
			left = m.deadline - clock_now_ms();
			if ((fd = member_fd(&m)) >= 0) {
				p[nd].fd = fd;
				p[nd].events = POLLIN;
				p[nd].revents = 0;
				nd++;
			} else if (left > 1)
				left = 1;	/* no pidfd: look each ms */
			if (left < 0)
				left = 0;
			if (left + 1 < wait)
				wait = (int)left + 1;
		}
		poll(p, nd, wait);
		if (asking && m.pid > 0)
			member_poll(&m);
		if (!dns_done)
			dns_done = dnsbl_step(d, p, np);
	}
	/* --- what was learnt ------------------------------------------- */
	if (asking) {
		ans = m.answer;
		if (strcmp(m.why, "timeout") == 0)
			state.member_timeouts++;
		else
			state.member_timeouts = 0;
		if (ans != MEMBER_NONE)
			mcache_put(mc, addr, ans, now);
		snprintf(buf, sizeof(buf), "member=%s", m.why);
		note_add(note, notesz, buf);
	} else if (cached) {
		note_add(note, notesz, ans == MEMBER_YES ? "member=cached-yes" :
		    "member=cached-no");
	}
	/* past the post's token cap if need be: a post padded with
	 * thousands of words of its own must not push the answer out */
	if (ans != MEMBER_NONE && toklist_add_over(tl, ans == MEMBER_YES ?
	    "member:yes" : "member:no", ans == MEMBER_YES ? 10 : 9) < 0) {
		dnsbl_free(d);
		return -1;
	}
	if (d != NULL) {
		if (dnsbl_tokens(d, tl, &nlisted, &ntimeout) < 0) {
			dnsbl_free(d);
			return -1;
		}
		if (ntimeout > 0 && nlisted == 0 && ntimeout == zones.nname)
			state.dns_timeouts++;
		else
			state.dns_timeouts = 0;
		snprintf(buf, sizeof(buf), "dnsbl=%u/%u%s", nlisted,
		    (unsigned)zones.nname, ntimeout > 0 ? "+timeout" : "");
		note_add(note, notesz, buf);
		dnsbl_free(d);
	}
	return 0;
}

/* a run begins: time-outs of earlier runs say nothing of this one (a
 * resolver restarted for a minute must not keep listgate web, whose
 * syncs run for days, from asking ever again) */
static void
begin(void *ctx)
{
	(void)ctx;
	state.member_timeouts = 0;
	state.dns_timeouts = 0;
}

/* whether gather asks anyone about l's posts: a member_check, or the
 * DNSBLs (gather asks them only about a post with a public relay) */
static int
asks(void *ctx, const struct listcfg_global *g, const struct listcfg_list *l)
{
	(void)ctx;
	return l->member_check != NULL || g->dnsbl_zones != NULL;
}

static const struct posttok_evidence gatherer = {
	gather, begin, NULL, asks
};

const struct posttok_evidence *
evidence_gatherer(void)
{
	return &gatherer;
}
