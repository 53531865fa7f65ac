// Checks of the pure C++ IPC core, meant to run under ASan/UBSan:
//   cmake -S native/ipc -B build/ipc-asan -DHS_IPC_NATIVE_TESTS=ON \
//     -DCMAKE_CXX_FLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer" && cmake --build build/ipc-asan
//   ./build/ipc-asan/hs_ipc_core_test
// Prints "N passed, 0 failed" and exits non-zero on any failure.
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <string>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

#include "doorbell.h"
#include "fd-passing.h"
#include "peer-process.h"
#include "ring-control.h"
#include "shm-segment.h"

namespace {

int passed = 0;
int failed = 0;

void Check(bool condition, const char* what) {
  if (condition) {
    ++passed;
  } else {
    ++failed;
    std::fprintf(stderr, "FAILED: %s\n", what);
  }
}

// One writer thread commits `total` tails (ringing the FIFO when CommitRingTail says the reader parked);
// this thread reads them the way a mailbox reader does: catch up, park, re-check the tail, and only then
// sleep in poll() on the doorbell. A lost wake-up shows up as a poll() that times out with work pending.
// Returns how many sleeps timed out (0 expected).
int ParkCommitRace(std::uint32_t total) {
  alignas(64) unsigned char control[hs::ipc::kRingControlBytes] = {};
  int bell[2];
  if (pipe2(bell, O_NONBLOCK) != 0) return -1;  // non-blocking, like a doorbell FIFO
  std::thread writer([&] {
    for (std::uint32_t tail = 1; tail <= total; tail++) {
      if (hs::ipc::CommitRingTail(control, tail)) hs::ipc::RingDoorbell(bell[1]);
    }
  });
  std::uint32_t head = 0;
  int timeouts = 0;
  while (head != total) {
    head = __atomic_load_n(reinterpret_cast<std::uint32_t*>(control + hs::ipc::kRingTailOffset), __ATOMIC_ACQUIRE);
    if (hs::ipc::ParkRingReader(control) != head) continue;  // more arrived while parking: drain again
    if (head == total) break;
    pollfd waiting{bell[0], POLLIN, 0};
    if (poll(&waiting, 1, 2000) == 0) {
      timeouts++;
      break;
    }
    hs::ipc::DrainDoorbell(bell[0]);
  }
  writer.join();
  close(bell[0]);
  close(bell[1]);
  return timeouts;
}

}  // namespace

int main() {
  using namespace hs::ipc;
  const std::string name = "/hs-core-test-" + std::to_string(getpid());

  Check(ValidSegmentName(name.c_str()), "a plain name is valid");
  Check(!ValidSegmentName("no-slash"), "a name without the leading slash is refused");
  Check(!ValidSegmentName("/a/b"), "a second slash is refused");
  Check(!ValidSegmentName("/"), "an empty name is refused");
  Check(!ValidSegmentName("/.."), "dot-dot is refused");
  Check(!ValidSegmentName(std::string("/" + std::string(201, 'a')).c_str()), "a 201-character name is refused");

  Mapping created;
  Check(CreateSegment(name.c_str(), 4096, &created) == 0, "create succeeds");
  Check(created.address != nullptr && created.byteSize == 4096, "create maps the whole size");
  Mapping again;
  Check(CreateSegment(name.c_str(), 4096, &again) == EEXIST, "a second create of the same name is EEXIST");

  struct stat createdInfo {};
  const int createdFd = shm_open(name.c_str(), O_RDONLY, 0);
  Check(createdFd >= 0 && fstat(createdFd, &createdInfo) == 0 && createdInfo.st_blocks * 512 >= 4096, "create allocates every page (no sparse file)");
  if (createdFd >= 0) close(createdFd);

  std::memset(created.address, 0x5a, created.byteSize);
  Mapping opened;
  std::size_t fileByteSize = 0;
  Check(OpenSegment(name.c_str(), 4096, true, &opened, &fileByteSize) == 0 && opened.writable, "open succeeds");
  Check(opened.byteSize == 4096 && static_cast<unsigned char*>(opened.address)[4095] == 0x5a, "open sees the creator's bytes");
  Mapping tooSmall;
  fileByteSize = 0;
  Check(OpenSegment(name.c_str(), 8192, true, &tooSmall, &fileByteSize) == EINVAL && tooSmall.address == nullptr, "open of more than the file holds is EINVAL");
  Check(fileByteSize == 4096, "a refused open reports the file's size");
  Mapping prefix;
  Check(OpenSegment(name.c_str(), 1024, true, &prefix, &fileByteSize) == 0 && prefix.byteSize == 1024, "open of a larger file maps only the size asked for");
  Check(UnmapSegment(&prefix) == 0, "unmap the prefix mapping");
  Mapping readOnly;
  Check(OpenSegment(name.c_str(), 4096, false, &readOnly, &fileByteSize) == 0 && !readOnly.writable, "a read-only open maps the segment");
  Check(static_cast<unsigned char*>(readOnly.address)[4095] == 0x5a, "a read-only mapping sees the creator's bytes");
  Check(mprotect(readOnly.address, 4096, PROT_READ | PROT_WRITE) != 0 && errno == EACCES, "a read-only mapping cannot be made writable (O_RDONLY descriptor)");
  Check(UnmapSegment(&readOnly) == 0 && !readOnly.writable, "unmap the read-only mapping");
  Mapping empty;
  Check(OpenSegment(name.c_str(), 0, true, &empty, &fileByteSize) == EINVAL, "open of zero bytes is EINVAL");

  Check(UnlinkSegment(name.c_str()) == 0, "unlink succeeds");
  Check(UnlinkSegment(name.c_str()) == ENOENT, "a second unlink is ENOENT");
  static_cast<unsigned char*>(created.address)[0] = 7;
  Check(static_cast<unsigned char*>(opened.address)[0] == 7, "mappings outlive the name");
  Check(UnmapSegment(&created) == 0 && created.address == nullptr, "unmap clears the mapping");
  Check(UnmapSegment(&created) == 0, "unmap is idempotent");
  Check(UnmapSegment(&opened) == 0, "unmap the opened mapping");
  Mapping missing;
  Check(OpenSegment(name.c_str(), 4096, true, &missing, &fileByteSize) == ENOENT, "open of a removed name is ENOENT");

  const std::string lock = "/hs-core-test-lock-" + std::to_string(getpid());
  int held = -1;
  Check(HoldLivenessLock(lock.c_str(), &held) == 0 && held >= 0, "a publisher takes its liveness lock");
  int sharer = -1;
  Check(HoldLivenessLock(lock.c_str(), &sharer) == 0, "a second publisher of the same pid shares it");
  int reaper = -1;
  Check(TryReapLock(lock.c_str(), &reaper) == EWOULDBLOCK, "a reaper cannot take a held lock");
  close(sharer);
  Check(TryReapLock(lock.c_str(), &reaper) == EWOULDBLOCK, "nor while one holder is left");
  close(held);
  Check(TryReapLock(lock.c_str(), &reaper) == 0 && reaper >= 0, "a reaper takes the lock once its holders are gone");
  Check(ReleaseReapLock(lock.c_str(), reaper) == 0, "the reaper removes the lock");
  Check(TryReapLock(lock.c_str(), &reaper) == ENOENT, "a removed lock is ENOENT");

  int pair[2];
  Check(socketpair(AF_UNIX, SOCK_STREAM, 0, pair) == 0, "socketpair");
  PeerCredentials credentials;
  Check(QueryPeerCredentials(pair[0], &credentials) == 0, "peer credentials of a socketpair");
  Check(credentials.pid == getpid() && credentials.uid == geteuid(), "peer is this process");
  close(pair[0]);
  close(pair[1]);
  Check(QueryPeerCredentials(-1, &credentials) == EBADF, "a bad fd is EBADF");

  Check(ProcessAlive(getpid()), "this process is alive");
  Check(!ProcessAlive(0) && !ProcessAlive(-1), "pid 0 and negative pids are never alive");

  // Doorbells are anonymous pipes (wire version 2): nothing is named, so nothing can be squatted.
  signal(SIGPIPE, SIG_IGN);  // as in Node: a ring whose reader is gone must return, not kill
  int reader = -1;
  int writer = -1;
  Check(CreateDoorbellPipe(&reader, &writer) == 0, "create a doorbell pipe");
  Check((fcntl(reader, F_GETFL) & O_NONBLOCK) != 0 && (fcntl(writer, F_GETFL) & O_NONBLOCK) != 0, "both ends are non-blocking");
  Check((fcntl(reader, F_GETFD) & FD_CLOEXEC) != 0 && (fcntl(writer, F_GETFD) & FD_CLOEXEC) != 0, "both ends are close-on-exec");
  Check(DrainDoorbell(reader) == 0, "a fresh doorbell holds nothing");
  Check(RingDoorbell(writer) == 0 && RingDoorbell(writer) == 0, "ring twice");
  Check(DrainDoorbell(reader) == 2, "the reader drains both rings");
  Check(DrainDoorbell(reader) == 0, "and then nothing");
  for (int i = 0; i < 70000; i++) RingDoorbell(writer);
  Check(RingDoorbell(writer) == 0, "ringing a full pipe still counts as rung");
  Check(DrainDoorbell(reader) > 0, "a full pipe drains");

  int adopted = -1;
  Check(AdoptDoorbellEnd(reader, true, &adopted) == 0 && adopted != reader, "a read end is adopted as a read end (a duplicate)");
  Check((fcntl(adopted, F_GETFD) & FD_CLOEXEC) != 0, "the duplicate is close-on-exec");
  int wrong = -1;
  Check(AdoptDoorbellEnd(reader, false, &wrong) == EPERM, "a read end is refused as a write end (EPERM)");
  Check(AdoptDoorbellEnd(writer, true, &wrong) == EPERM, "a write end is refused as a read end (EPERM)");
  const std::string plain = "/tmp/hs-core-test-bell-" + std::to_string(getpid());
  int file = open(plain.c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
  Check(file >= 0 && AdoptDoorbellEnd(file, true, &wrong) == EPERM, "a regular file is not a doorbell (EPERM)");
  close(file);
  unlink(plain.c_str());
  Check(AdoptDoorbellEnd(-1, true, &wrong) == EBADF, "a bad fd is EBADF");
  int blocking[2];
  Check(pipe(blocking) == 0 && AdoptDoorbellEnd(blocking[0], true, &wrong) == 0 && (fcntl(wrong, F_GETFL) & O_NONBLOCK) != 0, "a blocking end is made non-blocking");
  close(wrong);
  close(blocking[0]);
  close(blocking[1]);

  close(writer);
  Check(DrainDoorbell(adopted) == -EPIPE, "once every writer closed its end the reader sees -EPIPE (end of file)");
  close(adopted);
  Check(CreateDoorbellPipe(&reader, &writer) == 0, "another doorbell pipe");
  close(reader);
  Check(RingDoorbell(writer) == 0, "ringing a doorbell whose reader is gone returns (EPIPE counts as rung)");
  close(writer);

  alignas(64) unsigned char control[kRingControlBytes] = {};
  Check(ParkRingReader(control) == 0, "parking an empty ring returns tail 0");
  Check(CommitRingTail(control, 1), "a commit to a parked reader must ring");
  Check(!CommitRingTail(control, 2), "a second commit before the reader parks again does not ring");
  Check(ParkRingReader(control) == 2, "parking returns the committed tail");
  Check(CommitRingTail(control, 3), "after parking again the next commit rings");

  alignas(64) unsigned char busy[kRingControlBytes] = {};
  Check(!CommitRingTail(busy, 1) && !CommitRingTail(busy, 2), "a reader that never parked is never rung");
  Check(ParkRingReader(busy) == 2, "parking then sees every committed tail");
  Check(CommitRingTail(busy, 0xffffffffu) && ParkRingReader(busy) == 0xffffffffu, "tails are full 32-bit counters");
  Check(CommitRingTail(busy, 0) && ParkRingReader(busy) == 0, "and wrap around to 0");
  Check(RingDoorbell(-1) == EBADF && DrainDoorbell(-1) == -EBADF, "a bad doorbell fd is EBADF");
  Check(ParkCommitRace(200000) == 0, "200000 commits against a parking reader lose no wake-up");

  // Sealed segments (wire version 2).
  Mapping sealed;
  int sealedFd = -1;
  Check(CreateSealedSegment("hs.core-test", 8192, &sealed, &sealedFd) == 0 && sealedFd >= 0, "create a sealed segment");
  unsigned seals = 0;
  Check(SegmentSeals(sealedFd, &seals) == 0 && (seals & 0x7u) == 0x7u, "it carries F_SEAL_SHRINK|GROW|SEAL");
  Check(ftruncate(sealedFd, 0) != 0 && errno == EPERM, "shrinking it is EPERM");
  Check(ftruncate(sealedFd, 1 << 20) != 0 && errno == EPERM, "growing it is EPERM");
  static_cast<unsigned char*>(sealed.address)[8191] = 9;
  Mapping sealedReader;
  std::size_t sealedHeld = 0;
  Check(OpenSealedSegment(sealedFd, 8192, false, &sealedReader, &sealedHeld, &seals) == 0 && !sealedReader.writable && static_cast<unsigned char*>(sealedReader.address)[8191] == 9,
        "a sealed segment maps read-only from its descriptor");
  UnmapSegment(&sealedReader);
  Check(OpenSealedSegment(sealedFd, 8193, false, &sealedReader, &sealedHeld, &seals) == EINVAL && sealedHeld == 8192, "a segment smaller than asked is EINVAL naming its size");
  const std::string plainSegment = "/tmp/hs-core-test-plain-" + std::to_string(getpid());
  int plainFd = open(plainSegment.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  unlink(plainSegment.c_str());
  Check(plainFd >= 0 && ftruncate(plainFd, 8192) == 0 && OpenSealedSegment(plainFd, 8192, false, &sealedReader, &sealedHeld, &seals) == EPERM && seals == 0,
        "a descriptor without seals is refused (EPERM, no seals)");
  Check(SegmentSeals(plainFd, &seals) == EINVAL, "a plain file cannot carry seals (EINVAL)");

  // Descriptor passing: HELLO-sized frame with two descriptors, read back exactly.
  const std::string socketPath = "/tmp/hs-core-test-" + std::to_string(getpid()) + ".sock";
  int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strcpy(address.sun_path, socketPath.c_str());
  unlink(socketPath.c_str());
  Check(bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 && listen(listener, 4) == 0, "listen on a test socket");
  std::thread server([&] {
    int conn = accept(listener, nullptr, nullptr);
    unsigned char frame[512];
    for (int i = 0; i < 512; i++) frame[i] = static_cast<unsigned char>(i);
    int pass[2] = {sealedFd, plainFd};
    std::size_t sent = 0;
    Check(SendWithDescriptors(conn, frame, 512, pass, 2, &sent) == 0 && sent == 512, "send 512 bytes with two descriptors");
    char one;
    ssize_t ignored = read(conn, &one, 1);  // until the client closes
    (void)ignored;
    close(conn);
  });
  unsigned char got[256] = {};
  int socketFd = -1;
  int fds[kMaxPassedDescriptors] = {};
  std::size_t fdCount = 0;
  Check(ConnectAndReceive(socketPath.c_str(), 2000, got, 256, &socketFd, fds, &fdCount) == 0 && fdCount == 2 && got[255] == 255, "receive the first 256 bytes and both descriptors");
  unsigned char rest[256] = {};
  Check(socketFd >= 0 && read(socketFd, rest, 256) == 256 && rest[0] == 0 && rest[1] == 1, "the bytes after the frame stay in the socket");
  Check(fdCount == 2 && SegmentSeals(fds[0], &seals) == 0 && (seals & 0x6u) == 0x6u, "the passed segment keeps its seals");
  for (std::size_t i = 0; i < fdCount; i++) close(fds[i]);
  close(socketFd);
  server.join();
  Check(ConnectAndReceive((socketPath + ".none").c_str(), 500, got, 256, &socketFd, fds, &fdCount) == ENOENT, "nobody listening is ENOENT");
  std::thread mute([&] {
    int conn = accept(listener, nullptr, nullptr);
    char one;
    ssize_t ignored = read(conn, &one, 1);
    (void)ignored;
    close(conn);
  });
  Check(ConnectAndReceive(socketPath.c_str(), 200, got, 256, &socketFd, fds, &fdCount) == ETIMEDOUT, "no frame in time is ETIMEDOUT");
  mute.join();
  close(listener);
  unlink(socketPath.c_str());
  close(plainFd);
  close(sealedFd);
  UnmapSegment(&sealed);

  std::printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
