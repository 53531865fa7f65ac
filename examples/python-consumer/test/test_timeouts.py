"""consume.py's HELLO and read timeouts, against a fake publisher on a Unix socket (no GPU, no CuPy).

    python3 -m unittest discover -s examples/python-consumer/test

A stub `cupy` package (written to a temporary directory put first on PYTHONPATH) stands in for CuPy, and a
stub cuda-python driver module measures the "imported" allocation (cuMemGetAddressRange); they are reached
after HELLO, where the read-timeout case needs them; NumPy must be installed for that case.
"""
import os
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import unittest

CONSUME = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "consume.py")
MAGIC, VERSION, HELLO = 0x50495348, 2, 1

STUB_CUPY = '''
class _Stream:
    null = None
    def __init__(self, non_blocking=False): pass
    def synchronize(self): pass
    def __enter__(self): return self
    def __exit__(self, *exc): return False
_Stream.null = _Stream()
class _Device:
    def __init__(self, ordinal=0): pass
    def use(self): pass
    def synchronize(self): pass
class _Runtime:
    memcpyDeviceToHost = 2
    @staticmethod
    def ipcOpenMemHandle(handle): return 4096
    @staticmethod
    def ipcCloseMemHandle(base): pass
class cuda:
    Stream = _Stream
    Device = _Device
    runtime = _Runtime
    @staticmethod
    def UnownedMemory(base, size, owner=None): return (base, size)
    @staticmethod
    def MemoryPointer(memory, offset): return memory
'''

# cuda-python's driver, as far as consume.py measures the imported allocation: 1 MiB from the mapped address.
STUB_DRIVER = '''
def CUdeviceptr(address): return address
def cuMemGetAddressRange(address): return (0, address, 1 << 20)
'''


def hello_frame(pid):
    frame = bytearray(256)
    struct.pack_into("<IHHI", frame, 0, MAGIC, VERSION, HELLO, 7)
    # one slot of 256 bytes plus its fence counter area (256 bytes), a cudaDevice topic (memory kind 2), rank 1
    struct.pack_into("<IQQIII", frame, 12, 1, 256, 512, 2, 1, pid)
    return bytes(frame)


class FakePublisher:
    """Listens on <dir>/<topic>.sock; sends HELLO when asked to, then nothing; keeps connections open."""

    def __init__(self, directory, topic, send_hello):
        self.path = os.path.join(directory, f"{topic}.sock")
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(self.path)
        self.server.listen(4)
        self.send_hello = send_hello
        self.connections = []
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        try:
            while True:
                conn, _ = self.server.accept()
                self.connections.append(conn)
                if self.send_hello:
                    conn.sendall(hello_frame(os.getpid()))
        except OSError:
            pass

    def close(self):
        self.server.close()
        for conn in self.connections:
            conn.close()


class ConsumeTimeouts(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        stub = os.path.join(self.tmp.name, "stub", "cupy")
        os.makedirs(stub)
        with open(os.path.join(stub, "__init__.py"), "w") as f:
            f.write(STUB_CUPY)
        bindings = os.path.join(self.tmp.name, "stub", "cuda", "bindings")
        os.makedirs(bindings)
        for package in (os.path.dirname(bindings), bindings):
            open(os.path.join(package, "__init__.py"), "w").close()
        with open(os.path.join(bindings, "driver.py"), "w") as f:
            f.write(STUB_DRIVER)
        self.env = {**os.environ, "PYTHONPATH": os.path.join(self.tmp.name, "stub")}

    def tearDown(self):
        self.tmp.cleanup()

    def consume(self, topic, *extra):
        started = time.monotonic()
        child = subprocess.run(
            [sys.executable, CONSUME, "--topic", topic, "--dir", self.tmp.name, *extra],
            env=self.env, capture_output=True, text=True, timeout=30,
        )
        return child, time.monotonic() - started

    def test_no_hello_within_the_hello_timeout(self):
        publisher = FakePublisher(self.tmp.name, "mute", send_hello=False)
        try:
            child, elapsed = self.consume("mute", "--hello-timeout", "0.5")
        finally:
            publisher.close()
        self.assertEqual(child.returncode, 2, child.stderr)
        self.assertIn("topic 'mute': no HELLO from the publisher", child.stderr)
        self.assertIn(publisher.path, child.stderr)
        self.assertIn("--hello-timeout", child.stderr)
        self.assertLess(elapsed, 20)

    @unittest.skipUnless(__import__("importlib").util.find_spec("numpy"), "NumPy is not installed")
    def test_no_frame_within_the_read_timeout(self):
        publisher = FakePublisher(self.tmp.name, "idle", send_hello=True)
        try:
            child, elapsed = self.consume("idle", "--hello-timeout", "5", "--read-timeout", "0.5")
        finally:
            publisher.close()
        self.assertEqual(child.returncode, 2, child.stderr)
        self.assertIn("topic 'idle': no frame from the publisher", child.stderr)
        self.assertIn("after 0 frames (--read-timeout; 0 waits forever)", child.stderr)
        self.assertLess(elapsed, 20)

    def test_timeouts_are_checked_arguments(self):
        child, _ = self.consume("any", "--read-timeout", "-1")
        self.assertEqual(child.returncode, 2)
        self.assertIn("must be a non-negative number of seconds", child.stderr)


if __name__ == "__main__":
    unittest.main()
