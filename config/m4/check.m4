# SPDX-License-Identifier: Apache-2.0
# DDL_CHECK_CHECK: the check unit-test framework, required for make check.
AC_DEFUN([DDL_CHECK_CHECK], [
  PKG_CHECK_MODULES([CHECK], [check >= 0.11], [],
    [AC_MSG_ERROR([check >= 0.11 not found: install check (Debian) for the unit tests])])
  CHECK_SUMMARY="yes (`$PKG_CONFIG --modversion check`)"
])
