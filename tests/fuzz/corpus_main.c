/* SPDX-License-Identifier: Apache-2.0 */
/* The regression driver that make check runs: each harness over every file of
 * its seed corpus, built with the project's compiler (no libFuzzer needed).
 * A harness that traps or a sanitizer report fails the run. */
#include <dirent.h>
#include <stdio.h>
#include <sys/stat.h>

#include "fuzz.h"

__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv);

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        return -1;
    }
    static uint8_t buf[1 << 20];
    size_t n = fread(buf, 1, sizeof(buf), f);
    fclose(f);
    /* A copy of exactly n bytes, so that a read past the input is seen by ASan. */
    uint8_t *copy = malloc(n ? n : 1);
    memcpy(copy, buf, n);
    LLVMFuzzerTestOneInput(copy, n);
    free(copy);
    return 0;
}

int main(int argc, char **argv)
{
    if (LLVMFuzzerInitialize)
        LLVMFuzzerInitialize(&argc, &argv);
    int files = 0;
    for (int i = 1; i < argc; i++) {
        struct stat sb;
        if (stat(argv[i], &sb) != 0) {
            fprintf(stderr, "%s: no such file or directory\n", argv[i]);
            return 2;
        }
        if (!S_ISDIR(sb.st_mode)) {
            files += run_file(argv[i]) == 0;
            continue;
        }
        DIR *d = opendir(argv[i]);
        for (struct dirent *e; d && (e = readdir(d));) {
            if (e->d_name[0] == '.')
                continue;
            char path[4096];
            snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
            files += run_file(path) == 0;
        }
        if (d)
            closedir(d);
    }
    printf("%s: %d inputs, no crash\n", argv[0], files);
    return files > 0 ? 0 : 1;
}
