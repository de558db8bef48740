# DDL_CHECK_CUDA: optional CUDA toolkit (device buffers, CUDA IPC, NCCL lanes).
AC_DEFUN([DDL_CHECK_CUDA], [
  AC_ARG_WITH([cuda], [AS_HELP_STRING([--with-cuda=DIR], [CUDA toolkit (default: /usr/local/cuda if present)])],
    [], [with_cuda=check])
  ddl_have_cuda=no
  AS_CASE([$with_cuda], [no], [], [check|yes], [ddl_cuda_dir=/usr/local/cuda], [ddl_cuda_dir=$with_cuda])
  AS_IF([test "x$with_cuda" != xno], [
    AS_IF([test -r "$ddl_cuda_dir/include/cuda_runtime_api.h"], [
      ddl_have_cuda=yes
      CUDA_CFLAGS="-I$ddl_cuda_dir/include"
      CUDA_LIBS="-L$ddl_cuda_dir/lib64 -lcudart"
    ], [AS_IF([test "x$with_cuda" != xcheck], [AC_MSG_ERROR([--with-cuda given but $ddl_cuda_dir/include/cuda_runtime_api.h not found])])])
  ])
  AC_SUBST([CUDA_CFLAGS])
  AC_SUBST([CUDA_LIBS])
  AS_IF([test "x$ddl_have_cuda" = xyes], [
    AC_DEFINE([DDL_HAVE_CUDA], [1], [CUDA toolkit found at build time])
    CUDA_SUMMARY="found at $ddl_cuda_dir (device buffers are not supported yet: host memory only)"],
    [CUDA_SUMMARY="no (host memory only)"])
  AM_CONDITIONAL([HAVE_CUDA], [test "x$ddl_have_cuda" = xyes])
])
