/* SPDX-License-Identifier: Apache-2.0 */
/* The job-wide lane map at communicator creation (bootstrap.h): PMIx where the
 * job has a server, else MPI.  Part of the composition root, which alone
 * calls it; uses core only. */
#include "config.h"

#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef DDL_HAVE_PMIX
#include <pmix.h>
#endif

#include "bootstrap.h"
#include "log.h"
#include "parse.h"

typedef struct {
    int32_t node, gpu, lane, core;
    char host[DDL_HOST_LEN];
} place_rec_t;

/* The plugin's place for this rank, if the plugin launched it.  1 when present. */
static int plugin_place(place_rec_t *p)
{
    const char *names[] = {"DDL_NODE", "DDL_GPU", "DDL_LANE", "DDL_CORE"};
    int32_t *fields[] = {&p->node, &p->gpu, &p->lane, &p->core};
    for (int i = 0; i < 4; i++) {
        long v;
        const char *s = getenv(names[i]);
        if (!s || ddl_parse_long(s, 0, 1 << 24, &v) != 0)
            return 0;
        *fields[i] = (int32_t)v;
    }
    return 1;
}

#ifdef DDL_HAVE_PMIX
/* Put, commit, fence with data collection, get every rank's record.  Returns 0,
 * or -1 when this job has no PMIx server or the exchange fails (then MPI is used). */
static int exchange_pmix(ddl_comm_t *c, const place_rec_t *mine, place_rec_t *all)
{
    pmix_proc_t me, wild;
    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS)
        return -1;
    int rc = -1;
    pmix_value_t *val = NULL;
    PMIX_PROC_LOAD(&wild, me.nspace, PMIX_RANK_WILDCARD);
    uint32_t job_size = 0;
    if (PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &val) == PMIX_SUCCESS && val) {
        job_size = val->data.uint32;
        PMIX_VALUE_RELEASE(val);
    }
    /* The fence is over the whole job: only when the communicator is the job. */
    int ranks[2] = {(int)me.rank, (int)job_size}, *pranks = malloc(sizeof(int) * 2 * (size_t)c->info.size);
    int local_ok = pranks && job_size == (uint32_t)c->info.size, all_ok = 0;
    MPI_Allreduce(&local_ok, &all_ok, 1, MPI_INT, MPI_MIN, c->world);
    if (!all_ok)
        goto out;
    MPI_Allgather(ranks, 2, MPI_INT, pranks, 2, MPI_INT, c->world);
    pmix_value_t v;
    v.type = PMIX_BYTE_OBJECT;
    v.data.bo.bytes = (char *)mine;
    v.data.bo.size = sizeof(*mine);
    if (PMIx_Put(PMIX_GLOBAL, "ddl.place", &v) != PMIX_SUCCESS || PMIx_Commit() != PMIX_SUCCESS)
        goto out;
    pmix_info_t info[2];
    bool collect = true;
    int timeout = (int)ddl_double_to_ll(c->set.timeout, 1, INT_MAX);
    PMIX_INFO_LOAD(&info[0], PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[1], PMIX_TIMEOUT, &timeout, PMIX_INT);
    pmix_status_t st = PMIx_Fence(&wild, 1, info, 2);
    if (st != PMIX_SUCCESS) {
        ddl_log(DDL_LOG_WARN, DDL_SUBSYS_INIT, "PMIx_Fence failed (%s); exchanging the lane map through MPI",
                PMIx_Error_string(st));
        goto out;
    }
    rc = 0;
    for (int r = 0; r < c->info.size && rc == 0; r++) {
        pmix_proc_t peer;
        PMIX_PROC_LOAD(&peer, me.nspace, (pmix_rank_t)pranks[2 * r]);
        val = NULL;
        if (PMIx_Get(&peer, "ddl.place", NULL, 0, &val) != PMIX_SUCCESS || !val || val->type != PMIX_BYTE_OBJECT ||
            val->data.bo.size != sizeof(place_rec_t))
            rc = -1;
        else
            memcpy(&all[r], val->data.bo.bytes, sizeof(place_rec_t));
        if (val)
            PMIX_VALUE_RELEASE(val);
    }
out:
    free(pranks);
    PMIx_Finalize(NULL, 0);
    int worst = rc;
    MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MIN, c->world);
    return worst;
}
#endif

ddl_status_t ddl_bootstrap_check(ddl_comm_t *c)
{
    const ddl_comm_info_t *in = &c->info;
    place_rec_t mine = {in->node, in->gpu, in->lane, -1, {0}};
    snprintf(mine.host, sizeof(mine.host), "%s", c->hosts[in->rank]);
    int planned = plugin_place(&mine);
    int32_t view[3] = {in->node, in->gpu, in->lane}, *views = malloc(sizeof(view) * (size_t)in->size);
    place_rec_t *all = calloc((size_t)in->size, sizeof(place_rec_t));
    if (!views || !all) {
        free(views);
        free(all);
        return ddl_error(DDL_ERR_NO_MEMORY, "cannot allocate the lane map");
    }
    MPI_Allgather(view, 3, MPI_INT32_T, views, 3, MPI_INT32_T, c->world);
    const char *how = "MPI";
#ifdef DDL_HAVE_PMIX
    if (exchange_pmix(c, &mine, all) == 0)
        how = "PMIx";
    else
#endif
        MPI_Allgather(&mine, sizeof(mine), MPI_BYTE, all, sizeof(mine), MPI_BYTE, c->world);
    ddl_status_t st = DDL_OK;
    /* Every rank checks the same map, so all reach the same verdict. */
    for (int r = 0; r < in->size && st == DDL_OK; r++) {
        const int32_t *v = &views[3 * r];
        if (all[r].node != v[0] || all[r].gpu != v[1] || all[r].lane != v[2])
            st = ddl_error(DDL_ERR_LAYOUT, "rank %d on %s: the plugin placed it on node %d as GPU %d lane %d, but "
                           "MPI's node order makes it node %d GPU %d lane %d; launch with the default (block) task "
                           "distribution", r, all[r].host, all[r].node, all[r].gpu, all[r].lane, v[0], v[1], v[2]);
    }
    /* Planned cores are disjoint within a node. */
    for (int r = 0; r < in->size && st == DDL_OK; r++)
        for (int q = 0; q < r && st == DDL_OK; q++)
            if (all[r].core >= 0 && all[r].node == all[q].node && all[r].core == all[q].core)
                st = ddl_error(DDL_ERR_LAYOUT, "ranks %d and %d on node %d (%s) are both planned on core %d", q, r,
                               all[r].node, all[r].host, all[r].core);
    if (st == DDL_OK && in->rank == 0)
        DDL_INFO(DDL_SUBSYS_INIT, "lane map of %d ranks exchanged through %s (%s); it agrees with MPI", in->size, how,
                 planned ? "planned by the Slurm plugin" : "derived from MPI's node order");
    free(views);
    free(all);
    return st;
}
