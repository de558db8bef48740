# SPDX-License-Identifier: Apache-2.0
# DDL_CHECK_SLURM: optional SPANK headers, for the spank_ddl plugin.
AC_DEFUN([DDL_CHECK_SLURM], [
  AC_ARG_WITH([slurm], [AS_HELP_STRING([--with-slurm], [build the SPANK plugin (default: if spank.h is found)])],
    [], [with_slurm=check])
  ddl_have_slurm=no
  AS_IF([test "x$with_slurm" != xno], [
    AC_CHECK_HEADER([slurm/spank.h], [ddl_have_slurm=yes], [
      AS_IF([test "x$with_slurm" = xyes], [AC_MSG_ERROR([--with-slurm given but slurm/spank.h not found: install libslurm-dev])])],
      [[#include <stdint.h>]])
  ])
  AC_ARG_WITH([slurm-plugindir], [AS_HELP_STRING([--with-slurm-plugindir=DIR], [where Slurm loads plugins from])],
    [SLURM_PLUGINDIR=$withval], [SLURM_PLUGINDIR='${libdir}/slurm'])
  AC_SUBST([SLURM_PLUGINDIR])
  AS_IF([test "x$ddl_have_slurm" = xyes], [SLURM_SUMMARY="yes (plugin into $SLURM_PLUGINDIR)"],
    [SLURM_SUMMARY="no (the SPANK plugin is not built)"])
  AM_CONDITIONAL([HAVE_SLURM], [test "x$ddl_have_slurm" = xyes])
])
