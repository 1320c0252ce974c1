/*
 * pwhash.h - password hashes of the web accounts: yescrypt through
 * libxcrypt's crypt_r (the format of `mkpasswd -m yescrypt` and of
 * Debian's /etc/shadow), with libxcrypt's default cost
 *
 * Thread-safe (crypt_r with a private work area); never logs or exits.
 */
#ifndef LG_PWHASH_H
#define LG_PWHASH_H

#include <stddef.h>

/* longest password accepted: libxcrypt's crypt_r fails on a longer one
 * (CRYPT_MAX_PASSPHRASE_SIZE, 512 with its NUL; pwhash.c checks) */
#define PWHASH_MAX_PASSWORD	511
/* shortest password `listgate user add` accepts */
#define PWHASH_MIN_PASSWORD	8
/* room for a hash */
#define PWHASH_MAX		256

/* hash pw with a fresh random salt into out: 0, or -1 with err */
int pwhash_make(const char *pw, char *out, size_t outsz, char *err,
    size_t errsz);

/* 1 when pw matches hash (compared in constant time), 0 when not (or
 * hash is unusable), -1 when out of memory */
int pwhash_check(const char *pw, const char *hash);

/* 1 when hashes a and b were made with the same method and parameters
 * (their "$y$PARAMS$" heads are equal), else 0 */
int pwhash_same_params(const char *a, const char *b);

/* constant-time comparison of n bytes: 1 equal, 0 not */
int pwhash_equal(const void *a, const void *b, size_t n);

#endif
