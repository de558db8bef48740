/* SPDX-License-Identifier: Apache-2.0 */
/* The runtime's one clock. */
#ifndef DDL_CLOCK_H
#define DDL_CLOCK_H

/* Monotonic seconds. */
double ddl_now(void);

#endif
