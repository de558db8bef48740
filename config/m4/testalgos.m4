# SPDX-License-Identifier: Apache-2.0
# --enable-test-algos: libddl, its tools and ddl-sim also get the lane
# algorithms of tests/algo (one file and one row each, read at the end of
# runtime/core/inter_algos.def), to test that a new algorithm needs nothing
# else.  Never in a release build.
AC_DEFUN([DDL_CHECK_TEST_ALGOS], [
  AC_ARG_ENABLE([test-algos], [AS_HELP_STRING([--enable-test-algos],
                [also build the test-only lane algorithms of tests/algo (default: no)])],
                [], [enable_test_algos=no])
  AM_CONDITIONAL([TEST_ALGOS], [test "x$enable_test_algos" = xyes])
])
