/* SPDX-License-Identifier: Apache-2.0 */
/* ddl-info: the version, what this build has, every configuration variable and
 * every algorithm, each with its description. */
#include "config.h"

#include <dlfcn.h> /* dladdr: config.h defines _GNU_SOURCE */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo.h"
#include "ddl.h"
#include "gpu.h"
#include "params.h"
#include "tool.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: ddl-info [-h|--help] [--version]\n"
               "Print DDL lanes' version, build options, configuration variables and algorithms.\n");
}

int main(int argc, char **argv)
{
    if (ddl_tool_info(argc, argv, "ddl-info", usage))
        return 0;
    if (argc > 1) {
        fprintf(stderr, "ddl-info: unexpected argument '%s'\n", argv[1]);
        usage(stderr);
        return 2;
    }
    /* The library this program runs with, which may not be the one it was built with. */
    Dl_info where;
    const char *path = dladdr((void *)ddl_version, &where) && where.dli_fname ? where.dli_fname : "?";
    printf("DDL lanes %s\n  library: %s (%s)\n\n", DDL_VERSION_STRING, path, ddl_version());
    printf("Build:\n");
#ifdef DDL_HAVE_PMIX
    printf("  PMIx:  yes\n");
#else
    printf("  PMIx:  no\n");
#endif
    /* One line each, which scripts read: "CUDA:  N device(s) visible" where the
     * device path runs. */
    char module[4352], why[256] = "";
    if (!ddl_gpu_module_status(module, sizeof(module)))
        printf("  CUDA:  no CUDA module (%s): host memory only\n  NCCL:  no (needs the CUDA module)\n", module);
    else {
        int devices = ddl_gpu_devices(why, sizeof(why));
        if (devices)
            printf("  CUDA:  %d device%s visible: device buffers supported (module %s)\n", devices,
                   devices == 1 ? "" : "s", module);
        else
            printf("  CUDA:  the module loads, but %s: host memory only (module %s)\n", why, module);
        int nccl = ddl_gpu_nccl_available(why, sizeof(why));
        printf("  NCCL:  %s%s\n", nccl ? "loads (DDL_GPU_TRANSPORT=nccl available)" : "no: ", nccl ? "" : why);
    }
    printf("\nConfiguration variables (environment):\n");
    size_t n;
    const ddl_param_t *params = ddl_params_table(&n);
    for (size_t i = 0; i < n; i++) {
        const char *set = getenv(params[i].name);
        char range[48];
        int bounded = ddl_param_range(&params[i], range, sizeof(range));
        printf("  %-18s %-8s default %-10s%s%s%s%s%s%s%s\n      %s\n", params[i].name,
               ddl_param_kind_name(params[i].kind), params[i].defval[0] ? params[i].defval : "\"\"",
               bounded ? " (" : "", range, bounded ? ")" : "", params[i].agree ? " (same on every rank)" : "",
               set ? " (set: " : "", set ? set : "", set ? ")" : "", params[i].description);
    }
    printf("\nAlgorithms:\n");
    const ddl_algo_desc_t *algos = ddl_algo_table(&n);
    int width = 0;
    for (size_t i = 0; i < n; i++)
        width = (int)strlen(algos[i].name) > width ? (int)strlen(algos[i].name) : width;
    for (size_t i = 0; i < n; i++)
        printf("  %-10s %-*s %s\n", algos[i].scope, width, algos[i].name, algos[i].description);
    printf("\nTypes:");
    for (int t = 0; t < DDL_DTYPE_COUNT; t++)
        printf(" %s", ddl_dtype_name((ddl_dtype_t)t));
    printf("\nOps:  ");
    for (int o = 0; o < DDL_REDOP_COUNT; o++)
        printf(" %s", ddl_redop_name((ddl_redop_t)o));
    printf("\n");
    return 0;
}
