#!/usr/bin/python3
"""Writes the small SciPy/astropy reference arrays the CUDA tests compare against
(tests/compute/cuda_reference_test.cpp). Raw little-endian float32 / int32, C order; the shapes
are fixed here and in the test. Run from this folder with Debian's python3-scipy/-astropy."""
import numpy as np
import scipy.ndimage as ndi
from astropy.stats import sigma_clip

rng = np.random.default_rng(20261122)


def save(name, a, dtype=np.float32):
    np.ascontiguousarray(a, dtype=dtype).tofile(name)


# Blur: 2D per slice (sigma z = 0) and a 3D blur whose radius exceeds the axis lengths.
blur_in = rng.normal(size=(3, 20, 17)).astype(np.float32)
save("cuda_blur_in.f32", blur_in)
save("cuda_blur_2d.f32", ndi.gaussian_filter(blur_in.astype(np.float64), (0, 2.0, 1.5), truncate=4.0))
small = rng.normal(size=(2, 6, 5)).astype(np.float32)
save("cuda_blur_small_in.f32", small)
save("cuda_blur_small_3d.f32", ndi.gaussian_filter(small.astype(np.float64), (1.0, 3.0, 2.5), truncate=4.0))

# Median: sizes 3, 5, 7 per slice, reflect boundary.
med_in = rng.random((2, 11, 13)).astype(np.float32)
save("cuda_median_in.f32", med_in)
for k in (3, 5, 7):
    save(f"cuda_median{k}.f32", ndi.median_filter(med_in, size=(1, k, k), mode="reflect"))

# Zoom: cubic and linear, mirror mode (scipy's grid_mode=False coordinates).
zoom_in = rng.random((5, 7, 9)).astype(np.float32)
save("cuda_zoom_in.f32", zoom_in)
for order in (1, 3):
    out = ndi.zoom(zoom_in.astype(np.float64), (1.6, 0.7, 2.3), order=order, mode="mirror")
    assert out.shape == (8, 5, 21), out.shape
    save(f"cuda_zoom_order{order}.f32", out)

# Sigma clipping: Gaussian noise with bright and dark outliers and a NaN.
clip_in = rng.normal(10.0, 2.0, size=(1, 40, 50)).astype(np.float32)
clip_in[0, ::7, ::9] += 40
clip_in[0, 3, 4] = -30
clip_in[0, 5, 5] = np.nan
save("cuda_clip_in.f32", clip_in)
kept = sigma_clip(clip_in, sigma=3, maxiters=None, cenfunc="median", stdfunc="std", masked=True)
vals = kept.compressed().astype(np.float64)
save("cuda_clip_stats.f64", np.array([vals.size, vals.mean(), np.median(vals), vals.std(),
                                       vals.min(), vals.max()]), dtype=np.float64)

# Labels: 8- and 4-connectivity of a random mask.
mask_in = rng.random((1, 30, 41)).astype(np.float32)
save("cuda_label_in.f32", mask_in)
for conn, structure in ((8, np.ones((3, 3))), (4, None)):
    lab, n = ndi.label(mask_in[0] > 0.6, structure=structure)
    save(f"cuda_label{conn}.i32", lab, dtype=np.int32)
