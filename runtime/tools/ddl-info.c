/* ddl-info: the version, what this build has, every configuration variable and
 * every algorithm, each with its description. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo.h"
#include "ddl.h"
#include "params.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: ddl-info [-h]\n"
               "Print DDL lanes' version, build options, configuration variables and algorithms.\n");
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        int help = strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0;
        usage(help ? stdout : stderr);
        return help ? 0 : 2;
    }
    printf("DDL lanes %s\n\n", DDL_VERSION_STRING);
    printf("Build:\n");
#ifdef DDL_HAVE_PMIX
    printf("  PMIx:  yes\n");
#else
    printf("  PMIx:  no\n");
#endif
#ifdef DDL_HAVE_CUDA
    printf("  CUDA:  toolkit found at build time (device buffers not yet supported)\n");
#else
    printf("  CUDA:  no\n");
#endif
    printf("\nConfiguration variables (environment):\n");
    size_t n;
    const ddl_param_t *params = ddl_params_table(&n);
    for (size_t i = 0; i < n; i++) {
        const char *set = getenv(params[i].name);
        printf("  %-18s %-8s default %-10s%s%s%s\n      %s\n", params[i].name, ddl_param_kind_name(params[i].kind),
               params[i].defval[0] ? params[i].defval : "\"\"", set ? " (set: " : "", set ? set : "",
               set ? ")" : "", params[i].description);
    }
    printf("\nAlgorithms:\n");
    const ddl_algo_desc_t *algos = ddl_algo_table(&n);
    for (size_t i = 0; i < n; i++)
        printf("  %-10s %-5s %s\n", algos[i].scope, algos[i].name, algos[i].description);
    printf("\nTypes:");
    for (int t = 0; t < DDL_DTYPE_COUNT; t++)
        printf(" %s", ddl_dtype_name((ddl_dtype_t)t));
    printf("\nOps:  ");
    for (int o = 0; o < DDL_REDOP_COUNT; o++)
        printf(" %s", ddl_redop_name((ddl_redop_t)o));
    printf("\n");
    return 0;
}
