/* SPDX-License-Identifier: Apache-2.0 */
/* A node's topology as plain data: cores (with the PU to bind, NUMA node and
 * package) and GPUs (PCI devices of NVIDIA or AMD with a display class, in
 * bus-id order, with the cores local to each).  Loaded from hwloc, from the
 * live machine or an XML file; the plan reads only this struct. */
#ifndef DDL_TOPO_H
#define DDL_TOPO_H

#include <stddef.h>

typedef struct {
    char busid[16];       /* "0000:07:00.0" */
    unsigned vendor, device;
    int numa;             /* OS index of the nearest NUMA node, -1 if unknown */
    int package;          /* logical index, -1 if unknown */
    unsigned char *local; /* local[c] != 0: core c is local to this GPU */
} ddl_topo_gpu_t;

typedef struct {
    int ncores;
    int *core_pu;      /* OS index of the core's first PU: what binding uses */
    int *core_numa;    /* OS index of the core's NUMA node */
    int *core_package; /* logical package index */
    int ngpus;
    ddl_topo_gpu_t *gpus;
} ddl_topo_t;

/* xml: an hwloc XML file, or NULL for this machine.  Returns 0, or -1 with the
 * reason in err. */
int ddl_topo_load(const char *xml, ddl_topo_t *topo, char *err, size_t errlen);
void ddl_topo_free(ddl_topo_t *topo);

/* GPU vendors and class: NVIDIA 0x10de and AMD 0x1002, PCI class 0x03xx. */
int ddl_topo_is_gpu(unsigned vendor, unsigned class_id);

#endif
