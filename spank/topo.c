/* SPDX-License-Identifier: Apache-2.0 */
/* A node's topology as plain data (topo.h), loaded through hwloc. */
#include "config.h"

#include <errno.h>

#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo.h"

int ddl_topo_is_gpu(unsigned vendor, unsigned class_id)
{
    return (vendor == 0x10de || vendor == 0x1002) && (class_id >> 8) == 0x03;
}

static int fail(char *err, size_t len, const char *what, hwloc_topology_t t)
{
    snprintf(err, len, "%s", what);
    if (t)
        hwloc_topology_destroy(t);
    return -1;
}

int ddl_topo_load(const char *xml, ddl_topo_t *topo, char *err, size_t errlen)
{
    memset(topo, 0, sizeof(*topo));
    hwloc_topology_t t;
    if (hwloc_topology_init(&t) != 0)
        return fail(err, errlen, "hwloc_topology_init failed", NULL);
    /* hwloc 2 drops I/O objects unless asked: GPUs are PCI devices. */
    hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_ALL);
    /* Slurm's core ids count all of the node's cores, also those outside the
     * caller's cpuset (a cgroup). */
    hwloc_topology_set_flags(t, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
    if (xml && hwloc_topology_set_xml(t, xml) != 0) {
        snprintf(err, errlen, "cannot read the hwloc XML file %s (hwloc_topology_set_xml: %s); give a file that "
                 "lstopo wrote (lstopo FILE.xml on the node to describe)", xml, strerror(errno));
        hwloc_topology_destroy(t);
        return -1;
    }
    if (hwloc_topology_load(t) != 0) {
        char why[320];
        snprintf(why, sizeof(why), "hwloc could not load the topology of %s (hwloc_topology_load: %s); check that "
                 "lstopo works there%s", xml ? xml : "this node", strerror(errno),
                 xml ? " on that file" : " and that /sys is mounted in the step's namespace");
        return fail(err, errlen, why, t);
    }

    int ncores = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);
    if (ncores <= 0)
        return fail(err, errlen, "hwloc found no cores", t);
    topo->ncores = ncores;
    topo->core_pu = calloc((size_t)ncores, sizeof(int));
    topo->core_numa = calloc((size_t)ncores, sizeof(int));
    topo->core_package = calloc((size_t)ncores, sizeof(int));
    if (!topo->core_pu || !topo->core_numa || !topo->core_package) {
        ddl_topo_free(topo);
        return fail(err, errlen, "out of memory", t);
    }
    for (int c = 0; c < ncores; c++) {
        hwloc_obj_t core = hwloc_get_obj_by_type(t, HWLOC_OBJ_CORE, (unsigned)c);
        hwloc_obj_t pu = hwloc_get_obj_inside_cpuset_by_type(t, core->cpuset, HWLOC_OBJ_PU, 0);
        topo->core_pu[c] = pu ? (int)pu->os_index : -1;
        hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_PACKAGE, core);
        topo->core_package[c] = pkg ? (int)pkg->logical_index : -1;
        topo->core_numa[c] = -1;
        hwloc_obj_t numa = NULL;
        while ((numa = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_NUMANODE, numa)) != NULL)
            if (hwloc_bitmap_isincluded(core->cpuset, numa->cpuset)) {
                topo->core_numa[c] = (int)numa->os_index;
                break;
            }
    }

    /* GPUs in bus-id order: hwloc lists PCI devices in that order. */
    int cap = 0;
    for (hwloc_obj_t d = NULL; (d = hwloc_get_next_pcidev(t, d)) != NULL;)
        if (ddl_topo_is_gpu(d->attr->pcidev.vendor_id, d->attr->pcidev.class_id))
            cap++;
    topo->gpus = calloc((size_t)(cap ? cap : 1), sizeof(*topo->gpus));
    if (!topo->gpus) {
        ddl_topo_free(topo);
        return fail(err, errlen, "out of memory", t);
    }
    for (hwloc_obj_t d = NULL; (d = hwloc_get_next_pcidev(t, d)) != NULL;) {
        struct hwloc_pcidev_attr_s *a = &d->attr->pcidev;
        if (!ddl_topo_is_gpu(a->vendor_id, a->class_id))
            continue;
        ddl_topo_gpu_t *g = &topo->gpus[topo->ngpus++];
        snprintf(g->busid, sizeof(g->busid), "%04x:%02x:%02x.%x", a->domain, a->bus, a->dev, a->func);
        g->vendor = a->vendor_id;
        g->device = a->device_id;
        g->local = calloc((size_t)ncores, 1);
        hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(t, d);
        hwloc_obj_t pkg = anc ? hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_PACKAGE, anc) : NULL;
        if (anc && anc->type == HWLOC_OBJ_PACKAGE)
            pkg = anc;
        g->package = pkg ? (int)pkg->logical_index : -1;
        g->numa = -1;
        for (int c = 0; c < ncores && anc && g->local; c++) {
            hwloc_obj_t core = hwloc_get_obj_by_type(t, HWLOC_OBJ_CORE, (unsigned)c);
            if (hwloc_bitmap_isincluded(core->cpuset, anc->cpuset)) {
                g->local[c] = 1;
                if (g->numa < 0)
                    g->numa = topo->core_numa[c];
            }
        }
    }
    hwloc_topology_destroy(t);
    return 0;
}

void ddl_topo_free(ddl_topo_t *topo)
{
    for (int g = 0; g < topo->ngpus; g++)
        free(topo->gpus[g].local);
    free(topo->gpus);
    free(topo->core_pu);
    free(topo->core_numa);
    free(topo->core_package);
    memset(topo, 0, sizeof(*topo));
}
