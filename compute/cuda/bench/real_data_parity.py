#!/usr/bin/env python3
"""GPU-vs-CPU parity of stacklens-cli on real data (HorseHead.fits, the measured PSF stack):
runs each processing command with --backend cpu and --backend cuda and compares the outputs
(relative L2 for blur/resample/deconvolve, exact for median/outliers/labels, 1e-5 relative for
statistics and source tables). NumPy only (FITS read by hand), so it runs on the GPU machine.

    real_data_parity.py CLI DATA_DIR WORK_DIR
"""
import csv, json, os, subprocess, sys
import numpy as np

cli, data, work = sys.argv[1:4]
horse = os.path.join(data, "HorseHead.fits")
psf = os.path.join(data, "psf_rfi_8bit_imagej.tif")
failures = 0


def read_fits(path):
    raw = open(path, "rb").read()
    off = 0
    while off < len(raw):
        cards, done = {}, False
        while not done:
            block = raw[off:off + 2880]
            off += 2880
            for i in range(36):
                card = block[i * 80:(i + 1) * 80].decode("ascii", "replace")
                key = card[:8].strip()
                if key == "END":
                    done = True
                    break
                if card[8:10] == "= ":
                    cards[key] = card[10:].split("/")[0].strip()
        naxis = int(cards.get("NAXIS", 0))
        shape = [int(cards[f"NAXIS{i}"]) for i in range(naxis, 0, -1)]
        bitpix = int(cards["BITPIX"])
        n = int(np.prod(shape)) if naxis else 0
        if n:
            dt = {8: ">u1", 16: ">i2", 32: ">i4", -32: ">f4", -64: ">f8"}[bitpix]
            a = np.frombuffer(raw, dtype=dt, count=n, offset=off).reshape(shape)
            return a.astype(np.float64)
        off += ((n * abs(bitpix) // 8 + 2879) // 2880) * 2880
    raise RuntimeError("no image in " + path)


def run(args, backend):
    r = subprocess.run([cli] + args + ["--backend", backend], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} --backend {backend}: rc {r.returncode}: {r.stderr}")
    return r


def report(name, ok, detail):
    global failures
    failures += 0 if ok else 1
    print(f"{'OK  ' if ok else 'FAIL'} {name}: {detail}", flush=True)


def compare_images(name, args, src, tol):
    outs = {}
    for b in ("cpu", "cuda"):
        out = os.path.join(work, f"{name}_{b}.fits")
        run(args[:1] + [src, out] + args[1:], b)
        outs[b] = read_fits(out)
    c, g = outs["cpu"], outs["cuda"]
    if c.shape != g.shape:
        return report(name, False, f"shapes {c.shape} vs {g.shape}")
    if tol == 0:
        same = np.array_equal(c, g, equal_nan=True)
        return report(name, same, f"exact, {int(np.sum(~((c == g) | (np.isnan(c) & np.isnan(g)))))} differ")
    m = np.isfinite(c)
    rel = float(np.linalg.norm(g[m] - c[m]) / np.linalg.norm(c[m]))
    report(name, rel <= tol and np.array_equal(np.isnan(c), np.isnan(g)), f"relative L2 {rel:.2e} (≤ {tol:g})")


compare_images("blur2d", ["blur", "--sigma", "2.5"], horse, 1e-5)
compare_images("blur_nan", ["blur", "--sigma", "4", "--nan-aware"], horse, 1e-5)
compare_images("blur3d_psfstack", ["blur", "--sigma", "1.5,2,2"], psf, 1e-5)
for k in ("3", "5", "7"):
    compare_images(f"median{k}", ["median", "--size", k], horse, 0)
compare_images("outliers", ["outliers", "--size", "5", "--threshold", "300"], horse, 0)
compare_images("resample3", ["resample", "--zoom", "1.7"], horse, 1e-5)
compare_images("resample1", ["resample", "--zoom", "0.6", "--order", "1"], horse, 1e-5)
compare_images("resample3d", ["resample", "--zoom", "1.3,0.8,1.5"], psf, 1e-5)
for extra in ([], ["--boundary", "periodic"], ["--boundary", "zero"], ["--accelerate"], ["--tv", "0.002"]):
    compare_images("deconvolve" + "_".join([""] + [e.strip("-") for e in extra]),
                   ["deconvolve", "--psf-sigma", "2", "--iterations", "20"] + extra, horse, 1e-4)
compare_images("deconvolve3d", ["deconvolve", "--psf-sigma", "1,1.5,1.5", "--iterations", "20",
                                "--mode", "3d"], psf, 1e-4)

# Segmentation: labels exactly, the source table to 1e-5.
tables = {}
for b in ("cpu", "cuda"):
    out, tab = os.path.join(work, f"seg_{b}.fits"), os.path.join(work, f"seg_{b}.csv")
    run(["segment", horse, out, "--nsigma", "3", "--min-pixels", "3", "--sources", tab], b)
    tables[b] = (read_fits(out), list(csv.DictReader(open(tab))))
(lc, sc), (lg, sg) = tables["cpu"], tables["cuda"]
report("segment_labels", np.array_equal(lc, lg), f"{int(lc.max())} labels, {int(np.sum(lc != lg))} pixels differ")
worst = 0.0
same_ints = len(sc) == len(sg)
for rc, rg in zip(sc, sg):
    for key in rc:
        a, b = float(rc[key]), float(rg[key])
        if key in ("x", "y", "flux", "peak"):
            worst = max(worst, abs(a - b) / max(abs(a), 1e-30))
        elif a != b:
            same_ints = False
report("segment_sources", same_ints and worst <= 1e-5, f"{len(sc)} sources, worst relative {worst:.1e}")

# Statistics: the JSON line of `stats`.
st = {b: json.loads(run(["stats", horse], b).stdout.strip().splitlines()[-1]) for b in ("cpu", "cuda")}
def flat(d, p=""):
    for k, v in d.items():
        if isinstance(v, dict):
            yield from flat(v, p + k + ".")
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            yield p + k, v
fc, fg = dict(flat(st["cpu"])), dict(flat(st["cuda"]))
bad = [k for k in fc if k in fg and "second" not in k and abs(fc[k] - fg[k]) > 1e-5 * max(abs(fc[k]), 1e-30)]
report("stats", not bad, f"{len(fc)} numbers, differing: {bad}")
print(f"{failures} failures", flush=True)
sys.exit(1 if failures else 0)
