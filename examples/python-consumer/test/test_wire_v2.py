"""consume.py and wire version 2 (no GPU, no CuPy): the HELLO read with socket.recv_fds, sealed segments
mapped only when sealed, a version 1 publisher and a device HELLO with descriptors refused.

    python3 -m unittest discover -s examples/python-consumer/test
"""
import fcntl
import importlib.util
import os
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import unittest

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONSUME = os.path.join(HERE, "consume.py")
spec = importlib.util.spec_from_file_location("consume", CONSUME)
consume = importlib.util.module_from_spec(spec)
spec.loader.exec_module(consume)

F_ADD_SEALS = getattr(fcntl, "F_ADD_SEALS", 1033)
F_SEAL_SEAL = getattr(fcntl, "F_SEAL_SEAL", 0x1)


def device_hello(pid, version=2):
    frame = bytearray(256)
    struct.pack_into("<IHHI", frame, 0, consume.MAGIC, version, consume.HELLO, 7)
    struct.pack_into("<IQQIII", frame, 12, 1, 256, 512, 2, 1, pid)
    return bytes(frame)


def sealed_memfd(size, seals):
    fd = os.memfd_create("hs.test", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    os.ftruncate(fd, size)
    if seals:
        fcntl.fcntl(fd, F_ADD_SEALS, seals)
    return fd


class HelloDescriptors(unittest.TestCase):
    def test_read_hello_takes_the_descriptors_of_its_first_byte(self):
        left, right = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        fd = sealed_memfd(4096, consume.F_SEAL_SHRINK | consume.F_SEAL_GROW | F_SEAL_SEAL)
        try:
            socket.send_fds(left, [device_hello(os.getpid())], [fd])
            kind, topic_id, frame, fds = consume.read_hello(right)
            self.assertEqual((kind, topic_id, len(frame), len(fds)), (consume.HELLO, 7, 256, 1))
            consume.close_fds(fds)
        finally:
            os.close(fd)
            left.close()
            right.close()

    def test_read_hello_refuses_a_version_1_publisher_naming_both_versions(self):
        left, right = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            left.sendall(device_hello(os.getpid(), version=1))
            with self.assertRaisesRegex(consume.ProtocolError, "wire version 1, this consume.py speaks wire version 2"):
                consume.read_hello(right)
        finally:
            left.close()
            right.close()


class SealedSegments(unittest.TestCase):
    def test_a_sealed_segment_maps_and_cannot_be_truncated(self):
        fd = sealed_memfd(8192, consume.F_SEAL_SHRINK | consume.F_SEAL_GROW | F_SEAL_SEAL)
        try:
            with self.assertRaises(PermissionError):
                os.ftruncate(fd, 0)
            os.pwrite(fd, b"\x07", 8191)
            mapped = consume.map_sealed_segment(fd, 8192)
            self.assertEqual(mapped[8191], 7)
            mapped.close()
            with self.assertRaisesRegex(consume.ProtocolError, "holds 8192 bytes, fewer than the 8193"):
                consume.map_sealed_segment(fd, 8193)
        finally:
            os.close(fd)

    def test_an_unsealed_descriptor_is_refused(self):
        fd = sealed_memfd(4096, 0)
        try:
            with self.assertRaisesRegex(consume.ProtocolError, "not sealed against shrinking and growing"):
                consume.map_sealed_segment(fd, 4096)
        finally:
            os.close(fd)
        with tempfile.TemporaryFile() as plain:
            plain.truncate(4096)
            with self.assertRaisesRegex(consume.ProtocolError, "not sealed"):
                consume.map_sealed_segment(plain.fileno(), 4096)


class DeviceHelloWithDescriptors(unittest.TestCase):
    @unittest.skipUnless(importlib.util.find_spec("numpy"), "NumPy is not installed")
    def test_is_refused_and_its_descriptors_closed(self):
        with tempfile.TemporaryDirectory() as directory:
            stub = os.path.join(directory, "stub", "cupy")
            os.makedirs(stub)
            with open(os.path.join(stub, "__init__.py"), "w") as f:
                f.write("class cuda:\n    class Device:\n        def __init__(self, ordinal=0): pass\n        def synchronize(self): pass\n")
            path = os.path.join(directory, "fds.sock")
            server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            server.bind(path)
            server.listen(1)
            fd = sealed_memfd(4096, consume.F_SEAL_SHRINK | consume.F_SEAL_GROW)

            def serve():
                conn, _ = server.accept()
                socket.send_fds(conn, [device_hello(os.getpid())], [fd])
                conn.recv(1)
                conn.close()

            thread = threading.Thread(target=serve, daemon=True)
            thread.start()
            env = {**os.environ, "PYTHONPATH": os.path.join(directory, "stub")}
            child = subprocess.run([sys.executable, CONSUME, "--topic", "fds", "--dir", directory, "--hello-timeout", "5"], env=env, capture_output=True, text=True, timeout=30)
            server.close()
            os.close(fd)
            self.assertEqual(child.returncode, 2, child.stderr)
            self.assertIn("HELLO of a device topic came with 1 descriptors, expected none", child.stderr)


if __name__ == "__main__":
    unittest.main()
