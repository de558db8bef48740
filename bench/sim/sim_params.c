/* SPDX-License-Identifier: Apache-2.0 */
/* ddl-sim reads no DDL_* setting: a simulation's parameters are its options.
 * The runtime's log and trace (log.c, trace.c), compiled into it, see every
 * parameter unset, so they keep their defaults (warnings and errors on
 * stderr, no trace file). */
#include "config.h"

#include "params.h"

const char *ddl_param_string(const char *name)
{
    (void)name;
    return "";
}
