#include "peer-process.h"

#include <cerrno>
#include <signal.h>
#include <sys/socket.h>
#include <sys/types.h>

namespace hs::ipc {

int QueryPeerCredentials(int fd, PeerCredentials* out) {
  if (out == nullptr) return EINVAL;
#if defined(__linux__)
  struct ucred credentials {};
  socklen_t length = sizeof(credentials);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) return errno;
  if (length != sizeof(credentials)) return EPROTO;
  out->uid = credentials.uid;
  out->gid = credentials.gid;
  out->pid = credentials.pid;
  return 0;
#else
  (void)fd;
  return ENOTSUP;
#endif
}

bool ProcessAlive(std::int32_t pid) {
  if (pid <= 0) return false;
  return kill(pid, 0) == 0 || errno == EPERM;
}

}  // namespace hs::ipc
