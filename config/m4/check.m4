# SPDX-License-Identifier: Apache-2.0
# DDL_CHECK_CHECK: the check unit-test framework, for make check's unit tests
# only: a production build does without it (make check then runs the rest).
AC_DEFUN([DDL_CHECK_CHECK], [
  PKG_CHECK_MODULES([CHECK], [check >= 0.11],
    [ddl_have_check=yes
     CHECK_SUMMARY="yes (`$PKG_CONFIG --modversion check`)"],
    [ddl_have_check=no
     CHECK_SUMMARY="no: make check skips the unit tests (apt-get install check)"
     AC_MSG_WARN([check >= 0.11 not found: make check will skip the unit tests (apt-get install check)])])
  AM_CONDITIONAL([HAVE_CHECK], [test "x$ddl_have_check" = xyes])
])
