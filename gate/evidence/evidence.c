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
	/* each DNSBL zone's posts in a row without its answer in time:
	 * a zone is a source of its own, as a list's member_check is (a
	 * zone whose servers are gone would otherwise cost every post of
	 * a rebuild dns_timeout_ms, though the others answer at once) */
	struct {
		char name[NETLIST_NAME_MAX + 1];
		unsigned timeouts;
	} zone[LG_MAX_DNSBL_ZONES];
	size_t nzone;
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

/* the count of time-outs in a row of the zone name: NULL when there is
 * no room for it (more zones in one run than one configuration has) */
static unsigned *
zone_timeouts(const char *name)
{
	size_t i;

	for (i = 0; i < state.nzone; i++)
		if (strcmp(state.zone[i].name, name) == 0)
			return &state.zone[i].timeouts;
	if (state.nzone >= LG_MAX_DNSBL_ZONES)
		return NULL;
	snprintf(state.zone[i].name, sizeof(state.zone[i].name), "%s", name);
	state.zone[i].timeouts = 0;
	state.nzone++;
	return &state.zone[i].timeouts;
}

/* drop from zones those that gave up (EVIDENCE_GIVE_UP time-outs in a
 * row): how many were dropped */
static size_t
drop_gave_up(struct netlist *zones)
{
	const unsigned *t;
	size_t i, k = 0;

	for (i = 0; i < zones->nname; i++) {
		t = zone_timeouts(zones->name[i]);
		if (t != NULL && *t >= EVIDENCE_GIVE_UP)
			continue;
		if (k != i)
			memcpy(zones->name[k], zones->name[i],
			    sizeof(zones->name[k]));
		k++;
	}
	i = zones->nname - k;
	zones->nname = k;
	return i;
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
    const char *sender, double by, struct toklist *tl, char *note,
    size_t notesz)
{
	struct pollfd p[DNSBL_MAX_FDS + 1];
	struct member_run m;
	struct dnsbl *d = NULL;
	struct netlist zones;
	struct mcache *mc = NULL;
	enum member_answer ans = MEMBER_NONE;
	unsigned char ip[16];
	char addr[LG_MAX_SENDER_BYTES], why[128], buf[160];
	size_t np, nd, nzones = 0, ngaveup = 0, i;
	unsigned nlisted, ntimeout, *t, member_ms, dns_ms;
	int asking = 0, dns_done = 1, fam, wait, fd, cached = 0, late;
	double left;
	time_t now = time(NULL);

	(void)ctx;
	memset(&m, 0, sizeof(m));
	m.pidfd = -1;
	/* each source's time, within what the caller has (the filter's
	 * watchdog): less than a millisecond left asks no one */
	member_ms = l->member_check_ms;
	dns_ms = g->dns_timeout_ms;
	if (by > 0) {
		left = by - clock_now_ms();
		if (left < member_ms)
			member_ms = left > 0 ? (unsigned)left : 0;
		if (left < dns_ms)
			dns_ms = left > 0 ? (unsigned)left : 0;
	}
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
		else if (member_ms == 0)
			note_add(note, notesz, "member=no-time");
		else {
			member_start(&m, l->member_check, addr, l->name,
			    member_ms);
			asking = 1;
		}
	}
	/* --- the relay ------------------------------------------------ */
	if (g->dnsbl_zones != NULL && (fam = relay_ip(tl, ip)) != 0 &&
	    dnsbl_public(ip) &&
	    netlist_parse(g->dnsbl_zones, &zones, why, sizeof(why)) == 0 &&
	    zones.nname > 0) {
		nzones = zones.nname;
		ngaveup = drop_gave_up(&zones);
		if (zones.nname == 0)
			note_add(note, notesz, "dnsbl=gave-up");
		else if (dns_ms == 0)
			note_add(note, notesz, "dnsbl=no-time");
		else if (dnsbl_start(&d, g->dns_server, &zones, ip, fam,
		    dns_ms, why, sizeof(why)) < 0) {
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
		for (i = 0; i < dnsbl_nzones(d); i++) {
			const char *z = dnsbl_zone(d, i, &late);

			if ((t = zone_timeouts(z)) != NULL)
				*t = late ? *t + 1 : 0;
		}
		/* a zone that refuses this resolver says so, or the line
		 * would read as "not listed" for every post */
		snprintf(buf, sizeof(buf), "dnsbl=%u/%u%s%s%s", nlisted,
		    (unsigned)nzones, ntimeout > 0 ? "+timeout" : "",
		    dnsbl_nrefused(d) > 0 ? "+refused" : "",
		    ngaveup > 0 ? "+gave-up" : "");
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
	state.nzone = 0;
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
