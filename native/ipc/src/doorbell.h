// Doorbells of a topic mailbox: anonymous pipes (wire version 2: nothing named). The publisher makes a pipe
// per side and passes the subscriber its ends with HELLO (SCM_RIGHTS). Ringing one writes a byte; the
// reader's event loop polls its read end and drains it. Pure C++ (no Node-API), linkable into a sanitizer test.
#pragma once

namespace hs::ipc {

// Makes one doorbell: a pipe, both ends non-blocking and close-on-exec. Returns 0 or an errno value.
int CreateDoorbellPipe(int* read_end, int* write_end);

// Checks a doorbell end received from the peer and duplicates it (close-on-exec) into `*fd`: it must be a
// pipe (or FIFO) opened for reading when `read_end`, for writing otherwise (EPERM), and is made
// non-blocking, so neither side ever blocks on it. The caller keeps `received`. Returns 0 or an errno value.
int AdoptDoorbellEnd(int received, bool read_end, int* fd);

// Writes one byte. A full pipe already holds a pending ring, so EAGAIN counts as rung, and so does EPIPE
// (the reader closed its end: the connection's end reports that peer). 0 or errno.
int RingDoorbell(int fd);

// Reads every pending byte; returns how many were read, or -errno; -EPIPE once every writer closed its end
// (the pipe reads end-of-file, and polling it would report it readable for ever).
long DrainDoorbell(int fd);

}  // namespace hs::ipc
