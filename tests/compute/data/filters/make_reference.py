#!/usr/bin/python3
"""Generates the SciPy reference data for the CPU filter tests (blur, median, outliers, zoom).

Run from this folder with Debian's python3-scipy (SciPy 1.10, NumPy 1.24):
    /usr/bin/python3 make_reference.py
Every file is raw little-endian float32, C order, named NAME_ZxYxX.bin.
"""
import numpy as np
import scipy.ndimage as ndi


def save(name, a):
    a = np.ascontiguousarray(a, dtype="<f4")
    z, y, x = a.shape
    a.tofile(f"{name}_{z}x{y}x{x}.bin")


rng = np.random.default_rng(20261122)

# Gaussian blur: 2D per slice, 3D, a kernel wider than the image, NaN-aware.
blur_in = rng.standard_normal((3, 13, 17)).astype(np.float32)
save("blur_in", blur_in)
save("blur2d_s1.5x2.0_t4", ndi.gaussian_filter(blur_in, (0, 1.5, 2.0), mode="reflect", truncate=4.0))
save("blur3d_s1.0x1.5x0.7_t3", ndi.gaussian_filter(blur_in, (1.0, 1.5, 0.7), mode="reflect", truncate=3.0))
small = rng.standard_normal((1, 5, 6)).astype(np.float32)
save("blur_small_in", small)
save("blur_small_s4_t4", ndi.gaussian_filter(small, (0, 4.0, 4.0), mode="reflect", truncate=4.0))
nan_in = blur_in[:1].copy()
nan_in[0, 3, 4] = np.nan
nan_in[0, 0, 0] = np.nan
nan_in[0, 7, 7:10] = np.nan
save("blur_nan_in", nan_in)
mask = ~np.isnan(nan_in)
num = ndi.gaussian_filter(np.where(mask, nan_in, 0).astype(np.float64), (0, 1.2, 1.2), mode="reflect", truncate=4.0)
den = ndi.gaussian_filter(mask.astype(np.float64), (0, 1.2, 1.2), mode="reflect", truncate=4.0)
save("blur_nanaware_s1.2_t4", np.where(mask, num / den, np.nan))

# Median: sizes 3, 5, 7 and 17 (a window larger than the image) on random data with ties.
med_in = rng.integers(0, 6, size=(2, 11, 14)).astype(np.float32) + rng.choice(
    [0, 0.5], size=(2, 11, 14)).astype(np.float32)
save("median_in", med_in)
for k in (3, 5, 7, 17):
    save(f"median_k{k}", ndi.median_filter(med_in, size=(1, k, k), mode="reflect"))

# Zoom: cubic and linear, mirror, grid_mode=False, mixed up- and down-sampling.
zoom_in = rng.standard_normal((6, 9, 11)).astype(np.float32)
save("zoom_in", zoom_in)
for order in (1, 3):
    save(f"zoom_o{order}_1.7x0.6x1.3", ndi.zoom(zoom_in, (1.7, 0.6, 1.3), order=order, mode="mirror", grid_mode=False))
    save(f"zoom2d_o{order}_1x2.5x0.45", ndi.zoom(zoom_in[:1], (1, 2.5, 0.45), order=order, mode="mirror", grid_mode=False))
