# SPDX-License-Identifier: Apache-2.0
# DDL_CHECK_MPI: Open MPI (or any MPI with a pkg-config file or mpicc --showme).
AC_DEFUN([DDL_CHECK_MPI], [
  PKG_CHECK_MODULES([MPI], [ompi-c], [ddl_mpi_found=yes; DDL_PC_MPI=ompi-c], [
    AC_PATH_PROG([MPICC], [mpicc])
    AS_IF([test -n "$MPICC"], [
      MPI_CFLAGS=`$MPICC --showme:compile 2>/dev/null`
      MPI_LIBS=`$MPICC --showme:link 2>/dev/null`
      ddl_mpi_found=yes], [ddl_mpi_found=no])
  ])
  AS_IF([test "x$ddl_mpi_found" != xyes],
    [AC_MSG_ERROR([MPI not found: install libopenmpi-dev (Debian) or put mpicc on PATH])])
  ddl_save_CFLAGS=$CFLAGS; ddl_save_LIBS=$LIBS
  CFLAGS="$CFLAGS $MPI_CFLAGS"; LIBS="$LIBS $MPI_LIBS"
  AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <mpi.h>]], [[MPI_Init(0, 0);]])], [],
    [AC_MSG_ERROR([cannot link an MPI program with MPI_CFLAGS='$MPI_CFLAGS' MPI_LIBS='$MPI_LIBS'])])
  CFLAGS=$ddl_save_CFLAGS; LIBS=$ddl_save_LIBS
  AC_PATH_PROG([MPIRUN], [mpirun], [mpirun])
  MPI_SUMMARY="yes ($MPI_LIBS)"
  # ddl.pc: MPI by its pkg-config module when there is one (Debian's generic
  # mpi-c first, which follows the system's MPI alternative), else the flags.
  PKG_CHECK_EXISTS([mpi-c], [DDL_PC_MPI=mpi-c])
  AS_IF([test -n "$DDL_PC_MPI"], [DDL_PC_MPI_CFLAGS=; DDL_PC_MPI_LIBS=],
        [DDL_PC_MPI_CFLAGS=$MPI_CFLAGS; DDL_PC_MPI_LIBS=$MPI_LIBS])
  AC_SUBST([DDL_PC_MPI])
  AC_SUBST([DDL_PC_MPI_CFLAGS])
  AC_SUBST([DDL_PC_MPI_LIBS])
  AC_SUBST([MPI_CFLAGS])
  AC_SUBST([MPI_LIBS])
])
