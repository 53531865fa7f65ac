#!/usr/bin/env bash
# Runs the packed GPU suites on a CUDA machine without Node (see src/pack.mjs). Writes logs to $OUT
# (or ./gpu-out). Modes: tests (the suites), sanitize (the suites under compute-sanitizer memcheck,
# racecheck and synccheck), bench (the GPU benchmark), all.
set -uo pipefail
cd "$(dirname "$0")/../.."
mode="${1:-all}"
out="${OUT:-gpu-out}"
mkdir -p "$out"
xz -dc .gpu/node.xz > /tmp/node && chmod +x /tmp/node
export PATH=/tmp:$PATH
# Bundles that include the loader itself find the addon here.
export HS_CUDA_NATIVE_PATH="$PWD/.gpu/bundles/node_modules/@hs/cuda-native/build/hs_cuda.node"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/device.txt"
status=0
suites=(.gpu/bundles/*.test.mjs)

run_suites() {
  local log="$1"; shift
  for suite in "${suites[@]}"; do
    echo "### $(basename "$suite")" >>"$log"
    "$@" node --test-reporter=spec "$suite" >>"$log" 2>&1 || status=1
  done
  grep -E "^ℹ (tests|pass|fail|skipped)|ERROR SUMMARY|^### " "$log"
}

if [[ "$mode" == tests || "$mode" == all ]]; then
  echo "== suites"
  run_suites "$out/tests.log"
fi
if [[ "$mode" == sanitize || "$mode" == all ]]; then
  for tool in memcheck racecheck synccheck; do
    echo "== compute-sanitizer --tool $tool"
    run_suites "$out/sanitize-$tool.log" compute-sanitizer --tool "$tool" --error-exitcode 3 --print-limit 20
  done
fi
if [[ "$mode" == bench || "$mode" == all ]]; then
  echo "== bench"
  node .gpu/bundles/bench-gpu.mjs 2>&1 | tee "$out/bench.txt" || status=1
fi
exit $status
