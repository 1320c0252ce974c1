/*
 * sitecv.c - cross-validation of the site store's weight rule on the
 * training half only (not installed; a developer's tool, driven by
 * tests/bench/sitecv.py)
 *
 * Reads "GROUP S|H FOLD PATH" lines on standard input, tokenizes every
 * post once, keeps counts in memory exactly as tokdb_learn would, and
 * scores with the counts combined as tokcounts.c combines them:
 *
 *	count = own + w * site		(tokens and message counts alike)
 *
 * for each weight rule given with -r (see rule_w), printing 1-ROCA% and
 * the errors at the cutoff -c (default 0.3).  Two experiments:
 *
 *   -e young: GROUP "site" is the site store (all of it, always); GROUP
 *     "own" is the new list's training half.  For each own size n (-n,
 *     posts of each class; 0 = none, -1 = all) and each of -R draws, n
 *     ham and n spam of the own group are its training, the rest of the
 *     own group is scored (with -1: the own posts of every fold but one,
 *     that fold scored, for each fold).
 *   -e lists: every GROUP is a list; for each fold f the site store is
 *     every list's posts outside f, each list's own file its posts
 *     outside f, and each list's posts in f are scored.  Prints each
 *     list's errors alone, with the site-wide file alone and combined.
 *
 * Trusts its input; posts are read through source.c as train reads them.
 *
 *	sitecv -e young|lists [-r RULE,...] [-n N,...] [-R DRAWS] [-c CUT]
 *	    [-t opt=val,...] < list
 *
 * RULE: off (the list's own counts alone), site (the site's alone), and
 * two families.  Pooled counts, count = own + w * site: Kx (w = x /
 * (x + own posts)), kx (the same over the site's counts less the list's
 * own), Ax (w = min(1, x / site posts): the site worth x posts), Px (per
 * class: the site's spam at x / (x + own spam posts), its ham at
 * x / (x + own ham posts)), Qx (per class: each of the site's classes
 * worth x posts), Wx (w = x fixed).  The site's f as a Robinson prior
 * of x posts: Gx (listgate's rule, gate/classify.c: for the tokens the
 * site has seen, the others keep robx and robs), Rx (for every token),
 * Fx (as R, x fading with the list's own posts).
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gate/bayes.h"
#include "gate/mail/source.h"
#include "gate/tok.h"

struct post {
	int spam, fold, group;
	char *path;
	uint32_t *ids;
	size_t n;
	double score;
	int scored;
};

static struct post *posts;
static size_t nposts;
static struct toklist *dict;
static size_t nsidx;
static char *groups[64];
static int ngroups;
static uint32_t *site_s, *site_h, *own_s, *own_h;
static double cutoff = 0.3;

/* the group number of name, added when new */
static int
group_of(const char *name)
{
	int i;

	for (i = 0; i < ngroups; i++)
		if (strcmp(groups[i], name) == 0)
			return i;
	if (ngroups == 64) {
		fprintf(stderr, "sitecv: too many groups\n");
		exit(2);
	}
	groups[ngroups] = strdup(name);
	return ngroups++;
}

static void
load_post(struct post *p, const struct tok_opts *o, struct toklist *tl)
{
	struct source *src;
	struct source_post sp;
	char err[512];
	size_t i, n, len;
	const char *t;

	if (source_open(p->path, &src, err, sizeof(err)) < 0 ||
	    source_next(src, &sp, err, sizeof(err)) != 1) {
		fprintf(stderr, "sitecv: %s: cannot read\n", p->path);
		exit(1);
	}
	if (tok_post(sp.data, sp.len, o, tl) < 0) {
		fprintf(stderr, "sitecv: out of memory\n");
		exit(1);
	}
	source_close(src);
	n = toklist_count(tl);
	p->ids = malloc((n ? n : 1) * sizeof(*p->ids));
	p->n = 0;
	for (i = 0; i < n; i++) {
		t = toklist_get(tl, i, &len);
		if (toklist_add(dict, t, len) < 0) {
			fprintf(stderr, "sitecv: out of memory\n");
			exit(1);
		}
		p->ids[p->n++] = (uint32_t)toklist_find(dict, t, len);
	}
}

/* a rule: kind and its number */
struct rule {
	char kind;	/* o off, s site alone, K, k, A, P, Q, W, G, R, F */
	double x;
	char name[32];
};

/* the weight of the site's counts under r */
static double
rule_w(const struct rule *r, double own_posts, double site_posts)
{
	switch (r->kind) {
	case 'K':
	case 'k':
		return r->x / (r->x + own_posts);
	case 'A':
		return site_posts > r->x ? r->x / site_posts : 1;
	case 'W':
		return r->x;
	}
	return 0;
}

static void
add(uint32_t *s, uint32_t *h, const struct post *p)
{
	size_t j;

	for (j = 0; j < p->n; j++)
		if (p->spam)
			s[p->ids[j]]++;
		else
			h[p->ids[j]]++;
}

/* score post p with own counts and site counts weighed by r */
static double
score(const struct rule *r, const struct bayes_params *bp,
    const struct post *p, double ons, double onh, double sns, double snh)
{
	static struct bayes_tok *bt;
	static size_t cap;
	struct bayes_result res;
	double w, ws, ns, nh;
	size_t j;

	if (p->n > cap) {
		cap = p->n;
		bt = realloc(bt, cap * sizeof(*bt));
	}
	if (r->kind == 'o')
		w = 0;
	else if (r->kind == 's')
		w = 1;
	else
		w = rule_w(r, ons + onh, sns + snh);
	ws = w;
	if (r->kind == 'P') {
		/* per class: each class's site counts fade with the list's
		 * own posts of that class */
		ws = r->x / (r->x + ons);
		w = r->x / (r->x + onh);
	} else if (r->kind == 'Q') {
		ws = sns > r->x ? r->x / sns : 1;
		w = snh > r->x ? r->x / snh : 1;
	}
	if (r->kind == 'k') {
		/* the site's counts beyond the list's own */
		ns = ons + ws * (sns - ons);
		nh = onh + w * (snh - onh);
	} else {
		ns = (r->kind == 's' ? 0 : ons) + ws * sns;
		nh = (r->kind == 's' ? 0 : onh) + w * snh;
	}
	for (j = 0; j < p->n; j++) {
		uint32_t id = p->ids[j];

		bt[j].tok = toklist_get(dict, id, &bt[j].len);
		if (r->kind == 'k') {
			bt[j].spam = own_s[id] + ws * (double)(site_s[id] -
			    own_s[id]);
			bt[j].ham = own_h[id] + w * (double)(site_h[id] -
			    own_h[id]);
			continue;
		}
		bt[j].spam = (r->kind == 's' ? 0 : own_s[id]) + ws * site_s[id];
		bt[j].ham = (r->kind == 's' ? 0 : own_h[id]) + w * site_h[id];
	}
	if (r->kind == 'G') {
		/* the rule listgate uses (gate/classify.c): the site's f as
		 * the prior, x posts strong, of the tokens the site has seen */
		static struct bayes_prior *pri;
		static size_t pcap;

		if (p->n > pcap) {
			pcap = p->n;
			pri = realloc(pri, pcap * sizeof(*pri));
		}
		for (j = 0; j < p->n; j++) {
			uint32_t id = p->ids[j];

			bt[j].tok = toklist_get(dict, id, &bt[j].len);
			bt[j].spam = own_s[id];
			bt[j].ham = own_h[id];
			pri[j].n = 0;
			pri[j].f = 0.5;
			if (site_s[id] + site_h[id] > 0) {
				pri[j].f = bayes_f(bp, sns, snh, site_s[id],
				    site_h[id]);
				pri[j].n = r->x;
			}
		}
		bayes_score_priors(bp, ons, onh, bt, pri, p->n, &res);
		return res.score;
	}
	if (r->kind == 'R' || r->kind == 'F') {
		/*
		 * The site's f as each token's Robinson prior, of strength S
		 * posts, in place of robx and robs: f = (S f_site + n p) /
		 * (S + n), f_site the site's own Robinson f (robs, robx),
		 * for every token (one the site never saw has f_site =
		 * robx); F: S fading with the list's own posts,
		 * S 200 / (200 + own posts).  Scored through bayes_score
		 * with robs 0 and counts that give p = f.
		 */
		struct bayes_params rp = *bp;
		double S = r->x;

		if (r->kind == 'F')
			S = r->x * 200 / (200 + ons + onh);
		rp.robs = 0;
		for (j = 0; j < p->n; j++) {
			uint32_t id = p->ids[j];
			double fs = bayes_f(bp, sns, snh, site_s[id], site_h[id]);
			double b = ons > 0 ? own_s[id] / ons : 0;
			double g = onh > 0 ? own_h[id] / onh : 0;
			double n = (double)own_s[id] + own_h[id], f;

			if (b > 1)
				b = 1;
			if (g > 1)
				g = 1;
			f = b + g > 0 && S + n > 0 ?
			    (S * fs + n * b / (b + g)) / (S + n) : fs;
			bt[j].tok = toklist_get(dict, id, &bt[j].len);
			bt[j].spam = f;
			bt[j].ham = 1 - f;
		}
		bayes_score(&rp, 1, 1, bt, p->n, &res);
		return res.score;
	}
	bayes_score(bp, ns, nh, bt, p->n, &res);
	return res.score;
}

static int
score_cmp(const void *a, const void *b)
{
	const struct post *x = *(struct post *const *)a;
	const struct post *y = *(struct post *const *)b;

	return x->score < y->score ? -1 : x->score > y->score;
}

/* 1-ROCA% over the scored posts of group g (-1: all) */
static double
roca(int g)
{
	struct post **v = malloc(nposts * sizeof(*v));
	size_t i, j, nv = 0, nh = 0, ns = 0;
	double bad = 0, above;

	for (i = 0; i < nposts; i++)
		if (posts[i].scored && (g < 0 || posts[i].group == g))
			v[nv++] = &posts[i];
	qsort(v, nv, sizeof(*v), score_cmp);
	for (i = 0; i < nv; i++)
		v[i]->spam ? ns++ : nh++;
	above = (double)nh;
	for (i = 0; i < nv; ) {
		size_t th = 0, ts = 0;

		for (j = i; j < nv && v[j]->score == v[i]->score; j++)
			v[j]->spam ? ts++ : th++;
		above -= (double)th;
		bad += ts * (above + th / 2.0);
		i = j;
	}
	free(v);
	return ns && nh ? 100.0 * bad / ((double)ns * nh) : 0;
}

/* errors at the cutoff over the scored posts of group g (-1: all) */
static void
errors(int g, size_t *sp_r, size_t *hh_r, size_t *ns_r, size_t *nh_r)
{
	size_t i;

	*sp_r = *hh_r = *ns_r = *nh_r = 0;
	for (i = 0; i < nposts; i++) {
		if (!posts[i].scored || (g >= 0 && posts[i].group != g))
			continue;
		if (posts[i].spam) {
			(*ns_r)++;
			*sp_r += posts[i].score < cutoff;
		} else {
			(*nh_r)++;
			*hh_r += posts[i].score >= cutoff;
		}
	}
}

/* a deterministic shuffle (xorshift) */
static uint64_t rng = 88172645463325252ULL;

static uint64_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void
shuffle(size_t *v, size_t n)
{
	size_t i, j, t;

	for (i = n; i > 1; i--) {
		j = (size_t)(rnd() % i);
		t = v[i - 1];
		v[i - 1] = v[j];
		v[j] = t;
	}
}

static void
clear_own(void)
{
	memset(own_s, 0, nsidx * sizeof(*own_s));
	memset(own_h, 0, nsidx * sizeof(*own_h));
}

static void
exp_young(const struct rule *rules, size_t nrules, const long *sizes,
    size_t nsizes, int draws, const struct bayes_params *bp)
{
	int gs = group_of("site"), go = group_of("own"), nfold = 0, d, f;
	size_t i, k, si, *hv, *sv, nhv = 0, nsv = 0;
	double sns = 0, snh = 0;
	char *train = calloc(nposts, 1);

	hv = malloc(nposts * sizeof(*hv));
	sv = malloc(nposts * sizeof(*sv));
	memset(site_s, 0, nsidx * sizeof(*site_s));
	memset(site_h, 0, nsidx * sizeof(*site_h));
	for (i = 0; i < nposts; i++) {
		if (posts[i].group == gs) {
			add(site_s, site_h, &posts[i]);
			posts[i].spam ? sns++ : snh++;
		} else if (posts[i].group == go) {
			if (posts[i].spam)
				sv[nsv++] = i;
			else
				hv[nhv++] = i;
			if (posts[i].fold + 1 > nfold)
				nfold = posts[i].fold + 1;
		}
	}
	fprintf(stderr, "sitecv: site %.0f ham %.0f spam; own %zu ham %zu "
	    "spam\n", snh, sns, nhv, nsv);
	for (si = 0; si < nsizes; si++)
	for (k = 0; k < nrules; k++) {
		double sum_roca = 0, sum_sp = 0, sum_hh = 0;
		size_t ns_tot = 0, nh_tot = 0;
		int runs = sizes[si] < 0 ? 1 : draws;

		/* the same draws for every size and rule */
		rng = 88172645463325252ULL;
		nhv = nsv = 0;
		for (i = 0; i < nposts; i++)
			if (posts[i].group == go) {
				if (posts[i].spam)
					sv[nsv++] = i;
				else
					hv[nhv++] = i;
			}
		for (d = 0; d < runs; d++) {
			size_t sp, hh, ns, nh;
			double ons = 0, onh = 0;

			for (i = 0; i < nposts; i++)
				posts[i].scored = 0;
			if (sizes[si] < 0) {
				/* every fold in turn */
				for (f = 0; f < nfold; f++) {
					clear_own();
					ons = onh = 0;
					for (i = 0; i < nposts; i++)
						if (posts[i].group == go &&
						    posts[i].fold != f) {
							add(own_s, own_h,
							    &posts[i]);
							posts[i].spam ? ons++ :
							    onh++;
						}
					for (i = 0; i < nposts; i++)
						if (posts[i].group == go &&
						    posts[i].fold == f) {
							posts[i].score = score(
							    &rules[k], bp,
							    &posts[i], ons,
							    onh, sns, snh);
							posts[i].scored = 1;
						}
				}
			} else {
				size_t n = (size_t)sizes[si];

				shuffle(hv, nhv);
				shuffle(sv, nsv);
				clear_own();
				memset(train, 0, nposts);
				for (i = 0; i < n && i < nhv; i++) {
					add(own_s, own_h, &posts[hv[i]]);
					train[hv[i]] = 1;
					onh++;
				}
				for (i = 0; i < n && i < nsv; i++) {
					add(own_s, own_h, &posts[sv[i]]);
					train[sv[i]] = 1;
					ons++;
				}
				for (i = 0; i < nposts; i++)
					if (posts[i].group == go && !train[i]) {
						posts[i].score = score(
						    &rules[k], bp, &posts[i],
						    ons, onh, sns, snh);
						posts[i].scored = 1;
					}
			}
			sum_roca += roca(go);
			errors(go, &sp, &hh, &ns, &nh);
			sum_sp += (double)sp;
			sum_hh += (double)hh;
			ns_tot = ns;
			nh_tot = nh;
		}
		printf("size %ld rule %-8s 1-ROCA%% %.4f  spam passed %.1f/%zu  "
		    "ham held %.1f/%zu\n", sizes[si], rules[k].name,
		    sum_roca / runs, sum_sp / runs, ns_tot, sum_hh / runs,
		    nh_tot);
		fflush(stdout);
	}
	free(train);
	free(hv);
	free(sv);
}

static void
exp_lists(const struct rule *rules, size_t nrules,
    const struct bayes_params *bp)
{
	int nfold = 0, f, g;
	size_t i, k;

	for (i = 0; i < nposts; i++)
		if (posts[i].fold + 1 > nfold)
			nfold = posts[i].fold + 1;
	for (k = 0; k < nrules; k++) {
		size_t tsp = 0, thh = 0;

		for (i = 0; i < nposts; i++)
			posts[i].scored = 0;
		for (f = 0; f < nfold; f++) {
			double sns = 0, snh = 0;

			memset(site_s, 0, nsidx * sizeof(*site_s));
			memset(site_h, 0, nsidx * sizeof(*site_h));
			for (i = 0; i < nposts; i++)
				if (posts[i].fold != f) {
					add(site_s, site_h, &posts[i]);
					posts[i].spam ? sns++ : snh++;
				}
			for (g = 0; g < ngroups; g++) {
				double ons = 0, onh = 0;

				clear_own();
				for (i = 0; i < nposts; i++)
					if (posts[i].group == g &&
					    posts[i].fold != f) {
						add(own_s, own_h, &posts[i]);
						posts[i].spam ? ons++ : onh++;
					}
				for (i = 0; i < nposts; i++)
					if (posts[i].group == g &&
					    posts[i].fold == f) {
						posts[i].score = score(&rules[k],
						    bp, &posts[i], ons, onh,
						    sns, snh);
						posts[i].scored = 1;
					}
			}
		}
		{
			double lsum = 0;

			for (g = 0; g < ngroups; g++)
				lsum += log(roca(g) + 0.001);
			printf("rule %-8s geomean 1-ROCA%% %.4f |", rules[k].name,
			    exp(lsum / ngroups) - 0.001);
		}
		for (g = 0; g < ngroups; g++) {
			size_t sp, hh, ns, nh;

			errors(g, &sp, &hh, &ns, &nh);
			tsp += sp;
			thh += hh;
			printf(" %s %.3f %zu/%zu", groups[g], roca(g), hh, sp);
		}
		printf(" | held %zu passed %zu\n", thh, tsp);
		fflush(stdout);
	}
}

int
main(int argc, char **argv)
{
	struct tok_opts o;
	struct toklist *tl;
	struct bayes_params bp;
	struct rule rules[64];
	long sizes[16] = { 0, 10, 25, 50, 100, -1 };
	size_t nrules = 0, nsizes = 6, i, cap = 0;
	const char *exp = "young";
	char line[4096], *s, *e;
	int ch, draws = 5;

	tok_opts_default(&o);
	bayes_params_default(&bp);
	while ((ch = getopt(argc, argv, "e:r:n:R:c:")) != -1) {
		switch (ch) {
		case 'e':
			exp = optarg;
			break;
		case 'r':
			for (s = optarg; *s != '\0' && nrules < 64; s = e) {
				struct rule *r = &rules[nrules++];

				e = s + strcspn(s, ",");
				snprintf(r->name, sizeof(r->name), "%.*s",
				    (int)(e - s), s);
				r->kind = strcmp(r->name, "off") == 0 ? 'o' :
				    strcmp(r->name, "site") == 0 ? 's' :
				    r->name[0];
				r->x = strtod(r->name + 1, NULL);
				if (*e == ',')
					e++;
			}
			break;
		case 'n':
			nsizes = 0;
			for (s = optarg; *s != '\0' && nsizes < 16; ) {
				sizes[nsizes++] = strtol(s, &e, 10);
				if (*e != ',')
					break;
				s = e + 1;
			}
			break;
		case 'R':
			draws = atoi(optarg);
			break;
		case 'c':
			cutoff = strtod(optarg, NULL);
			break;
		default:
			return 2;
		}
	}
	if (nrules == 0) {
		strcpy(rules[0].name, "off");
		rules[0].kind = 'o';
		nrules = 1;
	}
	dict = toklist_new(UINT32_MAX / 8);
	tl = toklist_new(o.max_tokens);
	while (fgets(line, sizeof(line), stdin) != NULL) {
		char gname[128], cls[4], path[4000];
		int fold;

		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "%127s %3s %d %3999[^\n]", gname, cls, &fold,
		    path) != 4)
			continue;
		if (nposts == cap) {
			cap = cap ? cap * 2 : 1024;
			posts = realloc(posts, cap * sizeof(*posts));
		}
		memset(&posts[nposts], 0, sizeof(posts[nposts]));
		posts[nposts].group = group_of(gname);
		posts[nposts].spam = cls[0] == 'S';
		posts[nposts].fold = fold;
		posts[nposts].path = strdup(path);
		nposts++;
	}
	for (i = 0; i < nposts; i++)
		load_post(&posts[i], &o, tl);
	nsidx = toklist_count(dict);
	fprintf(stderr, "sitecv: %zu posts, %zu distinct tokens\n", nposts,
	    nsidx);
	site_s = calloc(nsidx, sizeof(*site_s));
	site_h = calloc(nsidx, sizeof(*site_h));
	own_s = calloc(nsidx, sizeof(*own_s));
	own_h = calloc(nsidx, sizeof(*own_h));
	if (strcmp(exp, "young") == 0)
		exp_young(rules, nrules, sizes, nsizes, draws, &bp);
	else
		exp_lists(rules, nrules, &bp);
	return 0;
}
