#include "fd-passing.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

namespace hs::ipc {

namespace {

long long NowMs() {
  struct timespec now {};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<long long>(now.tv_sec) * 1000 + now.tv_nsec / 1000000;
}

void CloseAll(const int* fds, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) close(fds[i]);
}

// Collects the SCM_RIGHTS descriptors of `message` into fds (closing all of them when they do not fit).
int TakeDescriptors(struct msghdr* message, int* fds, std::size_t* fdCount) {
  int status = (message->msg_flags & MSG_CTRUNC) != 0 ? EPROTO : 0;
  for (struct cmsghdr* c = CMSG_FIRSTHDR(message); c != nullptr; c = CMSG_NXTHDR(message, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    std::size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    const unsigned char* at = CMSG_DATA(c);
    for (std::size_t i = 0; i < n; ++i) {
      int fd;
      std::memcpy(&fd, at + i * sizeof(int), sizeof(int));
      if (*fdCount < kMaxPassedDescriptors) {
        fds[(*fdCount)++] = fd;
      } else {
        close(fd);
        status = EPROTO;
      }
    }
  }
  return status;
}

}  // namespace

int SendWithDescriptors(int socket, const void* data, std::size_t length, const int* fds, std::size_t fdCount, std::size_t* sent) {
  if (data == nullptr || length == 0 || sent == nullptr || fdCount > kMaxPassedDescriptors || (fdCount > 0 && fds == nullptr)) return EINVAL;
  struct iovec io {const_cast<void*>(data), length};
  struct msghdr message {};
  message.msg_iov = &io;
  message.msg_iovlen = 1;
  alignas(struct cmsghdr) unsigned char control[CMSG_SPACE(sizeof(int) * kMaxPassedDescriptors)] = {};
  if (fdCount > 0) {
    message.msg_control = control;
    message.msg_controllen = CMSG_SPACE(sizeof(int) * fdCount);
    struct cmsghdr* c = CMSG_FIRSTHDR(&message);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fdCount);
    std::memcpy(CMSG_DATA(c), fds, sizeof(int) * fdCount);
  }
  ssize_t n;
  do {
    n = sendmsg(socket, &message, MSG_DONTWAIT | MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return errno == EWOULDBLOCK ? EAGAIN : errno;
  *sent = static_cast<std::size_t>(n);
  return 0;
}

int ConnectAndReceive(const char* path, int timeoutMs, void* data, std::size_t length, int* socketOut, int* fds, std::size_t* fdCount) {
  if (path == nullptr || data == nullptr || length == 0 || socketOut == nullptr || fds == nullptr || fdCount == nullptr || timeoutMs <= 0) return EINVAL;
  *fdCount = 0;
  struct sockaddr_un address {};
  address.sun_family = AF_UNIX;
  if (std::strlen(path) >= sizeof(address.sun_path)) return ENAMETOOLONG;
  std::strcpy(address.sun_path, path);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno;
  long long deadline = NowMs() + timeoutMs;
  // A Unix stream connect waits (up to SO_SNDTIMEO) while the listener's backlog is full.
  struct timeval wait {timeoutMs / 1000, static_cast<suseconds_t>((timeoutMs % 1000) * 1000)};
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &wait, sizeof(wait));
  int status = 0;
  while (connect(fd, reinterpret_cast<struct sockaddr*>(&address), sizeof(address)) != 0) {
    if (errno == EINTR) continue;
    status = errno == EAGAIN || errno == EINPROGRESS ? ETIMEDOUT : errno;
    break;
  }
  std::size_t got = 0;
  while (status == 0 && got < length) {
    long long left = deadline - NowMs();
    if (left <= 0) {
      status = ETIMEDOUT;
      break;
    }
    struct pollfd ready {fd, POLLIN, 0};
    int polled = poll(&ready, 1, static_cast<int>(left));
    if (polled < 0) {
      if (errno == EINTR) continue;
      status = errno;
      break;
    }
    if (polled == 0) continue;  // the deadline check above ends it
    struct iovec io {static_cast<unsigned char*>(data) + got, length - got};
    struct msghdr message {};
    message.msg_iov = &io;
    message.msg_iovlen = 1;
    alignas(struct cmsghdr) unsigned char control[CMSG_SPACE(sizeof(int) * kMaxPassedDescriptors)] = {};
    message.msg_control = control;
    message.msg_controllen = sizeof(control);
    ssize_t n = recvmsg(fd, &message, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
      status = errno;
      break;
    }
    std::size_t before = *fdCount;
    int taken = TakeDescriptors(&message, fds, fdCount);
    // Descriptors belong to the frame's first byte: any that arrive later are a peer's trick.
    if (taken == 0 && got > 0 && *fdCount != before) taken = EPROTO;
    if (taken != 0) {
      status = taken;
      break;
    }
    if (n == 0) {
      status = ECONNRESET;
      break;
    }
    got += static_cast<std::size_t>(n);
  }
  if (status != 0) {
    CloseAll(fds, *fdCount);
    *fdCount = 0;
    close(fd);
    return status;
  }
  struct timeval none {0, 0};
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &none, sizeof(none));
  *socketOut = fd;
  return 0;
}

}  // namespace hs::ipc
