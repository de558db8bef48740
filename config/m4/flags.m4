# DDL_HARDENING_FLAGS / DDL_WARNING_FLAGS: compiler flags added when the compiler takes them.
AC_DEFUN([DDL_ADD_CFLAG_IF_OK], [
  ddl_save_CFLAGS=$CFLAGS
  CFLAGS="$CFLAGS -Werror $1"
  AC_MSG_CHECKING([whether $CC accepts $1])
  AC_COMPILE_IFELSE([AC_LANG_PROGRAM([], [])], [AC_MSG_RESULT([yes]); $2="$$2 $1"], [AC_MSG_RESULT([no])])
  CFLAGS=$ddl_save_CFLAGS
])
AC_DEFUN([DDL_HARDENING_FLAGS], [
  DDL_ADD_CFLAG_IF_OK([-fstack-protector-strong], [DDL_CFLAGS])
  AS_CASE([" $CFLAGS "], [*" -O0 "*], [], [DDL_CFLAGS="$DDL_CFLAGS -D_FORTIFY_SOURCE=2"])
  DDL_LDFLAGS="-Wl,-z,relro -Wl,-z,now"
  AC_SUBST([DDL_LDFLAGS])
])
AC_DEFUN([DDL_WARNING_FLAGS], [
  DDL_CFLAGS="$DDL_CFLAGS -std=c11 -Wall -Wextra -Wshadow -Wpointer-arith -Wstrict-prototypes"
  AC_SUBST([DDL_CFLAGS])
])
