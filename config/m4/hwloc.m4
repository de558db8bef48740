# SPDX-License-Identifier: Apache-2.0
# DDL_CHECK_HWLOC: hwloc 2.x, required (the lane plan and ddl-topo use it).
AC_DEFUN([DDL_CHECK_HWLOC], [
  PKG_CHECK_MODULES([HWLOC], [hwloc >= 2.0], [],
    [AC_MSG_ERROR([hwloc >= 2.0 not found: install libhwloc-dev (Debian)])])
  HWLOC_SUMMARY="yes (`$PKG_CONFIG --modversion hwloc`)"
])
