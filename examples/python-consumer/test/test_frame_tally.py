"""consume.py's FrameTally, the one place both receive loops (pinnedHost and cudaDevice) count frames and bad
frames, and the host pattern check it is fed with (NumPy, no GPU)."""

import importlib.util
import os
import unittest

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
spec = importlib.util.spec_from_file_location("consume", os.path.join(HERE, "consume.py"))
consume = importlib.util.module_from_spec(spec)
spec.loader.exec_module(consume)


@unittest.skipUnless(importlib.util.find_spec("numpy"), "NumPy is not installed")
class FrameTallyCounts(unittest.TestCase):
    def setUp(self):
        consume.import_numpy()
        self.np = consume.np

    def frame(self, index, size=8):
        """What the hs test producer writes for frame `index`: two halves of (i*7+1) and (i*13+5), mod 256."""
        half = size // 2
        data = self.np.empty(size, dtype=self.np.uint8)
        data[:half] = (index * 7 + 1) & 0xFF
        data[half:] = (index * 13 + 5) & 0xFF
        return data

    def test_good_frames_count_and_report_no_bad_frame(self):
        tally = consume.FrameTally()
        for i in range(3):
            tally.add(consume.host_pattern_mismatch(self.frame(i), tally.received), i % 2, i + 1, 0)
        self.assertEqual(tally.report(end="frame count reached"), {"frames": 3, "badFrames": 0, "firstBad": None, "end": "frame count reached"})
        self.assertEqual(tally.exit_status(), 0)

    def test_the_first_bad_frame_is_kept_with_its_slot_generation_and_fence(self):
        tally = consume.FrameTally()
        tally.add(consume.host_pattern_mismatch(self.frame(0), 0), 0, 1, 0)
        wrong = self.frame(1)
        wrong[-1] ^= 0xFF
        tally.add(consume.host_pattern_mismatch(wrong, 1), 1, 4, 4)
        tally.add(consume.host_pattern_mismatch(self.frame(0), 2), 2, 9, 9)  # frame 0's bytes where frame 2 belongs
        report = tally.report(memory="pinnedHost")
        self.assertEqual((report["frames"], report["badFrames"], report["memory"]), (3, 2, "pinnedHost"))
        self.assertEqual(report["firstBad"], {"frame": 1, "wrongBytes": 1, "first": 8, "last": 18 ^ 0xFF, "want": [8, 18], "slot": 1, "generation": 4, "fence": 4})
        self.assertEqual(tally.exit_status(), 1)

    def test_no_frame_is_a_failure_and_a_strided_frame_is_a_layout_mismatch(self):
        self.assertEqual(consume.FrameTally().exit_status(), 1)
        strided = self.np.zeros(8, dtype=self.np.uint8)[::2]
        mismatch = consume.host_pattern_mismatch(strided, 0)
        self.assertEqual((mismatch["wrongBytes"], mismatch["want"]), (4, [1, 5]))
        self.assertIn("not contiguous uint8", mismatch["layout"])


if __name__ == "__main__":
    unittest.main()
