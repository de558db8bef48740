/* SPDX-License-Identifier: Apache-2.0 */
/* Test data and its independent reference: contributor c's input element i is a
 * pure function of (type, op, c, i, seed), exactly representable in the type, so
 * any process can compute the expected result of element i serially, in double
 * precision for floating types and with the type's wrap-around for integers. */
#ifndef DDL_REFDATA_H
#define DDL_REFDATA_H

#include <stddef.h>
#include <stdint.h>
#include "ddl.h"

typedef struct {
    double value;  /* floating types */
    double tol;    /* allowed |got - value| for floating types */
    uint64_t bits; /* integer types: the exact result, truncated to the type */
} ddl_ref_t;

void ddl_ref_fill(void *buf, size_t n, ddl_dtype_t dtype, ddl_redop_t op, int contributor, uint64_t seed);
ddl_ref_t ddl_ref_expected(ddl_dtype_t dtype, ddl_redop_t op, int ncontrib, size_t i, uint64_t seed);
/* 1 when element i of buf matches ref. */
int ddl_ref_matches(const void *buf, size_t i, ddl_dtype_t dtype, const ddl_ref_t *ref);
/* Element i of buf as a double (integers: their value), for messages. */
double ddl_ref_value(const void *buf, size_t i, ddl_dtype_t dtype);
/* Fill with a pattern no correct result has in these tests (NaN-like for floats). */
void ddl_ref_poison(void *buf, size_t bytes);
/* FNV-1a of a buffer: equal results on every rank hash alike. */
uint64_t ddl_ref_hash(const void *buf, size_t bytes);

#endif
