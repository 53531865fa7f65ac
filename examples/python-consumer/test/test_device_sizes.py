"""consume.py's device HELLO checks (no GPU needed, but one test): the announced allocation size checked
exactly as hs's importer checks it, the imported allocation measured with cuMemGetAddressRange, and ATTACH.

    python3 -m unittest discover -s examples/python-consumer/test
"""
import importlib.util
import os
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_timeouts import STUB_CUPY  # noqa: E402  (the stub CuPy of the timeout tests)

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONSUME = os.path.join(HERE, "consume.py")
spec = importlib.util.spec_from_file_location("consume", CONSUME)
consume = importlib.util.module_from_spec(spec)
spec.loader.exec_module(consume)


def device_hello(slot_count, slot_stride, allocation_bytes=None, pid=None, kind=2):
    frame = bytearray(256)
    struct.pack_into("<IHHI", frame, 0, consume.MAGIC, consume.VERSION, consume.HELLO, 7)
    if allocation_bytes is None:
        allocation_bytes = slot_count * slot_stride + consume.fence_counter_bytes(slot_count)
    struct.pack_into("<IQQIII", frame, 12, slot_count, slot_stride, allocation_bytes, kind, 1, pid or os.getpid())
    struct.pack_into("<I", frame, 48, 3)
    frame[120:184] = bytes(range(64))
    return bytes(frame)


class FakeDriver:
    """Stands in for libcuda: cuMemGetAddressRange_v2 reports the allocation [base, base + size)."""

    def __init__(self, base, size, status=0):
        self.base, self.size, self.status = base, size, status
        self.asked = []

    def cuMemGetAddressRange_v2(self, pbase, psize, address):
        self.asked.append(address.value)
        pbase.contents.value = self.base
        psize.contents.value = self.size
        return self.status


class DeviceHelloSizes(unittest.TestCase):
    def test_accepts_exactly_the_slots_plus_their_fence_counters(self):
        slot_count, slot_stride, allocation_bytes, ordinal, handle = consume.check_device_hello(device_hello(4, 1024), os.getpid())
        self.assertEqual((slot_count, slot_stride, allocation_bytes, ordinal, handle), (4, 1024, 4 * 1024 + 256, 3, bytes(range(64))))

    def test_refuses_any_other_allocation_size_naming_allocation_bytes(self):
        for announced in (4 * 1024, 4 * 1024 + 255, 4 * 1024 + 257, 1 << 20):
            with self.subTest(announced=announced), self.assertRaisesRegex(consume.ProtocolError, f"allocation bytes {announced} are not 4 slots of 1024 bytes plus their fence counters"):
                consume.check_device_hello(device_hello(4, 1024, announced), os.getpid())

    def test_refuses_a_geometry_past_53_bits_naming_the_slot_stride(self):
        hello = device_hello(65536, 2**46, 2**53 - 1)
        with self.assertRaisesRegex(consume.ProtocolError, r"slot stride 70368744177664 x 65536 slots overflows a 53-bit byte count"):
            consume.check_device_hello(hello, os.getpid())
        with self.assertRaisesRegex(consume.ProtocolError, "overflows a 53-bit byte count"):
            consume.check_device_hello(device_hello(1, 2**53, 2**53 + 256), os.getpid())

    def test_refuses_bad_counts_strides_kinds_and_pids(self):
        cases = [
            (device_hello(0, 1024, 0), "slot count 0 is outside 1..65536"),
            (device_hello(65537, 256, 0), "slot count 65537 is outside 1..65536"),
            (device_hello(2, 1000, 2256), "slot stride 1000 is not a positive multiple of 256 bytes"),
            (device_hello(2, 0, 256), "slot stride 0 is not a positive multiple"),
            (device_hello(2, 1024, kind=1), "not a device topic"),
            (device_hello(2, 1024, pid=os.getpid() + 1), "HELLO names pid"),
        ]
        for hello, message in cases:
            with self.subTest(message=message), self.assertRaisesRegex(consume.ProtocolError, message):
                consume.check_device_hello(hello, os.getpid())


class ImportedAllocation(unittest.TestCase):
    def test_accepts_announced_bytes_the_mapped_allocation_holds(self):
        driver = FakeDriver(base=0x7000_0000, size=8192)
        self.assertEqual(consume.check_imported_allocation(0x7000_0000, 8192, driver), 8192)
        self.assertEqual(driver.asked, [0x7000_0000])
        self.assertEqual(consume.check_imported_allocation(0x7000_0000, 4096, driver), 8192)

    def test_refuses_announced_bytes_above_the_allocation_naming_allocation_bytes(self):
        with self.assertRaisesRegex(consume.ProtocolError, r"allocation bytes 66048 exceed the 2304 bytes of the allocation its handle maps"):
            consume.check_imported_allocation(0x7000_0000, 66048, FakeDriver(base=0x7000_0000, size=2304))
        # Measured from the mapped address, not from the allocation's base.
        with self.assertRaisesRegex(consume.ProtocolError, "exceed the 4096 bytes"):
            consume.check_imported_allocation(0x7000_1000, 8192, FakeDriver(base=0x7000_0000, size=8192))

    def test_a_driver_that_cannot_size_the_mapping_is_an_error(self):
        with self.assertRaisesRegex(OSError, r"cuMemGetAddressRange cannot size the imported allocation .*CUresult 1"):
            consume.check_imported_allocation(0x7000_0000, 256, FakeDriver(base=0, size=0, status=1))

    @unittest.skipUnless(importlib.util.find_spec("cupy") is not None, "measuring a real allocation needs CuPy and a CUDA device (the H200 run covers it)")
    def test_measures_a_real_allocation_with_libcuda(self):
        import cupy

        try:
            cupy.cuda.runtime.getDeviceCount()
        except cupy.cuda.runtime.CUDARuntimeError as error:
            self.skipTest(f"no CUDA device: {error}")
        memory = cupy.cuda.runtime.malloc(1 << 20)
        try:
            base, size = consume.allocation_range(memory)
            self.assertEqual(base, memory)
            self.assertGreaterEqual(size, 1 << 20)
            with self.assertRaises(consume.ProtocolError):
                consume.check_imported_allocation(memory, size + 1)
        finally:
            cupy.cuda.runtime.free(memory)


class Attach(unittest.TestCase):
    def test_send_attach_writes_one_attach_frame_with_flags_zero(self):
        left, right = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            consume.send_attach(left, 7)
            frame = right.recv(512)
            self.assertEqual(len(frame), 256)
            self.assertEqual(struct.unpack_from("<IHHII", frame, 0), (consume.MAGIC, consume.VERSION, consume.ATTACH, 7, 0))
            self.assertEqual(frame[16:], bytes(240))
        finally:
            left.close()
            right.close()


class DevicePathAgainstAFakePublisher(unittest.TestCase):
    """consume.py's device path end to end, with a stub CuPy and a stub cuda-python driver whose
    cuMemGetAddressRange reports `measured` bytes from the mapped address."""

    def run_against(self, measured):
        with tempfile.TemporaryDirectory() as directory:
            cupy = os.path.join(directory, "stub", "cupy")
            bindings = os.path.join(directory, "stub", "cuda", "bindings")
            os.makedirs(cupy)
            os.makedirs(bindings)
            with open(os.path.join(cupy, "__init__.py"), "w") as f:
                f.write(STUB_CUPY)
            for package in (os.path.dirname(bindings), bindings):
                open(os.path.join(package, "__init__.py"), "w").close()
            with open(os.path.join(bindings, "driver.py"), "w") as f:
                f.write(f"def CUdeviceptr(a): return a\ndef cuMemGetAddressRange(a): return (0, a, {measured})\n")
            path = os.path.join(directory, "dev.sock")
            server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            server.bind(path)
            server.listen(1)
            got = []

            def serve():
                conn, _ = server.accept()
                conn.sendall(device_hello(2, 1024))
                data = b""
                while len(data) < 256:
                    chunk = conn.recv(256 - len(data))
                    if not chunk:
                        break
                    data += chunk
                got.append(data)
                if len(data) == 256:  # attached: say goodbye (closed)
                    conn.sendall(struct.pack("<IHHII", consume.MAGIC, consume.VERSION, consume.GOODBYE, 7, 1).ljust(256, b"\0"))
                conn.close()

            thread = threading.Thread(target=serve, daemon=True)
            thread.start()
            env = {**os.environ, "PYTHONPATH": os.path.join(directory, "stub")}
            child = subprocess.run([sys.executable, CONSUME, "--topic", "dev", "--dir", directory], env=env, capture_output=True, text=True, timeout=30)
            thread.join(10)
            server.close()
            return child, got

    @unittest.skipUnless(importlib.util.find_spec("numpy"), "NumPy is not installed")
    def test_sends_attach_once_the_imported_allocation_holds_the_announced_bytes(self):
        child, got = self.run_against(2 * 1024 + 256)
        self.assertEqual(len(got), 1)
        self.assertEqual(struct.unpack_from("<IHHII", got[0], 0), (consume.MAGIC, consume.VERSION, consume.ATTACH, 7, 0), child.stderr)
        self.assertIn('"end": "goodbye: closed"', child.stdout, child.stderr)

    @unittest.skipUnless(importlib.util.find_spec("numpy"), "NumPy is not installed")
    def test_refuses_an_allocation_smaller_than_announced_without_attaching(self):
        child, got = self.run_against(1024)
        self.assertEqual(child.returncode, 2, child.stderr)
        self.assertIn("allocation bytes 2304 exceed the 1024 bytes of the allocation its handle maps", child.stderr)
        self.assertEqual(got, [b""])  # the connection closed, no ATTACH


if __name__ == "__main__":
    unittest.main()
