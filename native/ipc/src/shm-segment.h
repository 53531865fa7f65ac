// POSIX shared-memory segments for hs boundary pools: pure C++ (no Node-API), so a sanitizer test can
// link it directly. Every function returns 0 or an errno value; nothing throws.
#pragma once

#include <cstddef>

namespace hs::ipc {

// True for "/" followed by 1..200 characters of [A-Za-z0-9._-] (no further slash, no NUL).
bool ValidSegmentName(const char* name);

// A mapped segment. `address` is null once unmapped.
struct Mapping {
  void* address = nullptr;
  std::size_t byteSize = 0;
  // False for a PROT_READ mapping: a store into it faults (SIGSEGV).
  bool writable = false;
};

// Creates `name` exclusively (O_CREAT | O_EXCL, mode 0600), allocates all `byteSize` (> 0) bytes of it
// (posix_fallocate: no sparse file, so a full /dev/shm is ENOSPC or ENOMEM here instead of SIGBUS on a
// later write; EFBIG above a file-size limit) and maps it read/write. On failure nothing is left behind
// (the name is unlinked again). EEXIST when the name exists.
int CreateSegment(const char* name, std::size_t byteSize, Mapping* out);

// Opens an existing segment and maps its first `byteSize` (> 0) bytes: the size its creator announced,
// never the file's own size (a larger file is mapped only that far). `writable` false opens the file
// O_RDONLY and maps it PROT_READ (subscribers: a stray store faults instead of corrupting the publisher's
// slots); true maps it read/write (the shared mailbox, whose rings both sides advance). Refuses (EACCES) a segment
// that another user owns or that group/others may access, and (EINVAL) one whose file is smaller than
// `byteSize`. `*fileByteSize` receives the file's size once it is known (fstat), so callers can name it.
int OpenSegment(const char* name, std::size_t byteSize, bool writable, Mapping* out, std::size_t* fileByteSize);

// Sealed anonymous segments (wire version 2): a memfd that no name reaches, passed to the peer over the
// topic socket (SCM_RIGHTS). Its size is sealed (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL), so a same-uid
// peer holding the descriptor (or reopening it through /proc) cannot ftruncate it under the other side's
// mapping (a SIGBUS there): its ftruncate fails with EPERM.
constexpr unsigned kRequiredSeals = 0x0002u /* F_SEAL_SHRINK */ | 0x0004u /* F_SEAL_GROW */;

// Creates a memfd (MFD_CLOEXEC | MFD_ALLOW_SEALING) labelled `label` (shown in /proc/<pid>/maps), allocates
// all `byteSize` (> 0) bytes (posix_fallocate), seals its size and maps it read/write. `*fd` receives the
// descriptor (the caller closes it). ENOSYS where the kernel has no memfd_create; nothing is left on failure.
int CreateSealedSegment(const char* label, std::size_t byteSize, Mapping* out, int* fd);

// The seals of `fd` (F_GET_SEALS) in `*seals`; EINVAL for a descriptor that cannot carry seals (not a memfd).
int SegmentSeals(int fd, unsigned* seals);

// Maps the first `byteSize` (> 0) bytes of a received sealed segment, read-only unless `writable`. EPERM
// when `fd` is not sealed against shrinking and growing (`*seals` says what it has; a descriptor that
// cannot carry seals reads as none), EINVAL when its file is smaller than `byteSize` (`*fileByteSize`
// names its size). The descriptor stays the caller's (close it once mapped).
int OpenSealedSegment(int fd, std::size_t byteSize, bool writable, Mapping* out, std::size_t* fileByteSize, unsigned* seals);

// Removes the name; mappings stay valid until unmapped. ENOENT when it does not exist.
int UnlinkSegment(const char* name);

// Unmaps a mapping (idempotent: a mapping with a null address is left alone).
int UnmapSegment(Mapping* mapping);

// Liveness locks: a proof that a publisher process is alive which works across PID namespaces, where
// kill(pid, 0) asks about another process with the same number. A publisher holds a shared flock on the
// shm file `name` (`/hs.<uid>.lock.<pid>`) from before its first segment until it exits; the kernel drops
// the lock when the process dies, however it dies. Publishers of two namespaces with the same pid share
// the file, each holding its own shared lock.

// Creates `name` (mode 0600) or opens this user's existing one, takes a shared lock and checks that the
// file locked is still the one under the name (a reaper may have removed it meanwhile; then it retries).
// `*fd` receives the descriptor to keep open (closing it drops the lock). EAGAIN when a reaper held it for
// over a second; EACCES for another user's file or one open to group/others.
int HoldLivenessLock(const char* name, int* fd);

// Tries to take `name`'s lock exclusively without waiting: 0 with `*fd` set when no process holds it (its
// publishers are all gone; keep the fd while removing their segments, then ReleaseReapLock), EWOULDBLOCK
// while a publisher holds it, ENOENT when there is no such lock (a publisher of an older version), EACCES
// for another user's file.
int TryReapLock(const char* name, int* fd);

// Removes the lock's name, then closes `fd` (dropping the exclusive lock).
int ReleaseReapLock(const char* name, int fd);

}  // namespace hs::ipc
