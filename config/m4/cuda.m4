# SPDX-License-Identifier: Apache-2.0
# DDL_CHECK_CUDA: the optional CUDA toolkit (device buffers, CUDA IPC, device
# kernels, NCCL lanes).  Needs the runtime headers, libcudart_static and nvcc;
# NCCL needs only nccl.h here (libnccl.so.2 is loaded at run time).
# --enable-cuda-emulation builds the same CUDA code against the emulated
# runtime and NCCL of tests/cuda-emu (headers only: no nvcc, no GPU), so that
# the device path runs in the tests of a machine without a GPU.
AC_DEFUN([DDL_CHECK_CUDA], [
  AC_ARG_WITH([cuda], [AS_HELP_STRING([--with-cuda=DIR], [CUDA toolkit (default: /usr/local/cuda if present)])],
    [], [with_cuda=check])
  AC_ARG_ENABLE([cuda-emulation], [AS_HELP_STRING([--enable-cuda-emulation],
    [for tests: run the CUDA code on emulated devices and NCCL (tests/cuda-emu), with the toolkit's headers only])],
    [], [enable_cuda_emulation=no])
  AS_IF([test "x$enable_cuda_emulation" = xyes && test "x$with_cuda" = xno],
        [AC_MSG_ERROR([--enable-cuda-emulation needs the CUDA headers: drop --without-cuda])])
  AC_ARG_VAR([NVCC_ARCH], [nvcc -gencode flags (default: sm_80 and sm_90 code, compute_90 PTX)])
  ddl_have_cuda=no
  ddl_have_nccl=no
  ddl_cuda_why=
  AS_CASE([$with_cuda], [no], [], [check|yes], [ddl_cuda_dir=/usr/local/cuda], [ddl_cuda_dir=$with_cuda])
  AS_IF([test "x$with_cuda" != xno], [
    AS_IF([test ! -r "$ddl_cuda_dir/include/cuda_runtime_api.h"], [ddl_cuda_why="no $ddl_cuda_dir/include/cuda_runtime_api.h"],
          [test "x$enable_cuda_emulation" = xyes && test ! -r "$ddl_cuda_dir/include/nccl.h"],
            [ddl_cuda_why="no $ddl_cuda_dir/include/nccl.h (the emulation emulates NCCL too)"],
          [test "x$enable_cuda_emulation" = xyes], [ddl_have_cuda=yes],
          [test ! -r "$ddl_cuda_dir/lib64/libcudart_static.a"], [ddl_cuda_why="no $ddl_cuda_dir/lib64/libcudart_static.a"],
          [test ! -x "$ddl_cuda_dir/bin/nvcc"], [ddl_cuda_why="no $ddl_cuda_dir/bin/nvcc"],
          [ddl_have_cuda=yes])
    AS_IF([test "x$ddl_have_cuda" = xno && (test "x$with_cuda" != xcheck || test "x$enable_cuda_emulation" = xyes)],
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
    ddl_nccl_library=libnccl.so.2
    AS_IF([test "x$enable_cuda_emulation" = xyes], [
      # The emulator is a library of the build tree that libddl links; libddl
      # finds its NCCL by its name, already loaded.
      CUDA_LIBS='$(top_builddir)/tests/cuda-emu/libddl-cuda-emu.la'
      ddl_nccl_library=libddl-cuda-emu.so
      AC_DEFINE([DDL_CUDA_EMULATION], [1], [the CUDA code runs on the emulated devices of tests/cuda-emu])])
    AC_DEFINE_UNQUOTED([DDL_NCCL_LIBRARY], ["$ddl_nccl_library"], [the NCCL library loaded at run time])
    AS_IF([test -r "$ddl_cuda_dir/include/nccl.h"], [
      ddl_have_nccl=yes
      AC_DEFINE([DDL_HAVE_NCCL], [1], [nccl.h found: NCCL lanes are built])
      NCCL_SUMMARY="yes (libnccl.so.2 is loaded at run time)"],
      [NCCL_SUMMARY="no ($ddl_cuda_dir/include/nccl.h not found)"])
    CUDA_SUMMARY="yes, $ddl_cuda_dir (device buffers, CUDA IPC, kernels for $NVCC_ARCH)"
    AS_IF([test "x$enable_cuda_emulation" = xyes],
          [CUDA_SUMMARY="emulated (tests/cuda-emu, headers of $ddl_cuda_dir): for tests, not for use"
           NCCL_SUMMARY="emulated (tests/cuda-emu)"])
  ], [
    CUDA_SUMMARY="no${ddl_cuda_why:+ ($ddl_cuda_why)}: host memory only"
    NCCL_SUMMARY="no (needs CUDA)"
  ])
  AC_SUBST([NVCC])
  AC_SUBST([CUDA_CFLAGS])
  AC_SUBST([CUDA_LIBS])
  AM_CONDITIONAL([HAVE_CUDA], [test "x$ddl_have_cuda" = xyes])
  AM_CONDITIONAL([CUDA_EMULATION], [test "x$ddl_have_cuda" = xyes && test "x$enable_cuda_emulation" = xyes])
])
