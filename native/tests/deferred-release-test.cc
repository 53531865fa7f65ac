// deferred-release.cc bookkeeping without a device: the release thread starts on first use, runs every
// queued release (the CUDA calls fail harmlessly without a driver), Pending() returns to 0, Stop() drains
// and is idempotent, and pushes from several threads are all counted and run. Plain asserts; run under
// ASan/UBSan/LSan (and a data race would show in TSan builds) by native-tests.mjs.
#undef NDEBUG
#include <cassert>
#include <cstdio>
#include <thread>
#include <vector>

#include "deferred-release.h"

namespace {

void StopWithoutUse() {
  hs::DeferredRelease release;
  assert(release.Pending() == 0);
  release.Stop();
  release.Stop();
  assert(release.Pending() == 0);
}

void DrainsOnStop() {
  hs::DeferredRelease release;
  for (int i = 0; i < 100; i++) release.Push(static_cast<hs::ReleaseKind>(i % 3), nullptr, nullptr);
  release.Stop();
  assert(release.Pending() == 0);
  release.Stop();
}

void ConcurrentPushes() {
  hs::DeferredRelease release;
  std::vector<std::thread> pushers;
  for (int t = 0; t < 4; t++) {
    pushers.emplace_back([&release] {
      for (int i = 0; i < 250; i++) release.Push(hs::ReleaseKind::PinnedFree, nullptr, nullptr);
    });
  }
  for (auto& p : pushers) p.join();
  release.Stop();
  assert(release.Pending() == 0);
}

void DestructorStops() {
  auto* release = new hs::DeferredRelease();
  release->Push(hs::ReleaseKind::DeviceFree, nullptr, nullptr);
  delete release;  // joins the thread after running the release; LSan and ASan check nothing is left
}

}  // namespace

int main() {
  StopWithoutUse();
  DrainsOnStop();
  ConcurrentPushes();
  DestructorStops();
  std::printf("deferred-release: all checks passed\n");
  return 0;
}
