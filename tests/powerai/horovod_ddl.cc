/* SPDX-License-Identifier: Apache-2.0 */
// Exactly the DDL calls of Horovod's DDL backend (horovod/common/ops/
// ddl_operations.cc, built with HOROVOD_GPU_ALLREDUCE=DDL), in one translation
// unit: it must compile with g++ against the installed headers and link with
// -lddl.  Built, not run.
#include <cstdlib>
#include <stdexcept>

#include <ddl.hpp>

static DDL_Type data_type(bool half) { return half ? DDL_TYPE_HALF : DDL_TYPE_FLOAT; }

static void init()
{
    auto ddl_options = std::getenv("DDL_OPTIONS");
    if (ddl_options == nullptr)
        throw std::logic_error("DDL_OPTIONS env variable needs to be set to use DDL.");
    if (ddl_init(ddl_options) != DDL_SUCCESS)
        throw std::logic_error("ddl_init failed.");
}

static void allreduce(void *buffer_data, size_t num_elements, bool half, int reduce_op)
{
    DDL_Op ddlOp = DDL_OP_SUM;
    if (reduce_op == 1)
        ddlOp = DDL_OP_MIN;
    else if (reduce_op == 2)
        ddlOp = DDL_OP_MAX;
    else if (reduce_op == 3)
        ddlOp = DDL_OP_PRODUCT;
    auto ddl_result = ddl_allreduce(buffer_data, (size_t)num_elements, data_type(half), ddlOp);
    if (ddl_result != DDL_SUCCESS)
        throw std::logic_error("ddl_allreduce failed.");
}

int main(int argc, char **)
{
    if (argc > 1) { // never run by the test: it only has to build
        init();
        float x = 1;
        allreduce(&x, 1, false, 0);
        ddl_finalize();
    }
    return 0;
}
