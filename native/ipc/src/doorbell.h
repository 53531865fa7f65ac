// Doorbells of a topic mailbox: named FIFOs in the (0700) topic directory. Ringing one writes a byte; the
// reader's event loop polls the FIFO and drains it. Pure C++ (no Node-API), linkable into a sanitizer test.
#pragma once

namespace hs::ipc {

// Makes the FIFO `path` (mode 0600, fails with EEXIST when the name exists) and opens it read-write and
// non-blocking, so neither side ever blocks in open() nor gets SIGPIPE. Returns 0 or an errno value.
int CreateDoorbell(const char* path, int* fd);

// Opens the existing FIFO `path` read-write and non-blocking, without following a symlink, and checks
// that it is a FIFO owned by this user with no group or other permission bits (EPERM otherwise).
int OpenDoorbell(const char* path, int* fd);

// Writes one byte. A full pipe already holds a pending ring, so EAGAIN counts as rung. 0 or errno.
int RingDoorbell(int fd);

// Reads every pending byte; returns how many were read, or -errno.
long DrainDoorbell(int fd);

}  // namespace hs::ipc
