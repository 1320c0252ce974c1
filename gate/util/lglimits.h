/*
 * lglimits.h - every hard limit listgate applies to hostile input, in one place
 *
 * Each limit has a one-line reason.  Parsers take these as defaults in
 * their limit structs; an overrun truncates (and may add a token), it
 * never fails the post.
 */
#ifndef LG_LIMITS_H
#define LG_LIMITS_H

/* a list name is a path component and a SQL value: short and checked */
#define LG_MAX_LIST_NAME	64
/* bytes of a post that are parsed and tokenized; the rest passes unscanned */
#define LG_MAX_SCAN_BYTES	(1024u * 1024u)
/* a post is spooled in memory up to this size, then to a temporary file */
#define LG_MAX_SPOOL_MEM	(32u * 1024u * 1024u)
/* largest post accepted at all (the MTA's own limit is usually far lower) */
#define LG_MAX_POST_BYTES	(1024u * 1024u * 1024u)
/* header block of one entity; real headers are a few KiB */
#define LG_MAX_HEADER_BYTES	(256u * 1024u)
/* header fields per entity */
#define LG_MAX_HEADER_FIELDS	1000
/* one unfolded header field; longer fields are cut */
#define LG_MAX_FIELD_BYTES	(64u * 1024u)
/* RFC 2046 says 70; be lenient but bounded */
#define LG_MAX_BOUNDARY		200
/* MIME nesting depth (multipart and message/rfc822 together) */
#define LG_MAX_MIME_DEPTH	20
/* MIME parts walked per post */
#define LG_MAX_MIME_PARTS	500
/* decoded text handed to the tokenizer per post */
#define LG_MAX_DECODED_BYTES	(4u * 1024u * 1024u)
/* a word longer than this becomes a skip token */
#define LG_MAX_TOKEN_BYTES	40
/* distinct tokens per post */
#define LG_MAX_TOKENS_PER_POST	20000
/* one value of a config file, its quotes and escapes taken off */
#define LG_MAX_CONF_VALUE	4096
/* text lines read from config files: room for any value written back
 * quoted and escaped (`listgate config check' prints what loads back) */
#define LG_MAX_CONF_LINE	16384
/* arguments in a deliver/release template */
#define LG_MAX_ARGV		64
/* one expanded template argument: envelope addresses are short */
#define LG_MAX_ARG_BYTES	(64u * 1024u)
/* trusted relays (networks and names): a site has a handful of relays */
#define LG_MAX_NETLIST		64
/* Received lines walked looking for the first untrusted hop: real chains
 * have a dozen at most; a post with hundreds is forged anyway */
#define LG_MAX_RECEIVED_HOPS	40
/* DNSBL zones asked per post, all at once */
#define LG_MAX_DNSBL_ZONES	8
/* a moderator's or the moderation address (RFC 5321: 64 + 1 + 255; the
 * notice outbox's CHECK, and the cookie's COOKIE_MAX_ADDR) */
#define LG_MAX_ADDR_BYTES	320
/* answers of `listgate moderate' to one address in an hour about replies
 * that decided nothing: a person makes a few such mistakes an hour; an
 * auto-responder that marks nothing answers each answer at once, and
 * the first answer left out ends that loop */
#define LG_MAX_REFUSAL_ANSWERS	10
/* what an action address adds to the moderation address: the
 * delimiter, the longest action (approve, discard: 7), '-', the longest
 * post number (19 digits), '-' and the cookie (27 characters);
 * gate/moderate/cookie.c checks the sum */
#define LG_MAX_ACTION_PART	(1 + 7 + 1 + 19 + 1 + 27)
/* a moderation_address whose action addresses all stay within
 * LG_MAX_ADDR_BYTES, the longest `listgate moderate' takes */
#define LG_MAX_MODADDR_BYTES	(LG_MAX_ADDR_BYTES - LG_MAX_ACTION_PART)
/* a sender handed to member_check: RFC 5321 paths are 256 bytes */
#define LG_MAX_SENDER_BYTES	256
/* journal events tune reads (the newest): bounds its memory and its
 * time, about 4000 posts in under a minute */
#define LG_MAX_TUNE_EVENTS	20000
/* distinct tokens tune keeps in memory over all its posts */
#define LG_MAX_TUNE_TOKENS	(4u * 1024u * 1024u)
/* token occurrences tune keeps (4 bytes each, and at most 12 more for
 * their count groups): posts past it are left out */
#define LG_MAX_TUNE_IDS		(16u * 1024u * 1024u)
/* a request's path and query (ours are short: /api/lists/L/held/ID?...) */
#define LG_MAX_WEB_URL		1024
/* a request body: a form or JSON action, a bulk form of a page of ids */
#define LG_MAX_WEB_BODY		(64u * 1024u)
/* libmicrohttpd's memory per connection: the request line and headers
 * must fit in about half of it (browsers send 1-4 KiB) */
#define LG_MAX_WEB_CONN_MEMORY	(32u * 1024u)
/* connections open at once (the thread pool serves them in turn) */
#define LG_MAX_WEB_CONNECTIONS	1024
/* connections from one address that is not a trusted proxy (a
 * slowloris from one host cannot take every slot) */
#define LG_MAX_WEB_PER_ADDR	64
/* seconds a connection may stay idle, mid-request included */
#define LG_MAX_WEB_IDLE_S	30
/* seconds a request may take to arrive whole (request line, headers,
 * body), from the connection's start or its last request's end: one
 * trickled a byte at a time (slowloris) is never idle for long */
#define LG_MAX_WEB_REQUEST_S	60
/* seconds an answer may take to be read whole, and one more per
 * LG_MIN_WEB_SEND_RATE bytes of it (188 s for the largest, 4 MiB: 22
 * KB/s, a slow phone line): a client that reads a little now and then
 * is never idle for long, and held its connection's thread and the
 * answer as long as it liked */
#define LG_MAX_WEB_SEND_S	60
#define LG_MIN_WEB_SEND_RATE	(32u * 1024u)
/* a connection's socket send buffer (the kernel doubles it): Linux
 * grows one to 4 MiB by itself, which a client that reads slowly keeps
 * filled, and 1024 of them 4 GiB; this is 2.5 MB/s at 100 ms */
#define LG_MAX_WEB_SNDBUF	(128u * 1024u)
/* names in web_allowed_hosts (a site is reached by one or two), and
 * the longest (RFC 1035, without the final dot; "[IPv6]" fits) */
#define LG_MAX_WEB_HOSTS	16
#define LG_MAX_HOST_NAME	253
/* a line of an LMTP server's reply: RFC 5321 allows 512 bytes with CRLF;
 * longer ones are cut */
#define LG_MAX_LMTP_LINE	512
/* lines in one LMTP reply: an LHLO answer has a dozen; more is a broken
 * server (a temporary failure) */
#define LG_MAX_LMTP_REPLY_LINES	100
/* an address in MAIL FROM or RCPT TO as sent, quotes included (RFC 5321:
 * a path is at most 256 bytes with its brackets) */
#define LG_MAX_LMTP_PATH	254
/* a line of the post as sent in DATA, without CRLF: RFC 5321's 1000
 * bytes with CRLF (Postfix's lmtp_line_length_limit); longer lines are
 * broken with CRLF and a space, as Postfix does */
#define LG_MAX_LMTP_DATA_LINE	998
/* LMTP time-outs: connecting; each reply; sending the whole post (each
 * also within the list's timeout) */
#define LG_LMTP_CONNECT_MS	(30u * 1000u)
#define LG_LMTP_REPLY_MS	(120u * 1000u)
#define LG_LMTP_DATA_MS		(300u * 1000u)

#endif
