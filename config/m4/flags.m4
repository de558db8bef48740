# SPDX-License-Identifier: Apache-2.0
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
# DDL_KERNEL_FLAGS: what vectorises the reduction kernels, as far as the
# compiler takes it (clang has no -fvect-cost-model).
AC_DEFUN([DDL_KERNEL_FLAGS], [
  DDL_KERNEL_CFLAGS=
  DDL_ADD_CFLAG_IF_OK([-ftree-vectorize], [DDL_KERNEL_CFLAGS])
  DDL_ADD_CFLAG_IF_OK([-fvect-cost-model=dynamic], [DDL_KERNEL_CFLAGS])
  DDL_ADD_CFLAG_IF_OK([-funroll-loops], [DDL_KERNEL_CFLAGS])
  AC_SUBST([DDL_KERNEL_CFLAGS])
])
# DDL_SANITIZERS: --enable-sanitizers (or =address) builds everything with
# AddressSanitizer and UndefinedBehaviorSanitizer, --enable-sanitizers=thread
# with ThreadSanitizer (gcc or clang); any report aborts the program.
AC_DEFUN([DDL_SANITIZERS], [
  AC_ARG_ENABLE([sanitizers],
    [AS_HELP_STRING([--enable-sanitizers@<:@=address|thread@:>@],
      [build with ASan and UBSan, or with TSan (tests abort on the first report)])],
    [], [enable_sanitizers=no])
  SANITIZER_SUMMARY=no
  AS_CASE([$enable_sanitizers],
    [yes|address], [ddl_san="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
                    SANITIZER_SUMMARY="ASan + UBSan"],
    [thread], [ddl_san="-fsanitize=thread -fno-omit-frame-pointer"; SANITIZER_SUMMARY="TSan"],
    [no], [],
    [AC_MSG_ERROR([--enable-sanitizers=$enable_sanitizers: say address (the default) or thread])])
  AS_IF([test "x$SANITIZER_SUMMARY" != xno], [
    ddl_save_CFLAGS=$CFLAGS; ddl_save_LDFLAGS=$LDFLAGS
    CFLAGS="$CFLAGS $ddl_san"; LDFLAGS="$LDFLAGS $ddl_san"
    AC_MSG_CHECKING([whether $CC builds with $ddl_san])
    AC_LINK_IFELSE([AC_LANG_PROGRAM([], [])], [AC_MSG_RESULT([yes])],
      [AC_MSG_RESULT([no]); AC_MSG_ERROR([--enable-sanitizers: $CC cannot build with $ddl_san (install libasan/libubsan or libtsan)])])
    CFLAGS=$ddl_save_CFLAGS; LDFLAGS=$ddl_save_LDFLAGS
    DDL_CFLAGS="$DDL_CFLAGS $ddl_san"
    DDL_LDFLAGS="$DDL_LDFLAGS $ddl_san"
  ])
  AM_CONDITIONAL([SANITIZERS], [test "x$SANITIZER_SUMMARY" != xno])
])
