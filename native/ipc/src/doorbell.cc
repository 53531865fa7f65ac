#include "doorbell.h"

#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace hs::ipc {

int CreateDoorbellPipe(int* read_end, int* write_end) {
  int ends[2];
  if (pipe2(ends, O_NONBLOCK | O_CLOEXEC) != 0) return errno;
  *read_end = ends[0];
  *write_end = ends[1];
  return 0;
}

int AdoptDoorbellEnd(int received, bool read_end, int* fd) {
  struct stat info;
  if (fstat(received, &info) != 0) return errno;
  if (!S_ISFIFO(info.st_mode)) return EPERM;
  int flags = fcntl(received, F_GETFL);
  if (flags < 0) return errno;
  if ((flags & O_ACCMODE) != (read_end ? O_RDONLY : O_WRONLY)) return EPERM;
  if ((flags & O_NONBLOCK) == 0 && fcntl(received, F_SETFL, flags | O_NONBLOCK) != 0) return errno;
  int copy = fcntl(received, F_DUPFD_CLOEXEC, 0);
  if (copy < 0) return errno;
  *fd = copy;
  return 0;
}

int RingDoorbell(int fd) {
  const char one = 1;
  for (;;) {
    if (write(fd, &one, 1) == 1) return 0;
    if (errno == EINTR) continue;
    return errno == EAGAIN || errno == EPIPE ? 0 : errno;
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
    if (n == 0) return total > 0 ? total : -EPIPE;
    if (errno == EINTR) continue;
    if (errno != EAGAIN) return -errno;
    return total;
  }
}

}  // namespace hs::ipc
