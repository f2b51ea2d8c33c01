#!/bin/sh
# Optional: builds ns-3 from Debian's source package with the upstream "optimized" profile
# (-O3 -march=native, NS_LOG and NS_ASSERT compiled out; Debian's libns3 is "release" with
# --enable-logs), only the modules the benchmark needs, and links benches/build/ns3-dumbbell-opt
# against it. Needs deb-src lines for Debian main (apt-get source ns3), cmake, ninja-build, g++.
# Takes ~15-30 min on 2 cores. Usage: benches/ns3/build-optimized.sh [work-dir]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out="$here/../build"
work=${1:-$out/ns3-src}
mkdir -p "$out" "$work"
cd "$work"
if [ ! -d src ]; then
    # needs a deb-src entry for Debian main in /etc/apt/sources.list.d
    apt-get source --download-only ns3
    dpkg-source -x ns3_*.dsc src
fi
cd src/ns-3.*
if [ ! -d build/lib ]; then
./ns3 configure --build-profile=optimized --disable-examples --disable-tests \
    --disable-python-bindings --disable-mpi \
    --enable-modules="core;network;internet;point-to-point;applications;traffic-control"
cmake --build cmake-cache -j "${JOBS:-$(nproc)}"   # ./ns3 build caps jobs at nproc-1
fi
lib=$(pwd)/build/lib
inc=$(pwd)/build/include
v=$(cat VERSION)
libs=""
for m in core network internet point-to-point applications traffic-control bridge stats; do
    # upstream names libns3.37-<m>-optimized.so; Debian's soversion patch libns3-<m>-optimized.so
    for name in "ns3${v#3}-$m-optimized" "ns3-$m-optimized"; do
        if [ -e "$lib/lib$name.so" ]; then libs="$libs -l$name"; fi
    done
done
${CXX:-g++} -O3 -march=native -std=c++17 -DNS3_VERSION_STR="\"$v\"" -DNS3_BUILD_STR="\"optimized\"" -I"$inc" -o "$out/ns3-dumbbell-opt" \
    "$here/dumbbell.cc" -L"$lib" -Wl,-rpath,"$lib" $libs
echo "$v optimized" > "$out/ns3-opt-version"
echo "$out/ns3-dumbbell-opt" >&2
