#include "ring-control.h"

namespace hs::ipc {
namespace {

std::uint32_t* Word(unsigned char* control, std::uint32_t offset) {
  return reinterpret_cast<std::uint32_t*>(control + offset);
}

}  // namespace

bool CommitRingTail(unsigned char* control, std::uint32_t tail) {
  __atomic_store_n(Word(control, kRingTailOffset), tail, __ATOMIC_SEQ_CST);
  std::uint32_t parked = 1;
  return __atomic_load_n(Word(control, kRingParkedOffset), __ATOMIC_SEQ_CST) == 1 &&
         __atomic_compare_exchange_n(Word(control, kRingParkedOffset), &parked, 0, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

std::uint32_t ParkRingReader(unsigned char* control) {
  __atomic_store_n(Word(control, kRingParkedOffset), 1u, __ATOMIC_SEQ_CST);
  return __atomic_load_n(Word(control, kRingTailOffset), __ATOMIC_SEQ_CST);
}

}  // namespace hs::ipc
