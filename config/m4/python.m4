# SPDX-License-Identifier: Apache-2.0
# DDL_CHECK_PYTHON: where make install puts the ddl package.  Automake's
# pythondir is $prefix/lib/pythonX.Y/site-packages, which Debian's python3 does
# not search: there /usr/local takes .../dist-packages (scheme posix_local) and
# /usr lib/python3/dist-packages (deb_system).  Other prefixes keep automake's
# directory (add it to PYTHONPATH).  PYTHON=... chooses the interpreter.
AC_DEFUN([DDL_CHECK_PYTHON], [
AM_PATH_PYTHON([3], , [:])
AM_CONDITIONAL([HAVE_PYTHON], [test "$PYTHON" != :])
AS_IF([test "$PYTHON" != :], [
    ddl_prefix=$prefix
    test "x$ddl_prefix" = xNONE && ddl_prefix=$ac_default_prefix
    ddl_py_subdir=`$PYTHON -c '
import sys, sysconfig
prefix, schemes = sys.argv[[1]], sysconfig.get_scheme_names()
if prefix == "/usr" and "deb_system" in schemes:
    print("lib/python3/dist-packages")
elif prefix == "/usr/local" and "posix_local" in schemes:
    print(sysconfig.get_path("purelib", "posix_local", vars={"base": "/usr"})[[len("/usr/local/"):]])
' "$ddl_prefix" 2>/dev/null`
    AS_IF([test -n "$ddl_py_subdir"], [AC_SUBST([pythondir], ['${prefix}'/$ddl_py_subdir])])
    PYTHON_SUMMARY="$PYTHON, package into $pythondir"
], [PYTHON_SUMMARY="no: the ddl package is not installed"])
])
