/* SPDX-License-Identifier: Apache-2.0 */
/* Online selection (DDL_SELECT=online, the default): PowerAI DDL's p: mode
 * generalized to every choice.  Messages fall in size classes by log2 of their
 * bytes.  The first calls of a class time its candidates in turn (the system
 * MPI path, each lane algorithm, half and twice the model's chunk), round after
 * round; then the ranks agree on the elementwise maximum of their fastest
 * times of each candidate, and all ranks take the candidate with the least
 * agreed time: the same numbers everywhere, so the same choice everywhere.  Later calls
 * of the class run the choice; about every DDL_ONLINE_CHECK_SECONDS of its calls
 * the ranks agree on its recent time, and a class whose time grew by more
 * than DDL_SELECT_DRIFT is explored again (one that became faster keeps its
 * choice, with the new time as the reference).
 *
 * With DDL_EXPLORE (PowerAI DDL's p: mode) and the multiring, a class first
 * decides the multiring's algorithm along each node dimension of the grid, one
 * dimension after the other from the innermost out: a stage of two candidates
 * (ring, rd) with the dimensions already decided fixed and the outer ones on
 * the ring, timed and agreed like any exploration.  Then the class's candidates
 * are timed as always, the multiring among them with the decided dimensions.
 *
 * This file is the bookkeeping only, without MPI: the caller times the calls,
 * runs the agreement when ddl_online_observe asks for one, and hands back the
 * agreed numbers (engine/route.c). */
#ifndef DDL_ONLINE_H
#define DDL_ONLINE_H

#include <stddef.h>
#include <stdio.h>

#include "algo.h"
#include "grid.h"

#define DDL_ONLINE_CLASSES 64
/* The multiring, each lane algorithm, the MPI path, its exchange, its form
 * without the early start and its halves, half and twice the chunk. */
#define DDL_ONLINE_MAX_CANDIDATES (DDL_INTER_ALGOS + 7)
#define DDL_ONLINE_RECENT 8            /* a decided class's last times, for the drift check */
#define DDL_ONLINE_CHECK_SECONDS 0.05  /* a decided class is checked after about this much of its calls */
#define DDL_ONLINE_MIN_WINDOW 16       /* ... and after no fewer calls than this */
/* A choice runs against a candidate whose best round came within this share
 * of its own (the other family's best, else the runner-up), for
 * DDL_ONLINE_RECENT calls each, and the one with the lower median keeps the
 * class (online.c: the duel).  The drift check's default: a lead that small
 * would never be corrected by it later, and a lucky best round was measured
 * up to 30-50% below the calls that followed (the emulated rails, 16-64 KiB). */
#define DDL_ONLINE_DUEL_SPAN 0.5
/* From this class (1 MiB) up a call's time counts as if it had moved the
 * class's smallest size (its time over its bytes): the times the selection
 * keeps, compares and prints (online.c). */
#define DDL_ONLINE_PER_BYTE_CLASS 20

typedef struct ddl_candidate {
    int algo;        /* ddl_algo_id_t: MPI, LANE or MULTIRING */
    int lane_algo;   /* ddl_inter_algo_id_t; AUTO: DDL_LANE_ALGO (the model per chunk when auto) */
    int chunk_shift; /* the chunk: the model's times 2^chunk_shift (-1, 0 or 1) */
    int mpi_form;    /* MPI: ddl_mpi_form_t (mpi, mpi/exchange, mpi/after, mpi/halves) */
    int ndims;       /* multiring: dim_algo[1..ndims] are fixed (DDL_EXPLORE); 0: the model per chunk */
    unsigned char dim_algo[DDL_GRID_MAX_DIMS]; /* ddl_dim_algo_t */
} ddl_candidate_t;

/* What the job lets the selection choose (the same on every rank). */
typedef struct {
    int nnodes;
    int path;          /* the lanes' form: DDL_ALGO_LANE or DDL_ALGO_MULTIRING */
    int with_mpi;      /* the system MPI path is a candidate (DDL_ALGO=auto) */
    int lane_algos;    /* lane algorithms are candidates (DDL_LANE_ALGO=auto, several nodes; with a
                        * grid beside the multiring unless DDL_ALGO=multiring) */
    int chunks;        /* chunk sizes are candidates (DDL_CHUNK_SIZE=auto, several nodes) */
    double drift;      /* DDL_SELECT_DRIFT: re-explore when the time changes by more than this share */
    int rounds;        /* rounds of every candidate; 0: by size (more for small, noisy calls) */
    /* Between nodes the MPI path carries messages up to exchange_min bytes in the
     * owners' signature exchange, and can carry them up to exchange_max
     * (mpi/exchange, a candidate of the classes between; 0: none). */
    size_t exchange_min, exchange_max;
    /* Between hosts a repeated call on the MPI path up to early_max bytes
     * starts early (algo/mpi_early.c): mpi/after, without it, is a candidate
     * of the classes above exchange_min that reach below it (0: none). */
    size_t early_max;
    /* The MPI path in halves (mpi/halves) carries calls up to halves_max
     * bytes: a candidate of the classes above exchange_min that reach below it
     * (0: none; it needs a power of two of owners). */
    size_t halves_max;
    /* Time the MPI path's candidates first (visiting order, online.c): where
     * every caller is an owner (serve mode), so that the MPI path checks every
     * caller's arguments.  In collective mode a class's first call takes the
     * lanes, whose check covers the helpers' arguments too. */
    int mpi_first;
    /* Every rank on one host as MPI sees it (virtual nodes): the MPI path's
     * extra rounds (online.c) go on up to the classes of two rounds, where
     * between hosts a slow link would make them cost seconds. */
    int one_host;
    /* DDL_EXPLORE with the multiring: the grid's node dimensions (1..dims)
     * whose algorithms are timed one by one before the class's candidates; 0: none. */
    int dims;
} ddl_online_job_t;

typedef enum { DDL_CLASS_NEW = 0, DDL_CLASS_EXPLORING, DDL_CLASS_DECIDED } ddl_class_state_t;

typedef struct {
    ddl_class_state_t state;
    int ncand;
    ddl_candidate_t cand[DDL_ONLINE_MAX_CANDIDATES];
    size_t chunk[DDL_ONLINE_MAX_CANDIDATES]; /* bytes each candidate's calls used (0: not chunked) */
    int rounds, calls;                       /* exploring: rounds planned, calls made (-1: the warm-up is next) */
    int mpi_rounds, other_rounds;            /* exploring: rounds of the MPI path's candidates, of the others */
    int planned;                             /* exploring: the calls that time candidates */
    double fastest[DDL_ONLINE_MAX_CANDIDATES]; /* exploring: this rank's fastest time of each */
    double agreed[DDL_ONLINE_MAX_CANDIDATES];  /* decided: the agreed times */
    int chosen;
    double reference;                        /* decided: the choice's agreed time */
    long window, since_check;                /* decided: calls between drift checks (0: never), calls since */
    int confirming;                          /* decided: the choice's duel with `rival` runs (online.c) */
    int rival;                               /* confirming: the choice's rival; after the duel its loser */
    double recent[DDL_ONLINE_RECENT];        /* decided: the choice's last times; confirming: its duel's */
    int nrecent;
    double rival_times[DDL_ONLINE_RECENT];   /* confirming: the rival's duel times */
    int nrival;
    int explorations;                        /* times this class was explored */
    int stage;                               /* job.dims: the dimension being timed; past them: the candidates */
    int dim_decided;                         /* the dimension the last settle decided; 0: none */
    unsigned char dim_algo[DDL_GRID_MAX_DIMS]; /* job.dims: the dimensions decided so far */
} ddl_online_class_t;

typedef struct ddl_online {
    ddl_online_job_t job;
    ddl_online_class_t cls[DDL_ONLINE_CLASSES];
} ddl_online_t;

/* What ddl_online_settle found. */
typedef enum {
    DDL_ONLINE_DECIDED = 1, /* the class's choice (after its last dimension, when the multiring is its one candidate) */
    DDL_ONLINE_DIMENSION,   /* a multiring dimension's algorithm (job.dims); the class goes on exploring */
    DDL_ONLINE_STEADY,
    DDL_ONLINE_DRIFTED,
    DDL_ONLINE_FASTER,
    DDL_ONLINE_CONFIRMED,   /* the choice won its duel with its rival */
    DDL_ONLINE_SWITCHED,    /* the rival won the duel: it took the class */
} ddl_online_outcome_t;

/* A size's class: log2 of its bytes, rounded down (0 and 1 byte: class 0). */
static inline int ddl_online_class_of(size_t bytes)
{
    _Static_assert(DDL_ONLINE_CLASSES == 8 * sizeof(unsigned long long), "a class per bit of a size");
    return bytes ? 63 - __builtin_clzll((unsigned long long)bytes) : 0;
}
void ddl_online_init(ddl_online_t *o, const ddl_online_job_t *job);
/* Does the next call of `bytes` start its class's exploration (so that
 * ddl_online_next needs a true `chunked`)? */
int ddl_online_starts(const ddl_online_t *o, size_t bytes);
/* The candidate a call of `bytes` runs: the class's choice, or the one it
 * times next.  chunked: whether a rank's slice of this message spans more than
 * one of the model's chunks (else chunk sizes are not worth timing). */
const ddl_candidate_t *ddl_online_next(ddl_online_t *o, size_t bytes, int chunked);
/* Does the next call of `bytes` need timing?  Exploring calls do; a decided
 * class needs only the calls just before its drift check (the clock is not
 * free next to a call of a microsecond). */
int ddl_online_wants_time(const ddl_online_t *o, size_t bytes);
/* After a call of `bytes` that succeeded: its time on this rank (negative
 * when ddl_online_wants_time said no) and the chunk it used.  Returns how many numbers the ranks must now agree on (their maximum),
 * written to v (at most DDL_ONLINE_MAX_CANDIDATES); 0 when none. */
int ddl_online_observe(ddl_online_t *o, size_t bytes, double seconds, size_t chunk, double *v);
/* With the agreed numbers of the last observe: the decision, or the drift check's outcome. */
ddl_online_outcome_t ddl_online_settle(ddl_online_t *o, size_t bytes, const double *agreed);
/* A candidate's name as a tuning file's band gives it: "mpi", "mpi/exchange",
 * "mpi/after", "mpi/halves", "lane/ring", "lane", "multiring dims=rd,ring";
 * snprintf's return. */
int ddl_candidate_name(const ddl_candidate_t *c, char *buf, size_t len);
/* The name with the chunk, when it has one (0: none): "mpi", "lane/ring",
 * "lane chunk=128K", "multiring chunk=1M" ... */
void ddl_candidate_describe(const ddl_candidate_t *c, size_t chunk, char *buf, size_t len);
/* Candidate cand of a class, with the chunk it was timed at. */
void ddl_online_describe(const ddl_online_class_t *k, int cand, char *buf, size_t len);
/* A decided class's agreed times, "mpi 12.3 us, lane/ring 10.1 us, ...";
 * returns buf. */
const char *ddl_online_timings(const ddl_online_class_t *k, char *buf, size_t len);
/* The decisions as tuning-file bands (tuning.h), neighbouring classes with the
 * same choice as one band; returns the bands written. */
int ddl_online_write(const ddl_online_t *o, FILE *f);

#endif
