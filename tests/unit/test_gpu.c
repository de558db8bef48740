/* SPDX-License-Identifier: Apache-2.0 */
/* The parts of the GPU path that need no GPU: chunk planning, the IPC handle
 * cache (with fake open and close), and pointer classification, which must
 * call every host pointer host memory whether or not CUDA and a device exist. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"

#include "chunks.h"
#include "gpu.h"
#include "ipc_cache.h"
#include "log.h"

/* One plan's faults, or NULL: the checks run in plain C and the suite asserts
 * once per plan (an assertion per chunk made the test take 40 s under ASan). */
static const char *chunk_plan_fault(size_t n, size_t esize, size_t chunk_bytes, size_t align)
{
    ddl_chunks_t p = ddl_chunks_plan(n, esize, chunk_bytes, align);
    if (p.per < 1)
        return "an empty chunk size";
    /* Chunks are whole multiples of the alignment unit in elements. */
    size_t unit = align > esize ? align / esize : 1;
    if (p.per % unit != 0)
        return "a chunk size that is not a whole number of alignment units";
    /* Never larger than asked unless one unit is already larger. */
    if (chunk_bytes >= unit * esize && p.per * esize > chunk_bytes)
        return "chunks larger than asked";
    size_t next = 0;
    for (size_t k = 0; k < p.count; k++) {
        size_t off, len;
        ddl_chunk_at(&p, k, &off, &len);
        if (off != next)
            return "a chunk that does not start where the previous one ended";
        if (len < 1 || len > p.per || (k + 1 < p.count && len != p.per))
            return "a chunk of the wrong length";
        if ((off * esize) % (unit * esize) != 0)
            return "a chunk that starts off its alignment";
        next = off + len;
    }
    if (next != n)
        return "chunks that do not cover the elements";
    if (p.count != (n == 0 ? 0 : (n + p.per - 1) / p.per))
        return "the wrong number of chunks";
    return NULL;
}

START_TEST(test_chunks_cover_whole_elements)
{
    static const size_t esizes[] = {1, 2, 4, 8};
    static const size_t chunk_bytes[] = {1, 3, 255, 256, 257, 1000, 4096, 1 << 20};
    static const size_t aligns[] = {1, 16, 256};
    for (size_t e = 0; e < 4; e++)
        for (size_t c = 0; c < sizeof(chunk_bytes) / sizeof(chunk_bytes[0]); c++)
            for (size_t a = 0; a < 3; a++)
                for (size_t n = 0; n <= 5000; n += n < 40 ? 1 : 331) {
                    const char *fault = chunk_plan_fault(n, esizes[e], chunk_bytes[c], aligns[a]);
                    ck_assert_msg(!fault, "%zu elements of %zu bytes, chunks of %zu bytes, aligned to %zu: %s", n,
                                  esizes[e], chunk_bytes[c], aligns[a], fault ? fault : "");
                }
}
END_TEST

/* ---- the IPC cache, with a fake CUDA that hands out distinct addresses ---- */

typedef struct {
    int opens, closes, open_now, fail_next;
    char arena[1 << 16];
    size_t used;
} fake_t;

static ddl_status_t fake_open(void *ctx, const ddl_gpu_ref_t *ref, void **mapped)
{
    fake_t *f = ctx;
    if (f->fail_next) {
        f->fail_next = 0;
        return ddl_fail(DDL_ERR_DEVICE, "invalid device context");
    }
    f->opens++;
    f->open_now++;
    *mapped = f->arena + f->used;
    f->used += ref->size % 4096 + 64;
    return DDL_OK;
}

static void fake_close(void *ctx, void *mapped)
{
    fake_t *f = ctx;
    (void)mapped;
    f->closes++;
    f->open_now--;
}

static ddl_gpu_ref_t ref_of(uint64_t id, uint64_t base, uint64_t size, uint64_t offset)
{
    ddl_gpu_ref_t r;
    memset(&r, 0, sizeof(r));
    r.buffer_id = id;
    r.base = base;
    r.size = size;
    r.offset = offset;
    return r;
}

START_TEST(test_ipc_cache_opens_once)
{
    fake_t f = {0};
    ddl_ipc_ops_t ops = {fake_open, fake_close, &f};
    ddl_ipc_cache_t c;
    ddl_ipc_cache_init(&c, &ops);
    void *a, *b, *d;
    ddl_gpu_ref_t r = ref_of(7, 0x10000, 1024, 0);
    ck_assert_int_eq(ddl_ipc_cache_map(&c, 2, &r, &a), DDL_OK);
    /* Another buffer in the same allocation: the same mapping, offset applied. */
    ddl_gpu_ref_t r2 = ref_of(7, 0x10000, 1024, 100);
    ck_assert_int_eq(ddl_ipc_cache_map(&c, 2, &r2, &b), DDL_OK);
    ck_assert_ptr_eq((char *)a + 100, b);
    ck_assert_int_eq(f.opens, 1);
    /* The same allocation id from another owner is another allocation. */
    ck_assert_int_eq(ddl_ipc_cache_map(&c, 4, &r, &d), DDL_OK);
    ck_assert_int_eq(f.opens, 2);
    ck_assert_ptr_ne(a, d);
    ddl_ipc_cache_clear(&c);
    ck_assert_int_eq(f.open_now, 0);
}
END_TEST

START_TEST(test_ipc_cache_reused_address_closes_old)
{
    fake_t f = {0};
    ddl_ipc_ops_t ops = {fake_open, fake_close, &f};
    ddl_ipc_cache_t c;
    ddl_ipc_cache_init(&c, &ops);
    void *p;
    ddl_gpu_ref_t old = ref_of(1, 0x100000, 4096, 0), other = ref_of(2, 0x200000, 4096, 0);
    ck_assert_int_eq(ddl_ipc_cache_map(&c, 0, &old, &p), DDL_OK);
    ck_assert_int_eq(ddl_ipc_cache_map(&c, 0, &other, &p), DDL_OK);
    /* The owner freed allocation 1; a new one (id 3) overlaps its addresses. */
    ddl_gpu_ref_t fresh = ref_of(3, 0x100800, 8192, 16);
    ck_assert_int_eq(ddl_ipc_cache_map(&c, 0, &fresh, &p), DDL_OK);
    ck_assert_int_eq(f.closes, 1);
    ck_assert_int_eq(f.open_now, 2);
    /* Allocation 2 is still mapped: no new open. */
    ck_assert_int_eq(ddl_ipc_cache_map(&c, 0, &other, &p), DDL_OK);
    ck_assert_int_eq(f.opens, 3);
    /* Another owner's allocation at the same address does not evict owner 0's. */
    ddl_gpu_ref_t elsewhere = ref_of(9, 0x100800, 8192, 0);
    ck_assert_int_eq(ddl_ipc_cache_map(&c, 1, &elsewhere, &p), DDL_OK);
    ck_assert_int_eq(f.closes, 1);
    ddl_ipc_cache_clear(&c);
    ck_assert_int_eq(f.open_now, 0);
}
END_TEST

START_TEST(test_ipc_cache_bounded_lru)
{
    fake_t f = {0};
    ddl_ipc_ops_t ops = {fake_open, fake_close, &f};
    ddl_ipc_cache_t c;
    ddl_ipc_cache_init(&c, &ops);
    void *p;
    for (uint64_t i = 0; i < DDL_IPC_CACHE_MAX; i++) {
        ddl_gpu_ref_t r = ref_of(100 + i, 0x1000000 * (i + 1), 256, 0);
        ck_assert_int_eq(ddl_ipc_cache_map(&c, 0, &r, &p), DDL_OK);
    }
    /* Touch the first one, so the second is the least recently used. */
    ddl_gpu_ref_t first = ref_of(100, 0x1000000, 256, 0);
    ck_assert_int_eq(ddl_ipc_cache_map(&c, 0, &first, &p), DDL_OK);
    ddl_gpu_ref_t extra = ref_of(999, 0x7000000000, 256, 0);
    ck_assert_int_eq(ddl_ipc_cache_map(&c, 0, &extra, &p), DDL_OK);
    ck_assert_int_eq(f.open_now, DDL_IPC_CACHE_MAX);
    ck_assert_int_eq(f.closes, 1);
    int opens = f.opens;
    ck_assert_int_eq(ddl_ipc_cache_map(&c, 0, &first, &p), DDL_OK); /* still cached */
    ck_assert_int_eq(f.opens, opens);
    ddl_gpu_ref_t second = ref_of(101, 0x2000000, 256, 0);
    ck_assert_int_eq(ddl_ipc_cache_map(&c, 0, &second, &p), DDL_OK); /* was evicted */
    ck_assert_int_eq(f.opens, opens + 1);
    ddl_ipc_cache_clear(&c);
    ck_assert_int_eq(f.open_now, 0);
}
END_TEST

START_TEST(test_ipc_cache_errors)
{
    fake_t f = {0};
    ddl_ipc_ops_t ops = {fake_open, fake_close, &f};
    ddl_ipc_cache_t c;
    ddl_ipc_cache_init(&c, &ops);
    void *p = NULL;
    f.fail_next = 1;
    ddl_gpu_ref_t r = ref_of(5, 0x5000, 512, 0);
    ck_assert_int_eq(ddl_ipc_cache_map(&c, 3, &r, &p), DDL_ERR_INVALID_ARG);
    ck_assert_ptr_nonnull(strstr(ddl_last_error(), "local rank 3"));
    ck_assert_ptr_nonnull(strstr(ddl_last_error(), "invalid device context"));
    ck_assert_int_eq(c.n, 0);
    /* An offset outside the allocation is refused before anything is opened. */
    ddl_gpu_ref_t bad = ref_of(6, 0x9000, 512, 512);
    ck_assert_int_eq(ddl_ipc_cache_map(&c, 3, &bad, &p), DDL_ERR_INVALID_ARG);
    ck_assert_int_eq(f.opens, 0);
}
END_TEST

START_TEST(test_classify_host_pointers)
{
    /* The decision table: only a successful query saying "device" is device. */
    ck_assert_int_eq(ddl_gpu_kind_is_device(1, DDL_CUDA_MEM_DEVICE), 1);
    ck_assert_int_eq(ddl_gpu_kind_is_device(0, DDL_CUDA_MEM_DEVICE), 0);
    ck_assert_int_eq(ddl_gpu_kind_is_device(1, DDL_CUDA_MEM_HOST), 0);
    ck_assert_int_eq(ddl_gpu_kind_is_device(1, DDL_CUDA_MEM_MANAGED), 0);
    ck_assert_int_eq(ddl_gpu_kind_is_device(1, DDL_CUDA_MEM_UNREGISTERED), 0);
    /* Real host pointers, with or without CUDA, with or without a device. */
    int on_stack = 0;
    static int in_data;
    void *on_heap = malloc(1 << 20);
    ck_assert_int_eq(ddl_gpu_is_device(&on_stack), 0);
    ck_assert_int_eq(ddl_gpu_is_device(&in_data), 0);
    ck_assert_int_eq(ddl_gpu_is_device(on_heap), 0);
    ck_assert_int_eq(ddl_gpu_is_device(NULL), 0);
    free(on_heap);
    /* No device: a reason is given. */
    char why[256] = "";
    if (ddl_gpu_devices(why, sizeof(why)) == 0)
        ck_assert_int_gt((int)strlen(why), 10);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("gpu");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_chunks_cover_whole_elements);
    tcase_add_test(tc, test_ipc_cache_opens_once);
    tcase_add_test(tc, test_ipc_cache_reused_address_closes_old);
    tcase_add_test(tc, test_ipc_cache_bounded_lru);
    tcase_add_test(tc, test_ipc_cache_errors);
    tcase_add_test(tc, test_classify_host_pointers);
    suite_add_tcase(s, tc);
    return ddl_unit_run(s);
}
