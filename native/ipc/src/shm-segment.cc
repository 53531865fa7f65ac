#include "shm-segment.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <limits>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
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

namespace {

#ifndef MFD_CLOEXEC
#define MFD_CLOEXEC 0x0001U
#endif
#ifndef MFD_ALLOW_SEALING
#define MFD_ALLOW_SEALING 0x0002U
#endif
#ifndef F_ADD_SEALS
#define F_ADD_SEALS 1033
#define F_GET_SEALS 1034
#endif
#ifndef F_SEAL_SEAL
#define F_SEAL_SEAL 0x0001
#define F_SEAL_SHRINK 0x0002
#define F_SEAL_GROW 0x0004
#endif

// memfd_create through syscall(2): the prebuilt addon links an old glibc's symbols only.
int MemfdCreate(const char* label, unsigned flags) {
#ifdef SYS_memfd_create
  return static_cast<int>(syscall(SYS_memfd_create, label, flags));
#else
  errno = ENOSYS;
  return -1;
#endif
}

}  // namespace

namespace {

// Sizes and seals a new memfd, then allocates its pages. Until the seals are on, a same-uid process can reopen
// it through /proc/<pid>/fd and resize it, so the size is checked after sealing (then nobody can change it)
// and the pages are allocated only then (within the sealed size, which F_SEAL_GROW allows): a shrink in that
// window can neither leave a smaller file under the mapping nor a sparse one. EAGAIN when it was resized.
int SizeAndSeal(int fd, std::size_t byteSize) {
  if (ftruncate(fd, static_cast<off_t>(byteSize)) != 0) return errno;
  if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) return errno;
  struct stat info;
  if (fstat(fd, &info) != 0) return errno;
  if (static_cast<std::size_t>(info.st_size) != byteSize) return EAGAIN;
  int status = 0;
  do {
    status = posix_fallocate(fd, 0, static_cast<off_t>(byteSize));
  } while (status == EINTR);
  return status;
}

}  // namespace

int CreateSealedSegment(const char* label, std::size_t byteSize, Mapping* out, int* fd) {
  if (label == nullptr || byteSize == 0 || byteSize > kMaxFileSize || out == nullptr || fd == nullptr) return EINVAL;
  // A memfd resized by another process before its seals went on is thrown away; a few tries, then EAGAIN.
  int status = EAGAIN;
  for (int attempt = 0; attempt < 4 && status == EAGAIN; attempt++) {
    int made = MemfdCreate(label, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (made < 0) return errno;
    status = SizeAndSeal(made, byteSize);
    if (status == 0) status = MapDescriptor(made, byteSize, true, out);
    if (status == 0) {
      *fd = made;
      return 0;
    }
    close(made);
  }
  return status;
}

int SegmentSeals(int fd, unsigned* seals) {
  if (seals == nullptr) return EINVAL;
  int got = fcntl(fd, F_GET_SEALS);
  if (got < 0) return errno;
  *seals = static_cast<unsigned>(got);
  return 0;
}

int OpenSealedSegment(int fd, std::size_t byteSize, bool writable, Mapping* out, std::size_t* fileByteSize, unsigned* seals) {
  if (byteSize == 0 || byteSize > kMaxFileSize || out == nullptr || fileByteSize == nullptr || seals == nullptr) return EINVAL;
  *seals = 0;
  int status = SegmentSeals(fd, seals);
  if (status == EBADF) return EBADF;
  // Not a memfd (EINVAL) or missing a seal: a peer could shrink it under the mapping.
  if (status != 0 || (*seals & kRequiredSeals) != kRequiredSeals) return EPERM;
  struct stat info {};
  if (fstat(fd, &info) != 0) return errno;
  *fileByteSize = info.st_size > 0 ? static_cast<std::size_t>(info.st_size) : 0;
  if (*fileByteSize < byteSize) return EINVAL;
  return MapDescriptor(fd, byteSize, writable, out);
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

namespace {

// This user's file, closed to group and others.
int CheckOwnFile(int fd, struct stat* info) {
  if (fstat(fd, info) != 0) return errno;
  if (info->st_uid != geteuid() || (info->st_mode & (S_IRWXG | S_IRWXO)) != 0) return EACCES;
  return 0;
}

}  // namespace

int HoldLivenessLock(const char* name, int* fd) {
  if (!ValidSegmentName(name) || fd == nullptr) return EINVAL;
  // A reaper holds its exclusive lock only while it unlinks a few names: wait up to ~1 s for it.
  for (int attempt = 0; attempt < 200; ++attempt) {
    int opened = shm_open(name, O_RDWR | O_CREAT | O_CLOEXEC, S_IRUSR | S_IWUSR);
    if (opened < 0) return errno;
    struct stat held {};
    int status = CheckOwnFile(opened, &held);
    if (status != 0) {
      close(opened);
      return status;
    }
    if (flock(opened, LOCK_SH | LOCK_NB) != 0) {
      status = errno;
      close(opened);
      if (status != EWOULDBLOCK && status != EINTR) return status;
      struct timespec pause {0, 5 * 1000 * 1000};
      nanosleep(&pause, nullptr);
      continue;
    }
    // Locked; but a reaper may have unlinked the name between our open and our lock. Then the lock is on a
    // file nobody will look at: drop it and take the one under the name now.
    int current = shm_open(name, O_RDONLY | O_CLOEXEC, 0);
    struct stat named {};
    bool same = current >= 0 && fstat(current, &named) == 0 && named.st_ino == held.st_ino && named.st_dev == held.st_dev;
    if (current >= 0) close(current);
    if (same) {
      *fd = opened;
      return 0;
    }
    close(opened);
  }
  return EAGAIN;
}

int TryReapLock(const char* name, int* fd) {
  if (!ValidSegmentName(name) || fd == nullptr) return EINVAL;
  int opened = shm_open(name, O_RDWR | O_CLOEXEC, 0);
  if (opened < 0) return errno;
  struct stat info {};
  int status = CheckOwnFile(opened, &info);
  if (status == 0 && flock(opened, LOCK_EX | LOCK_NB) != 0) status = errno == EAGAIN ? EWOULDBLOCK : errno;
  if (status != 0) {
    close(opened);
    return status;
  }
  *fd = opened;
  return 0;
}

int ReleaseReapLock(const char* name, int fd) {
  int status = ValidSegmentName(name) && shm_unlink(name) != 0 ? errno : 0;
  if (fd >= 0) close(fd);
  return status == ENOENT ? 0 : status;
}

}  // namespace hs::ipc
