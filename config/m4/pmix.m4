# SPDX-License-Identifier: Apache-2.0
# DDL_CHECK_PMIX: optional PMIx client, for the job-wide lane map at init.
AC_DEFUN([DDL_CHECK_PMIX], [
  AC_ARG_WITH([pmix], [AS_HELP_STRING([--with-pmix], [use PMIx for bootstrap (default: if found)])],
    [], [with_pmix=check])
  ddl_have_pmix=no
  AS_IF([test "x$with_pmix" != xno], [
    PKG_CHECK_MODULES([PMIX], [pmix], [ddl_have_pmix=yes], [
      AS_IF([test "x$with_pmix" = xyes], [AC_MSG_ERROR([--with-pmix given but PMIx not found: install libpmix-dev])])])
  ])
  AS_IF([test "x$ddl_have_pmix" = xyes], [
    AC_DEFINE([DDL_HAVE_PMIX], [1], [PMIx client available])
    PMIX_SUMMARY="yes (`$PKG_CONFIG --modversion pmix`)"],
    [PMIX_SUMMARY="no (bootstrap derives the lane map from MPI)"])
  AM_CONDITIONAL([HAVE_PMIX], [test "x$ddl_have_pmix" = xyes])
])
