/* SPDX-License-Identifier: Apache-2.0 */
/* The lanes' reduce-scatter and allgather: the node's slices and chunks of
 * the allreduce (lane_path.c, pipeline.c), over the node's region of G
 * blocks.  A rank's chunk carries one piece per node: the reduce-scatter
 * reduces every node's piece over this node's owners, and the ring's
 * reduce-scatter half between nodes leaves each node its own piece, which
 * goes to its owners; the allgather sends this node's piece round the ring's
 * allgather half, and every piece goes to every owner.  So each byte crosses
 * the network once per node, and the lanes share it as they share the
 * allreduce's. */
#include "config.h"

#include <string.h>

#include "chunks.h"
#include "choices.h"
#include "copy.h"
#include "lane_view.h"

/* Elements [off, off + n) of the node's region, block by block: block h of
 * the node (its GPU h), from element j of it, len elements; `at` elements
 * into the chunk. */
typedef struct {
    int h;
    size_t j, len, at;
} segment_t;

static int next_segment(const lane_view_t *v, size_t off, size_t n, segment_t *s)
{
    if (s->at + s->len >= n)
        return 0;
    s->at += s->len;
    size_t e = off + s->at;
    s->h = (int)(e / v->block);
    s->j = e % v->block;
    s->len = v->block - s->j < n - s->at ? v->block - s->j : n - s->at;
    return 1;
}

#define FOR_SEGMENTS(v, off, n, s) for (segment_t s = {0, 0, 0, 0}; next_segment(v, off, n, &s);)

/* dst = the reduction over this node's owners of their input's elements
 * [j, j + len) of block b (of the job's P), in GPU order. */
static void reduce_block(const lane_view_t *v, size_t b, size_t j, size_t len, char *dst)
{
    const char *src[DDL_MAX_GPUS];
    for (int g = 0; g < v->gpus; g++)
        src[g] = v->in[g] + (b * v->in_stride[g] + j) * v->esize;
    if (v->gpus == 1) {
        memcpy(dst, src[0], len * v->esize);
        return;
    }
    v->fn(dst, src[0], src[1], len);
    for (int g = 2; g < v->gpus; g++)
        v->fn(dst, dst, src[g], len);
}

static void put(const lane_view_t *v, int g, char *dst, const char *src, size_t bytes)
{
    if (v->stream && v->out[g] != v->in[g])
        ddl_copy_stream(dst, src, bytes);
    else
        memcpy(dst, src, bytes);
}

void ddl_lane_blocks_fill(const lane_view_t *v, size_t off, size_t n, char *buf)
{
    size_t es = v->esize, gpus = (size_t)v->gpus;
    if (v->coll == DDL_COLL_ALLGATHER) {
        char *piece = buf + ddl_lane_piece(v, v->node) * n * es;
        FOR_SEGMENTS(v, off, n, s)
            memcpy(piece + s.at * es, v->in[s.h] + s.j * es, s.len * es);
        return;
    }
    for (int m = 0; m < v->nnodes; m++) {
        char *piece = buf + ddl_lane_piece(v, m) * n * es;
        FOR_SEGMENTS(v, off, n, s)
            reduce_block(v, (size_t)m * gpus + (size_t)s.h, s.j, s.len, piece + s.at * es);
    }
}

void ddl_lane_blocks_drain(const lane_view_t *v, size_t off, size_t n, char *buf)
{
    size_t es = v->esize, gpus = (size_t)v->gpus;
    if (v->coll == DDL_COLL_REDUCE_SCATTER) {
        char *piece = buf + ddl_lane_piece(v, v->node) * n * es;
        ddl_avg_finish(piece, n, v->dtype, v->divisor);
        FOR_SEGMENTS(v, off, n, s)
            put(v, s.h, v->out[s.h] + s.j * es, piece + s.at * es, s.len * es);
        return;
    }
    for (int m = 0; m < v->nnodes; m++) {
        const char *piece = buf + ddl_lane_piece(v, m) * n * es;
        FOR_SEGMENTS(v, off, n, s) {
            size_t b = (size_t)m * gpus + (size_t)s.h;
            for (int g = 0; g < v->gpus; g++)
                put(v, g, v->out[g] + (b * v->out_stride[g] + s.j) * es, piece + s.at * es, s.len * es);
        }
    }
}

void ddl_lane_blocks_gather_node(const lane_view_t *v, size_t off, size_t n)
{
    size_t es = v->esize, gpus = (size_t)v->gpus;
    FOR_SEGMENTS(v, off, n, s) {
        size_t b = (size_t)v->node * gpus + (size_t)s.h;
        for (int g = 0; g < v->gpus; g++)
            put(v, g, v->out[g] + (b * v->out_stride[g] + s.j) * es, v->in[s.h] + s.j * es, s.len * es);
    }
}
