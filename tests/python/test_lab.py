"""stacklens.lab: a tiny CPU sweep's arrays follow the schema, the CSV reads back the same, and bad
choices are ValueErrors."""

import os
import tempfile
import unittest

import numpy as np

from stacklens import lab


class LabSweepTest(unittest.TestCase):
    def test_tiny_cpu_sweep_returns_arrays_in_seconds_and_bytes(self):
        with tempfile.TemporaryDirectory() as tmp:
            csv = os.path.join(tmp, "s.csv")
            s = lab.sweep(ops=["blur", "sigmaclip"], sizes=[16, 32], threads=[1, "all"],
                          repeats=2, gpu=False, csv=csv)
            c = s.columns
            variants = 2 if s.machine["cpu_threads"] > 1 else 1
            self.assertEqual(len(s), 2 * 2 * variants)
            self.assertEqual(c["median_s"].dtype, np.float64)
            self.assertTrue(np.all(c["min_s"] <= c["median_s"]))
            self.assertTrue(np.all(c["median_s"] <= c["max_s"]))
            self.assertTrue(np.all(c["max_s"] < 60))  # seconds: a 32² op takes far less
            # Shapes and counts are integers (int64, checked), so equal means equal.
            for key in ("nz", "ny", "nx", "elements"):
                self.assertEqual(c[key].dtype, np.int64, key)
            np.testing.assert_array_equal(c["elements"], c["ny"] * c["nx"] * c["nz"])
            np.testing.assert_allclose(c["floor_s"], c["bytes"] / c["bandwidth_Bps"], rtol=1e-12)
            self.assertTrue(np.all(np.isnan(c["max_rel_diff"])))  # no GPU to compare with
            self.assertTrue(s.machine["note"])
            self.assertIsNone(s.break_even["blur"])
            self.assertIn("memory-bound", s.explain["blur"])
            x, y = s.curve("blur", "cpu-all-threads")
            self.assertEqual(x.dtype, np.int64)  # element counts: exact
            np.testing.assert_array_equal(x, [256, 1024])

            back = lab.read_csv(csv)
            # Names are strings: exact.
            np.testing.assert_array_equal(back.columns["op"], c["op"])
            np.testing.assert_array_equal(back.columns["variant"], c["variant"])
            # %.9g in the file: 9 significant digits.
            np.testing.assert_allclose(back.columns["median_s"], c["median_s"], rtol=5e-9)

    def test_figure_has_a_panel_per_op_when_matplotlib_is_there(self):
        try:
            import matplotlib
            matplotlib.use("Agg")
        except ImportError:
            self.skipTest("matplotlib is not installed")
        s = lab.sweep(ops=["blur", "projection"], sizes=[16, 32], repeats=1, gpu=False)
        fig = s.figure()
        visible = [ax for ax in fig.axes if ax.get_visible()]
        self.assertEqual([ax.get_title() for ax in visible], ["blur", "projection"])
        self.assertEqual(visible[0].get_xscale(), "log")
        self.assertEqual(visible[0].get_yscale(), "log")

    def test_bad_choices_are_value_errors(self):
        with self.assertRaises(ValueError):
            lab.sweep(ops=["fft"], sizes=[16], gpu=False)
        with self.assertRaises(ValueError):
            lab.sweep(ops=["blur"], sizes=[8], gpu=False)
        with self.assertRaises(ValueError):
            lab.sweep(ops=["blur"], sizes=[16], repeats=0, gpu=False)


if __name__ == "__main__":
    unittest.main()
