#!/usr/bin/python3
"""The 100000² five-level OME-Zarr goal: first frame and panning under software GL.

    ui/bench/mosaic_bench.py --viewer build/release/app/stacklens \
        --file /work/bench-data/mosaic100k.ome.zarr [--runs 3] [--frames 300] [--step 16]

Writes the mosaic with write_mosaic_zarr.py when FILE does not exist (about 1 GB, see there),
then under xvfb-run (1280 × 1024): `stacklens --first-frame-benchmark FILE` --runs times
(median), and `stacklens --pan-benchmark FILE --frames N --pan-step S` at zoom 0.25 (display
level 2 of 7: four full-resolution pixels per screen pixel) and at 1:1 (level 0). Prints each
run's JSON and a summary against the goals (first frame ≤ 1 s, panning ≥ 30 frames/s).
"""
import argparse
import json
import os
import subprocess
import sys

from bench_common import viewer_json

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--viewer", required=True)
    p.add_argument("--file", required=True)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--frames", type=int, default=300)
    p.add_argument("--step", type=int, default=16)
    p.add_argument("--timeout", type=int, default=300)
    args = p.parse_args()
    if not os.path.exists(args.file):
        subprocess.run([sys.executable, os.path.join(HERE, "write_mosaic_zarr.py"), args.file],
                       check=True)
    first = []
    for _ in range(args.runs):
        first.append(viewer_json(args.viewer, ["--first-frame-benchmark", args.file], args.timeout))
        print(json.dumps({"run": "first_frame", **first[-1]}), flush=True)
    pans = {}
    for zoom in ("0.25", "1"):
        pans[zoom] = viewer_json(args.viewer, [
            "--pan-benchmark", args.file, "--pan-zoom", zoom, "--frames", str(args.frames),
            "--pan-step", str(args.step)], args.timeout)
        print(json.dumps({"run": f"pan zoom {zoom}", **pans[zoom]}), flush=True)
    ff = sorted(r["first_frame_ms"] for r in first)
    summary = {"first_frame_ms_median": ff[len(ff) // 2],
               "first_frame_peak_rss_mb_max": max(r["peak_rss_mb"] for r in first)}
    for zoom, r in pans.items():
        summary[f"pan_{zoom}"] = {k: r.get(k) for k in (
            "level", "fps_median", "fps_p5", "frame_p50_ms", "frame_p95_ms", "placeholder_frames",
            "frames", "move_refined_p50_ms", "move_refined_p95_ms", "move_refined_max_ms",
            "tiles_read", "tiles_cancelled", "refine_after_pan_ms", "gui_stall_max_ms",
            "peak_rss_mb")}
    summary["goal_first_frame_1s"] = summary["first_frame_ms_median"] <= 1000
    summary["goal_pan_30fps"] = all(r["fps_median"] >= 30 for r in pans.values())
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
