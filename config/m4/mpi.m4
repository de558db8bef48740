# SPDX-License-Identifier: Apache-2.0
# DDL_CHECK_MPI: the MPI to build against.
#   --with-mpi=openmpi|mpich   that MPI, by its pkg-config module
#   MPICC=WRAPPER              the MPI that wrapper compiles with (mpicc.mpich,
#                              a site's Cray or vendor mpicc)
#   neither                    Open MPI by pkg-config, else the mpicc on PATH
# MPI_CFLAGS and MPI_LIBS come from that MPI only: a build given MPICH never
# links Open MPI because both are installed.
AC_DEFUN([DDL_CHECK_MPI], [
  AC_ARG_WITH([mpi],
    [AS_HELP_STRING([--with-mpi=openmpi|mpich],
      [the MPI to build against (default: the one MPICC wraps when MPICC is given, else Open MPI, else the mpicc on PATH)])],
    [], [with_mpi=auto])
  AC_ARG_VAR([MPICC], [an MPI compiler wrapper: build against the MPI it wraps])
  AC_ARG_VAR([MPIRUN], [the launcher of the MPI built against, for the tests])
  DDL_PC_MPI=
  ddl_mpi_name=
  AS_CASE([$with_mpi],
    [openmpi], [PKG_CHECK_MODULES([MPI], [ompi-c], [DDL_PC_MPI=ompi-c; ddl_mpi_name=openmpi],
                  [AC_MSG_ERROR([--with-mpi=openmpi: no pkg-config module ompi-c; install libopenmpi-dev (Debian) or give MPICC=its mpicc])])],
    [mpich], [PKG_CHECK_MODULES([MPI], [mpich], [DDL_PC_MPI=mpich; ddl_mpi_name=mpich],
                  [AC_MSG_ERROR([--with-mpi=mpich: no pkg-config module mpich; install libmpich-dev (Debian) or give MPICC=its mpicc])])],
    [auto], [
      AS_IF([test -n "$MPICC"], [DDL_MPI_FROM_WRAPPER],
        [PKG_CHECK_MODULES([MPI], [ompi-c], [DDL_PC_MPI=ompi-c; ddl_mpi_name=openmpi], [
           AC_PATH_PROG([MPICC], [mpicc])
           AS_IF([test -n "$MPICC"], [DDL_MPI_FROM_WRAPPER],
             [AC_MSG_ERROR([MPI not found: install libopenmpi-dev or libmpich-dev (Debian), or give MPICC=the wrapper of your MPI])])])])],
    [AC_MSG_ERROR([--with-mpi=$with_mpi: give openmpi or mpich, or MPICC=the wrapper of another MPI])])
  ddl_save_CFLAGS=$CFLAGS; ddl_save_LIBS=$LIBS
  CFLAGS="$CFLAGS $MPI_CFLAGS"; LIBS="$LIBS $MPI_LIBS"
  AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <mpi.h>]], [[MPI_Init(0, 0);]])], [],
    [AC_MSG_ERROR([cannot link an MPI program with MPI_CFLAGS='$MPI_CFLAGS' MPI_LIBS='$MPI_LIBS'])])
  # Which MPI the header is: the tests launch it with its own launcher.
  AS_IF([test -z "$ddl_mpi_name"],
    [AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#include <mpi.h>
#ifndef OPEN_MPI
#error not Open MPI
#endif]], [])], [ddl_mpi_name=openmpi],
      [AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#include <mpi.h>
#ifndef MPICH
#error not MPICH
#endif]], [])], [ddl_mpi_name=mpich], [ddl_mpi_name=other])])])
  CFLAGS=$ddl_save_CFLAGS; LIBS=$ddl_save_LIBS
  AS_CASE([$ddl_mpi_name],
    [mpich], [AC_PATH_PROGS([MPIRUN], [mpiexec.mpich mpiexec mpirun], [mpiexec])],
    [openmpi], [AC_PATH_PROGS([MPIRUN], [mpirun.openmpi mpirun], [mpirun])],
    [AC_PATH_PROG([MPIRUN], [mpirun], [mpirun])])
  DDL_MPI_NAME=$ddl_mpi_name
  AC_SUBST([DDL_MPI_NAME])
  AM_CONDITIONAL([MPI_IS_OPENMPI], [test "x$ddl_mpi_name" = xopenmpi])
  MPI_SUMMARY="$ddl_mpi_name ($MPI_LIBS), launched by $MPIRUN"
  # ddl.pc: MPI by the pkg-config module built against, else its flags.
  AS_IF([test -n "$DDL_PC_MPI"], [DDL_PC_MPI_CFLAGS=; DDL_PC_MPI_LIBS=],
        [DDL_PC_MPI_CFLAGS=$MPI_CFLAGS; DDL_PC_MPI_LIBS=$MPI_LIBS])
  AC_SUBST([DDL_PC_MPI])
  AC_SUBST([DDL_PC_MPI_CFLAGS])
  AC_SUBST([DDL_PC_MPI_LIBS])
  AC_SUBST([MPI_CFLAGS])
  AC_SUBST([MPI_LIBS])
])

# DDL_MPI_FROM_WRAPPER: MPI_CFLAGS and MPI_LIBS from what $MPICC adds to a
# compile: Open MPI's wrapper says it with --showme, MPICH's (and Cray's,
# Intel's) with -show; the compiler itself, its first word, is left out.
AC_DEFUN([DDL_MPI_FROM_WRAPPER], [
  AC_MSG_CHECKING([what $MPICC adds to a compile])
  ddl_show=`$MPICC --showme 2>/dev/null` || ddl_show=
  AS_IF([test -z "$ddl_show"], [ddl_show=`$MPICC -show 2>/dev/null` || ddl_show=])
  AS_IF([test -z "$ddl_show"], [AC_MSG_ERROR([$MPICC answers neither --showme nor -show: give MPI_CFLAGS and MPI_LIBS with --with-mpi])])
  MPI_CFLAGS=; MPI_LIBS=
  for ddl_word in $ddl_show; do
    AS_CASE([$ddl_word],
      [-I*|-D*], [MPI_CFLAGS="$MPI_CFLAGS $ddl_word"],
      [-pthread], [MPI_CFLAGS="$MPI_CFLAGS $ddl_word"; MPI_LIBS="$MPI_LIBS $ddl_word"],
      [-L*|-l*|-Wl,*], [MPI_LIBS="$MPI_LIBS $ddl_word"])
  done
  AC_MSG_RESULT([$MPI_CFLAGS $MPI_LIBS])
])
