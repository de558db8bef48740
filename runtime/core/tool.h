/* SPDX-License-Identifier: Apache-2.0 */
/* What every command-line tool of the project answers before it starts MPI:
 * --version and --help. */
#ifndef DDL_TOOL_H
#define DDL_TOOL_H

#include <stdio.h>
#include <string.h>

#include "ddl.h"

/* When argv asks for --version or --help (-h), print it and return 1 (the
 * tool then exits 0); usage writes the help to the file it is given. */
static inline int ddl_tool_info(int argc, char **argv, const char *tool, void (*usage)(FILE *))
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--version") == 0) {
            printf("%s (DDL lanes) %s\n", tool, ddl_version());
            return 1;
        }
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 1;
        }
        if (strcmp(argv[i], "--") == 0)
            break;
    }
    return 0;
}

#endif
