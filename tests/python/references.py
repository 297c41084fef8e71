"""Independent NumPy references for the Python package's tests (brute force, closed forms)."""

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view


def gaussian_kernel(sigma, truncate=4.0):
    radius = int(truncate * sigma + 0.5)
    x = np.arange(-radius, radius + 1, dtype=np.float64)
    k = np.exp(-0.5 * (x / sigma) ** 2)
    return k / k.sum()


def blur(image, sigmas, truncate=4.0):
    """Separable Gaussian, edges half-sample symmetric (scipy's mode='reflect'), float64."""
    out = np.asarray(image, np.float64)
    for axis, sigma in enumerate(sigmas):
        if sigma <= 0:
            continue
        k = gaussian_kernel(sigma, truncate)
        r = len(k) // 2
        pad = [(0, 0)] * out.ndim
        pad[axis] = (r, r)
        padded = np.pad(out, pad, mode="symmetric")
        windows = sliding_window_view(padded, len(k), axis=axis)
        out = windows @ k
    return out


def median(image, size):
    r = size // 2
    pad = [(0, 0)] * (image.ndim - 2) + [(r, r), (r, r)]
    padded = np.pad(image, pad, mode="symmetric")
    w = sliding_window_view(padded, (size, size), axis=(-2, -1))
    return np.median(w, axis=(-2, -1))


def sigma_clip(values, kappa=3.0, iterations=10):
    v = np.asarray(values, np.float64).ravel()
    v = v[np.isfinite(v)]
    for _ in range(iterations):
        m, s = np.median(v), v.std()
        kept = v[(v >= m - kappa * s) & (v <= m + kappa * s)]
        if kept.size == v.size:
            break
        v = kept
    return v


def richardson_lucy_periodic(image, psf, iterations):
    """Richardson-Lucy with circular convolution, the PSF centred at index size // 2."""
    image = np.asarray(image, np.float64)
    kernel = np.zeros_like(image)
    kernel[tuple(slice(0, n) for n in psf.shape)] = psf
    kernel = np.roll(kernel, tuple(-(n // 2) for n in psf.shape), axis=tuple(range(psf.ndim)))
    axes = tuple(range(image.ndim))
    otf = np.fft.rfftn(kernel)
    estimate = image.copy()
    for _ in range(iterations):
        blurred = np.fft.irfftn(np.fft.rfftn(estimate) * otf, image.shape, axes=axes)
        ratio = image / np.maximum(blurred, 1e-12)
        estimate *= np.fft.irfftn(np.fft.rfftn(ratio) * np.conj(otf), image.shape, axes=axes)
    return estimate


def richardson_lucy_reflected(image, psf, iterations):
    """Richardson-Lucy whose every convolution reads the image mirrored past its edges (numpy's
    "symmetric" padding by the PSF's radius, then the interior of a circular convolution); the PSF
    is symmetric along each axis, so the correlation is the same convolution."""
    image = np.asarray(image, np.float64)
    radius = [n // 2 for n in psf.shape]
    padded_shape = tuple(n + 2 * r for n, r in zip(image.shape, radius))
    kernel = np.zeros(padded_shape)
    kernel[tuple(slice(0, n) for n in psf.shape)] = psf
    kernel = np.roll(kernel, tuple(-r for r in radius), axis=tuple(range(psf.ndim)))
    otf = np.fft.rfftn(kernel)
    inside = tuple(slice(r, r + n) for r, n in zip(radius, image.shape))

    def convolve(u):
        p = np.pad(u, [(r, r) for r in radius], mode="symmetric")
        return np.fft.irfftn(np.fft.rfftn(p) * otf, padded_shape)[inside]

    estimate = image.copy()
    for _ in range(iterations):
        ratio = image / np.maximum(convolve(estimate), 1e-12)
        estimate *= convolve(ratio)
    return estimate


def relative_l2(a, b):
    return float(np.linalg.norm(np.asarray(a, np.float64) - b) / np.linalg.norm(b))


# Float32 FFT results from two processes or thread counts differ by rounding: FFTW measures its
# plans in each process (and per thread count), so two processes may sum in different orders.
# The errors are absolute (relative to the image's scale, not to each voxel), so the bound is a
# fraction of the largest value. Against a float64 reference (richardson_lucy_periodic), our
# float32 3D runs of 16 x 48 x 40 to 32 x 200 x 200 voxels, 5 to 50 iterations, err by at most
# 6.3e-7 of the largest value, so any two plans differ by at most about 1.3e-6 of it; 1e-5 leaves
# a margin of eight, and stays far below what a wrong halo, block or boundary gives (1e-3 and
# more). The C++ tests use the same bound (tests/app/fft_rounding.h).
FFT_ROUNDING = 1e-5


def assert_fft_rounding_close(test, got, want, msg=None):
    got = np.asarray(got, np.float64)
    want = np.asarray(want, np.float64)
    test.assertEqual(got.shape, want.shape, msg)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=msg or "")
    scale = np.nanmax(np.abs(want))
    worst = float(np.nanmax(np.abs(got - want))) if got.size else 0.0
    test.assertLessEqual(worst, FFT_ROUNDING * scale,
                         f"{msg or ''}: differs by {worst:.3g}, more than rounding "
                         f"({FFT_ROUNDING:g} of the largest value {scale:.3g})")
