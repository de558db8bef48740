#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# For a GPU machine that has a driver and the CUDA toolkit's libraries but no
# MPI, no hwloc and no package archive to install them from: build the device
# check's programs here (configure --with-cuda) and bundle them with the Open
# MPI, PMIx and hwloc they run on, so that bench/gpu-check.sh runs there from
# the bundle without building anything.
#     bench/gpu-bundle.sh DIR     (DIR inside the source tree, ignored by git)
# The build lives at a fixed absolute path, $DDL_GPU_TREE (libtool's wrappers
# and the programs' run paths name it); on the GPU machine gpu-check.sh links
# that path to DIR/tree.  Open MPI and PMIx are moved with OPAL_PREFIX and
# PMIX_INSTALL_PREFIX, which gpu-check.sh sets.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:?usage: bench/gpu-bundle.sh DIR}
tree=${DDL_GPU_TREE:-/tmp/ddl-gpu-tree}
multiarch=$(gcc -print-multiarch)
libdir=/usr/lib/$multiarch

echo "== build at $tree (configure --with-cuda --disable-fast-install)"
rm -rf "$tree"
git clone -q "$src" "$tree"
(cd "$tree" && autoreconf -fi && ./configure --with-cuda --disable-fast-install && make -j2 && make -j2 check TESTS=) \
    > "$tree.log" 2>&1 || { tail -20 "$tree.log"; exit 1; }
# Objects, archives and history are not needed to run, and the bundle
# travels; nor is the simulator (SimGrid and its libraries).
find "$tree" \( -name '*.o' -o -name '*.a' \) -delete
rm -rf "$tree/.git" "$tree/autom4te.cache" "$tree/bench/sim/ddl-sim" "$tree/bench/sim/.libs"

echo "== runtime: Open MPI, PMIx, hwloc and what they load"
mkdir -p "$dir"
rm -rf "$dir/tree" "$dir/root"
root=$dir/root
mkdir -p "$root/usr/bin" "$root$libdir" "$root/etc"
cp -a /usr/bin/orterun /usr/bin/orted /usr/bin/ompi_info "$root/usr/bin/"
ln -s orterun "$root/usr/bin/mpirun"
cp -a /etc/openmpi "$root/etc/"
mkdir -p "$root/usr/share"
cp -a /usr/share/openmpi "$root/usr/share/"
cp -a "$libdir/pmix2" "$root$libdir/"
rm -f "$root$libdir/pmix2/lib/libpmix.a"
mkdir -p "$root$libdir/openmpi"
cp -a "$libdir/openmpi/lib" "$root$libdir/openmpi/"
# Components for networks a single GPU machine has not, and for languages the
# check does not use: their libraries are large and would only warn there.
(cd "$root$libdir/openmpi/lib" &&
    rm -rf pkgconfig libmpi_java* libmpi_usempi* libmpi_mpifh* liboshmem* libmca_common_ofi* libmca_common_ucx* libmca_common_verbs* \
        openmpi3/*ucx* openmpi3/*ofi* openmpi3/*psm* openmpi3/*openib* openmpi3/*verbs* openmpi3/*java* openmpi3/*oshmem* \
        openmpi3/mca_atomic_* openmpi3/mca_spml_* openmpi3/mca_sshmem_* openmpi3/mca_memheap_* openmpi3/mca_scoll_*)

# Every shared library those files and the built programs load, except the C
# library's own, which the GPU machine has (newer is fine).  Open MPI's and
# PMIx's own always come from the bundle; any other (zlib, libudev, hwloc)
# goes to root/fallback and is used only where the GPU machine lacks it, so
# that its newer copies stay under the programs already there (torch).
closure() {
    find "$root" "$tree" -type f \( -name '*.so*' -o -perm -u+x \) -print0 |
        xargs -0 file -L | grep -E 'ELF 64-bit' | cut -d: -f1 |
        xargs -r ldd 2> /dev/null | awk '/=> \//{print $3}' | sort -u
}
glibc='/(libc|libm|libdl|libpthread|librt|libresolv|libutil|ld-linux-x86-64)\.so'
mkdir -p "$root/fallback"
closure | grep -v -E "$glibc" | while read -r lib; do
    case $lib in "$tree"/* | "$root"/*) continue ;; esac
    case $(basename "$lib") in libmpi* | libopen-* | libmca_* | libpmix*) to=$root$libdir ;; *) to=$root/fallback ;; esac
    [ -e "$to/$(basename "$lib")" ] || cp -L "$lib" "$to/"
done
missing=$(find "$root" "$tree" -type f -name '*.so*' -print0 | xargs -0 ldd 2> /dev/null | grep 'not found' | sort -u || true)
[ -z "$missing" ] || echo "note: still missing here (not needed by the check): $missing"
mv "$tree" "$dir/tree"
# Read by gpu-check.sh (DDL_GPU_BUNDLE=DIR): the tree back at its path, and the
# runtime found in the bundle before the system's.
cat > "$dir/env.sh" << END
here=\$(cd "\$(dirname "\${BASH_SOURCE[0]}")" && pwd)
DDL_GPU_TREE=$tree
ln -sfn "\$here/tree" "\$DDL_GPU_TREE"
root=\$here/root
find "\$root$libdir" -maxdepth 1 -type l -delete
for lib in "\$root"/fallback/*; do
    ldconfig -p | awk '{print \$1}' | grep -qxF "\${lib##*/}" || ln -sfn "\$lib" "\$root$libdir/"
done
export PATH=\$root/usr/bin:\$PATH
export LD_LIBRARY_PATH=\$root$libdir:\$root$libdir/openmpi/lib:\$root$libdir/pmix2/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}
export OPAL_PREFIX=\$root/usr OPAL_LIBDIR=\$root$libdir/openmpi/lib OPAL_SYSCONFDIR=\$root/etc/openmpi
export OPAL_PKGDATADIR=\$root/usr/share/openmpi PMIX_INSTALL_PREFIX=\$root$libdir/pmix2
# PMIx's components from the bundle too, not from a PMIx the machine has.
export PMIX_MCA_mca_base_component_path=\$root$libdir/pmix2/lib/pmix
# PMIx reads its help texts from where it was built to live: link them there
# where nothing is.
[ -e $libdir/pmix2 ] || ln -s "\$root$libdir/pmix2" $libdir/pmix2
END
ln -sfn "$(cd "$dir" && pwd)/tree" "$tree"
du -sh "$dir"
