#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Set up a fresh Debian 12 machine and build: installs the Debian packages the
# project needs (as root, with apt-get), then configures and builds in place.
# Idempotent: packages already installed are not fetched again.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential autoconf automake libtool pkg-config
          openmpi-bin libopenmpi-dev mpich libmpich-dev libhwloc-dev hwloc libpmix-dev check
          slurm-wlm slurmctld slurmd munge libslurm-dev slurm-wlm-plugins-dev
          iproute2 python3 python3-numpy python3-torch gnuplot-nox
          clang libclang-rt-14-dev scdoc man-db python3-venv rpm python3-jsonschema
          debhelper dh-python lintian libsimgrid-dev)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "setup: missing Debian packages: ${missing[*]}; run as root or install them" >&2
        exit 1
    fi
    echo "setup: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${missing[@]}" > /dev/null
fi

if [ ! -x configure ] || [ configure.ac -nt configure ] || [ Makefile.am -nt configure ]; then
    autoreconf -fi > /dev/null
fi
if [ ! -f Makefile ] || [ configure -nt Makefile ]; then
    # The system python3 (where python3-torch is) gets the ddl package.
    ./configure PYTHON=/usr/bin/python3 ${DDL_CONFIGURE_FLAGS:-} > /dev/null
fi
make -j"$(nproc)" > /dev/null
echo "setup: built $(./ddl-info | head -1)"
