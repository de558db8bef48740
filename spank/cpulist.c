#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>

#include "cpulist.h"
#include "ddl_limits.h"
#include "parse.h"

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

int ddl_cpulist_parse(const char *s, int *ids, int max)
{
    int n = 0;
    if (!s || !*s)
        return -1;
    while (*s) {
        char num[16];
        long lo, hi;
        int k = 0;
        while (isdigit((unsigned char)*s) && k < 15)
            num[k++] = *s++;
        num[k] = '\0';
        if (ddl_parse_long(num, 0, DDL_MAX_CPU_ID, &lo) != 0)
            return -1;
        hi = lo;
        if (*s == '-') {
            s++;
            k = 0;
            while (isdigit((unsigned char)*s) && k < 15)
                num[k++] = *s++;
            num[k] = '\0';
            if (ddl_parse_long(num, lo, DDL_MAX_CPU_ID, &hi) != 0)
                return -1;
        }
        if (*s == ',') {
            s++;
            if (!*s)
                return -1;
        } else if (*s) {
            return -1;
        }
        for (long v = lo; v <= hi; v++) {
            if (n == max)
                return -1;
            ids[n++] = (int)v;
        }
    }
    qsort(ids, (size_t)n, sizeof(int), cmp_int);
    for (int i = 1; i < n; i++)
        if (ids[i] == ids[i - 1])
            return -1;
    return n;
}

char *ddl_cpulist_format(const int *ids, int n, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && o < len;) {
        int j = i;
        while (j + 1 < n && ids[j + 1] == ids[j] + 1)
            j++;
        if (j > i)
            o += (size_t)snprintf(buf + o, len - o, "%s%d-%d", o ? "," : "", ids[i], ids[j]);
        else
            o += (size_t)snprintf(buf + o, len - o, "%s%d", o ? "," : "", ids[i]);
        i = j + 1;
    }
    return buf;
}
