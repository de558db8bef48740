/* SPDX-License-Identifier: Apache-2.0 */
/* A rail's names on this node (rails.h), from sysfs. */
#include "config.h"

#include <dirent.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rails.h"

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* The first entry of dir by name (the same one on every node of a kind), or 0. */
static int first_entry(const char *dir, char *out, size_t len)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    out[0] = '\0';
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.' && strlen(e->d_name) < len && (!out[0] || strcmp(e->d_name, out) < 0))
            snprintf(out, len, "%s", e->d_name);
    closedir(d);
    return out[0] != '\0';
}

/* N of "cxiN", or -1. */
static int cxi_index(const char *dev)
{
    char *end;
    if (strncmp(dev, "cxi", 3) != 0 || dev[3] < '0' || dev[3] > '9')
        return -1;
    long n = strtol(dev + 3, &end, 10);
    return *end == '\0' && n < 1000 ? (int)n : -1;
}

static int netdev_present(const char *sysfs, const char *name)
{
    char path[512];
    if (strcmp(sysfs, "/sys") == 0)
        return if_nametoindex(name) != 0; /* this namespace's, whatever sysfs shows */
    snprintf(path, sizeof(path), "%s/class/net/%s", sysfs, name);
    return exists(path);
}

void ddl_rail_resolve(const char *sysfs, const char *name, ddl_rail_t *r)
{
    char dev[DDL_RAIL_NAME_MAX], path[512], entry[DDL_RAIL_NAME_MAX];
    memset(r, 0, sizeof(*r));
    snprintf(r->name, sizeof(r->name), "%s", name);
    r->port = 1;
    r->cxi = -1;
    const char *colon = strchr(name, ':');
    size_t n = colon ? (size_t)(colon - name) : strlen(name);
    snprintf(dev, sizeof(dev), "%.*s", (int)n, name);
    if (colon)
        r->port = atoi(colon + 1);
    if (!colon && netdev_present(sysfs, dev)) {
        r->found = 1;
        snprintf(r->netdev, sizeof(r->netdev), "%s", dev);
        /* A RoCE or IPoIB interface has an RDMA device; a Slingshot hsnN, a cxi device. */
        snprintf(path, sizeof(path), "%s/class/net/%s/device/infiniband", sysfs, dev);
        first_entry(path, r->rdma, sizeof(r->rdma));
        snprintf(path, sizeof(path), "%s/class/net/%s/device/cxi", sysfs, dev);
        if (first_entry(path, entry, sizeof(entry)))
            r->cxi = cxi_index(entry);
        return;
    }
    snprintf(path, sizeof(path), "%s/class/infiniband/%s/ports/%d", sysfs, dev, r->port);
    if (exists(path)) {
        r->found = 1;
        snprintf(r->rdma, sizeof(r->rdma), "%s", dev);
        snprintf(path, sizeof(path), "%s/class/infiniband/%s/device/net", sysfs, dev);
        first_entry(path, r->netdev, sizeof(r->netdev));
        return;
    }
    snprintf(path, sizeof(path), "%s/class/cxi/%s", sysfs, dev);
    if (!colon && exists(path)) {
        r->found = 1;
        r->cxi = cxi_index(dev);
        snprintf(path, sizeof(path), "%s/class/cxi/%s/device/net", sysfs, dev);
        first_entry(path, r->netdev, sizeof(r->netdev));
        return;
    }
    /* Not on this node: the kind its name's form says. */
    if (colon)
        snprintf(r->rdma, sizeof(r->rdma), "%s", dev);
    else if (cxi_index(dev) >= 0)
        r->cxi = cxi_index(dev);
    else
        snprintf(r->netdev, sizeof(r->netdev), "%s", dev);
}

const char *ddl_rail_describe(const ddl_rail_t *r, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
#define ADD(...) (used += (size_t)snprintf(buf + used, used < len ? len - used : 0, __VA_ARGS__))
    if (r->netdev[0])
        ADD("interface %s", r->netdev);
    if (r->rdma[0])
        ADD("%sRDMA device %s port %d", used ? ", " : "", r->rdma, r->port);
    if (r->cxi >= 0)
        ADD("%scxi%d", used ? ", " : "", r->cxi);
#undef ADD
    return buf;
}
