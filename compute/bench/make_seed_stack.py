#!/usr/bin/env python3
"""Writes the seed-shaped benchmark input of issue 15: a light-sheet-like uint16 stack (default
950 x 2048 x 2048) as FITS (BITPIX 16, BZERO 32768) and optionally BigTIFF, and a Gaussian PSF
of 128^3 (or --psf-size) as float32 FITS. Needs NumPy and SciPy (tifffile for TIFF).

    make_seed_stack.py OUT.fits PSF.fits [--tiff OUT.tif] [--shape Z Y X] [--psf-size N]
"""
import argparse

import numpy as np
from scipy import ndimage


def card(key, value):
    return f"{key:<8}= {value:>20}".ljust(80)


def fits_header(cards):
    text = "".join(cards) + "END".ljust(80)
    return text.ljust((len(text) + 2879) // 2880 * 2880).encode("ascii")


def pad(f, nbytes):
    f.write(b"\0" * (-nbytes % 2880))


def slices(shape, seed=1):
    """Beads blurred by a few pixels over a background, varying along z, as uint16."""
    nz, ny, nx = shape
    rng = np.random.default_rng(seed)
    bases = []
    for _ in range(8):
        points = np.zeros((ny, nx), np.float32)
        points[rng.integers(0, ny, 3000), rng.integers(0, nx, 3000)] = rng.uniform(2e3, 2e4, 3000)
        bases.append(ndimage.gaussian_filter(points, 2.5))
    for z in range(nz):
        s = bases[z % 8] * (0.6 + 0.4 * np.sin(z / 40.0)) + 200.0
        yield np.clip(s, 0, 65535).astype(np.uint16)


def main():
    a = argparse.ArgumentParser()
    a.add_argument("out")
    a.add_argument("psf")
    a.add_argument("--tiff")
    a.add_argument("--shape", type=int, nargs=3, default=[950, 2048, 2048])
    a.add_argument("--psf-size", type=int, default=128)
    args = a.parse_args()
    nz, ny, nx = args.shape
    tif = None
    if args.tiff:
        import tifffile
        tif = tifffile.TiffWriter(args.tiff, bigtiff=True)
    with open(args.out, "wb") as f:
        f.write(fits_header([card("SIMPLE", "T"), card("BITPIX", 16), card("NAXIS", 3),
                             card("NAXIS1", nx), card("NAXIS2", ny), card("NAXIS3", nz),
                             card("BZERO", 32768), card("BSCALE", 1)]))
        for s in slices(args.shape):
            f.write((s.astype(np.int32) - 32768).astype(">i2").tobytes())
            if tif:
                tif.write(s, contiguous=True)
        pad(f, nz * ny * nx * 2)
    if tif:
        tif.close()
    n = args.psf_size
    z, y, x = np.mgrid[0:n, 0:n, 0:n].astype(np.float32) - n // 2
    psf = np.exp(-(z * z / (2 * 8.0**2) + (y * y + x * x) / (2 * 3.0**2))).astype(">f4")
    with open(args.psf, "wb") as f:
        f.write(fits_header([card("SIMPLE", "T"), card("BITPIX", -32), card("NAXIS", 3),
                             card("NAXIS1", n), card("NAXIS2", n), card("NAXIS3", n)]))
        f.write(psf.tobytes())
        pad(f, psf.nbytes)


if __name__ == "__main__":
    main()
