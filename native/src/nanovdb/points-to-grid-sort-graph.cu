// The narrowed radix sort of the device PointsToGrid build (points-to-grid-sort.h): a CUDA graph per workspace
// whose first node reads the key width the map step wrote into the report and sets a switch node's condition,
// so the sort runs only the 8-bit passes the cloud's keys need (4 for a 32-bit key, not 8) without the host ever
// reading the width back. The graphs are cached by (device, workspace address, point count): made on a
// workspace's second build and launched on every later one. The first build of a workspace sorts all 64 bits: a
// workspace seen once (a bounded build's point count changes with every scan, and the count is part of the layout)
// does not pay for a graph it may never launch again.
#include <cub/device/device_radix_sort.cuh>

#include <cstdint>
#include <mutex>

#include "kernel-registry.h"
#include "nanovdb/points-to-grid-sort.h"
#include "nanovdb/points-to-grid-workspace.h"

namespace hs::nanovdb {
namespace {

constexpr int kSortGraphSlots = 8;

__global__ void SelectSortBranch(cudaGraphConditionalHandle branch, const uint32_t* report) {
  cudaGraphSetConditional(branch, static_cast<unsigned>(SortBranchOf(report[kKeyBits], report[kInvalidCount])));
}

enum class SlotState { kSeen, kReady, kFailed };

struct Slot {
  int device;
  const uint8_t* base;
  uint32_t n;
  uint64_t used;  // the cache's clock at the last use; 0: empty
  SlotState state;
  SortGraph graph;  // kReady only
};

struct Cache {
  std::mutex lock;
  Slot slots[kSortGraphSlots];
  uint64_t clock;
};

Cache& TheCache() {
  static Cache cache{};
  return cache;
}

// Captures branch `b`'s SortPairs on `capture` (keys starting in `keys`, indices in `order`) into a new graph;
// `endsAlternate` tells whether CUB left the output in the second buffer of each pair.
cudaError_t CaptureBranch(const Workspace& w, uint32_t n, int b, bool swapped, cudaGraph_t into, cudaStream_t capture, bool* endsAlternate) {
  uint32_t* v0 = reinterpret_cast<uint32_t*>(w.valsB);
  cub::DoubleBuffer<uint64_t> keys(swapped ? w.keysA : w.keysB, swapped ? w.keysB : w.keysA);
  cub::DoubleBuffer<uint32_t> order(swapped ? v0 + n : v0, swapped ? v0 : v0 + n);
  size_t bytes = 0;
  int endBit = kSortBranchBits * (b + 1);
  cudaError_t e = cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys, order, n, 0, endBit, capture);
  if (e != cudaSuccess) return e;
  if (bytes > w.cubBytes) return cudaErrorInvalidValue;
  e = into == nullptr ? cudaStreamBeginCapture(capture, cudaStreamCaptureModeThreadLocal)
                      : cudaStreamBeginCaptureToGraph(capture, into, nullptr, nullptr, 0, cudaStreamCaptureModeThreadLocal);
  if (e != cudaSuccess) return e;
  cudaError_t sorted = cub::DeviceRadixSort::SortPairs(w.cub, bytes, keys, order, n, 0, endBit, capture);
  cudaGraph_t captured = nullptr;
  e = cudaStreamEndCapture(capture, &captured);
  if (into == nullptr && captured != nullptr) cudaGraphDestroy(captured);  // a probe: only the buffer parity is wanted
  *endsAlternate = keys.selector != 0;
  if (sorted != cudaSuccess) return sorted;
  return keys.selector != order.selector ? cudaErrorInvalidValue : e;
}

// The graph of workspace w (n points) on the current device, instantiated; its branches' start buffers in *graph.
cudaError_t MakeSortGraph(const Workspace& w, uint32_t n, SortGraph* graph) {
  cudaStream_t capture = nullptr;
  cudaGraph_t top = nullptr;
  cudaError_t e = cudaStreamCreateWithFlags(&capture, cudaStreamNonBlocking);
  if (e == cudaSuccess) e = cudaGraphCreate(&top, 0);
  cudaGraphConditionalHandle branch{};
  if (e == cudaSuccess) e = cudaGraphConditionalHandleCreate(&branch, top, 0, 0);
  cudaGraphNode_t select = nullptr;
  const uint32_t* report = w.report;
  void* args[] = {&branch, &report};
  if (e == cudaSuccess) {
    cudaKernelNodeParams kernel{};
    kernel.func = reinterpret_cast<void*>(SelectSortBranch);
    kernel.gridDim = dim3(1);
    kernel.blockDim = dim3(1);
    kernel.kernelParams = args;
    e = cudaGraphAddKernelNode(&select, top, nullptr, 0, &kernel);
  }
  cudaGraphNodeParams params{};
  params.type = cudaGraphNodeTypeConditional;
  params.conditional.handle = branch;
  params.conditional.type = cudaGraphCondTypeSwitch;
  params.conditional.size = kSortBranches;
  cudaGraphNode_t sw = nullptr;
  if (e == cudaSuccess) e = cudaGraphAddNode(&sw, top, &select, nullptr, 1, &params);
  uint32_t startAlternate = 0;
  for (int b = 0; b < kSortBranches && e == cudaSuccess; b++) {
    // a probe capture finds where CUB leaves this branch's output; an odd pass count starts in the second buffers
    bool odd = false, ends = false;
    e = CaptureBranch(w, n, b, false, nullptr, capture, &odd);
    if (e == cudaSuccess) e = CaptureBranch(w, n, b, odd, params.conditional.phGraph_out[b], capture, &ends);
    if (e == cudaSuccess && ends != odd) e = cudaErrorInvalidValue;  // the output must land in keysB and valsB's first half
    if (odd) startAlternate |= 1u << b;
  }
  if (e == cudaSuccess) e = cudaGraphInstantiate(&graph->exec, top, 0);
  if (e == cudaSuccess) graph->startAlternate = startAlternate;
  if (top != nullptr) cudaGraphDestroy(top);
  if (capture != nullptr) cudaStreamDestroy(capture);
  return e;
}

}  // namespace

std::unique_lock<std::mutex> LockSortGraphs() { return std::unique_lock<std::mutex>(TheCache().lock); }

const SortGraph* FindSortGraph(const Workspace& w, const uint8_t* base, uint32_t n, cudaStream_t stream, cudaError_t* made) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  int device = -1;
  if (cudaStreamIsCapturing(stream, &status) != cudaSuccess || status != cudaStreamCaptureStatusNone || cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  Cache& cache = TheCache();
  Slot* oldest = &cache.slots[0];
  for (Slot& slot : cache.slots) {
    if (slot.used != 0 && slot.device == device && slot.base == base && slot.n == n) {
      slot.used = ++cache.clock;
      if (slot.state == SlotState::kSeen) {
        slot.graph = SortGraph{nullptr, 0};
        cudaError_t e = MakeSortGraph(w, n, &slot.graph);
        if (made != nullptr) *made = e;
        slot.state = e == cudaSuccess ? SlotState::kReady : SlotState::kFailed;
        if (slot.state == SlotState::kFailed) {
          if (slot.graph.exec != nullptr) cudaGraphExecDestroy(slot.graph.exec);
          cudaGetLastError();  // the failure is answered by the fallback sort, not left for the next launch to report
        }
      }
      return slot.state == SlotState::kReady ? &slot.graph : nullptr;
    }
    if (slot.used < oldest->used) oldest = &slot;
  }
  if (oldest->state == SlotState::kReady) cudaGraphExecDestroy(oldest->graph.exec);  // a launch in flight still completes
  *oldest = Slot{device, base, n, ++cache.clock, SlotState::kSeen, SortGraph{nullptr, 0}};
  return nullptr;
}

void ReleaseSortGraphs() {
  Cache& cache = TheCache();
  std::lock_guard<std::mutex> held(cache.lock);
  for (Slot& slot : cache.slots) {
    if (slot.used != 0 && slot.state == SlotState::kReady) cudaGraphExecDestroy(slot.graph.exec);
    slot = Slot{};
  }
}

}  // namespace hs::nanovdb
