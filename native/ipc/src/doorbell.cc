#include "doorbell.h"

#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace hs::ipc {
namespace {

constexpr int kOpenFlags = O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW;

int CheckedFifo(int fd) {
  struct stat info;
  if (fstat(fd, &info) != 0) return errno;
  if (!S_ISFIFO(info.st_mode) || info.st_uid != geteuid() || (info.st_mode & 077) != 0) return EPERM;
  return 0;
}

}  // namespace

int CreateDoorbell(const char* path, int* fd) {
  if (mkfifo(path, 0600) != 0) return errno;
  int opened = open(path, kOpenFlags);
  if (opened < 0) {
    int code = errno;
    unlink(path);
    return code;
  }
  *fd = opened;
  return 0;
}

int OpenDoorbell(const char* path, int* fd) {
  int opened = open(path, kOpenFlags);
  if (opened < 0) return errno == ELOOP ? EPERM : errno;
  int code = CheckedFifo(opened);
  if (code != 0) {
    close(opened);
    return code;
  }
  *fd = opened;
  return 0;
}

int RingDoorbell(int fd) {
  const char one = 1;
  for (;;) {
    if (write(fd, &one, 1) == 1) return 0;
    if (errno == EINTR) continue;
    return errno == EAGAIN ? 0 : errno;
  }
}

long DrainDoorbell(int fd) {
  char bytes[64];
  long total = 0;
  for (;;) {
    ssize_t n = read(fd, bytes, sizeof bytes);
    if (n > 0) {
      total += n;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN) return -errno;
    return total;
  }
}

}  // namespace hs::ipc
