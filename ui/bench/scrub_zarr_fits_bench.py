#!/usr/bin/python3
"""Scrubbing the same z-stack as FITS and as OME-Zarr: slider-step latency side by side.

    ui/bench/scrub_zarr_fits_bench.py --viewer build/release/app/stacklens \
        --dir /work/bench-data [--slices 500] [--size 2048] [--runs 1] [--drop-cache] \
        [--dtype uint16|float32] [--zarr-writer python|CLI] [--launcher COMMAND]

Writes (once, kept while the shape matches) DIR/zstack.fits and DIR/zstack.ome.zarr: slices ×
size × size uint16 (the issue's stack is 2000 × 2048² float32, 32 GB in each format; uint16 and
500 slices keep both under 8 GB, with the slice's size kept). The pixels are a microscope-like
bead field: a background of 100 counts with Gaussian noise (σ 10), beads that brighten and fade
along z; the same values in both files. The FITS is BITPIX 16 with BZERO 32768; the OME-Zarr
(0.4, Zarr v2, python3-zarr) has one level, chunks of 1 × 1024 × 1024, Blosc zstd with byte
shuffle. --dtype float32 writes float32 instead (the FITS BITPIX -32). --zarr-writer CLI (a path
to stacklens-cli) writes the OME-Zarr with `stacklens-cli convert` from the FITS instead (0.4,
the same chunks, its default Blosc zstd with shuffle; it writes float32), for a machine without
python3-zarr: use it with --dtype float32 so that both files hold the same values. Then for each
file, stacklens --scrub-benchmark under xvfb-run (or --launcher, e.g. the GPU machine's
`run-on-gpu.sh env`) in two modes:
  cached: --frames 64, every slice read into the viewer's cache first (64 float32 slices fit its
          default budget), then stepped through: the display path alone;
  cold:   --scrub-cold --frames 200, no slice read beforehand, each step a new slice, read
          while scrubbing (the viewer's read-ahead of the next slice included).
--drop-cache drops the files from the page cache before each run. Prints each run's JSON and
a table of slider-step p50/p95/max in ms.
"""
import argparse
import json
import os
import shutil
import sys

import numpy as np

from bench_common import drop_cache, viewer_json


def card(key, value):
    text = f"{key:<8}= {value:>20}"
    return f"{text:<80}".encode("ascii")


def slices(n, size, dtype):
    """The stack's slices one at a time, the same on every call: counts rounded to uint16, or
    float32 unrounded (as processed data are, so that their low bits compress as such data do)."""
    rng = np.random.default_rng(2000)
    yy, xx = np.mgrid[0:size, 0:size]
    beads = np.zeros((size, size), np.float32)
    centres = rng.integers(16, size - 16, (size * size // 20000, 2))
    depth = rng.uniform(0, n, len(centres))
    # A bead is drawn in the slices near its depth; brightest at it.
    stamp_y, stamp_x = np.mgrid[-8:9, -8:9]
    stamp = np.exp(-(stamp_y ** 2 + stamp_x ** 2) / (2 * 2.0 ** 2)).astype(np.float32)
    del yy, xx
    noise = [rng.normal(100, 10, (size, size)).astype(np.float32) for _ in range(8)]
    for z in range(n):
        beads[:] = 0
        near = np.abs(depth - z) < 30
        for (y, x), d in zip(centres[near], depth[near]):
            beads[y - 8:y + 9, x - 8:x + 9] += stamp * np.float32(3000 * np.exp(-((z - d) / 10) ** 2))
        plane = np.roll(noise[z % 8], z * 7, axis=1) + beads
        if dtype == "float32":
            yield plane.astype(np.float32)
        else:
            yield np.clip(np.rint(plane), 0, 65535).astype(np.uint16)


def fits_header(n, size, dtype):
    cards = [card("SIMPLE", "T"), card("BITPIX", "16" if dtype == "uint16" else "-32"),
             card("NAXIS", "3"), card("NAXIS1", str(size)), card("NAXIS2", str(size)),
             card("NAXIS3", str(n))]
    if dtype == "uint16":
        cards += [card("BZERO", "32768"), card("BSCALE", "1")]
    block = b"".join(cards + [f"{'END':<80}".encode("ascii")])
    return block + b" " * (-len(block) % 2880)


def fits_bytes(plane, dtype):
    if dtype == "uint16":
        return (plane.astype(np.int32) - 32768).astype(">i2").tobytes()
    return plane.astype(">f4").tobytes()


def write_fits(fits_path, n, size, dtype, each_slice=lambda z, plane: None):
    """The FITS of the stack, renamed into place when complete; each_slice(z, plane) sees every
    slice as it is written (to write another file of the same values in the same pass)."""
    with open(fits_path + ".part", "wb") as f:
        f.write(fits_header(n, size, dtype))
        for z, plane in enumerate(slices(n, size, dtype)):
            f.write(fits_bytes(plane, dtype))
            each_slice(z, plane)
        f.write(b"\0" * (-(n * size * size * (2 if dtype == "uint16" else 4)) % 2880))
    os.replace(fits_path + ".part", fits_path)


def write_with_cli(fits_path, zarr_path, n, size, dtype, cli):
    """The FITS written here, the OME-Zarr by stacklens-cli convert from it."""
    import subprocess
    write_fits(fits_path, n, size, dtype)
    shutil.rmtree(zarr_path, ignore_errors=True)
    subprocess.run([cli, "convert", fits_path, zarr_path, "--zarr-version", "0.4",
                    "--zarr-chunks", "1,1024,1024"], check=True)


def write_both(fits_path, zarr_path, n, size, dtype):
    """The FITS and the OME-Zarr of the same slices, in one pass; each renamed when complete."""
    import zarr
    from numcodecs import Blosc
    part = zarr_path + ".part"
    shutil.rmtree(part, ignore_errors=True)
    root = zarr.open_group(zarr.DirectoryStore(part), mode="w")
    a = root.create_dataset("0", shape=(n, size, size), chunks=(1, 1024, 1024),
                            dtype="<u2" if dtype == "uint16" else "<f4",
                            compressor=Blosc(cname="zstd", clevel=3, shuffle=Blosc.SHUFFLE),
                            dimension_separator="/")
    root.attrs["multiscales"] = [{
        "version": "0.4", "name": "zstack",
        "axes": [{"name": "z", "type": "space"}, {"name": "y", "type": "space"},
                 {"name": "x", "type": "space"}],
        "datasets": [{"path": "0", "coordinateTransformations": [
            {"type": "scale", "scale": [1.0, 1.0, 1.0]}]}]}]
    write_fits(fits_path, n, size, dtype, lambda z, plane: a.__setitem__(z, plane))
    shutil.rmtree(zarr_path, ignore_errors=True)
    os.replace(part, zarr_path)


def disk_bytes(path):
    if not os.path.isdir(path):
        return os.path.getsize(path)
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--viewer", required=True)
    p.add_argument("--dir", required=True)
    p.add_argument("--slices", type=int, default=500)
    p.add_argument("--size", type=int, default=2048)
    p.add_argument("--runs", type=int, default=1)
    p.add_argument("--drop-cache", action="store_true")
    p.add_argument("--timeout", type=int, default=600)
    p.add_argument("--dtype", choices=("uint16", "float32"), default="uint16")
    p.add_argument("--zarr-writer", default="python",
                   help="python (python3-zarr) or the path of a stacklens-cli")
    p.add_argument("--launcher", help="command that runs the viewer on a display (default xvfb-run)")
    args = p.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    fits = os.path.join(args.dir, "zstack.fits")
    zarr_path = os.path.join(args.dir, "zstack.ome.zarr")
    shape = f"{args.slices}x{args.size}x{args.size} {args.dtype} {args.zarr_writer}"
    stamp = os.path.join(args.dir, "zstack.shape")
    if not (os.path.exists(stamp) and open(stamp).read() == shape
            and os.path.exists(fits) and os.path.isdir(zarr_path)):
        print(f"writing {fits} and {zarr_path} ({shape})", file=sys.stderr, flush=True)
        if args.zarr_writer == "python":
            write_both(fits, zarr_path, args.slices, args.size, args.dtype)
        else:
            write_with_cli(fits, zarr_path, args.slices, args.size, args.dtype, args.zarr_writer)
        with open(stamp, "w") as f:
            f.write(shape)
    print(json.dumps({"fits_bytes": disk_bytes(fits), "zarr_bytes": disk_bytes(zarr_path)}))
    modes = {"cached": ["--frames", "64"], "cold": ["--scrub-cold", "--frames", "200"]}
    table = []
    for mode, extra in modes.items():
        for name, path in (("FITS", fits), ("OME-Zarr", zarr_path)):
            for _ in range(args.runs):
                if args.drop_cache:
                    drop_cache(path)
                r = viewer_json(args.viewer, ["--scrub-benchmark", path] + extra, args.timeout,
                                args.launcher)
                print(json.dumps({"mode": mode, "format": name, **r}), flush=True)
                table.append((mode, name, r["frames"], r["p50_ms"], r["p95_ms"], r["max_ms"],
                              r["dropped"]))
    print(f"{'mode':<7} {'format':<9} {'steps':>5} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} "
          f"{'dropped':>7}")
    for row in table:
        print(f"{row[0]:<7} {row[1]:<9} {row[2]:>5} {row[3]:>8.2f} {row[4]:>8.2f} {row[5]:>8.2f} "
              f"{row[6]:>7}")


if __name__ == "__main__":
    main()
