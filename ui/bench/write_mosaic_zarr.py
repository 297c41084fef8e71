#!/usr/bin/python3
"""Writes the pan benchmark's sky mosaic: a multiscale OME-Zarr 0.4 image, mostly blank.

    ui/bench/write_mosaic_zarr.py /work/bench-data/mosaic100k.ome.zarr [--size 100000] \
        [--levels 5] [--fields 12] [--field 8192] [--chunk 1024]

Level 0 is size × size float32 (40 GB raw at 100000), written with python3-zarr (Zarr v2,
Blosc zstd with byte shuffle). Like a survey mosaic, most of the area was never observed: its
chunks are never written, so they read as the fill value NaN, which the Zarr spec allows. A
strip of `fields` observed fields of field × field pixels runs across the plane at mid height,
side by side from x = 0: sky noise (σ = 1, a background offset per field) with stars
(power-law fluxes, Gaussian PSF) and a few elongated galaxies, quantised to 1/8 (as fpack
quantises floating-point images) so that it compresses. Level k + 1 is the 2 × 2 mean of
level k everywhere: a field's level-k pixels are the means of its level-(k − 1) pixels, and
blank stays NaN. Fields start on multiples of 2^(levels − 1) pixels so that each level's field
is whole pixels. The folder is written as OUT.part and renamed when complete.
"""
import argparse
import json
import os
import shutil
import sys
import time

import numpy as np
import zarr
from numcodecs import Blosc


def field_pixels(rng, n):
    """One observed field: noise, a background offset, stars and galaxies, quantised."""
    sky = rng.standard_normal((n, n), dtype=np.float32)
    sky += np.float32(rng.uniform(-0.5, 0.5))
    # Stars: a power-law flux (many faint, few bright) through a Gaussian PSF of σ 1.5 px.
    r = 7
    yy, xx = np.mgrid[-r:r + 1, -r:r + 1].astype(np.float32)
    psf = np.exp(-(xx * xx + yy * yy) / (2 * 1.5 ** 2))
    psf /= psf.sum()
    count = n * n // 4000
    ys = rng.integers(r, n - r, count)
    xs = rng.integers(r, n - r, count)
    flux = (rng.pareto(1.5, count) + 1) * 20
    for y, x, f in zip(ys, xs, flux):
        sky[y - r:y + r + 1, x - r:x + r + 1] += np.float32(f) * psf
    # Galaxies: elongated exponential discs of 20–80 px.
    g = 40
    gy, gx = np.mgrid[-g:g + 1, -g:g + 1].astype(np.float32)
    for _ in range(max(1, n * n // 2_000_000)):
        y, x = rng.integers(g, n - g, 2)
        a, q, t = rng.uniform(5, 20), rng.uniform(0.3, 1), rng.uniform(0, np.pi)
        u = gx * np.cos(t) + gy * np.sin(t)
        v = (-gx * np.sin(t) + gy * np.cos(t)) / q
        sky[y - g:y + g + 1, x - g:x + g + 1] += np.float32(rng.uniform(5, 50)) * np.exp(
            -np.sqrt(u * u + v * v) / a)
    return np.round(sky * 8) / np.float32(8)


def halve(a):
    """The 2 × 2 mean (the sides are even here)."""
    return (a[0::2, 0::2] + a[1::2, 0::2] + a[0::2, 1::2] + a[1::2, 1::2]) * np.float32(0.25)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("out")
    p.add_argument("--size", type=int, default=100000)
    p.add_argument("--levels", type=int, default=5)
    p.add_argument("--fields", type=int, default=12)
    p.add_argument("--field", type=int, default=8192)
    p.add_argument("--chunk", type=int, default=1024)
    args = p.parse_args()
    align = 2 ** (args.levels - 1)
    if (args.size % align or args.field % align or args.chunk % align
            or args.fields * args.field > args.size or args.field > args.size // 2):
        sys.exit("size, field and chunk must be multiples of 2^(levels-1), and the fields fit")
    start = time.time()
    part = args.out.rstrip("/") + ".part"
    shutil.rmtree(part, ignore_errors=True)
    root = zarr.open_group(zarr.DirectoryStore(part), mode="w")
    compressor = Blosc(cname="zstd", clevel=3, shuffle=Blosc.SHUFFLE)
    arrays = []
    for k in range(args.levels):
        side = args.size >> k
        arrays.append(root.create_dataset(
            str(k), shape=(side, side), chunks=(args.chunk, args.chunk), dtype="<f4",
            compressor=compressor, fill_value=float("nan"), write_empty_chunks=False,
            dimension_separator="/"))
    root.attrs["multiscales"] = [{
        "version": "0.4", "name": "mosaic",
        "axes": [{"name": "y", "type": "space"}, {"name": "x", "type": "space"}],
        "datasets": [{"path": str(k), "coordinateTransformations": [
            {"type": "scale", "scale": [float(2 ** k), float(2 ** k)]}]}
            for k in range(args.levels)],
        "type": "mean"}]
    # On a chunk boundary of level 0, so that its chunks are written whole.
    y0 = (args.size // 2 - args.field // 2) // args.chunk * args.chunk
    rng = np.random.default_rng(41)
    for i in range(args.fields):
        x0 = i * args.field
        level = field_pixels(rng, args.field)
        for k in range(args.levels):
            if k:
                level = halve(level)
            arrays[k][y0 >> k:(y0 >> k) + level.shape[0], x0 >> k:(x0 >> k) + level.shape[1]] = level
        print(f"field {i + 1}/{args.fields} at x {x0}, y {y0}: {time.time() - start:.0f} s",
              file=sys.stderr, flush=True)
    shutil.rmtree(args.out, ignore_errors=True)
    os.replace(part, args.out)
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(args.out) for f in fs)
    print(json.dumps({"path": args.out, "size": args.size, "levels": args.levels,
                      "fields": args.fields, "field": args.field, "strip_y0": y0,
                      "bytes_on_disk": size, "seconds": round(time.time() - start, 1)}))


if __name__ == "__main__":
    main()
