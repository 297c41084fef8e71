#!/usr/bin/python3
# Reference display limits for tests/render/limits_test.cpp: astropy's ZScaleInterval and numpy
# percentiles of deterministic test images (the same formula is evaluated in the test).
# Run with Debian's python3-astropy: /usr/bin/python3 tests/render/data/make_limits_reference.py
import os

import numpy as np
from astropy.visualization import ZScaleInterval


def test_image(width, height):
    y, x = np.mgrid[0:height, 0:width].astype(np.float64)
    v = 100.0 + 20.0 * np.sin(0.3 * x) * np.cos(0.2 * y) + 0.5 * x
    xi, yi = x.astype(np.int64), y.astype(np.int64)
    v[(xi * 7 + yi * 13) % 97 == 0] = 5000.0
    v[(xi * 3 + yi * 5) % 89 == 0] = -300.0
    v = v.astype(np.float32)
    v[(xi + yi * width) % 211 == 0] = np.nan
    return v


def main():
    lines = ["# width height zscale_low zscale_high p99.5_low p99.5_high p90_low p90_high"]
    for w, h in [(64, 48), (300, 200), (7, 3)]:
        img = test_image(w, h)
        zl, zh = ZScaleInterval().get_limits(img)
        finite = img[np.isfinite(img)]
        p = [np.percentile(finite, q) for q in (0.25, 99.75, 5.0, 95.0)]
        lines.append(" ".join([str(w), str(h)] + [repr(float(v)) for v in (zl, zh, *p)]))
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "limits_reference.txt")
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
