/* SPDX-License-Identifier: Apache-2.0 */
/* The composition root: ddl_comm_create builds a communicator layer by layer
 * (the settings and their agreement, the node and lane layout, the names, the
 * grid, the node's shared memory, the lanes' schedules and buffers, the
 * device side, the selection, the request engine) and ddl_comm_destroy takes
 * it down.  The one file that may use every layer. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "algo.h"
#include "bootstrap.h"
#include "comm.h"
#include "engine.h"
#include "exchange.h"
#include "gpu.h"
#include "inter.h"
#include "lanemap.h"
#include "mpi_errors.h"
#include "mpi_watch.h"
#include "online.h"
#include "paths.h"
#include "log.h"
#include "route.h"
#include "trace.h"
#include "transport.h"

static ddl_status_t mpi_ok(int rc, const char *what)
{
    if (rc == MPI_SUCCESS)
        return DDL_OK;
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    return ddl_error(DDL_ERR_MPI, "%s failed: %s", what, msg);
}

/* Every rank learns whether any rank failed a local step, so that no rank goes
 * on into a collective that the failed one will never join. */
static ddl_status_t agree(ddl_comm_t *c, ddl_status_t st)
{
    /* The lowest status (errors are negative) and the lowest rank with it. */
    struct {
        int status, rank;
    } mine = {(int)st, c->info.rank}, worst;
    if (MPI_Allreduce(&mine, &worst, 1, MPI_2INT, MPI_MINLOC, c->world) != MPI_SUCCESS)
        return ddl_error(DDL_ERR_MPI, "MPI_Allreduce failed while agreeing on set-up");
    if (worst.status != DDL_OK && st == DDL_OK)
        return ddl_error((ddl_status_t)worst.status, "communicator set-up failed on rank %d (%s), whose message says "
                         "why; this rank stops with it", worst.rank, ddl_status_string((ddl_status_t)worst.status));
    return (ddl_status_t)worst.status;
}

/* Settings that shape the collective must be the same on every rank, or ranks
 * would cut messages differently and wait for each other until DDL_TIMEOUT
 * (or, for the layout, form no node at all): the variables the table marks,
 * compared by one MPI_MAX over (v, -v).  A difference names the setting, this
 * rank's value and the first rank with another, which a gather of that one
 * value finds. */
static ddl_status_t agree_settings(ddl_comm_t *c, const ddl_config_t *cfg)
{
    enum { MAX = 32 };
    const char *names[MAX];
    int64_t mine[2 * MAX], ext[2 * MAX];
    int n = ddl_params_agreement(&c->set, cfg, mine, names, MAX);
    for (int i = 0; i < n; i++)
        mine[n + i] = -mine[i];
    if (MPI_Allreduce(mine, ext, 2 * n, MPI_INT64_T, MPI_MAX, c->world) != MPI_SUCCESS)
        return ddl_error(DDL_ERR_MPI, "MPI_Allreduce failed while comparing the ranks' settings");
    for (int i = 0; i < n; i++) {
        if (ext[i] == -ext[n + i])
            continue;
        int64_t *all = malloc(sizeof(int64_t) * (size_t)c->info.size);
        if (!all || MPI_Allgather(&mine[i], 1, MPI_INT64_T, all, 1, MPI_INT64_T, c->world) != MPI_SUCCESS) {
            free(all);
            return ddl_error(DDL_ERR_INVALID_ARG, "%s differs between ranks: give every rank the same DDL_* "
                             "environment (helpers too)", names[i]);
        }
        int other = 0;
        while (other < c->info.size && all[other] == mine[i])
            other++;
        char here[64], there[64];
        ddl_param_agreed_text(names[i], mine[i], 1, here, sizeof(here));
        ddl_param_agreed_text(names[i], all[other], 0, there, sizeof(there));
        free(all);
        return ddl_error(DDL_ERR_INVALID_ARG, "%s differs between ranks (this rank: %s; rank %d: %s): give every "
                         "rank the same DDL_* environment (helpers too) and the same ddl_config_t", names[i], here,
                         other, there);
    }
    return DDL_OK;
}

static void free_comm(MPI_Comm *comm)
{
    if (*comm != MPI_COMM_NULL)
        MPI_Comm_free(comm);
}

/* Free everything the communicator holds but its struct. */
static void release(ddl_comm_t *c)
{
    ddl_mpi_watch_stop(c);
    ddl_gpu_comm_release(c); /* before the staging buffers and the lane communicator go */
    free(c->bounce);
    ddl_owners_exchange_free(c->owners_x);
    ddl_transports_fini(c); /* before the pipeline's buffers and the lane communicator go */
    for (int i = 0; i < DDL_NSCHED; i++)
        free(c->scratch[i]);
    free(c->online);
    ddl_heap_fini(&c->heap);
    for (size_t i = 0; i < c->npriv; i++)
        free(c->priv[i].ptr);
    free(c->priv);
    pthread_mutex_destroy(&c->heap_lock);
    if (c->segs) {
        for (int g = 0; g < c->info.gpus_per_node; g++) {
            ddl_shm_unlink(&c->segs[g]); /* a no-op unless this rank created it */
            ddl_shm_detach(&c->segs[g]);
        }
        free(c->segs);
    }
    ddl_shm_unlink(&c->node.seg);
    ddl_shm_detach(&c->node.seg);
    free(c->hosts);
    free(c->world_of_local);
    free(c->world_of_lane);
    free(c->world_of_owner);
    free(c->shm_host);
    ddl_mpi_early_free(c);
    ddl_lane_early_free(c);
    free_comm(&c->owners_app);
    free_comm(&c->owners_sig);
    free_comm(&c->owners);
    free_comm(&c->lane_comm);
    free_comm(&c->node_comm);
    free_comm(&c->world);
    if (c->app_errors != MPI_ERRHANDLER_NULL)
        MPI_Errhandler_free(&c->app_errors);
}

/* Split the host into nodes (virtual ones when node_size > 0).  *shm_first:
 * the world rank of the host's first rank (its host as MPI sees it: an
 * emulated node's network namespace is a host of its own, a virtual node is
 * not), which gather_names shares. */
static ddl_status_t make_node_comm(ddl_comm_t *c, int node_size, int *shm_first)
{
    MPI_Comm host;
    ddl_status_t st = mpi_ok(MPI_Comm_split_type(c->world, MPI_COMM_TYPE_SHARED, c->info.rank,
                                                 MPI_INFO_NULL, &host), "MPI_Comm_split_type");
    if (st != DDL_OK)
        return st;
    int host_rank, host_size;
    MPI_Comm_rank(host, &host_rank);
    MPI_Comm_size(host, &host_size);
    *shm_first = ddl_comm_world_rank(c, host, 0);
    if (node_size == 0) {
        c->node_comm = host;
        return agree(c, ddl_mpi_errors_watch(c->node_comm, "node", &c->mpi_failure));
    }
    if (host_size % node_size != 0)
        st = ddl_error(DDL_ERR_LAYOUT, "DDL_NODE_SIZE=%d does not divide the %d ranks on this host; launch "
                       "a multiple of %d ranks per host", node_size, host_size, node_size);
    st = agree(c, st);
    if (st == DDL_OK)
        st = mpi_ok(MPI_Comm_split(host, host_rank / node_size, host_rank, &c->node_comm), "MPI_Comm_split");
    MPI_Comm_free(&host);
    return st == DDL_OK ? ddl_mpi_errors_watch(c->node_comm, "node", &c->mpi_failure) : st;
}

static ddl_status_t make_layout(ddl_comm_t *c, const ddl_config_t *cfg)
{
    ddl_comm_info_t *in = &c->info;
    MPI_Comm_rank(c->node_comm, &in->local_rank);
    MPI_Comm_size(c->node_comm, &in->local_size);
    ddl_status_t st = ddl_lanemap_layout(in->local_size, cfg->lanes, cfg->gpus_per_node, &in->gpus_per_node);
    if (st != DDL_OK)
        st = ddl_error(st, "%s", ddl_last_error());
    else if (in->gpus_per_node > DDL_MAX_GPUS)
        st = ddl_error(DDL_ERR_LAYOUT, "%d GPUs per node: at most %d are supported", in->gpus_per_node, DDL_MAX_GPUS);
    if ((st = agree(c, st)) != DDL_OK)
        return st;
    int sizes[2] = {in->local_size, -in->local_size}, ext[2];
    MPI_Allreduce(sizes, ext, 2, MPI_INT, MPI_MAX, c->world);
    if (ext[0] != -ext[1])
        return ddl_error(DDL_ERR_LAYOUT, "nodes have between %d and %d ranks; every node needs the same "
                         "GPUs x lanes", -ext[1], ext[0]);
    ddl_place_t p = ddl_lanemap_place(in->local_rank, cfg->lanes);
    in->gpu = p.gpu;
    in->lane = p.lane;
    in->role = p.role;
    in->lanes = cfg->lanes;

    /* Node index: the order of the nodes' first ranks. */
    MPI_Comm leaders;
    int where[2] = {0, 0};
    MPI_Comm_split(c->world, in->local_rank == 0 ? 0 : MPI_UNDEFINED, in->rank, &leaders);
    if (leaders != MPI_COMM_NULL) {
        MPI_Comm_rank(leaders, &where[0]);
        MPI_Comm_size(leaders, &where[1]);
        MPI_Comm_free(&leaders);
    }
    MPI_Bcast(where, 2, MPI_INT, 0, c->node_comm);
    in->node = where[0];
    in->nnodes = where[1];

    st = mpi_ok(MPI_Comm_split(c->world, in->local_rank, in->node, &c->lane_comm), "MPI_Comm_split (lanes)");
    if (st == DDL_OK)
        st = ddl_mpi_errors_watch(c->lane_comm, "lane", &c->mpi_failure);
    if (st == DDL_OK)
        st = mpi_ok(MPI_Comm_split(c->world, in->role == DDL_ROLE_OWNER ? 0 : MPI_UNDEFINED,
                                   in->node * in->gpus_per_node + in->gpu, &c->owners), "MPI_Comm_split (owners)");
    if (st == DDL_OK && c->owners != MPI_COMM_NULL)
        st = ddl_mpi_errors_watch(c->owners, "owners", &c->mpi_failure);
    in->owner_rank = in->owner_size = -1;
    if (st == DDL_OK && c->owners != MPI_COMM_NULL) {
        MPI_Comm_rank(c->owners, &in->owner_rank);
        MPI_Comm_size(c->owners, &in->owner_size);
        /* For messages that name an owner that did not come (local: no
         * collective that a failed allocation could leave one rank out of). */
        int *ranks = malloc(sizeof(int) * (size_t)in->owner_size);
        if (ranks && (c->world_of_owner = malloc(sizeof(int) * (size_t)in->owner_size)) != NULL) {
            MPI_Group og, wg;
            for (int r = 0; r < in->owner_size; r++)
                ranks[r] = r;
            MPI_Comm_group(c->owners, &og);
            MPI_Comm_group(c->world, &wg);
            MPI_Group_translate_ranks(og, in->owner_size, ranks, wg, c->world_of_owner);
            MPI_Group_free(&og);
            MPI_Group_free(&wg);
        }
        free(ranks);
        /* The application's copy: its collectives on it may run while the
         * progress thread runs ours on c->owners. */
        st = mpi_ok(MPI_Comm_dup(c->owners, &c->owners_app), "MPI_Comm_dup (owners)");
        if (st == DDL_OK) /* the application's: its own MPI error handler, as on the communicator it gave */
            st = mpi_ok(MPI_Comm_set_errhandler(c->owners_app, c->app_errors), "MPI_Comm_set_errhandler (owners)");
        if (st == DDL_OK) /* the exchange's receives take any tag (agree/sig_msg.h) */
            st = mpi_ok(MPI_Comm_dup(c->owners, &c->owners_sig), "MPI_Comm_dup (owners' signatures)");
        if (st == DDL_OK)
            st = ddl_mpi_errors_watch(c->owners_sig, "owners' signatures", &c->mpi_failure);
    }
    return st;
}

static ddl_status_t check_grid(const ddl_comm_t *c)
{
    if (c->set.grid.ndims && ddl_grid_check(&c->set.grid, c->info.gpus_per_node, c->info.nnodes) != DDL_OK)
        return ddl_error(DDL_ERR_LAYOUT, "%s", ddl_last_error());
    return DDL_OK;
}

/* Every algorithm the settings can choose must be one this job can run: a
 * multiring needs a grid (a band's dims= entries past the grid's dimensions
 * are ignored, so one file serves several grids).  Checked
 * once here, so that no call ever builds an empty schedule. */
static ddl_status_t check_choices(const ddl_comm_t *c)
{
    const ddl_grid_t *g = &c->set.grid;
    static const char grid_hint[] = "set DDL_TOPOLOGY, e.g. 4x8x2 (GPUs per node x nodes per rack x racks), or "
                                    "configure Slurm's topology/tree with racks of equal size";
    if (c->set.algo == DDL_ALGO_MULTIRING && !g->ndims)
        return ddl_error(DDL_ERR_INVALID_ARG, "DDL_ALGO=multiring needs a grid and this job has none: %s", grid_hint);
    for (int i = 0; i < c->set.tuning.nbands; i++) {
        const ddl_band_t *b = &c->set.tuning.bands[i];
        if (b->algo == DDL_ALGO_MULTIRING && !g->ndims)
            return ddl_error(DDL_ERR_INVALID_ARG, "tuning file %s, line %d: the band chooses multiring, but this job "
                             "has no grid: %s, run ddl-tune on this layout, or remove the line", c->set.tuning_path,
                             b->line, grid_hint);
    }
    return DDL_OK;
}

/* Without DDL_TOPOLOGY, Slurm's topology/tree gives each node its leaf switch
 * (SLURM_TOPOLOGY_ADDR "spine.leaf.node", pattern "switch.switch.node"): racks
 * are the leaf switches.  The grid is G x nodes per rack x racks when every rack
 * has the same number of consecutive nodes; else no grid, and lanes run as usual. */
static ddl_status_t grid_from_slurm(ddl_comm_t *c)
{
    const char *addr = getenv("SLURM_TOPOLOGY_ADDR"), *pattern = getenv("SLURM_TOPOLOGY_ADDR_PATTERN");
    char leaf[DDL_HOST_LEN] = {0};
    int mine = 0, all = 0;
    if (!c->set.grid.ndims && addr && pattern && strchr(pattern, '.')) {
        const char *last = strrchr(addr, '.');
        if (last) {
            const char *start = last - 1;
            while (start > addr && start[-1] != '.')
                start--;
            snprintf(leaf, sizeof(leaf), "%.*s", (int)(last - start), start);
            mine = 1;
        }
    }
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, c->world);
    if (!all)
        return DDL_OK;
    int nnodes = c->info.nnodes;
    char (*leaves)[DDL_HOST_LEN] = calloc((size_t)nnodes, DDL_HOST_LEN);
    if (!leaves)
        return ddl_error(DDL_ERR_NO_MEMORY, "cannot allocate the rack table");
    MPI_Allgather(leaf, DDL_HOST_LEN, MPI_CHAR, leaves, DDL_HOST_LEN, MPI_CHAR, c->lane_comm); /* by node index */
    int per = 1;
    while (per < nnodes && strcmp(leaves[per], leaves[0]) == 0)
        per++;
    int even = nnodes % per == 0;
    for (int n = 0; n < nnodes && even; n++) {
        even = strcmp(leaves[n], leaves[n - n % per]) == 0;
        for (int r = 0; r < n - n % per && even && n % per == 0; r += per) /* a rack appears once */
            even = strcmp(leaves[n], leaves[r]) != 0;
    }
    if (even && nnodes / per > 1) {
        c->set.grid = (ddl_grid_t){3, {c->info.gpus_per_node, per, nnodes / per}};
        if (c->info.rank == 0)
            DDL_INFO(DDL_SUBSYS_INIT, "grid from SLURM_TOPOLOGY_ADDR: %d GPUs x %d nodes per switch x %d switches",
                     c->info.gpus_per_node, per, nnodes / per);
    } else if (c->info.rank == 0) {
        DDL_INFO(DDL_SUBSYS_INIT, "SLURM_TOPOLOGY_ADDR: %s; no multiring grid",
                 even ? "one leaf switch" : "leaf switches with different node counts, or not consecutive");
    }
    free(leaves);
    return DDL_OK;
}

static ddl_status_t gather_names(ddl_comm_t *c, int shm_first)
{
    c->hosts = calloc((size_t)c->info.size, DDL_HOST_LEN);
    c->shm_host = calloc((size_t)c->info.size, sizeof(int));
    c->world_of_local = calloc((size_t)c->info.local_size, sizeof(int));
    c->world_of_lane = calloc((size_t)c->info.nnodes, sizeof(int));
    if (!c->hosts || !c->shm_host || !c->world_of_local || !c->world_of_lane)
        return ddl_error(DDL_ERR_NO_MEMORY, "cannot allocate the rank tables");
    char me[DDL_HOST_LEN] = {0};
    gethostname(me, sizeof(me) - 1);
    MPI_Allgather(me, DDL_HOST_LEN, MPI_CHAR, c->hosts, DDL_HOST_LEN, MPI_CHAR, c->world);
    MPI_Allgather(&shm_first, 1, MPI_INT, c->shm_host, 1, MPI_INT, c->world);
    MPI_Allgather(&c->info.rank, 1, MPI_INT, c->world_of_local, 1, MPI_INT, c->node_comm);
    MPI_Allgather(&c->info.rank, 1, MPI_INT, c->world_of_lane, 1, MPI_INT, c->lane_comm);
    return DDL_OK;
}

/* The node's waits' progress hook (node.h): a probe (it takes no message)
 * drives MPI's progress engine. */
static void mpi_progress(void *arg)
{
    const ddl_comm_t *c = arg;
    int flag;
    if (c->world != MPI_COMM_NULL)
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, c->world, &flag, MPI_STATUS_IGNORE);
}

/* The control block (created by local rank 0) and one segment per owner (its
 * stage area, then its heap); every local rank maps all of them, then the
 * creators unlink the names. */
static ddl_status_t setup_shm(ddl_comm_t *c)
{
    ddl_comm_info_t *in = &c->info;
    ddl_node_t *n = &c->node;
    n->local_rank = in->local_rank;
    n->local_size = in->local_size;
    n->node = in->node;
    n->timeout = c->set.timeout;
    n->world_of_local = c->world_of_local;
    n->host = c->hosts[in->rank];
    n->progress = mpi_progress;
    n->progress_arg = c;
    n->seg.fd = -1;

    char ctrl_name[128] = {0};
    size_t ctrl_size = ddl_node_ctrl_size(in->local_size);
    ddl_status_t st = DDL_OK;
    if (in->local_rank == 0) {
        ddl_shm_reap_stale(); /* names a crashed job of this user left behind */
        st = ddl_shm_create("ctrl", ctrl_size, &n->seg);
        if (st == DDL_OK) {
            ddl_node_ctrl_init(n->seg.base, in->local_size);
            snprintf(ctrl_name, sizeof(ctrl_name), "%s", n->seg.name);
        }
    }
    if ((st = agree(c, st)) != DDL_OK)
        return st;
    MPI_Bcast(ctrl_name, sizeof(ctrl_name), MPI_CHAR, 0, c->node_comm);
    if (in->local_rank != 0)
        st = ddl_shm_attach(ctrl_name, ctrl_size, &n->seg);

    int G = in->gpus_per_node;
    size_t seg_size = c->set.stage_size + c->set.heap_size; /* checked when the settings were read */
    char mine[128] = {0}, (*names)[128] = calloc((size_t)in->local_size, 128);
    c->segs = calloc((size_t)G, sizeof(*c->segs));
    if (!names || !c->segs) {
        free(names);
        return ddl_error(DDL_ERR_NO_MEMORY, "cannot allocate the segment table");
    }
    for (int g = 0; g < G; g++)
        c->segs[g].fd = -1;
    if (st == DDL_OK && in->role == DDL_ROLE_OWNER) {
        st = ddl_shm_create("gpu", seg_size, &c->segs[in->gpu]);
        snprintf(mine, sizeof(mine), "%s", c->segs[in->gpu].name);
        if (st == DDL_OK)
            st = ddl_shm_reserve(&c->segs[in->gpu], 0, c->set.stage_size);
    }
    if ((st = agree(c, st)) == DDL_OK) {
        MPI_Allgather(mine, 128, MPI_CHAR, names, 128, MPI_CHAR, c->node_comm);
        for (int g = 0; g < G && st == DDL_OK; g++)
            if (g != in->gpu || in->role != DDL_ROLE_OWNER)
                st = ddl_shm_attach(names[g * in->lanes], seg_size, &c->segs[g]);
        st = agree(c, st);
    }
    free(names);
    if (st != DDL_OK)
        return st;
    /* Everyone has mapped everything: the names can go. */
    MPI_Barrier(c->node_comm);
    ddl_shm_unlink(&n->seg);
    if (in->role == DDL_ROLE_OWNER)
        ddl_shm_unlink(&c->segs[in->gpu]);
    n->seg.name[0] = '\0';
    for (int g = 0; g < G; g++)
        c->segs[g].name[0] = '\0';
    ddl_node_attach(n);
    if (in->role == DDL_ROLE_OWNER)
        ddl_heap_init(&c->heap, c->set.stage_size, c->set.heap_size);
    MPI_Barrier(c->node_comm);
    return DDL_OK;
}

/* Between nodes: the pipeline's slot buffers, then every transport's own
 * state (ddl_transports_init). */
static ddl_status_t setup_lanes(ddl_comm_t *c)
{
    if (c->info.nnodes > 1) {
        c->scratch_bytes = c->set.chunk_size ? c->set.chunk_size : DDL_CHUNK_MAX;
        for (int i = 0; i < DDL_NSCHED; i++)
            if (!(c->scratch[i] = aligned_alloc(64, c->scratch_bytes)))
                return ddl_error(DDL_ERR_NO_MEMORY, "cannot allocate %zu bytes of lane scratch", c->scratch_bytes);
    }
    return ddl_transports_init(c, c->info.nnodes > 1 ? ddl_inter_max_steps(c->info.nnodes, &c->set.grid) : 0);
}

/* At INFO, rank 0 prints the whole lane map once, with each rank's cores (the
 * plugin's DDL_CORES). */
#define CORES_TEXT 32
static void log_lane_map(ddl_comm_t *c)
{
    const ddl_comm_info_t *in = &c->info;
    int place[2] = {in->node, in->local_rank}, *all = NULL;
    char mine[CORES_TEXT] = "", *cores = NULL;
    const char *env = getenv("DDL_CORES");
    snprintf(mine, sizeof(mine), "%s", env && *env ? env : "");
    if (in->rank == 0) {
        all = malloc(2 * sizeof(int) * (size_t)in->size);
        cores = malloc(CORES_TEXT * (size_t)in->size);
    }
    MPI_Gather(place, 2, MPI_INT, all, 2, MPI_INT, 0, c->world);
    MPI_Gather(mine, CORES_TEXT, MPI_CHAR, cores, CORES_TEXT, MPI_CHAR, 0, c->world);
    if (in->rank != 0 || !all || !cores) {
        free(all);
        free(cores);
        return;
    }
    DDL_INFO(DDL_SUBSYS_INIT, "lane map: %d nodes x %d GPUs x %d lanes = %d ranks, helpers %s", in->nnodes,
             in->gpus_per_node, in->lanes, in->size, c->helper_mode == DDL_HELPERS_SERVE ? "serve" : "collective");
    for (int node = 0; node < in->nnodes; node++) {
        char line[1024];
        int o = 0, host_rank = -1;
        for (int t = 0; t < in->local_size; t++) {
            for (int r = 0; r < in->size; r++) {
                if (all[2 * r] != node || all[2 * r + 1] != t)
                    continue;
                if (t == 0)
                    host_rank = r;
                if (t % in->lanes == 0 && o < (int)sizeof(line) - 64)
                    o += snprintf(line + o, sizeof(line) - (size_t)o, "%sGPU %d:", t ? "; " : "", t / in->lanes);
                const char *rc = cores + (size_t)r * CORES_TEXT;
                if (o < (int)sizeof(line) - 80)
                    o += snprintf(line + o, sizeof(line) - (size_t)o, " %d%s%s%.*s%s", r,
                                  t % in->lanes == 0 ? "(owner" : "", *rc ? (t % in->lanes == 0 ? ", cores " : "(cores ") : "",
                                  CORES_TEXT - 1, rc, t % in->lanes == 0 || *rc ? ")" : "");
            }
        }
        DDL_INFO(DDL_SUBSYS_INIT, "node %d (%s): %s", node, host_rank >= 0 ? c->hosts[host_rank] : "?", line);
    }
    free(all);
    free(cores);
}

/* At INFO, rank 0 says once which algorithm serves which sizes, and why. */
static void log_tuning(const ddl_comm_t *c)
{
    const ddl_tuning_t *t = &c->set.tuning;
    if (c->info.rank != 0)
        return;
    for (int d = 0; d < DDL_GRID_MAX_DIMS && d < (c->set.grid.ndims > 1 ? c->set.grid.ndims : 1); d++)
        DDL_INFO(DDL_SUBSYS_COLL, "cost model, links of dimension %d: latency %.1f us, %.1f MB/s (%s)", d,
                 t->model.link[d].alpha * 1e6, 1e-6 / t->model.link[d].beta,
                 t->model.measured[d] ? "measured: tuning file" : "default, measured on the emulated 1 Gbit/s cluster");
    DDL_INFO(DDL_SUBSYS_COLL, "cost model, host reduction: %.0f MB/s", 1e-6 / t->model.gamma);
    if (t->nbands == 0) {
        int online = c->set.select == DDL_SELECT_ONLINE && ddl_select_online(c);
        DDL_INFO(DDL_SUBSYS_COLL, "no tuning bands: DDL_ALGO=%s, %s, lanes %s (auto: the cost model per chunk), "
                 "chunk %s%s", ddl_algo_names[c->set.algo], online ? "chosen online per size class (DDL_SELECT)"
                 : "MPI below DDL_MPI_THRESHOLD (DDL_SELECT=model)", ddl_inter_algo_names[c->set.lane_algo],
                 ddl_param_string("DDL_CHUNK_SIZE"), c->set.explore ? ", the lanes' algorithms timed per size class "
                 "(DDL_EXPLORE; the multiring's dimension by dimension)" : "");
        return;
    }
    for (int i = 0; i < t->nbands; i++) {
        const ddl_band_t *b = &t->bands[i];
        char hi[32];
        if (b->max == SIZE_MAX)
            snprintf(hi, sizeof(hi), "inf");
        else
            snprintf(hi, sizeof(hi), "%zu", b->max);
        DDL_INFO(DDL_SUBSYS_COLL, "sizes %zu-%s bytes: %s%s%s chunk %zu%s (measured: tuning file %s)", b->min, hi,
                 ddl_algo_names[b->algo], b->lane_algo ? "/" : "", b->lane_algo ? ddl_inter_algo_names[b->lane_algo] : "",
                 b->chunk ? b->chunk : c->set.chunk_size, b->ndims ? " with per-dimension algorithms" : "",
                 c->set.tuning_path);
    }
}

ddl_status_t ddl_comm_create(MPI_Comm comm, const ddl_config_t *cfg, ddl_comm_t **out)
{
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized)
        return ddl_error(DDL_ERR_INVALID_ARG, "ddl_comm_create: MPI is not initialised; call MPI_Init first");
    if (!cfg || !out)
        return ddl_error(DDL_ERR_INVALID_ARG, "ddl_comm_create: cfg and out must not be NULL");
    *out = NULL;
    ddl_comm_t *c = calloc(1, sizeof(*c));
    if (c && !(c->online = calloc(DDL_COLL_COUNT, sizeof(*c->online)))) {
        free(c);
        c = NULL;
    }
    if (!c)
        return ddl_error(DDL_ERR_NO_MEMORY, "ddl_comm_create: out of memory");
    c->world = c->node_comm = c->lane_comm = c->owners = c->owners_app = c->owners_sig = MPI_COMM_NULL;
    c->node.seg.fd = -1;
    pthread_mutex_init(&c->heap_lock, NULL);
    c->app_errors = MPI_ERRHANDLER_NULL;
    ddl_status_t st = mpi_ok(MPI_Comm_dup(comm, &c->world), "MPI_Comm_dup");
    if (st == DDL_OK)
        st = mpi_ok(MPI_Comm_get_errhandler(comm, &c->app_errors), "MPI_Comm_get_errhandler");
    if (st == DDL_OK) /* before any communicator is made from it: they all inherit the handler */
        st = ddl_mpi_errors_watch(c->world, "world", &c->mpi_failure);
    if (st != DDL_OK) {
        free_comm(&c->world);
        free(c);
        return st;
    }
    MPI_Comm_rank(c->world, &c->info.rank);
    MPI_Comm_size(c->world, &c->info.size);
    ddl_log_init(c->info.rank);
    if (c->info.rank == 0)
        ddl_log_version(); /* once per job, as NCCL_DEBUG=VERSION */
    ddl_params_log_env();

    st = ddl_settings_load(&c->set);
    if (st == DDL_OK && (cfg->lanes < 1 || cfg->gpus_per_node < 0 || cfg->node_size < 0 ||
                         (cfg->helper_mode != DDL_HELPERS_COLLECTIVE && cfg->helper_mode != DDL_HELPERS_SERVE)))
        st = ddl_error(DDL_ERR_INVALID_ARG, "ddl_comm_create: lanes %d, GPUs per node %d, node size %d, helper "
                       "mode %d: lanes must be >= 1, the others >= 0 and the mode collective or serve",
                       cfg->lanes, cfg->gpus_per_node, cfg->node_size, (int)cfg->helper_mode);
    c->helper_mode = cfg->helper_mode;
    DDL_CHECK_GOTO(agree(c, st), st, fail);
    DDL_CHECK_GOTO(agree_settings(c, cfg), st, fail);
    int shm_first;
    DDL_CHECK_GOTO(make_node_comm(c, cfg->node_size, &shm_first), st, fail);
    DDL_CHECK_GOTO(make_layout(c, cfg), st, fail);
    DDL_CHECK_GOTO(gather_names(c, shm_first), st, fail);
    DDL_CHECK_GOTO(agree(c, ddl_mpi_early_init(c)), st, fail);
    DDL_CHECK_GOTO(agree(c, ddl_lane_early_init(c)), st, fail);
    DDL_CHECK_GOTO(agree(c, ddl_bootstrap_check(c)), st, fail);
    DDL_CHECK_GOTO(agree(c, check_grid(c)), st, fail);
    DDL_CHECK_GOTO(grid_from_slurm(c), st, fail);
    DDL_CHECK_GOTO(check_choices(c), st, fail);
    DDL_CHECK_GOTO(setup_shm(c), st, fail);
    DDL_CHECK_GOTO(agree(c, setup_lanes(c)), st, fail);
    DDL_CHECK_GOTO(agree(c, ddl_gpu_comm_setup(c)), st, fail);
    DDL_CHECK_GOTO(agree(c, ddl_select_init(c)), st, fail);
    if (!(c->engine = ddl_engine_create())) {
        st = ddl_error(DDL_ERR_NO_MEMORY, "out of memory for the request engine");
        goto fail;
    }
    c->magic = DDL_COMM_LIVE;
    log_lane_map(c);
    log_tuning(c);
    ddl_trace_open(c->info.rank, c->info.node, c->info.gpu, c->info.lane, c->info.role == DDL_ROLE_OWNER);
    *out = c;
    return DDL_OK;
fail:
    release(c);
    free(c);
    return st;
}

ddl_status_t ddl_comm_destroy(ddl_comm_t *c)
{
    if (!ddl_comm_is_live(c))
        return ddl_error(DDL_ERR_INVALID_ARG, "ddl_comm_destroy: not a live communicator (destroyed already?)");
    ddl_engine_drain(c->engine); /* every posted request completes first */
    c->magic = DDL_COMM_DEAD;
    if (c->helper_mode == DDL_HELPERS_SERVE && c->info.role == DDL_ROLE_OWNER && !c->broken) {
        ddl_node_request_shutdown(&c->node);
        ddl_node_ring(&c->node);
    }
    release(c);
    ddl_comm_bury(c);
    return DDL_OK;
}

ddl_status_t ddl_comm_create_world(const ddl_config_t *cfg, ddl_comm_t **out)
{
    return ddl_comm_create(MPI_COMM_WORLD, cfg, out);
}
