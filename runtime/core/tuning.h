/* SPDX-License-Identifier: Apache-2.0 */
/* The tuning file: which algorithm serves which message sizes, as ddl-tune
 * measured them on an allocation.  One band a line:
 *
 *     # comment
 *     0-8K        mpi
 *     8K-64K      mpi/exchange
 *     64K-128K    mpi/after
 *     128K-16M    lane/ring  chunk=512K
 *     16M-inf     lane/rab   chunk=1M
 *     link 0      latency_us=48.5  mbytes_per_s=117.2
 *     reduce      mbytes_per_s=2650
 *
 * (or, with the multiring, a band such as `1M-inf multiring dims=ring,rd`).
 *
 * Bands are [min, max) in bytes, in order, without overlap; sizes outside every
 * band use the defaults (DDL_ALGO, DDL_LANE_ALGO, DDL_CHUNK_SIZE).  dims= gives
 * the multiring's algorithm along each grid dimension from the innermost node
 * dimension out (ring or rd).  `link D` and `reduce` lines are the cost
 * model's measured numbers (model.h) for grid dimension D and for the host
 * reduction. */
#ifndef DDL_TUNING_H
#define DDL_TUNING_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ddl.h"
#include "grid.h"

#define DDL_TUNING_MAX_BANDS 64

/* The cost model's numbers (algo/model.h computes with them): per grid
 * dimension a link's latency alpha (s) and time per byte beta (s), and the
 * host reduction's time per byte gamma.  Without `link` and `reduce` lines,
 * these defaults, measured with ddl-tune on bench/emu-cluster.sh (2 nodes x 2
 * rails, 1 Gbit/s tbf, bench/JOURNAL.md): the medians of four runs. */
#define DDL_MODEL_ALPHA_DEFAULT 12e-6           /* s per message */
#define DDL_MODEL_BETA_DEFAULT (1.0 / 154e6)    /* s per byte */
#define DDL_MODEL_GAMMA_DEFAULT (1.0 / 7000e6)  /* s per byte reduced (f32 sum) */

typedef struct {
    double alpha, beta;
} ddl_link_t;

typedef struct {
    ddl_link_t link[DDL_GRID_MAX_DIMS];
    int measured[DDL_GRID_MAX_DIMS]; /* 1 when the tuning file gave the link */
    double gamma;
} ddl_model_t;

/* Per-dimension algorithms of the multiring (a band's dims=). */
typedef enum { DDL_DIM_RING = 0, DDL_DIM_RD = 1 } ddl_dim_algo_t;
extern const char *const ddl_dim_algo_names[]; /* as dims= names them, NULL-terminated */

void ddl_model_defaults(ddl_model_t *m);

typedef struct {
    size_t min, max;  /* max == SIZE_MAX: no upper end */
    int algo;         /* ddl_algo_id_t */
    int lane_algo;    /* ddl_inter_algo_id_t; AUTO when not given */
    int mpi_form;     /* ddl_mpi_form_t: mpi, mpi/exchange (between nodes the data rides in the
                       * owners' signature exchange up to 63 KiB; larger sizes take
                       * MPI_Allreduce after it), mpi/after (never started early),
                       * mpi/halves (the owners' own allreduce, up to 512 KiB) */
    size_t chunk;     /* 0 when not given */
    int ndims;        /* dims= entries given (multiring); 0 when not given */
    unsigned char dim_algo[DDL_GRID_MAX_DIMS]; /* [1..ndims]: ddl_dim_algo_t */
    int line;         /* in the file, for messages */
} ddl_band_t;

typedef struct {
    ddl_band_t bands[DDL_TUNING_MAX_BANDS];
    int nbands;
    ddl_model_t model; /* the defaults, with the file's link and reduce lines */
} ddl_tuning_t;

/* The kinds of line (one table in tuning.c serves the parser and the writers). */
typedef enum { DDL_TUNING_LINK = 0, DDL_TUNING_REDUCE, DDL_TUNING_BAND } ddl_tuning_line_t;

/* Parse the text of a tuning file: DDL_ERR_INVALID_ARG with "line N: what is
 * wrong" as the last error (ddl_fail). */
ddl_status_t ddl_tuning_parse(const char *text, ddl_tuning_t *t);
/* Read and parse a regular text file of at most 64 KiB; the message names the
 * file and the line. */
ddl_status_t ddl_tuning_load(const char *path, ddl_tuning_t *t);
/* Write one line of each kind, as the parser reads it (ddl-tune). */
void ddl_tuning_write_link(FILE *f, int dim, const ddl_link_t *link);
void ddl_tuning_write_reduce(FILE *f, double gamma);
/* max SIZE_MAX: "inf"; chunk 0: not given. */
void ddl_tuning_write_band(FILE *f, size_t min, size_t max, const char *algo, size_t chunk);
/* The band holding bytes, or NULL. */
const ddl_band_t *ddl_tuning_find(const ddl_tuning_t *t, size_t bytes);
/* A checksum of the table, to check that every rank read the same one. */
uint64_t ddl_tuning_digest(const ddl_tuning_t *t);

#endif
