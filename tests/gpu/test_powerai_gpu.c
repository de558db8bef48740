/* SPDX-License-Identifier: Apache-2.0 */
/* PowerAI DDL 1.x on device memory: ddl_malloc gives device memory of the
 * process's GPU with the padding zeroed, and ddl_allreduce (2 and 4 arguments)
 * sums device buffers in place.  Checked against sums computed here.  Prints
 * "PowerAI GPU: N ranks, F failures". */
#include "config.h"

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include <ddl.hpp>

#include "half.h"

int main(void)
{
    int failures = 0, rank, size;
    if (ddl_init("") != DDL_SUCCESS) {
        fprintf(stderr, "FAIL: ddl_init: %s\n", ddl_last_error());
        return 1;
    }
    ddl_rank(&rank);
    ddl_size(&size);
    const size_t n = 100003;
    float *dev = NULL;
    int bytes = ddl_malloc((void **)&dev, 256, n * sizeof(float));
    struct cudaPointerAttributes attr;
    if (bytes != (int)((n * 4 + 255) / 256 * 256) || cudaPointerGetAttributes(&attr, dev) != cudaSuccess ||
        attr.type != cudaMemoryTypeDevice) {
        fprintf(stderr, "FAIL rank %d: ddl_malloc gave %d bytes, not device memory\n", rank, bytes);
        return 1;
    }
    size_t nall = (size_t)bytes / sizeof(float);
    float *host = malloc(nall * sizeof(float));
    cudaMemcpy(host, dev, nall * sizeof(float), cudaMemcpyDeviceToHost);
    for (size_t i = 0; i < nall; i++)
        failures += host[i] != 0; /* all zero, padding included */
    for (size_t i = 0; i < n; i++)
        host[i] = (float)((rank + 1) * (int)(i % 9));
    cudaMemcpy(dev, host, n * sizeof(float), cudaMemcpyHostToDevice);
    if (ddl_allreduce(dev, nall) != DDL_SUCCESS)
        failures++;
    cudaMemcpy(host, dev, nall * sizeof(float), cudaMemcpyDeviceToHost);
    for (size_t i = 0; i < nall; i++)
        failures += host[i] != (i < n ? (float)(size * (size + 1) / 2 * (int)(i % 9)) : 0.0f);
    uint16_t *h = malloc(n * sizeof(uint16_t)), *dh = NULL;
    for (size_t i = 0; i < n; i++)
        h[i] = ddl_f32_to_f16((float)(rank + 1));
    cudaMalloc((void **)&dh, n * sizeof(uint16_t));
    cudaMemcpy(dh, h, n * sizeof(uint16_t), cudaMemcpyHostToDevice);
    if (ddl_allreduce(dh, n, DDL_TYPE_HALF, DDL_OP_SUM) != DDL_SUCCESS)
        failures++;
    cudaMemcpy(h, dh, n * sizeof(uint16_t), cudaMemcpyDeviceToHost);
    for (size_t i = 0; i < n; i++)
        failures += ddl_f16_to_f32(h[i]) != (float)(size * (size + 1) / 2);
    float total = (float)failures;
    ddl_allreduce(&total, 1);
    if (rank == 0)
        printf("PowerAI GPU: %d ranks, %d failures\n", size, (int)total);
    cudaFree(dev);
    cudaFree(dh);
    free(host);
    free(h);
    ddl_finalize();
    return total ? 1 : 0;
}
