/* SPDX-License-Identifier: Apache-2.0 */
/* What every check unit test's main() ends with. */
#ifndef DDL_UNIT_H
#define DDL_UNIT_H

#include <check.h>

/* Run the suite; exit status 1 when a check failed. */
static inline int ddl_unit_run(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}

#endif
