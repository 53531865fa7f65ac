// Descriptor passing on a topic's Unix stream socket (wire version 2): the publisher's HELLO carries the
// sealed segments as SCM_RIGHTS, which Node's sockets can neither send nor receive. Pure C++ (no
// Node-API); every function returns 0 or an errno value.
#pragma once

#include <cstddef>

namespace hs::ipc {

// Most descriptors one frame may carry; a frame with more is refused (EPROTO) and all of them closed.
constexpr std::size_t kMaxPassedDescriptors = 4;

// One non-blocking sendmsg (MSG_DONTWAIT | MSG_NOSIGNAL) of `length` bytes on the connected socket
// `socket`, with `fdCount` descriptors as SCM_RIGHTS attached to its first byte. `*sent` receives the bytes
// the kernel took (the caller writes any rest normally; the descriptors went with the first byte).
// EAGAIN when the socket's buffer has no room at all (nothing was sent).
int SendWithDescriptors(int socket, const void* data, std::size_t length, const int* fds, std::size_t fdCount, std::size_t* sent);

// Connects to the Unix stream socket `path` and reads exactly `length` bytes (the peer's first frame)
// and the descriptors that arrived with them (recvmsg, MSG_CMSG_CLOEXEC), within `timeoutMs` in all;
// never reads past `length`. Blocks: call it off the JS thread. On success `*socketOut` is the connected
// socket (blocking mode; the caller hands it to its event loop) and `fds[0..*fdCount)` the descriptors.
// ENOENT / ECONNREFUSED when nobody listens, ETIMEDOUT when the frame did not come in time (or the
// backlog stayed full), ECONNRESET when the peer closed before a whole frame, EPROTO for more than
// kMaxPassedDescriptors descriptors, truncated ancillary data or descriptors after the first read. On
// failure nothing stays open.
int ConnectAndReceive(const char* path, int timeoutMs, void* data, std::size_t length, int* socketOut, int* fds, std::size_t* fdCount);

}  // namespace hs::ipc
