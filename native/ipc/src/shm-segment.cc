#include "shm-segment.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <limits>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace hs::ipc {

namespace {

constexpr std::size_t kMaxNameLength = 200;
// Largest size an off_t holds: the bound of a file's size.
constexpr std::size_t kMaxFileSize = static_cast<std::size_t>(std::numeric_limits<off_t>::max());

bool NameCharacter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

int MapDescriptor(int fd, std::size_t byteSize, bool writable, Mapping* out) {
  void* address = mmap(nullptr, byteSize, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);
  if (address == MAP_FAILED) return errno;
  out->address = address;
  out->byteSize = byteSize;
  out->writable = writable;
  return 0;
}

}  // namespace

bool ValidSegmentName(const char* name) {
  if (name == nullptr || name[0] != '/') return false;
  std::size_t length = 0;
  for (const char* p = name + 1; *p != '\0'; ++p) {
    if (!NameCharacter(*p) || ++length > kMaxNameLength) return false;
  }
  // "." and ".." are not segment names.
  return length > 0 && std::strcmp(name, "/.") != 0 && std::strcmp(name, "/..") != 0;
}

int CreateSegment(const char* name, std::size_t byteSize, Mapping* out) {
  if (!ValidSegmentName(name) || byteSize == 0 || byteSize > kMaxFileSize || out == nullptr) return EINVAL;
  int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, S_IRUSR | S_IWUSR);
  if (fd < 0) return errno;
  int status = 0;
  // The umask can only remove bits; fchmod makes the mode exactly 0600 either way.
  if (fchmod(fd, S_IRUSR | S_IWUSR) != 0) {
    status = errno;
  } else {
    // Allocate every page now (ftruncate alone leaves the file sparse): a full /dev/shm is ENOSPC here,
    // not a SIGBUS at the first write into a page it cannot back. posix_fallocate returns the error.
    do {
      status = posix_fallocate(fd, 0, static_cast<off_t>(byteSize));
    } while (status == EINTR);
    if (status == 0) status = MapDescriptor(fd, byteSize, true, out);
  }
  close(fd);
  if (status != 0) shm_unlink(name);
  return status;
}

int OpenSegment(const char* name, std::size_t byteSize, bool writable, Mapping* out, std::size_t* fileByteSize) {
  if (!ValidSegmentName(name) || byteSize == 0 || byteSize > kMaxFileSize || out == nullptr || fileByteSize == nullptr) return EINVAL;
  // A read-only opener asks for no write access at all: neither the descriptor nor the pages can write.
  int fd = shm_open(name, (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC, 0);
  if (fd < 0) return errno;
  struct stat info {};
  int status = 0;
  if (fstat(fd, &info) != 0) {
    status = errno;
  } else if (info.st_uid != geteuid() || (info.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    status = EACCES;
  } else {
    *fileByteSize = info.st_size > 0 ? static_cast<std::size_t>(info.st_size) : 0;
    // Never map past the end of the file (touching those pages is SIGBUS); a larger file is mapped only
    // up to the size its creator announced.
    status = *fileByteSize < byteSize ? EINVAL : MapDescriptor(fd, byteSize, writable, out);
  }
  close(fd);
  return status;
}

int UnlinkSegment(const char* name) {
  if (!ValidSegmentName(name)) return EINVAL;
  return shm_unlink(name) == 0 ? 0 : errno;
}

int UnmapSegment(Mapping* mapping) {
  if (mapping == nullptr || mapping->address == nullptr) return 0;
  int status = munmap(mapping->address, mapping->byteSize) == 0 ? 0 : errno;
  mapping->address = nullptr;
  mapping->byteSize = 0;
  mapping->writable = false;
  return status;
}

}  // namespace hs::ipc
