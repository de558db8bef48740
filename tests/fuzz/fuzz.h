/* SPDX-License-Identifier: Apache-2.0 */
/* Shared by the fuzz harnesses: libFuzzer's entry points, and a NUL-terminated
 * copy of the input (the parsers take C strings). */
#ifndef DDL_FUZZ_H
#define DDL_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* The library's error messages would flood the fuzzer's output. */
#define DDL_FUZZ_QUIET                                                                             \
    int LLVMFuzzerInitialize(int *argc, char ***argv)                                              \
    {                                                                                              \
        (void)argc;                                                                                \
        (void)argv;                                                                                \
        setenv("DDL_DEBUG", "NONE", 1);                                                            \
        return 0;                                                                                  \
    }

static inline char *fuzz_cstring(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (s) {
        memcpy(s, data, size);
        s[size] = '\0';
    }
    return s;
}

/* A crash the sanitizers do not see: a result that breaks the function's promise. */
#define FUZZ_ASSERT(cond)                                                                          \
    do {                                                                                           \
        if (!(cond))                                                                               \
            __builtin_trap();                                                                      \
    } while (0)

#endif
