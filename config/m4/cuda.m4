# SPDX-License-Identifier: Apache-2.0
# DDL_CHECK_CUDA: the optional CUDA toolkit (device buffers, CUDA IPC, device
# kernels, NCCL lanes).  Needs the runtime headers, libcudart_static and nvcc;
# NCCL needs only nccl.h here (libnccl.so.2 is loaded at run time).
AC_DEFUN([DDL_CHECK_CUDA], [
  AC_ARG_WITH([cuda], [AS_HELP_STRING([--with-cuda=DIR], [CUDA toolkit (default: /usr/local/cuda if present)])],
    [], [with_cuda=check])
  AC_ARG_VAR([NVCC_ARCH], [nvcc -gencode flags (default: sm_80 and sm_90 code, compute_90 PTX)])
  ddl_have_cuda=no
  ddl_have_nccl=no
  ddl_cuda_why=
  AS_CASE([$with_cuda], [no], [], [check|yes], [ddl_cuda_dir=/usr/local/cuda], [ddl_cuda_dir=$with_cuda])
  AS_IF([test "x$with_cuda" != xno], [
    AS_IF([test ! -r "$ddl_cuda_dir/include/cuda_runtime_api.h"], [ddl_cuda_why="no $ddl_cuda_dir/include/cuda_runtime_api.h"],
          [test ! -r "$ddl_cuda_dir/lib64/libcudart_static.a"], [ddl_cuda_why="no $ddl_cuda_dir/lib64/libcudart_static.a"],
          [test ! -x "$ddl_cuda_dir/bin/nvcc"], [ddl_cuda_why="no $ddl_cuda_dir/bin/nvcc"],
          [ddl_have_cuda=yes])
    AS_IF([test "x$ddl_have_cuda" = xno && test "x$with_cuda" != xcheck],
          [AC_MSG_ERROR([--with-cuda=$with_cuda: $ddl_cuda_why])])
  ])
  AS_IF([test "x$ddl_have_cuda" = xyes], [
    NVCC="$ddl_cuda_dir/bin/nvcc"
    AS_IF([test -z "$NVCC_ARCH"],
          [NVCC_ARCH="-gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=[[sm_90,compute_90]]"])
    CUDA_CFLAGS="-isystem $ddl_cuda_dir/include"
    # The static runtime: libddl does not need libcudart.so on the library path,
    # and without a driver every CUDA call fails cleanly (host memory only).
    CUDA_LIBS="-L$ddl_cuda_dir/lib64 -lcudart_static -ldl -lrt -lpthread"
    AC_DEFINE([DDL_HAVE_CUDA], [1], [CUDA toolkit found at build time])
    AC_DEFINE_UNQUOTED([DDL_CUDA_LIBDIR], ["$ddl_cuda_dir/lib64"], [where libnccl.so.2 is looked for after the loader's path])
    AS_IF([test -r "$ddl_cuda_dir/include/nccl.h"], [
      ddl_have_nccl=yes
      AC_DEFINE([DDL_HAVE_NCCL], [1], [nccl.h found: NCCL lanes are built])
      NCCL_SUMMARY="yes (libnccl.so.2 is loaded at run time)"],
      [NCCL_SUMMARY="no ($ddl_cuda_dir/include/nccl.h not found)"])
    CUDA_SUMMARY="yes, $ddl_cuda_dir (device buffers, CUDA IPC, kernels for $NVCC_ARCH)"
  ], [
    CUDA_SUMMARY="no${ddl_cuda_why:+ ($ddl_cuda_why)}: host memory only"
    NCCL_SUMMARY="no (needs CUDA)"
  ])
  AC_SUBST([NVCC])
  AC_SUBST([CUDA_CFLAGS])
  AC_SUBST([CUDA_LIBS])
  AM_CONDITIONAL([HAVE_CUDA], [test "x$ddl_have_cuda" = xyes])
])
