"""The whole-stack 3D deconvolution is set up once (compute/blocked/whole_stack_setup.h): Python's
plan for a volume is the one `stacklens-cli deconvolve --dry-run` prints for a file of that
shape under the same budgets, and its budgets follow the rule for a foreground job."""

import os
import shutil
import subprocess
import tempfile
import unittest

import numpy as np

import stacklens as sl
from stacklens import _stacklens

MIB = 1 << 20


class WholeStackPlan(unittest.TestCase):
    def test_budgets_follow_the_rule_for_a_foreground_job(self):
        # On the CPU the frames take half the host budget and the slabs the other half.
        for mb in (2, 8, 64):
            p = _stacklens._whole_stack_plan((40, 80, 72), psf_sigma=1.0, iterations=2,
                                             backend="cpu", ram_budget_mb=mb)
            self.assertEqual(p["frame_budget"], mb * MIB // 2)
            self.assertEqual(p["slab_budget"], mb * MIB - mb * MIB // 2)
            self.assertEqual(p["cpu_frame_budget"], mb * MIB // 2)

    def test_the_cli_dry_run_prints_the_same_plan(self):
        cli = os.environ.get("STACKLENS_CLI")
        if not cli:
            self.skipTest("STACKLENS_CLI is not set")
        folder = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, folder)
        shape = (40, 80, 72)
        # TIFF: read in whole slices, as an array in memory is.
        path = os.path.join(folder, "vol.tif")
        sl.write(path, np.arange(np.prod(shape), dtype=np.float32).reshape(shape) % 97)
        for mb in (1, 2, 4):
            with self.subTest(ram_budget_mb=mb):
                out = subprocess.run(
                    [cli, "deconvolve", path, os.path.join(folder, "o.tif"), "--psf-sigma", "1",
                     "--iterations", "2", "--mode", "3d", "--backend", "cpu", "--seams", "fast",
                     "--ram-budget-mb", str(mb), "--dry-run"],
                    check=True, capture_output=True, text=True).stdout
                p = _stacklens._whole_stack_plan(shape, psf_sigma=1.0, iterations=2,
                                                 backend="cpu", ram_budget_mb=mb)
                self.assertTrue(out.startswith("backend cpu\n" + p["describe"]), out + p["describe"])
                self.assertIn(f"results written {p['slab_slices']} slices at a time", out)
                self.assertIn(f"host memory for it at most {p['slab_budget'] >> 20} MiB", out)


if __name__ == "__main__":
    unittest.main()
