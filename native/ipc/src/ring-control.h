// The control block of one single-producer single-consumer frame ring in a topic mailbox (shared memory):
// three 32-bit counters on separate 64-byte lines. The writer owns `tail`, the reader owns `head`, and
// `parked` is 1 while the reader sleeps on its doorbell. The store-then-load pairs below are sequentially
// consistent, so a reader that parks and a writer that commits never both miss each other (no lost ring).
#pragma once

#include <cstdint>

namespace hs::ipc {

constexpr std::uint32_t kRingTailOffset = 0;
constexpr std::uint32_t kRingHeadOffset = 64;
constexpr std::uint32_t kRingParkedOffset = 128;
constexpr std::uint32_t kRingControlBytes = 192;

// Publishes `tail` (entries before it are written) and reports whether the reader was parked; in that case
// this call un-parks it and the caller must ring its doorbell.
bool CommitRingTail(unsigned char* control, std::uint32_t tail);

// Marks the reader parked and returns the tail it must still drain up to (parking is only safe when the
// returned tail equals the reader's head).
std::uint32_t ParkRingReader(unsigned char* control);

}  // namespace hs::ipc
