#!/usr/bin/python3
"""Float64 NumPy references for tests/compute/richardson_lucy_test.cpp.

Run with Debian's python3 (python3-numpy). For each case writes raw little-endian float32 files
rl_<case>_image.f32, rl_<case>_psf.f32 and rl_<case>_expected.f32; shapes and parameters are in
rl_cases.txt (name boundary threeD iterations image z y x psf z y x). The algorithm is the one
documented in compute/cpu/richardson_lucy.cpp, written here independently:
  periodic: est0 = image; est <- max(est * (conj(H) (x) (image / max(H (x) est, eps))), 0)
  reflect/zero: numpy.pad(image, (h, h + extra), "symmetric" / "constant") with h = psf // 2 and
  extra up to the next 2,3,5,7-smooth size, run periodic, crop.
"""
import numpy as np

rng = np.random.default_rng(2026)
EPS = 1e-12


def friendly(n):
    m = n
    while True:
        r = m
        for p in (2, 3, 5, 7):
            while r % p == 0:
                r //= p
        if r == 1:
            return m
        m += 1


def otf(psf, shape):
    big = np.zeros(shape)
    big[tuple(slice(0, s) for s in psf.shape)] = psf
    big = np.roll(big, [-(s // 2) for s in psf.shape], axis=tuple(range(len(shape))))
    return np.fft.rfftn(big)


def rl_periodic(img, psf, iters):
    H = otf(psf / psf.sum(), img.shape)
    est = img.copy()
    for _ in range(iters):
        blurred = np.fft.irfftn(np.fft.rfftn(est) * H, s=img.shape)
        ratio = img / np.maximum(blurred, EPS)
        corr = np.fft.irfftn(np.fft.rfftn(ratio) * np.conj(H), s=img.shape)
        est = np.maximum(est * corr, 0)
    return est


def rl(img, psf, iters, boundary):
    if boundary == "periodic":
        return rl_periodic(img, psf, iters)
    pads = []
    for n, s in zip(img.shape, psf.shape):
        h = s // 2
        pads.append((h, friendly(n + 2 * h) - n - h))
    mode = "symmetric" if boundary == "reflect" else "constant"
    padded = np.pad(img, pads, mode)
    out = rl_periodic(padded, psf, iters)
    return out[tuple(slice(a, a + n) for (a, _), n in zip(pads, img.shape))]


def scene(shape):
    img = np.full(shape, 0.05)
    for _ in range(12):
        idx = tuple(rng.integers(0, n) for n in shape)
        img[idx] += rng.uniform(1, 5)
    img += rng.uniform(0, 0.05, shape)
    return img


def gauss(shape, sig, shift):
    grids = np.meshgrid(*[np.arange(n) - (n // 2) - d for n, d in zip(shape, shift)], indexing="ij")
    r2 = sum((g / s) ** 2 for g, s in zip(grids, sig))
    return np.exp(-0.5 * r2)


cases = [
    ("periodic2d", "periodic", 0, 10, (1, 40, 48), (1, 8, 7), (0, 0.7, -0.4), (1, 1.5, 2.0)),
    ("periodic3d", "periodic", 1, 8, (10, 16, 20), (5, 5, 3), (0.5, -0.3, 0.2), (1.2, 1.0, 0.8)),
    ("reflect2d", "reflect", 0, 10, (1, 30, 37), (1, 9, 9), (0, 0.3, 0.5), (1, 1.7, 1.2)),
    ("zero2d", "zero", 0, 10, (1, 30, 37), (1, 9, 9), (0, 0.3, 0.5), (1, 1.7, 1.2)),
    ("reflect3d", "reflect", 1, 6, (7, 18, 13), (5, 7, 7), (0.0, 0.2, -0.2), (1.0, 1.3, 1.1)),
]
with open("rl_cases.txt", "w") as out:
    out.write("# written by make_richardson_lucy_reference.py\n")
    for name, boundary, three_d, iters, shape, pshape, shift, sig in cases:
        img = scene(shape).astype(np.float32)
        psf = gauss(pshape, sig, shift).astype(np.float32)
        if three_d:
            res = rl(img.astype(np.float64), psf.astype(np.float64), iters, boundary)
        else:  # 2D mode: each slice with the 2D PSF
            res = np.stack([rl(s.astype(np.float64), psf[0].astype(np.float64), iters, boundary)
                            for s in img])
        img.astype("<f4").tofile(f"rl_{name}_image.f32")
        psf.astype("<f4").tofile(f"rl_{name}_psf.f32")
        res.astype("<f4").tofile(f"rl_{name}_expected.f32")
        out.write(f"{name} {boundary} {three_d} {iters} {' '.join(map(str, shape))} "
                  f"{' '.join(map(str, pshape))}\n")
