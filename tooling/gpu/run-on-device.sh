#!/usr/bin/env bash
# Runs the packed GPU suites on a CUDA machine without Node (see src/pack.mjs). Writes logs to $OUT
# (or ./gpu-out). Usage:
#   bash tooling/gpu/run-on-device.sh [<mode>] [--only <suite>[,<suite>...]] [--sanitize <tool>[,<tool>...]]
# Modes: tests (the suites), sanitize (the suites under compute-sanitizer memcheck, racecheck, synccheck and
# initcheck), pipeline (the image-pipeline and scan-to-volume examples on host and cuda, outputs compared byte
# for byte), bench (the GPU benchmark), all (those four); and soak (`pnpm soak`'s report on the CUDA backend,
# not part of all: its counts come from the HS_SOAK_* variables, tooling/reliability/README.md).
# --only limits the suites (suite names after the mode do too); --sanitize picks the sanitizer tools, and
# makes `tests` run the suites under them instead of plainly. The suite and tool names are src/gpu-suites.mjs's
# (the list pnpm pack:gpu and pnpm test:gpu read); an unknown one stops the run with the valid names.
set -uo pipefail
cd "$(dirname "$0")/../.."
unpack_node() { xz -dc .gpu/node.xz > /tmp/node && chmod +x /tmp/node; }
# The arguments are checked first, with a node on PATH where there is one, else with the packed one.
parse_node=node
if ! command -v node >/dev/null 2>&1; then unpack_node || exit 1; parse_node=/tmp/node; unpacked=1; fi
parsed="$("$parse_node" tooling/gpu/src/gpu-suites.mjs device-args -- "$@")" || exit 2
help=0
eval "$parsed"
if [[ "$help" == 1 ]]; then exit 0; fi
out="${OUT:-gpu-out}"
mkdir -p "$out"
if [[ -z "${unpacked:-}" ]]; then unpack_node || exit 1; fi
export PATH=/tmp:$PATH
# Bundles that include the loader itself find the addon here, unless the caller names another (the prebuilt
# from a packed @hs/native-linux-x64-gnu, for example).
export HS_CUDA_NATIVE_PATH="${HS_CUDA_NATIVE_PATH:-$PWD/.gpu/bundles/node_modules/@hs/cuda-native/build/hs_cuda.node}"
export HS_IPC_NATIVE_PATH="${HS_IPC_NATIVE_PATH:-$PWD/.gpu/bundles/node_modules/@hs/ipc/build/hs_ipc.node}"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/device.txt"
status=0
if [[ ${#only[@]} -eq 0 ]]; then mapfile -t only < <(node tooling/gpu/src/gpu-suites.mjs names); fi
suites=()
for name in "${only[@]}"; do suites+=(".gpu/bundles/$name.test.mjs"); done
# `tests --sanitize ...` runs the suites under the tools instead of plainly; `all` runs both.
plain=0 sanitized=0
case "$mode" in
  tests) if [[ "$sanitize_given" == 1 ]]; then sanitized=1; else plain=1; fi ;;
  sanitize) sanitized=1 ;;
  all) plain=1 sanitized=1 ;;
esac

run_suites() {
  local log="$1" limit="$2"; shift 2
  for suite in "${suites[@]}"; do
    echo "### $(basename "$suite")" >>"$log"
    timeout "$limit" "$@" node --test-reporter=tap "$suite" >>"$log" 2>&1 || { status=1; echo "### exit $? $(basename "$suite")" >>"$log"; }
  done
  grep -E "^# (tests|pass|fail|skipped)|ERROR SUMMARY|RACECHECK SUMMARY|^### |^not ok" "$log"
}

if [[ "$plain" == 1 ]]; then
  echo "== suites"
  run_suites "$out/tests.log" "${SUITE_TIMEOUT:-120}"
fi
if [[ "$sanitized" == 1 ]]; then
  for tool in "${tools[@]}"; do
    # initcheck runs with its defaults, which report reads of memory nothing wrote and leave the
    # unused-allocation report (--track-unused-memory, a flag) off: pools are sized for their capacity
    # and a test run uses part of them. INITCHECK_OPTIONS adds options.
    extra=()
    if [[ "$tool" == initcheck ]]; then extra=(${INITCHECK_OPTIONS:-}); fi
    echo "== compute-sanitizer --tool $tool ${extra[*]}"
    # A callback thread waiting for the JS thread deadlocks under the sanitizer's API serialization: host
    # functions run queued. Suites whose device memory is written by another process (CUDA IPC) skip under
    # initcheck (HS_GPU_SANITIZER_TOOL), which tracks writes per process and would report every imported
    # byte as uninitialized. Set for the sanitized runs only, so pipeline and bench in `all` run plainly.
    run_suites "$out/sanitize-$tool.log" "${SANITIZE_TIMEOUT:-150}" env HS_CUDA_HOST_FUNCTIONS=queued HS_GPU_SANITIZER=1 HS_GPU_SANITIZER_TOOL="$tool" \
      compute-sanitizer --tool "$tool" "${extra[@]}" --error-exitcode 3 --print-limit 20
  done
fi
if [[ "$mode" == soak ]]; then
  echo "== soak (cuda backend)"
  HS_SOAK_BACKEND=cuda MALLOC_MMAP_THRESHOLD_=131072 node --expose-gc .gpu/bundles/soak-cli.mjs >"$out/soak.log" 2>&1 || status=1
  cat "$out/soak.log"
fi
if [[ "$mode" == pipeline || "$mode" == all ]]; then
  # Each example runs on host and on cuda; its output files must be byte-identical.
  compare_runs() {
    local name="$1" pattern="$2"; shift 2
    echo "== $name: host vs cuda"
    rm -rf "/tmp/hs-$name-host" "/tmp/hs-$name-cuda"
    node ".gpu/bundles/$name.mjs" --backend host --out "/tmp/hs-$name-host" "$@" >"$out/$name-host.txt" 2>&1 || status=1
    node ".gpu/bundles/$name.mjs" --backend cuda --out "/tmp/hs-$name-cuda" "$@" >"$out/$name-cuda.txt" 2>&1 || status=1
    tail -n 4 "$out/$name-host.txt" "$out/$name-cuda.txt"
    (cd "/tmp/hs-$name-host" && sha256sum $pattern) >"$out/$name-host.sha256"
    (cd "/tmp/hs-$name-cuda" && sha256sum $pattern) >"$out/$name-cuda.sha256"
    if [[ -s "$out/$name-host.sha256" ]] && cmp -s "$out/$name-host.sha256" "$out/$name-cuda.sha256"; then
      echo "$name: $(wc -l <"$out/$name-cuda.sha256") output files identical on host and cuda"
    else
      echo "$name: outputs differ or missing"; status=1
    fi
  }
  compare_runs image-pipeline '*.png' --frames 8
  compare_runs scan-to-volume '*.nvdb *.png'
fi
if [[ "$mode" == bench || "$mode" == all ]]; then
  echo "== bench"
  node .gpu/bundles/bench-gpu.mjs 2>&1 | tee "$out/bench.txt" || status=1
fi
exit $status
