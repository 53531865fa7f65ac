#!/usr/bin/env bash
# Builds the NanoVDB PointsToGrid timer (main.cu) against NanoVDB headers that are not in this repository:
#   NANOVDB_INCLUDE=<dir holding nanovdb/NanoVDB.h> bash tooling/gpu/nanovdb-compare/build.sh [out]
# e.g. from an OpenVDB checkout: `git archive HEAD nanovdb/nanovdb | tar -x -C /tmp/nvdb`, then
# NANOVDB_INCLUDE=/tmp/nvdb/nanovdb. The binary is static in the CUDA runtime (sm_90, for the H200), so it
# runs on a machine with the driver only; run it beside `pnpm bench:gpu` (same clouds): ./nanovdb-compare 1e6,1e7,1e8
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
: "${NANOVDB_INCLUDE:?set NANOVDB_INCLUDE to the directory that holds nanovdb/NanoVDB.h}"
out="${1:-$here/nanovdb-compare}"
"${NVCC:-nvcc}" -O3 -std=c++17 --extended-lambda --expt-relaxed-constexpr -arch="${CUDA_ARCH:-sm_90}" -cudart static \
  -I"$NANOVDB_INCLUDE" "$here/main.cu" -o "$out"
echo "built $out"
