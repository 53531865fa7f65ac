// Peer identity for hs topic sockets: pure C++ (no Node-API), linkable into a sanitizer test.
#pragma once

#include <cstdint>

namespace hs::ipc {

struct PeerCredentials {
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
  std::int32_t pid = 0;
};

// The credentials the kernel recorded for the other end of the connected Unix socket `fd`
// (SO_PEERCRED). Returns 0 or an errno value (ENOTSUP off Linux, EBADF/ENOTSOCK for a bad fd).
int QueryPeerCredentials(int fd, PeerCredentials* out);

// True when a process with this id exists (kill(pid, 0) succeeds or fails with EPERM). False for
// pid <= 0, which would address a process group.
bool ProcessAlive(std::int32_t pid);

}  // namespace hs::ipc
