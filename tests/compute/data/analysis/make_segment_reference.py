#!/usr/bin/python3
"""Reference labels and source measures for tests/compute/segment_test.cpp.

Run with Debian's python3 (python3-scipy, python3-astropy). Writes raw little-endian files:
  segment_image.f32 (48×64), segment_labels4.i32 / segment_labels8.i32 (scipy.ndimage.label of
  image > 0.5 with the 4- / 8-neighbour structure), segment_sources8.txt (per label of the
  8-connected labelling: label npix flux centroid_x centroid_y peak peak_x peak_y xmin xmax ymin
  ymax, with flux and centroid taken on image − background median, the median from astropy
  sigma_clipped_stats(sigma=3, maxiters=10)), and segment_stack.f32 (2×32×40) with
  segment_stack_labels8.i32, labelled with an 8-neighbour structure that has no z neighbours.
"""
import numpy as np
import scipy.ndimage as ndi
from astropy.stats import sigma_clipped_stats

rng = np.random.default_rng(4)


def field(shape):
    img = ndi.gaussian_filter(rng.normal(0, 1, shape), 0.8) * 2.0
    return img.astype(np.float32)


img = field((48, 64))
img[5, 5] = 3.0  # a lone pixel
img.astype("<f4").tofile("segment_image.f32")
mask = img > np.float32(0.5)
s4 = ndi.generate_binary_structure(2, 1)
s8 = ndi.generate_binary_structure(2, 2)
lab4, n4 = ndi.label(mask, s4)
lab8, n8 = ndi.label(mask, s8)
lab4.astype("<i4").tofile("segment_labels4.i32")
lab8.astype("<i4").tofile("segment_labels8.i32")
print("components", n4, n8)

d = img.astype(np.float64)
_, med, _ = sigma_clipped_stats(d, sigma=3, maxiters=10)
w = d - med
idx = np.arange(1, n8 + 1)
npix = ndi.sum_labels(np.ones_like(d), lab8, idx)
flux = ndi.sum_labels(w, lab8, idx)
com = ndi.center_of_mass(w, lab8, idx)
peak = ndi.maximum(d, lab8, idx)
ppos = ndi.maximum_position(d, lab8, idx)
boxes = ndi.find_objects(lab8)
with open("segment_sources8.txt", "w") as out:
    out.write(f"# background median {med!r}\n")
    for i in range(n8):
        ys, xs = boxes[i]
        out.write(" ".join(str(v) for v in [
            i + 1, int(npix[i]), repr(float(flux[i])), repr(float(com[i][1])), repr(float(com[i][0])),
            repr(float(peak[i])), ppos[i][1], ppos[i][0], xs.start, xs.stop - 1, ys.start,
            ys.stop - 1]) + "\n")

stack = field((2, 32, 40))
stack.astype("<f4").tofile("segment_stack.f32")
s3 = np.zeros((3, 3, 3), bool)
s3[1] = s8
lab3, n3 = ndi.label(stack > np.float32(0.5), s3)
lab3.astype("<i4").tofile("segment_stack_labels8.i32")
print("stack components", n3)
