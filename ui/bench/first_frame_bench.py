#!/usr/bin/python3
"""First frame of a huge FITS plane: writes the plane (once) and times the viewer opening it.

    ui/bench/first_frame_bench.py --viewer build/release/app/stacklens \
        --file /work/big30000.fits --size 30000 [--runs 3] [--cold]
    ui/bench/first_frame_bench.py --viewer ... --file http://HOST/x.ome.zarr
    ui/bench/first_frame_bench.py --viewer ... --serve /work/pyr30000.ome.zarr

The file is a float32 image of size × size (3.6 GB at 30000), written row band by row band so
that writing it needs little memory; a folder (an OME-Zarr made from it, e.g. with
`stacklens-cli convert FILE OUT.ome.zarr --levels 5`) is opened as it is. The viewer runs with
--first-frame-benchmark under xvfb-run (or --launcher, e.g. the GPU machine's `run-on-gpu.sh env`)
and reports its peak resident memory (VmHWM) too.
--cold drops the file (every file of a folder) from the page cache before each run, as after a
reboot or for a file just copied from elsewhere. --file may be an http(s) URL of an OME-Zarr,
opened as it is; --serve FOLDER serves the Zarr folder on a loopback port for the runs (through
the Zarr-over-HTTP tests' threaded server, tests/io/zarr_http_server.py, with range requests and
keep-alive) and opens it by URL.
"""
import argparse
import json
import os
import subprocess
import sys
from contextlib import contextmanager

import numpy as np

from bench_common import drop_cache, viewer_json


def card(key, value):
    text = f"{key:<8}= {value:>20}"
    return f"{text:<80}".encode("ascii")


def write_plane(path, size):
    header = [card("SIMPLE", "T"), card("BITPIX", "-32"), card("NAXIS", "2"),
              card("NAXIS1", str(size)), card("NAXIS2", str(size))]
    header.append(f"{'END':<80}".encode("ascii"))
    block = b"".join(header)
    block += b" " * (-len(block) % 2880)
    x = np.arange(size, dtype=np.float32)
    tmp = path + ".part"
    with open(tmp, "wb") as f:
        f.write(block)
        band = 256
        for y0 in range(0, size, band):
            y = np.arange(y0, min(size, y0 + band), dtype=np.float32)[:, None]
            # Smooth structure plus a grid of bright points: something to look at when zoomed.
            rows = 100.0 + 50.0 * np.sin(x / 700.0) * np.cos(y / 900.0)
            rows[(y.astype(np.int64) % 512 == 0).ravel()[:, None] & (x % 512 == 0)] = 5000.0
            f.write(rows.astype(">f4").tobytes())
        f.write(b"\0" * (-(size * size * 4) % 2880))
    os.replace(tmp, path)


@contextmanager
def loopback_server(folder):
    """The URL of folder served on 127.0.0.1 while the block runs."""
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "io",
                          "zarr_http_server.py")
    root, name = os.path.split(os.path.abspath(folder.rstrip("/")))
    server = subprocess.Popen([sys.executable, script, root], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        port = int(server.stdout.readline())
        yield f"http://127.0.0.1:{port}/ok/{name}"
    finally:
        server.stdin.close()  # the server stops when its standard input closes
        server.wait(timeout=10)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--viewer", required=True)
    p.add_argument("--file", help="FITS file, Zarr folder or http(s) URL (or give --serve)")
    p.add_argument("--size", type=int, default=30000)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--cold", action="store_true")
    p.add_argument("--timeout", type=int, default=300)
    p.add_argument("--serve", metavar="FOLDER", help="serve this Zarr folder on loopback HTTP")
    p.add_argument("--launcher", help="command that runs the viewer on a display (default xvfb-run)")
    args = p.parse_args()
    if bool(args.file) == bool(args.serve):
        p.error("give --file or --serve")
    if args.serve:
        with loopback_server(args.serve) as url:
            run(args, url, args.serve)
    else:
        run(args, args.file, args.file)


def run(args, target, local):
    """Opens target (a path or URL) args.runs times; local is its files, for --cold."""
    expected = 2880 + -(-args.size * args.size * 4 // 2880) * 2880
    if os.path.isdir(local) or "://" in local:
        pass  # a Zarr folder made beforehand (e.g. stacklens-cli convert … --levels 5), or a URL
    elif not os.path.exists(local) or os.path.getsize(local) != expected:
        print(f"writing {local} ({expected / 2**30:.1f} GiB)", file=sys.stderr)
        write_plane(local, args.size)
    results = []
    for _ in range(args.runs):
        if args.cold and "://" not in local:
            drop_cache(local)
        results.append(viewer_json(args.viewer, ["--first-frame-benchmark", target], args.timeout,
                                   args.launcher))
        print(json.dumps(results[-1]), flush=True)
    ff = sorted(r["first_frame_ms"] for r in results)
    summary = {"size": args.size, "runs": len(results), "first_frame_ms_median": ff[len(ff) // 2]}
    if all("peak_rss_mb" in r for r in results):
        summary["peak_rss_mb_max"] = max(r["peak_rss_mb"] for r in results)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
