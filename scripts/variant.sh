#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Sourced by the scripts that build the project a second time with other
# configure flags (sanitize.sh, test-cuda-emu.sh): the main tree is configured
# in place, so a variant builds in a copy of it.
#   variant_tree DIR: DIR emptied, then the tracked and new source files copied
#     into it (no build outputs, no other variant's directory), and autoreconf.
variant_tree() {
    local dir=$1
    rm -rf "$dir" && mkdir -p "$dir" || return 1
    git ls-files -co --exclude-standard | grep -v '^build-[a-z]*/' | tar -T - -cf - | tar -xf - -C "$dir" || return 1
    (cd "$dir" && autoreconf -fi > /dev/null 2>&1) || { echo "$(basename "$0"): autoreconf failed in $dir"; return 1; }
}
