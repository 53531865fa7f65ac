#!/usr/bin/env python3
"""Attach to an hs device or pinnedHost topic from Python and read its tensors (CuPy, or NumPy for pinnedHost).

Speaks the hs wire protocol, version 2 (docs/ipc-wire-protocol.md): connect to the topic's Unix socket, read
the HELLO with socket.recv_fds (version 2 passes a host topic's shared memory as sealed descriptors with it;
a device topic's HELLO carries none, and any it does carry are closed and refused). A device topic: the
HELLO carries the CUDA IPC handle of the publisher's one boundary allocation; its announced size must be
exactly the slots plus their fence counters (and below 2^53) before the handle is opened with
cupy.cuda.runtime.ipcOpenMemHandle, and the mapped allocation is measured (cuMemGetAddressRange of libcuda,
through ctypes) and refused when it holds fewer bytes than announced; then send ATTACH (the publisher lends
nothing before it, and drops a connection that sends none within its attach timeout); for every DESCRIPTOR
wait for the generation fence on our own stream, view the slot as a cupy.ndarray (no copy), use it, and
send RELEASE so the publisher can reuse the slot. A
pinnedHost topic: map the sealed segment that came with HELLO (read-only), send ATTACH (descriptors over the
socket, no mailbox), and for every DESCRIPTOR of a CUDA-stream writer (DEVICE_FENCE, fence > 0) poll the
slot's fence counter in the mapped segment (a little-endian u64 after the slots) from the host until it
reaches the fence value, with a timeout (--fence-timeout, ProtocolError when it passes): a host-side poll,
which blocks this Python thread, unlike hs's own importer, which waits on its stream. A host writer's
descriptor (HOST_WRITER, fence 0) is read at once. The slot is viewed as a numpy.ndarray over the mapping
(no copy). A GOODBYE ends the run.

    python3 consume.py --topic camera.frames [--frames N] [--check hs-pattern] [--dir DIR] [--memory pinnedHost] [--fence-timeout S]

    [--hello-timeout SECONDS] [--read-timeout SECONDS]

Prints one JSON line: frames read, bad frames (and the first one: which bytes were found against the
pattern), the fence mode, the device and why the run ended. Exit status 0 when every frame passed the
check, 1 otherwise, 2 for a usage or protocol error or a timeout.

Timeouts (socket.settimeout): connecting and the HELLO must complete within --hello-timeout seconds
(default 5; a publisher that accepts but never sends HELLO, for example one stopped in a debugger or out of
subscriber places); after HELLO, each frame must arrive (and each RELEASE be sent) within --read-timeout
seconds (default 30; 0 waits forever, for topics that may stay idle longer). A timeout ends the run with
one line naming the topic, the socket path and what to check, and exit status 2.

Requires Python 3.9 or later (socket.recv_fds). `map_sealed_segment` maps a host topic's segment received
with HELLO after checking its seals (F_SEAL_SHRINK and F_SEAL_GROW: its peer cannot truncate it under the
mapping, which would be a SIGBUS at the next read).
"""
import argparse
import fcntl
import json
import mmap
import os
import socket
import struct
import sys
import time

# CuPy and NumPy are imported by import_cupy() once the arguments are parsed, so that --help and usage
# errors work (and a missing CuPy is one line) on a machine without them.
cp = None
np = None

FRAME = 256
MAGIC = 0x50495348  # "HSIP" read little-endian
VERSION = 2
# Seals a host topic's segment must carry (Linux fcntl values; fcntl.F_GET_SEALS exists from Python 3.8 on Linux).
F_GET_SEALS = getattr(fcntl, "F_GET_SEALS", 1034)
F_SEAL_SHRINK = getattr(fcntl, "F_SEAL_SHRINK", 0x2)
F_SEAL_GROW = getattr(fcntl, "F_SEAL_GROW", 0x4)
MAX_HELLO_FDS = 4
HELLO, DESCRIPTOR, RELEASE, GOODBYE = 1, 2, 3, 4
HOST_WRITER, DEVICE_FENCE = 1, 2
GOODBYE_REASONS = {1: "goodbye: closed", 2: "goodbye: protocol violation", 3: "goodbye: lease timeout", 4: "goodbye: attach timeout"}
WIRE_PINNED_HOST = 1
WIRE_CUDA_DEVICE = 2
ATTACH = 5
MAX_RANK = 8
MAX_TOPIC_SLOTS = 65536
# u64 wire fields are at most 2^53 - 1 (what a JavaScript number holds exactly).
MAX_SAFE_U64 = 2**53 - 1
CU_STREAM_WAIT_VALUE_GEQ = 0

# DLPack type codes (int, uint, float, bfloat, complex, bool) -> NumPy kind letters.
DTYPE_KINDS = {0: "i", 1: "u", 2: "f", 5: "c", 6: "b"}


class ProtocolError(Exception):
    """The publisher sent a frame this consumer must not trust."""


def import_numpy():
    """Imports NumPy as this module's `np` (all a pinnedHost topic needs); one line and exit status 2 when missing."""
    global np
    try:
        import numpy
    except ImportError as error:
        print(f"consume.py: NumPy is required ({error}): pip install numpy", file=sys.stderr)
        sys.exit(2)
    np = numpy


def import_cupy():
    """Imports CuPy and NumPy as this module's `cp` and `np`; one line and exit status 2 when missing."""
    global cp, np
    try:
        import cupy
        import numpy
    except ImportError as error:
        print(f"consume.py: CuPy is required ({error}): pip install cupy-cuda12x, or the CuPy package of your CUDA version (see README)", file=sys.stderr)
        sys.exit(2)
    cp, np = cupy, numpy


def topic_socket(topic, directory):
    if directory is None:
        xdg = os.environ.get("XDG_RUNTIME_DIR")
        directory = os.path.join(xdg, "hs-ipc") if xdg else os.path.join("/tmp", f"hs-ipc-{os.getuid()}")
    return os.path.join(directory, f"{topic}.sock")


def check_header(frame):
    magic, version, kind, topic_id = struct.unpack_from("<IHHI", frame, 0)
    if magic != MAGIC:
        raise ProtocolError(f"bad frame header (magic {magic:#x})")
    if version != VERSION:
        raise ProtocolError(f"the publisher speaks wire version {version}, this consume.py speaks wire version {VERSION}; use matching hs and consume.py versions")
    return kind, topic_id, bytes(frame)


def read_frame(sock):
    frame = bytearray()
    while len(frame) < FRAME:
        chunk = sock.recv(FRAME - len(frame))
        if not chunk:
            raise ConnectionError("the publisher closed the connection")
        frame.extend(chunk)
    return check_header(frame)


def close_fds(fds):
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass


def read_hello(sock):
    """The HELLO and the descriptors that came with it (socket.recv_fds; they ride on its first byte).

    Reads exactly one frame. Returns (kind, topic_id, frame, fds); the caller owns the descriptors."""
    frame = bytearray()
    fds = []
    while len(frame) < FRAME:
        try:
            chunk, got, flags, _address = socket.recv_fds(sock, FRAME - len(frame), MAX_HELLO_FDS)
        except BaseException:
            close_fds(fds)
            raise
        if got and frame:
            close_fds(fds + list(got))
            raise ProtocolError("the publisher sent descriptors after the first byte of its HELLO")
        fds.extend(got)
        if flags & getattr(socket, "MSG_CTRUNC", 0x8):
            close_fds(fds)
            raise ProtocolError(f"the HELLO carried more than {MAX_HELLO_FDS} descriptors")
        if not chunk:
            close_fds(fds)
            raise ConnectionError("the publisher closed the connection before its HELLO")
        frame.extend(chunk)
    try:
        kind, topic_id, data = check_header(frame)
    except ProtocolError:
        close_fds(fds)
        raise
    return kind, topic_id, data, fds


def map_sealed_segment(fd, size, writable=False):
    """Maps the first `size` bytes of a host topic's segment received with HELLO (the fd stays the caller's).

    Refuses (ProtocolError) a descriptor that is not sealed against shrinking and growing, and one whose file
    holds fewer than `size` bytes; maps read-only unless `writable`."""
    try:
        seals = fcntl.fcntl(fd, F_GET_SEALS)
    except OSError:
        seals = 0  # not a memfd: it cannot carry seals
    needed = F_SEAL_SHRINK | F_SEAL_GROW
    if seals & needed != needed:
        raise ProtocolError(f"the segment descriptor is not sealed against shrinking and growing (seals {seals:#x}, needed {needed:#x}): its peer could truncate it under the mapping")
    held = os.fstat(fd).st_size
    if held < size:
        raise ProtocolError(f"the segment holds {held} bytes, fewer than the {size} bytes announced")
    return mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | (mmap.PROT_WRITE if writable else 0))


def numpy_dtype(code, bits, lanes):
    if lanes != 1 or code not in DTYPE_KINDS or bits % 8 != 0:
        raise ProtocolError(f"unsupported dtype code {code} bits {bits} lanes {lanes}")
    if code == 6:
        return np.dtype(np.bool_)
    return np.dtype(f"<{DTYPE_KINDS[code]}{bits // 8}")


def cuda_python_driver():
    """cuda-python's driver module (cuda.bindings.driver, or cuda.cuda before 12.6); None when it is not installed."""
    try:
        from cuda.bindings import driver
    except ImportError:
        try:
            from cuda import cuda as driver
        except ImportError:
            return None
    return driver


def fence_waiter():
    """Device-side wait on a fence counter through cuda-python; None when it is not installed."""
    driver = cuda_python_driver()
    if driver is None:
        return None
    geq = getattr(getattr(driver, "CUstreamWaitValue_flags", None), "CU_STREAM_WAIT_VALUE_GEQ", CU_STREAM_WAIT_VALUE_GEQ)

    def wait(stream, address, value):
        result = driver.cuStreamWaitValue64(driver.CUstream(stream.ptr), driver.CUdeviceptr(address), value, geq)
        status = result[0] if isinstance(result, tuple) else result
        if int(status) != 0:
            raise RuntimeError(f"cuStreamWaitValue64 failed: {status}")

    return wait


def host_poll_fence(address, value):
    """Fallback without cuda-python: read the counter from the host until it reaches the fence value."""
    counter = np.zeros(1, dtype=np.uint64)
    while int(counter[0]) < value:
        cp.cuda.runtime.memcpy(counter.ctypes.data, address, 8, cp.cuda.runtime.memcpyDeviceToHost)


# Counts the bytes of a contiguous uint8 frame that differ from the hs pattern. One raw kernel compiled
# once, where CuPy's own routines compile kernels specialized on each new array size and layout.
PATTERN_MISMATCHES_SOURCE = r"""
extern "C" __global__ void pattern_mismatches(const unsigned char* data, unsigned long long n, unsigned long long half,
                                              unsigned char low, unsigned char high, unsigned long long* wrong) {
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n; i += (unsigned long long)gridDim.x * blockDim.x) {
    if (data[i] != (i < half ? low : high)) atomicAdd(wrong, 1ull);
  }
}
"""
PATTERN_MISMATCHES = None  # the cp.RawKernel of PATTERN_MISMATCHES_SOURCE, made by pattern_mismatches_kernel()


def pattern_mismatches_kernel():
    """The pattern-check kernel, made on first use (CuPy is imported by then)."""
    global PATTERN_MISMATCHES
    if PATTERN_MISMATCHES is None:
        PATTERN_MISMATCHES = cp.RawKernel(PATTERN_MISMATCHES_SOURCE, "pattern_mismatches")
    return PATTERN_MISMATCHES


def pattern_layout(array, frame):
    """(the two byte values the hs test producer writes for `frame`, None), or (them, the mismatch of an array
    that cannot hold the pattern: not a contiguous uint8 frame). For NumPy and CuPy arrays alike."""
    want = [(frame * 7 + 1) & 0xFF, (frame * 13 + 5) & 0xFF]
    if array.dtype != np.uint8 or not array.flags.c_contiguous:
        return want, {"frame": frame, "wrongBytes": array.nbytes, "layout": f"{array.dtype} strides {array.strides}, not contiguous uint8", "want": want}
    return want, None


class FrameTally:
    """What a receive loop took: frames, how many held the wrong bytes, and the first of those with where it
    was (slot, generation, fence). Both memory kinds count and report alike."""

    def __init__(self):
        self.received = 0
        self.bad = 0
        self.first_bad = None

    def add(self, mismatch, slot, generation, fence):
        """Counts one frame; `mismatch` is None for a good one, else what the pattern check found."""
        if mismatch is not None:
            self.bad += 1
            if self.first_bad is None:
                self.first_bad = {**mismatch, "slot": slot, "generation": generation, "fence": fence}
        self.received += 1

    def report(self, **fields):
        """The result line's object: frames, badFrames, firstBad, then `fields`."""
        return {"frames": self.received, "badFrames": self.bad, "firstBad": self.first_bad, **fields}

    def exit_status(self):
        """0 when frames came and none was wrong, else 1."""
        return 0 if self.bad == 0 and self.received > 0 else 1


def hs_pattern_mismatch(array, frame):
    """None when `array` (on the current stream) holds the pattern the hs test producer writes for `frame`:
    a contiguous uint8 frame whose two halves hold (frame*7+1) and (frame*13+5), mod 256. Otherwise what was
    found: the first and last byte, how many bytes differ, and the two expected values."""
    want, bad_layout = pattern_layout(array, frame)
    if bad_layout is not None:
        return bad_layout
    flat = array.reshape(-1)
    wrong = cp.zeros(1, dtype=cp.uint64)
    if flat.size > 0:
        blocks = min((flat.size + 255) // 256, 1024)
        pattern_mismatches_kernel()((blocks,), (256,), (flat, np.uint64(flat.size), np.uint64(flat.size // 2), np.uint8(want[0]), np.uint8(want[1]), wrong))
    count = int(wrong[0])
    if count == 0:
        return None
    return {"frame": frame, "wrongBytes": count, "first": int(flat[0]), "last": int(flat[-1]), "want": want}


def fence_counter_bytes(slot_count):
    """Bytes of the fence-counter area: one u64 per slot, rounded up to 256 bytes."""
    return (slot_count * 8 + 255) // 256 * 256


def host_pattern_mismatch(array, frame):
    """As hs_pattern_mismatch, for a numpy.ndarray over the mapped segment."""
    want, bad_layout = pattern_layout(array, frame)
    if bad_layout is not None:
        return bad_layout
    flat = array.reshape(-1)
    half = flat.size // 2
    count = int(np.count_nonzero(flat[:half] != want[0])) + int(np.count_nonzero(flat[half:] != want[1]))
    if count == 0:
        return None
    return {"frame": frame, "wrongBytes": count, "first": int(flat[0]), "last": int(flat[-1]), "want": want}


def wait_segment_fence(segment, offset, value, timeout_s):
    """Polls the little-endian u64 at `offset` of the mapped segment until it is >= `value`; False on timeout.

    The producer's stream writes the counter (cuStreamWriteValue64 into the registered segment, or hs's host
    backend emulation) after the slot's bytes; a load that sees the value sees those bytes too (x86-64 and
    AArch64 order these loads; the value only grows, so a torn read can only be smaller)."""
    deadline = time.monotonic() + timeout_s
    spins = 0
    while struct.unpack_from("<Q", segment, offset)[0] < value:
        if time.monotonic() >= deadline:
            return False
        spins += 1
        if spins > 1000:
            time.sleep(0.0001)
    return True


def send_attach(sock, topic_id):
    """ATTACH with flags 0 (descriptors and releases over the socket, no mailbox): the subscriber is ready.

    The publisher sends nothing after HELLO and lends no lease until it read this, and drops a connection
    that sends none within its attach timeout (GOODBYE attach timeout)."""
    sock.sendall(struct.pack("<IHHII", MAGIC, VERSION, ATTACH, topic_id, 0).ljust(FRAME, b"\0"))


def check_device_hello(hello, pid):
    """The geometry of a device HELLO, checked as hs's importer checks it (decodeDeviceHello): returns
    (slot_count, slot_stride, allocation_bytes, device ordinal, the 64-byte handle).

    ProtocolError naming the first bad field: memory kind, producer pid (must be the socket peer `pid`), slot
    count (1..65536), slot stride (a positive multiple of 256 whose slots and counters stay below 2^53 bytes),
    allocation bytes (exactly the slots plus their fence counters)."""
    slot_count, slot_stride, allocation_bytes, memory_kind, _max_rank, producer_pid = struct.unpack_from("<IQQIII", hello, 12)
    if memory_kind != WIRE_CUDA_DEVICE:
        raise ProtocolError(f"not a device topic (memory kind {memory_kind})")
    if producer_pid != pid:
        raise ProtocolError(f"HELLO names pid {producer_pid} but the socket peer is pid {pid}")
    if not 1 <= slot_count <= MAX_TOPIC_SLOTS:
        raise ProtocolError(f"device hello rejected: slot count {slot_count} is outside 1..{MAX_TOPIC_SLOTS}")
    if slot_stride <= 0 or slot_stride % 256 != 0:
        raise ProtocolError(f"device hello rejected: slot stride {slot_stride} is not a positive multiple of 256 bytes")
    needed = slot_count * slot_stride + fence_counter_bytes(slot_count)
    if slot_stride > MAX_SAFE_U64 or needed > MAX_SAFE_U64:
        raise ProtocolError(f"device hello rejected: slot stride {slot_stride} x {slot_count} slots overflows a 53-bit byte count")
    if allocation_bytes != needed:
        raise ProtocolError(f"device hello rejected: allocation bytes {allocation_bytes} are not {slot_count} slots of {slot_stride} bytes plus their fence counters")
    ordinal = struct.unpack_from("<I", hello, 48)[0]
    return slot_count, slot_stride, allocation_bytes, ordinal, bytes(hello[120:184])


def libcuda():
    """libcuda.so.1 through ctypes, with cuMemGetAddressRange_v2's signature (OSError when it cannot be loaded)."""
    import ctypes

    driver = ctypes.CDLL("libcuda.so.1")
    driver.cuMemGetAddressRange_v2.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_size_t), ctypes.c_uint64]
    driver.cuMemGetAddressRange_v2.restype = ctypes.c_int
    return driver


def allocation_range(address, driver=None):
    """(base, size in bytes) of the allocation that holds device `address`, by cuMemGetAddressRange on the
    current context (CuPy made it current): through cuda-python when it is installed, else libcuda through
    ctypes (`driver`: a libcuda() stand-in). OSError when the driver refuses or cannot be loaded."""
    import ctypes

    if driver is None:
        bindings = cuda_python_driver()
        if bindings is not None and hasattr(bindings, "cuMemGetAddressRange"):
            status, base, size = bindings.cuMemGetAddressRange(bindings.CUdeviceptr(address))
            if int(status) != 0:
                raise OSError(f"cuMemGetAddressRange cannot size the imported allocation at {address:#x} ({status})")
            return int(base), int(size)
        driver = libcuda()
    base = ctypes.c_uint64(0)
    size = ctypes.c_size_t(0)
    status = driver.cuMemGetAddressRange_v2(ctypes.pointer(base), ctypes.pointer(size), ctypes.c_uint64(address))
    if status != 0:
        raise OSError(f"cuMemGetAddressRange cannot size the imported allocation at {address:#x} (CUresult {status})")
    return base.value, size.value


def check_imported_allocation(address, allocation_bytes, driver=None):
    """Refuses (ProtocolError naming allocation bytes) a HELLO that announced more bytes than the allocation its
    handle mapped at `address` holds from there, as hs's importer does: no slot or counter read lies past it."""
    base, size = allocation_range(address, driver)
    available = size - (address - base) if base <= address < base + size else 0
    if allocation_bytes > available:
        raise ProtocolError(f"device hello rejected: allocation bytes {allocation_bytes} exceed the {available} bytes of the allocation its handle maps (cuMemGetAddressRange)")
    return available


def send_release(sock, topic_id, slot, generation):
    """Gives the slot back (RELEASE); False when the publisher closed the topic after its last frame (nothing is left to return)."""
    try:
        sock.sendall(struct.pack("<IHHIIQ", MAGIC, VERSION, RELEASE, topic_id, slot, generation).ljust(FRAME, b"\0"))
    except (BrokenPipeError, ConnectionResetError):
        return False
    return True


def next_descriptor(sock, topic_id, slot_count, slot_stride, last_generation):
    """Reads the next frame: a checked DESCRIPTOR as (slot, generation, fence, flags, dtype, shape, strides,
    byte_offset, byte_length), or the GOODBYE's reason as a string. ProtocolError for a frame of another topic
    or type, a slot, rank or generation out of order, unknown flags, or a span that is not the strided span or
    leaves the slot."""
    kind, frame_topic, frame = read_frame(sock)
    if frame_topic != topic_id:
        raise ProtocolError("frame of another topic")
    if kind == GOODBYE:
        return GOODBYE_REASONS.get(struct.unpack_from("<I", frame, 12)[0], "goodbye")
    if kind != DESCRIPTOR:
        raise ProtocolError(f"unexpected frame type {kind}")
    slot, generation, fence, flags = struct.unpack_from("<IQQI", frame, 12)
    code, bits, lanes, rank = struct.unpack_from("<BBHI", frame, 36)
    byte_offset, byte_length = struct.unpack_from("<QQ", frame, 48)
    shape = struct.unpack_from("<8Q", frame, 64)[:rank] if rank <= MAX_RANK else ()
    strides = struct.unpack_from("<8Q", frame, 128)[:rank] if rank <= MAX_RANK else ()
    dtype = numpy_dtype(code, bits, lanes)
    span = 0 if 0 in shape else (1 + sum((n - 1) * s for n, s in zip(shape, strides))) * dtype.itemsize
    if slot >= slot_count or rank > MAX_RANK or generation <= last_generation[slot]:
        raise ProtocolError(f"descriptor rejected: slot {slot}, rank {rank}, generation {generation}")
    if flags not in (HOST_WRITER, DEVICE_FENCE) or span != byte_length or byte_offset + byte_length > slot_stride:
        raise ProtocolError(f"descriptor rejected: flags {flags}, span {span} vs {byte_length}, offset {byte_offset}")
    return slot, generation, fence, flags, dtype, shape, strides, byte_offset, byte_length


def consume_pinned_host(args, sock, pid, topic_id, fds, slot_count, slot_stride, segment_bytes):
    """The pinnedHost side: map the sealed segment that came with HELLO, ATTACH, wait on fences from the host, read, RELEASE."""
    try:
        if not fds:
            raise ProtocolError("the HELLO of a pinnedHost topic came without its segment descriptor")
        segment = map_sealed_segment(fds[0], segment_bytes)
    finally:
        close_fds(fds)
    has_counters = segment_bytes >= slot_count * slot_stride + fence_counter_bytes(slot_count)
    counters = slot_count * slot_stride
    last_generation = [0] * slot_count
    tally = FrameTally()
    fenced = 0
    end = "frame count reached"
    send_attach(sock, topic_id)
    try:
        while args.frames == 0 or tally.received < args.frames:
            descriptor = next_descriptor(sock, topic_id, slot_count, slot_stride, last_generation)
            if isinstance(descriptor, str):
                end = descriptor
                break
            slot, generation, fence, flags, dtype, shape, strides, byte_offset, byte_length = descriptor
            if flags == HOST_WRITER and fence != 0:
                raise ProtocolError(f"descriptor rejected: fence value {fence} on a host writer")
            if flags == DEVICE_FENCE:
                if not has_counters:
                    raise ProtocolError("descriptor rejected: DEVICE_FENCE on a segment without fence counters")
                if not 1 <= fence <= generation:
                    raise ProtocolError(f"descriptor rejected: fence value {fence} outside 1..{generation}")
                if not wait_segment_fence(segment, counters + 8 * slot, fence, args.fence_timeout):
                    raise ProtocolError(f"slot {slot}: the fence counter did not reach {fence} within {args.fence_timeout} s")
                fenced += 1
            last_generation[slot] = generation
            start = slot * slot_stride + byte_offset
            array = np.ndarray(shape, dtype=dtype, buffer=segment, offset=start, strides=tuple(s * dtype.itemsize for s in strides))
            mismatch = host_pattern_mismatch(array, tally.received) if args.check == "hs-pattern" else None
            del array
            tally.add(mismatch, slot, generation, fence)
            if not send_release(sock, topic_id, slot, generation):
                end = "connection closed"
                break
    except socket.timeout:
        raise read_timeout(args, pid, tally.received) from None
    finally:
        segment.close()
        sock.close()
    print(json.dumps(tally.report(fence="host-poll" if fenced > 0 else "none", memory="pinnedHost", end=end)))
    return tally.exit_status()


def read_timeout(args, pid, received):
    """The TopicTimeout of a publisher that sent no frame within --read-timeout."""
    return TopicTimeout(
        f"topic {args.topic!r}: no frame from the publisher (pid {pid}) within {args.read_timeout:g} s after "
        f"{received} frames (--read-timeout; 0 waits forever): is it still producing, or stopped or hung? "
        "An idle topic needs a longer --read-timeout"
    )


def frame_count(text):
    """argparse type of --frames: a non-negative decimal integer."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer (0: until GOODBYE), got {text!r}")
    return value


def timeout_seconds(text):
    """argparse type of --hello-timeout and --read-timeout: a non-negative number of seconds."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a non-negative number of seconds, got {text!r}")
    return value


class TopicTimeout(ConnectionError):
    """The publisher did not answer within a --hello-timeout or --read-timeout."""


def connect_topic(topic, directory, hello_timeout):
    """A socket connected to the topic's Unix socket; ConnectionError naming both when nobody serves it.

    The socket times out after `hello_timeout` seconds (0: never), for the connect and the HELLO read."""
    path = topic_socket(topic, directory)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(hello_timeout or None)
    try:
        sock.connect(path)
    except socket.timeout:
        sock.close()
        raise TopicTimeout(
            f"topic {topic!r}: connecting to {path} took more than {hello_timeout:g} s (--hello-timeout); "
            "its publisher is not accepting connections: is it stopped, overloaded or hung?"
        ) from None
    except (FileNotFoundError, ConnectionRefusedError) as error:
        sock.close()
        raise ConnectionError(
            f"cannot connect to topic {topic!r} at {path}: {error.strerror}; is the topic's publisher running "
            f"(as this user, with its sockets in {os.path.dirname(path)})?"
        ) from None
    return sock


def open_topic(args):
    """Connects to the topic, checks the publisher's uid and reads its HELLO within --hello-timeout; later reads
    time out after --read-timeout (a publisher that stops sending ends the run).
    Returns (socket, publisher pid, topic id, HELLO payload, the descriptors that came with it: the caller's)."""
    sock = connect_topic(args.topic, args.dir, args.hello_timeout)
    pid, uid, _gid = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
    if uid != os.getuid():
        raise ProtocolError(f"the topic's publisher runs as uid {uid}, not as this user")
    try:
        kind, topic_id, hello, fds = read_hello(sock)
    except socket.timeout:
        sock.close()
        raise TopicTimeout(
            f"topic {args.topic!r}: no HELLO from the publisher (pid {pid}) on {topic_socket(args.topic, args.dir)} within "
            f"{args.hello_timeout:g} s (--hello-timeout); check that it is running and not stopped, and that it has room "
            "for another subscriber"
        ) from None
    sock.settimeout(args.read_timeout or None)
    if kind != HELLO:
        close_fds(fds)
        raise ProtocolError(f"expected HELLO, got frame type {kind}")
    return sock, pid, topic_id, hello, fds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topic", required=True)
    parser.add_argument("--frames", type=frame_count, default=0, help="stop after N frames (0: until GOODBYE)")
    parser.add_argument("--check", choices=["none", "hs-pattern"], default="none")
    parser.add_argument("--dir", default=None, help="topic socket directory (default: the per-user one)")
    parser.add_argument("--hello-timeout", type=timeout_seconds, default=5.0, help="seconds to connect and receive HELLO (default 5; 0: no limit)")
    parser.add_argument("--read-timeout", type=timeout_seconds, default=30.0, help="seconds to wait for each frame after HELLO (default 30; 0: no limit)")
    parser.add_argument("--memory", choices=["cudaDevice", "pinnedHost"], default="cudaDevice", help="the topic's memory kind (pinnedHost needs only NumPy)")
    parser.add_argument("--fence-timeout", type=float, default=5.0, help="seconds a pinnedHost fence poll may take (default 5)")
    args = parser.parse_args()
    if args.memory == "pinnedHost":
        import_numpy()
        sock, pid, topic_id, hello, fds = open_topic(args)
        slot_count, slot_stride, segment_bytes, memory_kind, _max_rank, producer_pid = struct.unpack_from("<IQQIII", hello, 12)
        if memory_kind != WIRE_PINNED_HOST:
            raise ProtocolError(f"topic {args.topic} is not a pinnedHost topic (memory kind {memory_kind})")
        if producer_pid != pid:
            raise ProtocolError(f"HELLO names pid {producer_pid} but the socket peer is pid {pid}")
        if not 1 <= slot_count <= 65536 or slot_stride % 256 != 0 or segment_bytes < slot_count * slot_stride:
            raise ProtocolError("HELLO geometry is inconsistent")
        return consume_pinned_host(args, sock, pid, topic_id, fds, slot_count, slot_stride, segment_bytes)
    import_cupy()

    # The publisher drops a connection that sends no ATTACH within its attach timeout (2 s by default) of
    # HELLO, and one that holds a slot past its lease timeout (then reuses the slot). So the slow first-time
    # work happens before connecting: the CUDA context, importing cuda-python, and CuPy compiling the
    # check's kernels (seconds on a cold kernel cache).
    cp.cuda.Device().synchronize()
    wait_fence = fence_waiter()
    if args.check == "hs-pattern":
        hs_pattern_mismatch(cp.zeros(2, dtype=cp.uint8), 0)
        cp.cuda.Stream.null.synchronize()

    sock, pid, topic_id, hello, fds = open_topic(args)
    # A device topic shares its memory by CUDA IPC handle: its HELLO carries no descriptor.
    close_fds(fds)
    if fds:
        raise ProtocolError(f"the HELLO of a device topic came with {len(fds)} descriptors, expected none")
    try:
        slot_count, slot_stride, segment_bytes, ordinal, handle = check_device_hello(hello, pid)
    except ProtocolError as error:
        sock.close()
        raise ProtocolError(f"topic {args.topic}: {error}") from None

    cp.cuda.Device(ordinal).use()
    base = cp.cuda.runtime.ipcOpenMemHandle(handle)
    try:
        # The handle maps the exporter's whole allocation: use no byte past its end, whatever HELLO announced.
        check_imported_allocation(base, segment_bytes)
        # Imported and checked: now the publisher may lend this subscriber slots.
        send_attach(sock, topic_id)
    except BaseException:
        cp.cuda.runtime.ipcCloseMemHandle(base)
        sock.close()
        raise
    pool = cp.cuda.MemoryPointer(cp.cuda.UnownedMemory(base, segment_bytes, owner=None), 0)
    counters = base + slot_count * slot_stride
    stream = cp.cuda.Stream(non_blocking=True)
    last_generation = [0] * slot_count

    tally = FrameTally()
    end = "frame count reached"
    fence_mode = "device" if wait_fence is not None else "host-poll"
    try:
        while args.frames == 0 or tally.received < args.frames:
            descriptor = next_descriptor(sock, topic_id, slot_count, slot_stride, last_generation)
            if isinstance(descriptor, str):
                end = descriptor
                break
            slot, generation, fence, flags, dtype, shape, strides, byte_offset, byte_length = descriptor
            last_generation[slot] = generation

            if flags == DEVICE_FENCE:
                if wait_fence is not None:
                    try:
                        wait_fence(stream, counters + 8 * slot, fence)
                    except (TypeError, RuntimeError) as error:
                        print(f"consume.py: device fence wait unavailable ({error}); polling the counter from the host", file=sys.stderr)
                        wait_fence, fence_mode = None, "host-poll"
                if wait_fence is None:
                    host_poll_fence(counters + 8 * slot, fence)
            with stream:
                array = cp.ndarray(shape, dtype=dtype, memptr=pool + slot * slot_stride + byte_offset, strides=tuple(s * dtype.itemsize for s in strides))
                mismatch = hs_pattern_mismatch(array, tally.received) if args.check == "hs-pattern" else None
            stream.synchronize()
            tally.add(mismatch, slot, generation, fence)
            if not send_release(sock, topic_id, slot, generation):
                end = "connection closed"
                break
    except socket.timeout:
        raise read_timeout(args, pid, tally.received) from None
    finally:
        stream.synchronize()
        cp.cuda.runtime.ipcCloseMemHandle(base)
        sock.close()

    print(json.dumps(tally.report(fence=fence_mode, device=ordinal, end=end)))
    return tally.exit_status()


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (ProtocolError, ConnectionError, OSError) as error:
        print(f"consume.py: {error}", file=sys.stderr)
        sys.exit(2)
