#!/bin/sh
# Builds benches/build/ns3-dumbbell from benches/ns3/dumbbell.cc against the installed ns-3
# (Debian: apt-get install -y libns3-dev g++ pkg-config). Flags come from the ns-3 .pc files.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out="$here/../build"
mkdir -p "$out"
modules="core network internet point-to-point applications traffic-control"

# Debian ships ns3-<module>.pc (libns3-<module>.so); upstream installs ns3.XX-<module>-default.pc.
prefix=""
for p in "ns3-" ; do pkg-config --exists "${p}core" 2>/dev/null && prefix="$p"; done
if [ -z "$prefix" ]; then
    up=$(pkg-config --list-all 2>/dev/null | awk '{print $1}' | grep -E '^ns3\.[0-9]+-core(-default|-optimized|-debug)?$' | sort -V | tail -1 || true)
    if [ -n "$up" ]; then
        prefix=$(echo "$up" | sed 's/core.*//'); suffix=$(echo "$up" | sed 's/.*core//')
    fi
fi
if [ -z "$prefix" ]; then
    echo "ns-3 not found via pkg-config. Install it: apt-get install -y libns3-dev g++ pkg-config" >&2
    echo "(or run benches/setup.sh)" >&2
    exit 2
fi
pcs=""
for m in $modules; do pcs="$pcs ${prefix}${m}${suffix:-}"; done
version=$(pkg-config --modversion ${prefix}core${suffix:-})
# Debian's .pc files carry a stray "-I/usr;" token: drop anything with a ';'.
cflags=$(pkg-config --cflags $pcs | tr ' ' '\n' | grep -v ';' | grep -v python | grep -v libxml2 | tr '\n' ' ')
# Keep only -L/-l flags: the shared ns-3 libraries carry their own dependencies, and Debian's
# .pc files name absolute .so paths of -dev packages (gsl, ...) that need not be installed.
libs=$(pkg-config --libs $pcs | tr ' ' '\n' | grep -E '^-[Ll]' | tr '\n' ' ')
CXX=${CXX:-g++}
echo "building ns-3 $version dumbbell with $CXX" >&2
$CXX -O2 -std=c++17 -DNS3_VERSION_STR="\"$version\"" -DNS3_BUILD_STR="\"system\"" $cflags -o "$out/ns3-dumbbell" "$here/dumbbell.cc" $libs
echo "$version" > "$out/ns3-version"
echo "$out/ns3-dumbbell" >&2
