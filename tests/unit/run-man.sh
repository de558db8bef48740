#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The man pages say what the programs do: every option a tool's --help lists
# is in its page, every variable ddl-info lists is in ddl-lanes(7), every
# plugstack argument of the sample configuration is in spank_ddl(8), and every
# page that was built renders without a warning from man.
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
man=$top_srcdir/man
fails=0 checked=0
fail() { echo "FAIL: $*"; fails=1; }
# "*--name*" or "*-x*" in the scdoc source: the option is documented.
documented() { grep -q -- "\*$2\*" "$1"; }
for tool in ddl-info ddl-helper ddl-bench ddl-topo ddl-tune ddlrun ddl-plot ddl-trace-merge ddl-gpu-bench; do
    page=$man/$tool.1.scd
    [ -f "$page" ] || { fail "$tool has no page ($page)"; continue; }
    [ -x "$top_builddir/$tool" ] || continue # ddl-gpu-bench without CUDA
    opts=$(timeout 5 "$top_builddir/$tool" --help 2>&1 | grep -oE '(^|[ ,|[])--?[A-Za-z][A-Za-z_-]*' |
        sed 's/^[ ,|[]*//' | sort -u)
    for o in $opts; do
        documented "$page" "$o" || fail "$tool --help lists $o, which $tool.1 does not describe"
        checked=$((checked + 1))
    done
done
if [ -x "$top_builddir/ddl-info" ]; then
    for v in $("$top_builddir/ddl-info" | sed -n 's/^  \(DDL_[A-Z_]*\) .*/\1/p'); do
        documented "$man/ddl-lanes.7.scd" "$v" || fail "ddl-info lists $v, which ddl-lanes.7 does not describe"
        checked=$((checked + 1))
    done
    # The values a variable takes (the settings table's bounds, as ddl-info
    # prints them) are in the first line of its entry, and "same on every
    # rank" where the ranks must agree.
    while read -r v range; do
        grep -q -- "^\*$v\* (.*$range" "$man/ddl-lanes.7.scd" ||
            fail "ddl-lanes.7 does not give $v's values as ddl-info does: $range"
        checked=$((checked + 1))
    done < <("$top_builddir/ddl-info" | sed -n 's/^  \(DDL_[A-Z_]*\) .* (\([0-9]* to [0-9]*\|at least [0-9]*\)).*/\1 \2/p')
    # An enumerated setting's values are its rows (ddl-info's Algorithms,
    # made from core/*.def): the first line of its entry lists them all, and
    # no other.  The MPI path's forms, a tuning band's names, are in the
    # selection guide.
    for pair in allreduce:DDL_ALGO lane:DDL_LANE_ALGO gpu:DDL_GPU_TRANSPORT; do
        scope=${pair%%:*} v=${pair#*:}
        rows=$("$top_builddir/ddl-info" | sed -n "s|^  $scope  *\([a-z0-9/]*\) .*|\1|p" | sort | xargs)
        listed=$(sed -n "s/^\*$v\* (\([^;)]*\).*/\1/p" "$man/ddl-lanes.7.scd" | sed 's/ or /, /' | tr ',' '\n' |
            tr -d ' ' | sort | xargs)
        [ -n "$rows" ] && [ "$rows" = "$listed" ] ||
            fail "ddl-lanes.7 lists $v's values as '$listed'; its rows (ddl-info) are '$rows'"
        checked=$((checked + 1))
    done
    for form in $("$top_builddir/ddl-info" | sed -n 's|^  form  *\(mpi/[a-z]*\) .*|\1|p'); do
        grep -q -- "$form" "$top_srcdir/docs/selection.md" || fail "docs/selection.md does not describe $form"
        checked=$((checked + 1))
    done
    for v in $("$top_builddir/ddl-info" | sed -n 's/^  \(DDL_[A-Z_]*\) .*(same on every rank).*/\1/p'); do
        grep -q -- "^\*$v\* (.*same on every rank" "$man/ddl-lanes.7.scd" ||
            fail "ddl-lanes.7 does not say that $v must be the same on every rank, as ddl-info does"
        checked=$((checked + 1))
    done
fi
for a in $(sed -n 's/^#   \([a-z_]*\)=.*/\1/p' "$top_srcdir/etc/plugstack.conf.d/ddl.conf.in" | sort -u); do
    grep -q -- "^\*$a\*=" "$man/spank_ddl.8.scd" || fail "the plugstack argument $a= is not in spank_ddl.8"
    checked=$((checked + 1))
done
# Every function of the public headers has a section-3 entry (an alias of
# libddl(3), installed) and libddl(3) describes it.
for f in $(cat "$top_srcdir/include/ddl.h" "$top_srcdir/include/ddl/status.h" |
        sed -nE 's/^[A-Za-z_ ]*[ *(](ddl_[a-z0-9_]+)\)? ?\(.*/\1/p' | sort -u); do
    checked=$((checked + 1))
    grep -qx '\.so man3/libddl\.3' "$man/$f.3" 2> /dev/null || { fail "$f has no man page ($man/$f.3)"; continue; }
    grep -q "man/$f\.3" "$top_srcdir/Makefile.am" || fail "man/$f.3 is not installed (MAN_ALIASES in Makefile.am)"
    documented "$man/libddl.3.scd" "$f" || fail "libddl.3 does not describe $f"
done
# The built pages name real paths, not the placeholders of their sources, and
# refer only to pages that exist (Slurm has no plugstack.conf(5): spank(8)).
for page in "$top_builddir"/man/*.[1378]; do
    [ -f "$page" ] && ! grep -q '^\.so ' "$page" || continue
    checked=$((checked + 1))
    left=$(grep -oE '@[A-Z]+@|\b(sysconfdir|datadir|plugindir|bindir)\b' "$page" | sort -u | tr '\n' ' ')
    [ -z "$left" ] || fail "$(basename "$page") shows placeholders instead of paths: $left"
    ! grep -q 'plugstack\.\\&conf\\fR(5)\|plugstack.conf\\fR(5)' "$page" || fail "$(basename "$page") refers to plugstack.conf(5)"
done
# One rail formula: the code's (spank/options.c), in both pages that state it.
for page in spank_ddl.8 ddl-lanes.7; do
    checked=$((checked + 1))
    grep -q '(_k_ _G_ + _g_) mod _R_' "$man/$page.scd" || fail "$page does not give the rails as (k G + g) mod R"
done
# The built pages (with scdoc) render, and man has nothing to say about them.
if command -v man > /dev/null; then
    for page in "$top_builddir"/man/*.[1378]; do
        [ -f "$page" ] && ! grep -q '^\.so ' "$page" || continue
        warn=$(MANWIDTH=80 man --warnings -l "$page" 2>&1 > /dev/null)
        [ -z "$warn" ] || fail "$(basename "$page") renders with warnings: $(head -2 <<< "$warn")"
        checked=$((checked + 1))
    done
fi
[ $checked -gt 40 ] || fail "only $checked things checked: are the tools built?"
[ $fails -eq 0 ] && echo "PASS: $checked options, variables, plugstack arguments and pages agree with the man pages"
exit $fails
