/* SPDX-License-Identifier: Apache-2.0 */
/* The PowerAI DDL compatible API under this header's earlier name: see
 * <ddl.hpp> (and <ddl_mpi.hpp> for ddl_allreduce_mpi). */
#ifndef DDL_POWERAI_H
#define DDL_POWERAI_H

#include <ddl.hpp>

#endif
