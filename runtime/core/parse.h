/* SPDX-License-Identifier: Apache-2.0 */
/* Strict parsers for configuration values: the whole string must be the value.
 * Pure functions, shared by the runtime and the SPANK plugin, unit-tested alone.
 * Each returns 0 on success and -1 on a malformed or out-of-range value. */
#ifndef DDL_PARSE_H
#define DDL_PARSE_H

#include <stddef.h>

/* A decimal integer in [min, max]; no sign for min >= 0, no spaces, no suffix. */
int ddl_parse_long(const char *s, long min, long max, long *out);
/* A byte count: decimal with an optional K, M, G or T suffix (powers of 1024,
 * "KiB" and "KB" read the same), for example 64M. */
int ddl_parse_size(const char *s, size_t *out);
/* A positive number of seconds, fractions allowed: 0.5, 30, 1e3. */
int ddl_parse_seconds(const char *s, double *out);
/* v converted to an integer in [lo, hi]: out-of-range values (and NaN, which
 * becomes lo) are clamped instead of being undefined behaviour. */
long long ddl_double_to_ll(double v, long long lo, long long hi);
/* One of names[] (NULL-terminated), case-insensitive; *idx gets its position. */
int ddl_parse_enum(const char *s, const char *const *names, int *idx);
/* 0/1, yes/no, on/off, true/false. */
int ddl_parse_bool(const char *s, int *out);

#endif
