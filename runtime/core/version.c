/* SPDX-License-Identifier: Apache-2.0 */
/* ddl_version: the library's own version, which a program can compare with
 * the DDL_VERSION_STRING it was built against. */
#include "config.h"

#include "ddl.h"

const char *ddl_version(void) { return DDL_VERSION_STRING; }
