#!/bin/sh
# Installs what the ns-3 half of the speed benchmark needs (Debian/Ubuntu), then builds it.
set -eu
apt-get update
DEBIAN_FRONTEND=noninteractive apt-get install -y libns3-dev g++ pkg-config
"$(dirname "$0")/ns3/build.sh"
