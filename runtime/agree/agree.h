/* SPDX-License-Identifier: Apache-2.0 */
/* The ranks' agreement on numbers: every rank ends with the same values, the
 * elementwise maximum of every rank's, or the same error naming a rank that
 * never came.  Online selection and DDL_EXPLORE agree on their timings with
 * it. */
#ifndef DDL_AGREE_H
#define DDL_AGREE_H

#include <mpi.h>

#include "ddl.h"

/* The most numbers one agreement carries. */
#define DDL_AGREE_MAX 16

struct ddl_comm;

/* v = the elementwise maximum of every rank of comm's v (n numbers, 1 to
 * DDL_AGREE_MAX).  Each rank sends its numbers to comm's rank 0, which
 * answers with the maxima.  Point to point, not an MPI collective, so that a
 * rank that never comes is known: rank 0 waits DDL_TIMEOUT, then answers with
 * that rank's number instead, and every rank's DDL_ERR_TIMED_OUT names it; the
 * others wait a little longer than rank 0 for its answer. */
ddl_status_t ddl_agree_max(struct ddl_comm *c, MPI_Comm comm, double *v, int n);

#endif
