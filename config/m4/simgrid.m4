# SPDX-License-Identifier: Apache-2.0
# DDL_CHECK_SIMGRID: SimGrid's SMPI (smpicc, smpirun) for ddl-sim (bench/sim).
# Optional: --without-simgrid switches it off; --with-simgrid=DIR looks in
# DIR/bin first.  Without it ddl-sim is not built and its test is skipped.
AC_DEFUN([DDL_CHECK_SIMGRID], [
AC_ARG_WITH([simgrid],
    [AS_HELP_STRING([--with-simgrid@<:@=DIR@:>@], [build ddl-sim with SimGrid's smpicc (default: when found)])],
    [], [with_simgrid=check])
SMPICC=
SMPIRUN=
AS_IF([test "x$with_simgrid" != xno], [
    ddl_sg_path=$PATH
    AS_CASE([$with_simgrid], [yes|check], [], [ddl_sg_path="$with_simgrid/bin:$PATH"])
    AC_PATH_PROG([SMPICC], [smpicc], [], [$ddl_sg_path])
    AC_PATH_PROG([SMPIRUN], [smpirun], [], [$ddl_sg_path])
])
AS_IF([test -n "$SMPICC" && test -n "$SMPIRUN"],
      [SIMGRID_SUMMARY="yes ($SMPICC): ddl-sim"],
      [AS_IF([test "x$with_simgrid" != xno && test "x$with_simgrid" != xcheck],
             [AC_MSG_ERROR([--with-simgrid: smpicc and smpirun not found (apt-get install libsimgrid-dev)])])
       SMPICC=
       SIMGRID_SUMMARY="no: ddl-sim not built (apt-get install libsimgrid-dev)"])
AC_SUBST([SMPICC])
AC_SUBST([SMPIRUN])
AM_CONDITIONAL([HAVE_SIMGRID], [test -n "$SMPICC"])
])
