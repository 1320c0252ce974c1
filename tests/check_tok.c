/*
 * check_tok.c - token sets, word/URL/address/CJK splitting, header tagging
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gate/tok.h"

/* 1 if tl holds the token s */
static int
has(const struct toklist *tl, const char *s)
{
	size_t i, n;
	const char *t;

	for (i = 0; i < toklist_count(tl); i++) {
		t = toklist_get(tl, i, &n);
		if (n == strlen(s) && memcmp(t, s, n) == 0)
			return 1;
	}
	return 0;
}

/* tokenize text with default word options */
static struct toklist *
text(const char *prefix, int header, const char *s, struct tok_opts *o)
{
	struct tok_opts def;
	struct toklist *tl = toklist_new(1000);

	if (o == NULL) {
		tok_opts_words(&def);
		def.fold_case = 0;	/* the tests below spell case out */
		o = &def;
	}
	ck_assert_ptr_nonnull(tl);
	ck_assert_int_eq(tok_text(o, prefix, header,
	    (const unsigned char *)s, strlen(s), tl), 0);
	return tl;
}

START_TEST(set_order_and_dedup)
{
	struct toklist *tl = toklist_new(100);
	size_t n;

	ck_assert_int_eq(toklist_add(tl, "b", 1), 1);
	ck_assert_int_eq(toklist_add(tl, "a", 1), 1);
	ck_assert_int_eq(toklist_add(tl, "b", 1), 0);
	ck_assert_int_eq(toklist_add(tl, "a\0x", 3), 1);	/* binary-safe */
	ck_assert_int_eq(toklist_find(tl, "a\0x", 3), 2);
	ck_assert_int_eq(toklist_find(tl, "b", 1), 0);
	ck_assert_int_eq(toklist_find(tl, "c", 1), -1);
	ck_assert_uint_eq(toklist_count(tl), 3);
	ck_assert_str_eq(toklist_get(tl, 0, &n), "b");
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(toklist_get(tl, 1, &n), "a");
	ck_assert_uint_eq(n, 1);
	toklist_get(tl, 2, &n);
	ck_assert_uint_eq(n, 3);
	toklist_reset(tl);
	ck_assert_uint_eq(toklist_count(tl), 0);
	ck_assert_int_eq(toklist_add(tl, "b", 1), 1);
	ck_assert_uint_eq(toklist_count(tl), 1);
	toklist_free(tl);
}
END_TEST

START_TEST(set_bounds_and_growth)
{
	struct toklist *tl = toklist_new(5000);
	char big[TOKLIST_MAX_BYTES + 2], t[32];
	size_t i, n;

	memset(big, 'x', sizeof(big));
	ck_assert_int_eq(toklist_add(tl, big, TOKLIST_MAX_BYTES + 1), 0);
	ck_assert_int_eq(toklist_add(tl, big, TOKLIST_MAX_BYTES), 1);
	for (i = 0; i < 6000; i++) {
		n = (size_t)snprintf(t, sizeof(t), "tok%zu", i);
		ck_assert_int_ge(toklist_add(tl, t, n), 0);
	}
	ck_assert_uint_eq(toklist_count(tl), 5000);	/* capped */
	ck_assert_int_eq(toklist_add(tl, "new", 3), 0);
	/* every token still found after many rehashes */
	for (i = 0; i < 4999; i++) {
		n = (size_t)snprintf(t, sizeof(t), "tok%zu", i);
		ck_assert_int_eq(toklist_add(tl, t, n), 0);
		ck_assert_str_eq(toklist_get(tl, i + 1, NULL), t);
	}
	toklist_free(tl);
}
END_TEST

/* a set grown large, then reset for few tokens (only their slots are
 * cleared) and for many (the whole table): nothing of the earlier
 * tokens is left, in any slot */
START_TEST(set_reset_after_growth)
{
	struct toklist *tl = toklist_new(100000);
	char t[32];
	size_t i, n, round, few;

	for (round = 0; round < 6; round++) {
		few = round % 2 ? 3 : 40000;
		toklist_reset(tl);
		for (i = 0; i < few; i++) {
			n = (size_t)snprintf(t, sizeof(t), "r%zu-%zu", round,
			    i);
			ck_assert_int_eq(toklist_add(tl, t, n), 1);
		}
		ck_assert_uint_eq(toklist_count(tl), few);
		for (i = 0; i < 40000; i++) {
			n = (size_t)snprintf(t, sizeof(t), "r%zu-%zu",
			    round ? round - 1 : 5, i);
			ck_assert_int_eq(toklist_find(tl, t, n), -1);
		}
		for (i = 0; i < few; i++) {
			n = (size_t)snprintf(t, sizeof(t), "r%zu-%zu", round,
			    i);
			ck_assert_int_eq(toklist_find(tl, t, n), (long)i);
		}
	}
	toklist_reset(tl);
	ck_assert_uint_eq(toklist_count(tl), 0);
	ck_assert_int_eq(toklist_find(tl, "r5-0", 4), -1);
	toklist_free(tl);
}
END_TEST

START_TEST(words_basic)
{
	struct toklist *tl = text("", 0,
	    "Hello, world!  It's a $100 deal... don't-miss it.\n"
	    "e-mail U.S.A. --foo-- !!!wow!!! ab", NULL);

	ck_assert(has(tl, "Hello"));		/* case kept when asked */
	ck_assert(has(tl, "world"));
	ck_assert(has(tl, "It's"));
	ck_assert(has(tl, "$100"));
	ck_assert(has(tl, "deal"));
	ck_assert(has(tl, "don't-miss"));
	ck_assert(has(tl, "e-mail"));
	ck_assert(has(tl, "U.S.A"));
	ck_assert(has(tl, "foo"));
	ck_assert(has(tl, "wow"));
	ck_assert(!has(tl, "ab"));		/* below min_len */
	ck_assert(!has(tl, "it."));
	ck_assert(!has(tl, "world!"));
	/* first-seen order */
	ck_assert_str_eq(toklist_get(tl, 0, NULL), "Hello");
	toklist_free(tl);
}
END_TEST

START_TEST(words_options)
{
	struct tok_opts o;
	struct toklist *tl;

	tok_opts_words(&o);
	ck_assert_int_eq(o.fold_case, 1);	/* the default */
	o.numbers = 0;
	tl = text("", 0, "FREE Money 12345 x2y", &o);
	ck_assert(has(tl, "free"));
	ck_assert(has(tl, "money"));
	ck_assert(!has(tl, "12345"));
	ck_assert(has(tl, "x2y"));
	toklist_free(tl);
	o.bigrams = 1;
	tl = text("", 0, "click here now", &o);
	ck_assert(has(tl, "bi:click here"));
	ck_assert(has(tl, "bi:here now"));
	toklist_free(tl);
}
END_TEST

START_TEST(skip_tokens)
{
	struct toklist *tl = text("subj:", 0,
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa ok "
	    "Bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
	    NULL);

	ck_assert(has(tl, "subj:skip:a 50"));
	ck_assert(has(tl, "subj:skip:B 60"));
	ck_assert_uint_eq(toklist_count(tl), 2);
	toklist_free(tl);
}
END_TEST

START_TEST(urls)
{
	struct toklist *tl = text("", 0,
	    "see (http://User@WWW.Example.co.uk:8080/buy/now.html?id=77) "
	    "or www.pills.example.com/cheap. and https://10.1.2.3/x", NULL);

	ck_assert(has(tl, "see"));
	ck_assert(has(tl, "url:http"));
	ck_assert(has(tl, "url:www.example.co.uk"));
	ck_assert(has(tl, "url:example.co.uk"));
	ck_assert(has(tl, "url:co.uk"));
	ck_assert(has(tl, "url:buy"));
	ck_assert(has(tl, "url:now"));
	ck_assert(has(tl, "url:html"));
	ck_assert(!has(tl, "url:id"));
	ck_assert(has(tl, "url:www.pills.example.com"));
	ck_assert(has(tl, "url:example.com"));
	ck_assert(has(tl, "url:cheap"));
	ck_assert(has(tl, "url:https"));
	ck_assert(has(tl, "url:ip"));
	ck_assert(has(tl, "url:10.1.2.3"));
	ck_assert(!has(tl, "http"));	/* the URL is not also plain words */
	ck_assert(!has(tl, "buy"));
	toklist_free(tl);
}
END_TEST

/* a URL in a header keeps the header's prefix: "subj:url:..." */
START_TEST(header_urls)
{
	struct toklist *tl = text("subj:", 0,
	    "Deals at http://Cheap.Example.com/order now", NULL);

	ck_assert(has(tl, "subj:Deals"));
	ck_assert(has(tl, "subj:now"));
	ck_assert(has(tl, "subj:url:http"));
	ck_assert(has(tl, "subj:url:cheap.example.com"));
	ck_assert(has(tl, "subj:url:example.com"));
	ck_assert(has(tl, "subj:url:order"));
	ck_assert(!has(tl, "url:cheap.example.com"));
	ck_assert(!has(tl, "url:http"));
	toklist_free(tl);
	tl = text("from:", 1, "\"www.spam.example\" <a@b.example>", NULL);
	ck_assert(has(tl, "from:url:www.spam.example"));
	ck_assert(has(tl, "from:url:spam.example"));
	ck_assert(has(tl, "from:addr:a@b.example"));
	ck_assert(!has(tl, "url:spam.example"));
	toklist_free(tl);
}
END_TEST

START_TEST(addresses)
{
	struct toklist *tl = text("", 0,
	    "write to <Bob.Smith@Mail.Example.org>, not bob@localhost", NULL);

	ck_assert(has(tl, "write"));
	ck_assert(has(tl, "addr:bob.smith"));
	ck_assert(has(tl, "addr:@mail.example.org"));
	ck_assert(!has(tl, "addr:bob"));	/* no dot in the domain */
	ck_assert(has(tl, "localhost"));
	toklist_free(tl);
	tl = text("from:", 1, "\"Bob Smith\" <Bob@Example.ORG>", NULL);
	ck_assert(has(tl, "from:Bob"));
	ck_assert(has(tl, "from:Smith"));
	ck_assert(has(tl, "from:addr:bob@example.org"));
	ck_assert(has(tl, "from:addr:@example.org"));
	toklist_free(tl);
}
END_TEST

/* RFC 6532 addresses: letters of any script, not its punctuation */
START_TEST(eai_addresses)
{
	struct toklist *tl = text("to:", 1, "dangl\xc3\xbc" "e@email.com, "
	    "\xe7\x94\xa8\xe6\x88\xb7@\xe4\xbe\x8b\xe5\xad\x90."
	    "\xe5\xb9\xbf\xe5\x91\x8a", NULL);

	ck_assert(has(tl, "to:addr:dangl\xc3\xbc" "e@email.com"));
	ck_assert(!has(tl, "to:addr:e@email.com"));
	ck_assert(has(tl, "to:addr:\xe7\x94\xa8\xe6\x88\xb7@\xe4\xbe"
	    "\x8b\xe5\xad\x90.\xe5\xb9\xbf\xe5\x91\x8a"));
	toklist_free(tl);
	/* guillemets and CJK punctuation around an address are not in it */
	tl = text("", 0, "\xc2\xab" "a@example.org\xc2\xbb "
	    "\xef\xbc\x9a" "b@example.org\xe3\x80\x82", NULL);
	ck_assert(has(tl, "addr:a"));
	ck_assert(has(tl, "addr:b"));
	ck_assert(has(tl, "addr:@example.org"));
	toklist_free(tl);
}
END_TEST

START_TEST(cjk_bigrams)
{
	/* 日本語です (Han Han Han kana kana), then a lone 中 */
	struct toklist *tl = text("", 0,
	    "abc\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xe3\x81\xa7\xe3\x81\x99"
	    "\xe3\x80\x82 \xe4\xb8\xad", NULL);

	ck_assert(has(tl, "abc"));
	ck_assert(has(tl, "\xe6\x97\xa5\xe6\x9c\xac"));
	ck_assert(has(tl, "\xe6\x9c\xac\xe8\xaa\x9e"));
	ck_assert(has(tl, "\xe8\xaa\x9e\xe3\x81\xa7"));
	ck_assert(has(tl, "\xe3\x81\xa7\xe3\x81\x99"));
	ck_assert(has(tl, "\xe4\xb8\xad"));
	ck_assert_uint_eq(toklist_count(tl), 6);	/* 。 is punctuation */
	toklist_free(tl);
	/* Thai, Lao, Khmer and Myanmar are written without spaces too:
	 * ราคาถูก ("cheap") gives รา าค คา าถ ถู ูก, not one long word */
	tl = text("", 0, "\xe0\xb8\xa3\xe0\xb8\xb2\xe0\xb8\x84\xe0\xb8"
	    "\xb2\xe0\xb8\x96\xe0\xb8\xb9\xe0\xb8\x81", NULL);
	ck_assert(has(tl, "\xe0\xb8\xa3\xe0\xb8\xb2"));
	ck_assert(has(tl, "\xe0\xb8\x96\xe0\xb8\xb9"));
	ck_assert(has(tl, "\xe0\xb8\xb9\xe0\xb8\x81"));
	ck_assert_uint_eq(toklist_count(tl), 6);
	toklist_free(tl);
	/* Lao ດີ, Khmer តី, Myanmar မြ: each a bigram */
	tl = text("", 0, "\xe0\xba\x94\xe0\xba\xb5 \xe1\x9e\x8f\xe1\x9e"
	    "\xb8 \xe1\x80\x99\xe1\x80\xbc", NULL);
	ck_assert(has(tl, "\xe0\xba\x94\xe0\xba\xb5"));
	ck_assert(has(tl, "\xe1\x9e\x8f\xe1\x9e\xb8"));
	ck_assert(has(tl, "\xe1\x80\x99\xe1\x80\xbc"));
	toklist_free(tl);
	/* Cyrillic and accented Latin are words */
	tl = text("", 0, "\xd0\xbf\xd1\x80\xd0\xb8\xd0\xb2\xd0\xb5\xd1\x82, "
	    "caf\xc3\xa9\xe2\x80\x99s", NULL);
	ck_assert(has(tl, "\xd0\xbf\xd1\x80\xd0\xb8\xd0\xb2\xd0\xb5\xd1\x82"));
	ck_assert(has(tl, "caf\xc3\xa9"));	/* ’ separates */
	toklist_free(tl);
}
END_TEST

/* zero-width space, soft hyphen, word joiner, byte order mark, left-to-
 * right mark, zero-width non-joiner: never shown, so never splitting */
#define ZWSP	"\xe2\x80\x8b"
#define SHY	"\xc2\xad"
#define WJ	"\xe2\x81\xa0"
#define BOM	"\xef\xbb\xbf"
#define LRM	"\xe2\x80\x8e"
#define ZWNJ	"\xe2\x80\x8c"

START_TEST(invisible_characters)
{
	struct toklist *tl = text("", 0,
	    "V" ZWSP "i" ZWSP "a" ZWSP "g" ZWSP "r" ZWSP "a cheap pay" SHY
	    "pal pre" WJ "scription " BOM "refill" LRM ", end." ZWSP
	    " " ZWSP ZWSP " m" ZWNJ "i" ZWNJ "x", NULL);

	ck_assert(has(tl, "Viagra"));		/* the word a reader sees */
	ck_assert(has(tl, "paypal"));
	ck_assert(has(tl, "prescription"));
	ck_assert(has(tl, "refill"));		/* nothing around it kept */
	ck_assert(has(tl, "end"));		/* the joiner still trimmed */
	ck_assert(has(tl, "mix"));
	ck_assert(has(tl, "cheap"));
	ck_assert(has(tl, "anomaly:invisible"));	/* said, once */
	ck_assert(!has(tl, "pay"));
	ck_assert(!has(tl, "pal"));
	ck_assert_uint_eq(toklist_count(tl), 8);
	toklist_free(tl);
	/* in CJK text: the bigrams of the visible characters */
	tl = text("", 0, "\xe4\xb8\xad" ZWSP "\xe6\x96\x87" ZWSP
	    "\xe5\xad\x97" ZWSP " \xe6\x97\xa5" ZWSP, NULL);
	ck_assert(has(tl, "\xe4\xb8\xad\xe6\x96\x87"));
	ck_assert(has(tl, "\xe6\x96\x87\xe5\xad\x97"));
	ck_assert(has(tl, "\xe6\x97\xa5"));	/* a lone one */
	ck_assert_uint_eq(toklist_count(tl), 3);
	toklist_free(tl);
	/* a word that is long only with its invisible characters is a word;
	 * one long without them a skip token, bounded */
	tl = text("", 0, "a" ZWSP "b" ZWSP "c" ZWSP "d" ZWSP "e" ZWSP "f"
	    ZWSP "g" ZWSP "h" ZWSP "i" ZWSP "j" ZWSP "k" ZWSP "l" ZWSP "m"
	    ZWSP "n" ZWSP "o", NULL);
	ck_assert(has(tl, "abcdefghijklmno"));
	toklist_free(tl);
	{
		char big[3 * 4000 + 1];
		size_t i;

		for (i = 0; i < 3000; i++)
			memcpy(big + 4 * i, "x" ZWSP, 4);
		big[4 * 3000] = '\0';
		tl = text("", 0, big, NULL);
		ck_assert(has(tl, "skip:x 3000"));
		ck_assert_uint_eq(toklist_count(tl), 2);
		toklist_free(tl);
		/* however long, the word is trimmed and measured as shown:
		 * the skip token of the word written plainly; joiners alone,
		 * nothing (and no anomaly: no letters around it) */
		memset(big, '.', 5);
		memcpy(big + 5, ZWSP, 3);
		memset(big + 8, 'a', 1100);
		big[1108] = '\0';
		tl = text("", 0, big, NULL);
		ck_assert(has(tl, "skip:a 1100"));
		ck_assert_uint_eq(toklist_count(tl), 1);
		toklist_free(tl);
		memset(big, '.', 1100);
		memcpy(big + 1100, ZWSP, 4);	/* (with the '\0') */
		tl = text("", 0, big, NULL);
		ck_assert_uint_eq(toklist_count(tl), 0);
		toklist_free(tl);
	}
	/* the Hangul fillers, invisible too, are no CJK characters that
	 * split the word (nor a bigram of their own) */
	tl = text("", 0, "Via\xe3\x85\xa4gra pay\xe1\x85\x9fpal "
	    "\xe4\xb8\xad\xe3\x85\xa4\xe6\x96\x87", NULL);
	ck_assert(has(tl, "Viagra"));
	ck_assert(has(tl, "paypal"));
	ck_assert(has(tl, "\xe4\xb8\xad\xe6\x96\x87"));
	ck_assert(has(tl, "anomaly:invisible"));
	ck_assert_uint_eq(toklist_count(tl), 4);
	toklist_free(tl);
	/* no invisible character: no anomaly */
	tl = text("", 0, "plain words", NULL);
	ck_assert(!has(tl, "anomaly:invisible"));
	toklist_free(tl);
	/* nor one beside an emoji: a family (zero-width joiners) and a
	 * red heart (variation selector 16) are everyday text */
	tl = text("", 0, "hello \xf0\x9f\x91\xa8" "\xe2\x80\x8d"
	    "\xf0\x9f\x91\xa9 love\xe2\x9d\xa4\xef\xb8\x8f", NULL);
	ck_assert(has(tl, "hello"));
	ck_assert(has(tl, "love"));
	ck_assert(!has(tl, "anomaly:invisible"));
	ck_assert_uint_eq(toklist_count(tl), 2);
	toklist_free(tl);
	/* a URL or an address with one hidden in it is still one */
	tl = text("", 0, "see www." ZWSP "pills.example.com/cheap or "
	    "ht" ZWSP "tp://spam.example.net/x and bob" ZWSP
	    "@mail.example.org", NULL);
	ck_assert(has(tl, "url:www.pills.example.com"));
	ck_assert(has(tl, "url:cheap"));
	ck_assert(has(tl, "url:http"));
	ck_assert(has(tl, "url:spam.example.net"));
	ck_assert(has(tl, "addr:bob"));
	ck_assert(has(tl, "addr:@mail.example.org"));
	ck_assert(!has(tl, "cheap"));
	ck_assert(has(tl, "anomaly:invisible"));
	toklist_free(tl);
}
END_TEST

/* styled letters and digits read as the ASCII ones a reader sees */
START_TEST(styled_letters)
{
	struct toklist *tl = text("", 0,
	    /* mathematical bold FREE, sans-serif bold italic Cash */
	    "\xf0\x9d\x90\x85\xf0\x9d\x90\x91\xf0\x9d\x90\x84"
	    "\xf0\x9d\x90\x84 \xf0\x9d\x98\xbe\xf0\x9d\x99\x96"
	    "\xf0\x9d\x99\xa8\xf0\x9d\x99\x9d "
	    /* circled, negative squared: loan, BIG */
	    "\xe2\x93\x9b\xe2\x93\x9e\xe2\x93\x90\xe2\x93\x9d "
	    "\xf0\x9f\x85\xb1\xf0\x9f\x85\xb8\xf0\x9f\x85\xb6 "
	    /* double-struck digits 100, a styled letter among plain ones */
	    "\xf0\x9d\x9f\x99\xf0\x9d\x9f\x98\xf0\x9d\x9f\x98 "
	    "pri\xf0\x9d\x90\x9cing", NULL);

	ck_assert(has(tl, "FREE"));
	ck_assert(has(tl, "Cash"));
	ck_assert(has(tl, "loan"));
	ck_assert(has(tl, "BIG"));
	ck_assert(has(tl, "100"));
	ck_assert(has(tl, "pricing"));
	ck_assert(has(tl, "anomaly:styled"));
	ck_assert_uint_eq(toklist_count(tl), 7);
	toklist_free(tl);
	/* full-width forms, everyday in Japanese text: the word, no anomaly;
	 * the symbols of the squared block are no letters */
	tl = text("", 0, "\xef\xbc\xb0\xef\xbd\x83\xef\xbc\x91\xef"
	    "\xbc\x90 \xf0\x9f\x85\x8a\xf0\x9f\x85\x8b\xf0\x9f\x85\x8c",
	    NULL);
	ck_assert(has(tl, "Pc10"));
	ck_assert(!has(tl, "anomaly:styled"));
	ck_assert_uint_eq(toklist_count(tl), 1);
	toklist_free(tl);
	/* double-struck FREE and Cash, script Hello, fraktur Cash: some of
	 * their letters are in the letterlike symbols block */
	tl = text("", 0, "\xf0\x9d\x94\xbd\xe2\x84\x9d\xf0\x9d\x94\xbc"
	    "\xf0\x9d\x94\xbc \xe2\x84\x82\xf0\x9d\x95\x92\xf0\x9d\x95\xa4"
	    "\xf0\x9d\x95\x99 \xe2\x84\x8b\xe2\x84\xaf\xf0\x9d\x93\x81"
	    "\xf0\x9d\x93\x81\xe2\x84\xb4 \xe2\x84\xad\xf0\x9d\x94\x9e"
	    "\xf0\x9d\x94\xb0\xf0\x9d\x94\xa5", NULL);
	ck_assert(has(tl, "FREE"));
	ck_assert(has(tl, "Cash"));
	ck_assert(has(tl, "Hello"));
	ck_assert(has(tl, "anomaly:styled"));
	ck_assert_uint_eq(toklist_count(tl), 4);
	toklist_free(tl);
	/* a word of 300 styled letters is the skip token of 300 letters,
	 * as one of 200 is of 200 */
	{
		char big[4 * 300 + 1];
		size_t i;

		for (i = 0; i < 300; i++)
			memcpy(big + 4 * i, "\xf0\x9d\x90\x80", 4);	/* bold A */
		big[4 * 300] = '\0';
		tl = text("", 0, big, NULL);
		ck_assert(has(tl, "skip:A 300"));
		ck_assert(has(tl, "anomaly:styled"));
		ck_assert_uint_eq(toklist_count(tl), 2);
		toklist_free(tl);
	}
}
END_TEST

/* more styled forms: small capitals, circled, parenthesized and dingbat
 * digits, parenthesized letters */
START_TEST(styled_more)
{
	struct toklist *tl = text("", 0,
	    "\xea\x9c\xb0\xca\x80\xe1\xb4\x87\xe1\xb4\x87 "	/* small caps */
	    "\xe2\x91\xa0\xe2\x93\xaa\xe2\x93\xaa "		/* circled 100 */
	    "\xe2\x92\xa1\xe2\x92\xad\xe2\x92\xa0\xe2\x92\xa0 "	/* (f)(r)(e)(e) */
	    "\xf0\x9f\x84\x95\xf0\x9f\x84\xa1\xf0\x9f\x84\x94"
	    "\xf0\x9f\x84\x94 "					/* (F)(R)(E)(E) */
	    "\xe2\x9d\xb6\xe2\x9e\x81\xe2\x9e\x81", NULL);	/* 122 */

	ck_assert(has(tl, "free"));
	ck_assert(has(tl, "100"));
	ck_assert(has(tl, "FREE"));
	ck_assert(has(tl, "122"));
	ck_assert(has(tl, "anomaly:styled"));
	ck_assert_uint_eq(toklist_count(tl), 5);
	toklist_free(tl);
	/* more look-alikes: Cyrillic palochka for l, Greek lunate sigma
	 * for c */
	tl = text("", 0, "\xd3\x8f" "oan \xcf\xb2" "ash", NULL);
	ck_assert(has(tl, "loan"));
	ck_assert(has(tl, "cash"));
	toklist_free(tl);
}
END_TEST

/* Cyrillic and Greek letters that look like Latin ones, in a word of
 * Latin letters, read as the Latin ones */
START_TEST(mixed_scripts)
{
	struct toklist *tl = text("", 0,
	    /* paypal with two Cyrillic a; PAYPAL with Cyrillic P and A */
	    "p\xd0\xb0yp\xd0\xb0l \xd0\xa0\xd0\x90Y\xd0\xa0\xd0\x90L "
	    /* Greek omicron in "bonus" */
	    "b\xce\xbfnus", NULL);

	ck_assert(has(tl, "paypal"));
	ck_assert(has(tl, "PAYPAL"));
	ck_assert(has(tl, "bonus"));
	ck_assert(has(tl, "anomaly:mixed-script"));
	ck_assert_uint_eq(toklist_count(tl), 4);
	toklist_free(tl);
	/* Russian and Greek words stay as written, even where every letter
	 * has a Latin look-alike (pac); so does a compound whose Cyrillic
	 * part is no Latin look-alike (Web-сайт: й) */
	tl = text("", 0, "\xd1\x80\xd0\xb0\xd1\x81 \xce\xbf\xce\xbd"
	    "\xce\xbf Web-\xd1\x81\xd0\xb0\xd0\xb9\xd1\x82", NULL);
	ck_assert(has(tl, "\xd1\x80\xd0\xb0\xd1\x81"));
	ck_assert(has(tl, "\xce\xbf\xce\xbd\xce\xbf"));
	ck_assert(has(tl, "Web-\xd1\x81\xd0\xb0\xd0\xb9\xd1\x82"));
	ck_assert(!has(tl, "anomaly:mixed-script"));
	ck_assert_uint_eq(toklist_count(tl), 3);
	toklist_free(tl);
	/* a styled digit is no Latin letter: "1" in bold and Russian "oe"
	 * read as "1" and the Russian letters, like an ASCII "1" */
	tl = text("", 0, "\xf0\x9d\x9f\x8f\xd0\xbe\xd0\xb5 "
	    "1\xd0\xbe\xd0\xb5", NULL);
	ck_assert(has(tl, "1\xd0\xbe\xd0\xb5"));
	ck_assert(has(tl, "anomaly:styled"));
	ck_assert(!has(tl, "anomaly:mixed-script"));
	ck_assert_uint_eq(toklist_count(tl), 2);
	toklist_free(tl);
}
END_TEST

/* combining marks that disguise a word of Latin letters are read
 * without; a word in decomposed form, and other scripts, keep theirs */
START_TEST(combining_marks)
{
	struct toklist *tl = text("", 0,
	    /* viagra, each letter underlined (U+0332) */
	    "v\xcc\xb2i\xcc\xb2" "a\xcc\xb2g\xcc\xb2r\xcc\xb2" "a\xcc\xb2 "
	    /* OFFER struck through (U+0336) */
	    "O\xcc\xb6" "F\xcc\xb6" "F\xcc\xb6" "E\xcc\xb6R\xcc\xb6 "
	    /* "meds" with three marks piled on its m (Zalgo) */
	    "m\xcc\x80\xcc\x81\xcc\x82" "eds "
	    /* p<Cyrillic a>ypal, each letter underlined */
	    "p\xcc\xb2\xd0\xb0\xcc\xb2y\xcc\xb2p\xcc\xb2" "a\xcc\xb2l\xcc\xb2",
	    NULL);

	ck_assert(has(tl, "viagra"));
	ck_assert(has(tl, "OFFER"));
	ck_assert(has(tl, "meds"));
	ck_assert(has(tl, "paypal"));
	ck_assert(has(tl, "anomaly:combining"));
	ck_assert(has(tl, "anomaly:mixed-script"));
	ck_assert_uint_eq(toklist_count(tl), 6);
	toklist_free(tl);
	/* cafe + U+0301 and Vi<e + U+0323 U+0302>t (Vietnamese, decomposed)
	 * keep their accents, and so does a word with a non-Latin letter:
	 * Cyrillic "da" with a stress mark on each letter; marks alone are
	 * a word as written */
	tl = text("", 0, "cafe\xcc\x81 Vie\xcc\xa3\xcc\x82t "
	    "\xd0\xb4\xcc\x81\xd0\xb0\xcc\x81 \xcc\xb2\xcc\xb2\xcc\xb2",
	    NULL);
	ck_assert(has(tl, "cafe\xcc\x81"));
	ck_assert(has(tl, "Vie\xcc\xa3\xcc\x82t"));
	ck_assert(has(tl, "\xd0\xb4\xcc\x81\xd0\xb0\xcc\x81"));
	ck_assert(has(tl, "\xcc\xb2\xcc\xb2\xcc\xb2"));
	ck_assert(!has(tl, "anomaly:combining"));
	ck_assert_uint_eq(toklist_count(tl), 4);
	toklist_free(tl);
}
END_TEST

START_TEST(hostile_bytes)
{
	struct tok_opts o;
	struct toklist *tl = toklist_new(20000);
	unsigned char *s = malloc(100000);
	size_t i, j;
	unsigned seed = 1;

	tok_opts_words(&o);
	ck_assert_ptr_nonnull(s);
	for (j = 0; j < 50; j++) {
		for (i = 0; i < 100000; i++) {
			seed = seed * 1103515245u + 12345u;
			s[i] = (unsigned char)(seed >> 16);
		}
		toklist_reset(tl);
		ck_assert_int_eq(tok_text(&o, "", 0, s, 100000, tl), 0);
		ck_assert_int_eq(tok_text(&o, "subj:", 1, s, 100000, tl), 0);
		for (i = 0; i < toklist_count(tl); i++) {
			size_t n;

			toklist_get(tl, i, &n);
			ck_assert_uint_le(n, TOKLIST_MAX_BYTES);
		}
	}
	ck_assert_int_eq(tok_text(&o, "", 0, s, 0, tl), 0);
	/* one megabyte-long chunk of addresses and @-runs: no deep
	 * recursion, linear time, every address found */
	{
		size_t len = 0, cap = 1200000;
		unsigned char *big = malloc(cap);
		char one[32];
		int k;

		ck_assert_ptr_nonnull(big);
		for (i = 0; len + 32 < cap; i++) {
			k = snprintf(one, sizeof(one), "u%zu@d%zu.example,@@",
			    i, i % 7);
			memcpy(big + len, one, (size_t)k);
			len += (size_t)k;
		}
		toklist_reset(tl);
		ck_assert_int_eq(tok_text(&o, "", 0, big, len, tl), 0);
		ck_assert(has(tl, "addr:u0"));
		ck_assert(has(tl, "addr:u1000"));
		ck_assert(has(tl, "addr:@d6.example"));
		free(big);
	}
	free(s);
	toklist_free(tl);
}
END_TEST

/* CPU seconds this process has used */
static double
cpu_seconds(void)
{
	struct timespec ts;

	ck_assert_int_eq(clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts), 0);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * Hostile text that made the tokenizer superlinear: head, then unit
 * repeated to about size bytes, then tail; tokenized as a body and as a
 * header, each case must take under limit seconds of CPU (the old code
 * took over ten times the limit, the new takes under a hundredth of it).
 */
static const struct {
	const char *name, *head, *unit, *tail;
	size_t size;
	double limit;
} slow_cases[] = {
	/* a run of zero-width spaces: each of them looked at the rest of
	 * the run (19 s for this one, twice); after a letter, and before
	 * one */
	{ "invisible run after a letter", "a", "\xe2\x80\x8b", "", 180000,
	    0.5 },
	{ "invisible run before a letter", ".", "\xe2\x80\x8b", "b", 180000,
	    0.5 },
};

START_TEST(hostile_time)
{
	struct tok_opts o;
	struct toklist *tl = toklist_new(20000);
	size_t hl = strlen(slow_cases[_i].head);
	size_t ul = strlen(slow_cases[_i].unit);
	size_t tl2 = strlen(slow_cases[_i].tail), n = 0;
	unsigned char *s = malloc(slow_cases[_i].size + hl + ul + tl2);
	double t0, t;

	ck_assert_ptr_nonnull(tl);
	ck_assert_ptr_nonnull(s);
	tok_opts_words(&o);
	memcpy(s, slow_cases[_i].head, hl);
	n = hl;
	while (n < slow_cases[_i].size) {
		memcpy(s + n, slow_cases[_i].unit, ul);
		n += ul;
	}
	memcpy(s + n, slow_cases[_i].tail, tl2);
	n += tl2;
	t0 = cpu_seconds();
	ck_assert_int_eq(tok_text(&o, "", 0, s, n, tl), 0);
	ck_assert_int_eq(tok_text(&o, "subj:", 1, s, n, tl), 0);
	t = cpu_seconds() - t0;
	ck_assert_msg(t < slow_cases[_i].limit, "%s: %zu bytes took %.2f s "
	    "of CPU (at most %.2f)", slow_cases[_i].name, n, t,
	    slow_cases[_i].limit);
	free(s);
	toklist_free(tl);
}
END_TEST

/* tokens of one header */
static struct toklist *
hdr(const char *name, const char *val, unsigned depth)
{
	struct tok_opts o;
	struct toklist *tl = toklist_new(1000);

	tok_opts_words(&o);
	o.fold_case = 0;
	ck_assert_int_eq(tok_header(&o, name, (const unsigned char *)val,
	    strlen(val), depth, tl), 0);
	return tl;
}

START_TEST(headers_tagged)
{
	struct toklist *tl;

	tl = hdr("Subject", "Cheap Viagra now", 0);
	ck_assert(has(tl, "subj:Cheap"));
	ck_assert(has(tl, "subj:Viagra"));
	ck_assert(has(tl, "hdr:subject"));
	ck_assert(!has(tl, "Cheap"));
	toklist_free(tl);
	tl = hdr("Content-Type", "text/HTML; charset=\"GB2312\"", 0);
	ck_assert(has(tl, "ct:text/html"));
	ck_assert(has(tl, "ct:charset:gb2312"));
	toklist_free(tl);
	tl = hdr("Received", "from mail.spam.example (unknown [192.168.7.9])"
	    " by mx.example.org (Postfix) with ESMTP id 4F2A1; "
	    "Mon, 2 Sep 2002 10:00:00 +0100", 0);
	ck_assert(has(tl, "rcvd:mail.spam.example"));
	ck_assert(has(tl, "rcvd:mx.example.org"));
	ck_assert(has(tl, "rcvd:ip:192.168.7.9"));
	ck_assert(has(tl, "rcvd:ip:192.168.7"));	/* /24 and /16 */
	ck_assert(has(tl, "rcvd:ip:192.168"));
	ck_assert(!has(tl, "rcvd:ip:192"));
	ck_assert(!has(tl, "rcvd:2002"));
	ck_assert(!has(tl, "rcvd:Sep"));
	toklist_free(tl);
	tl = hdr("Message-ID", "<abc.123@Mail.Example.com>", 0);
	ck_assert(has(tl, "msgid:mail.example.com"));
	toklist_free(tl);
	tl = hdr("X-Mailer", "Microsoft Outlook Express 6.00", 0);
	ck_assert(has(tl, "ua:microsoft outlook express 6.00"));
	ck_assert(has(tl, "ua:Outlook"));
	toklist_free(tl);
	tl = hdr("X-Weird-Thing", "whatever", 0);
	ck_assert(has(tl, "hdr:x-weird-thing"));
	ck_assert_uint_eq(toklist_count(tl), 1);
	toklist_free(tl);
	/* part headers: only content tags */
	tl = hdr("Content-Type", "application/pdf; name=x.pdf", 2);
	ck_assert(has(tl, "ct:application/pdf"));
	toklist_free(tl);
	tl = hdr("From", "someone@example.com", 1);
	ck_assert_uint_eq(toklist_count(tl), 0);
	toklist_free(tl);
}
END_TEST

/* the bytes that end a chunk (a URL ends there and the next word is a
 * plain word): white space and controls, DEL, " ( ) < > [ ] ` { | } */
START_TEST(chunk_separators_byte_by_byte)
{
	static const char sep[] = "\"()<>[]`{|}\x7f";
	struct tok_opts o;
	unsigned char buf[64];
	struct toklist *tl;
	size_t n;
	int b, want;

	tok_opts_words(&o);
	for (b = 0; b < 256; b++) {
		n = (size_t)snprintf((char *)buf, sizeof(buf),
		    "see http://ab.example.com/ppp");
		buf[n++] = (unsigned char)b;
		memcpy(buf + n, "qqqq more", 9);
		n += 9;
		tl = toklist_new(1000);
		ck_assert_ptr_nonnull(tl);
		ck_assert_int_eq(tok_text(&o, "", 0, buf, n, tl), 0);
		want = b <= ' ' || (b != 0 && strchr(sep, b) != NULL);
		ck_assert_msg(has(tl, "qqqq") == want, "byte 0x%02x: %s", b,
		    want ? "should end the URL" : "should not end the URL");
		toklist_free(tl);
	}
}
END_TEST

/* every exact name of gate/tok.c's table, in mixed case, is ignored */
START_TEST(every_ignored_name)
{
	static const char *const names[] = {
	    "ReTuRn-pAtH", "DeLiVeReD-To", "X-OrIgInAl-tO", "EnVeLoPe-tO",
	    "X-EnVeLoPe-tO", "X-EnVeLoPe-fRoM", "PrEcEdEnCe", "ErRoRs-tO",
	    "SeNdEr", "MaIlInG-LiSt", "X-MaIlInG-LiSt", "X-MaIlMaN-VeRsIoN",
	    "X-BeEnThErE", "X-LoOp", "X-BoGoSiTy", "X-ScAnNeD-By",
	    "X-MaIlScAnNeR", "X-AnTiSpAm", "StAtUs", "X-StAtUs",
	    "X-KeYwOrDs", "X-UiDl", "LiNeS", "CoNtEnT-LeNgTh", "XrEf",
	    "DaTe", "X-ViRuS-ScAnNeD", "X-ViRuS-StAtUs", "X-SpAm",
	    "X-RaZoR-Id", "X-PyZoR", "X-DcC", "ApPrOvEd", "ApPrOvEd-bY",
	    "X-ApPrOvEd", "X-AcK", "X-No-aRcHiVe", "X-OrIgInAl-dAtE",
	    "X-EgRoUpS-ReTuRn", "X-SeNdEr", "X-MaIlEr-iNfO",
	    "X-LiSt-aDmInIsTrIvIa", "X-ToPiCs", "X-RcPt-tO", "X-SiEvE",
	    "X-UiD", "X-OrIgInAl-aRrIvAl-tImE", "X-ReCeIvEd-dAtE",
	    "MeSsAgE-NuMbEr", "X-MeSsAgE-NuMbEr", "X-MaIl-fRoM",
	    "ReCeIvEd-sPf", "AuThEnTiCaTiOn-rEsUlTs", "ArC-SeAl",
	    "ArC-MeSsAgE-SiGnAtUrE", "ArC-AuThEnTiCaTiOn-rEsUlTs",
	    "DkIm-sIgNaTuRe", "DoMaInKeY-SiGnAtUrE",
	    "X-GoOgLe-dKiM-SiGnAtUrE", "X-Gm-mEsSaGe-sTaTe",
	    "X-SpAm-rElAyS-ExTeRnAl", "X-SpAm-rElAyS-InTeRnAl",
	    "X-SpAm-rElAyS-TrUsTeD", "X-SpAm-rElAyS-UnTrUsTeD", NULL
	};
	size_t i;

	for (i = 0; names[i] != NULL; i++)
		ck_assert_msg(tok_header_ignored(names[i]), "%s", names[i]);
	ck_assert_uint_eq(i, 64);
	ck_assert(!tok_header_ignored("Return-Pat"));
	ck_assert(!tok_header_ignored("Return-Paths"));
}
END_TEST

START_TEST(headers_ignored)
{
	static const char *const names[] = { "Return-Path", "Delivered-To",
	    "X-Original-To", "List-Id", "List-Unsubscribe", "X-Mailman-Version",
	    "X-BeenThere", "X-Loop", "Precedence", "Errors-To", "Sender",
	    "Mailing-List", "X-Mailing-List", "X-List-Foo", "X-Spam-Status",
	    "X-Spam-Level", "X-Bogosity", "X-Virus-Scanned", "X-Scanned-By",
	    "X-MailScanner", "X-Antispam", "Status", "X-Status", "X-Keywords",
	    "X-UIDL", "Lines", "Content-Length", "Xref", "Date",
	    "Resent-From", "Original-Recipient", "X-Spam-Relays-External",
	    "DATE", "list-post", NULL };
	struct toklist *tl;
	size_t i;

	for (i = 0; names[i] != NULL; i++) {
		ck_assert_msg(tok_header_ignored(names[i]), "%s", names[i]);
		tl = hdr(names[i], "some value here http://x.example.com/", 0);
		ck_assert_msg(toklist_count(tl) == 0, "%s", names[i]);
		toklist_free(tl);
	}
	ck_assert(!tok_header_ignored("Subject"));
	ck_assert(!tok_header_ignored("X-Mailer"));
	/* whole names only; prefixes at any length, any case */
	ck_assert(!tok_header_ignored("Date2"));
	ck_assert(!tok_header_ignored("Dat"));
	ck_assert(!tok_header_ignored(""));
	ck_assert(!tok_header_ignored("Return-Path-And-Then-Some-More-Words-Here"));
	ck_assert(tok_header_ignored("X-SPAM-a-name-longer-than-forty-bytes-all-in-all"));
	ck_assert(tok_header_ignored("ARC-Authentication-Results"));
	ck_assert(!tok_header_ignored("ARC-Authentication-Result"));
	ck_assert(tok_header_ignored("list-"));
	ck_assert(!tok_header_ignored("list"));
}
END_TEST

/* the vote budget's marks (tok_text_part, tok_post): a text part's
 * tokens past the first TOK_BLOCK_VOTES of their block or the first
 * TOK_PART_VOTES of the part are tail, nothing else is */
static size_t
tail_of(const struct toklist *tl, const char *prefix, unsigned from,
    unsigned to)
{
	char t[64];
	unsigned i;
	size_t k = 0;
	long at;

	for (i = from; i < to; i++) {
		snprintf(t, sizeof(t), "%s%u", prefix, i);
		at = toklist_find(tl, t, strlen(t));
		ck_assert_msg(at >= 0, "%s missing", t);
		k += (size_t)toklist_tail(tl, (size_t)at);
	}
	return k;
}

START_TEST(budget_marks)
{
	struct tok_opts o;
	struct toklist *tl = toklist_new(10000);
	char *m = malloc(200000);
	size_t n = 0, i, head = 0;
	unsigned w, p;

	ck_assert_ptr_nonnull(tl);
	ck_assert_ptr_nonnull(m);
	tok_opts_default(&o);
	o.marks = 1;
	n += (size_t)sprintf(m + n, "From: a@example.org\nSubject: hello\n"
	    "Content-Type: multipart/alternative; boundary=\"b\"\n\n"
	    "--b\nContent-Type: text/plain\n\n");
	/* a paragraph of 30 words, a paragraph of 30 words whose blank line holds
	 * spaces, then ten paragraphs of 19 and one of 5: past the part's
	 * 200 */
	for (w = 0; w < 30; w++)
		n += (size_t)sprintf(m + n, "alpha%u%s", w, w % 7 == 6 ?
		    "\n" : " ");
	n += (size_t)sprintf(m + n, "\n \t\n");
	for (w = 0; w < 30; w++)
		n += (size_t)sprintf(m + n, "beta%u ", w);
	n += (size_t)sprintf(m + n, "\n\n");
	for (p = 0; p < 10; p++) {
		for (w = 0; w < 19; w++)
			n += (size_t)sprintf(m + n, "gamma%u ", p * 19 + w);
		n += (size_t)sprintf(m + n, "\n\n");
	}
	for (w = 0; w < 5; w++)
		n += (size_t)sprintf(m + n, "delta%u ", w);
	/* an HTML part: a block per line; its own part budget */
	n += (size_t)sprintf(m + n, "\n--b\nContent-Type: text/html\n\n"
	    "<p>");
	for (w = 0; w < 25; w++)
		n += (size_t)sprintf(m + n, "eps%u ", w);
	n += (size_t)sprintf(m + n, "</p><p>");
	for (w = 0; w < 5; w++)
		n += (size_t)sprintf(m + n, "zeta%u ", w);
	n += (size_t)sprintf(m + n, "</p><div style=\"display:none\">");
	for (w = 0; w < 3; w++)
		n += (size_t)sprintf(m + n, "hid%u ", w);
	n += (size_t)sprintf(m + n, "</div>\n--b--\n");
	ck_assert_int_eq(tok_post((const unsigned char *)m, n, &o, tl), 0);
	/* the first block: 20 words in full (ct:text/plain came with
	 * the part's header, so it is no new token here) */
	ck_assert_uint_eq(tail_of(tl, "alpha", 0, 20), 0);
	ck_assert_uint_eq(tail_of(tl, "alpha", 20, 30), 10);
	/* line ends inside a paragraph end no block; a line of white
	 * space does */
	ck_assert_uint_eq(tail_of(tl, "beta", 0, 20), 0);
	ck_assert_uint_eq(tail_of(tl, "beta", 20, 30), 10);
	/* the part's budget counts its first 200 tokens, tail or not:
	 * 30 + 30 + 140 */
	ck_assert_uint_eq(tail_of(tl, "gamma", 0, 140), 0);
	ck_assert_uint_eq(tail_of(tl, "gamma", 140, 190), 50);
	ck_assert_uint_eq(tail_of(tl, "delta", 0, 5), 5);
	/* the HTML part starts a budget of its own: a block per line */
	ck_assert_uint_eq(tail_of(tl, "eps", 0, 20), 0);
	ck_assert_uint_eq(tail_of(tl, "eps", 20, 25), 5);
	ck_assert_uint_eq(tail_of(tl, "zeta", 0, 5), 0);
	/* hidden text is tail whole */
	ck_assert_uint_eq(tail_of(tl, "hidden:hid", 0, 3), 3);
	/* header tokens never */
	for (i = 0; i < toklist_count(tl); i++) {
		const char *t = toklist_get(tl, i, &n);

		if (strncmp(t, "subj:", 5) == 0 || strncmp(t, "from:", 5) == 0) {
			ck_assert(!toklist_tail(tl, i));
			head++;
		}
	}
	ck_assert_uint_gt(head, 0);
	/* the marks change no token: a token found is the same */
	ck_assert(toklist_find(tl, "gamma189", 8) >= 0);
	ck_assert(!toklist_tail(tl, toklist_count(tl)));
	/* without marks asked for (learning), none, and the same tokens */
	n = toklist_count(tl);
	o.marks = 0;
	ck_assert_int_eq(tok_post((const unsigned char *)m, strlen(m), &o,
	    tl), 0);
	ck_assert_uint_eq(toklist_count(tl), n);
	for (i = 0; i < n; i++)
		ck_assert(!toklist_tail(tl, i));
	free(m);
	toklist_free(tl);
}
END_TEST

static Suite *
tok_suite(void)
{
	Suite *s = suite_create("tok");
	TCase *tc;

	tc = tcase_create("toklist");
	tcase_add_test(tc, set_order_and_dedup);
	tcase_add_test(tc, set_bounds_and_growth);
	tcase_add_test(tc, set_reset_after_growth);
	suite_add_tcase(s, tc);
	tc = tcase_create("text");
	tcase_add_test(tc, words_basic);
	tcase_add_test(tc, words_options);
	tcase_add_test(tc, skip_tokens);
	tcase_add_test(tc, urls);
	tcase_add_test(tc, header_urls);
	tcase_add_test(tc, eai_addresses);
	tcase_add_test(tc, addresses);
	tcase_add_test(tc, cjk_bigrams);
	tcase_add_test(tc, hostile_bytes);
	tcase_add_test(tc, invisible_characters);
	tcase_add_test(tc, styled_letters);
	tcase_add_test(tc, mixed_scripts);
	tcase_add_test(tc, combining_marks);
	tcase_add_test(tc, styled_more);
	suite_add_tcase(s, tc);
	/* time bounds: CPU time, so a loaded machine does not fail them;
	 * the old code ran into Check's time-out instead of the bound */
	tc = tcase_create("time");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, hostile_time, 0,
	    sizeof(slow_cases) / sizeof(slow_cases[0]));
	suite_add_tcase(s, tc);
	tc = tcase_create("headers");
	tcase_add_test(tc, headers_tagged);
	tcase_add_test(tc, headers_ignored);
	tcase_add_test(tc, every_ignored_name);
	tcase_add_test(tc, chunk_separators_byte_by_byte);
	suite_add_tcase(s, tc);
	tc = tcase_create("budget");
	tcase_add_test(tc, budget_marks);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(tok_suite());
	int nf;

	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
