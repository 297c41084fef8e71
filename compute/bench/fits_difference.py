#!/usr/bin/env python3
"""How far one float32 FITS stack is from another of the same shape (e.g. a blocked run's output
from the unblocked run's): relative L2 over the whole stack, and the largest difference as a
fraction of the reference's largest value, from memory maps plane band by plane band. Needs NumPy.

    fits_difference.py RESULT.fits REFERENCE.fits
"""
import sys

import numpy as np


def fits_array(path):
    """The primary HDU's data as a read-only memory map (BITPIX -32 only)."""
    with open(path, "rb") as f:
        cards = {}
        offset = 0
        while True:
            block = f.read(2880)
            if len(block) < 2880:
                sys.exit(f"{path}: no END card in the primary header")
            offset += 2880
            for i in range(0, 2880, 80):
                card = block[i:i + 80].decode("ascii", "replace")
                key = card[:8].strip()
                if key == "END":
                    break
                if card[8:10] == "= ":
                    cards[key] = card[10:].split("/")[0].strip()
            else:
                continue
            break
    if int(cards.get("BITPIX", 0)) != -32:
        sys.exit(f"{path}: expected BITPIX -32, got {cards.get('BITPIX')}")
    shape = tuple(int(cards[f"NAXIS{a}"]) for a in range(int(cards["NAXIS"]), 0, -1))
    return np.memmap(path, dtype=">f4", mode="r", offset=offset, shape=shape)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    a, b = fits_array(sys.argv[1]), fits_array(sys.argv[2])
    if a.shape != b.shape:
        sys.exit(f"shapes differ: {a.shape} and {b.shape}")
    num = den = 0.0
    worst = peak = 0.0
    for z in range(0, a.shape[0], 16):
        x = np.asarray(a[z:z + 16], dtype=np.float64)
        y = np.asarray(b[z:z + 16], dtype=np.float64)
        finite = np.isfinite(y)
        d = np.where(finite, x - y, 0.0)
        num += float(np.sum(d * d))
        den += float(np.sum(np.where(finite, y * y, 0.0)))
        worst = max(worst, float(np.max(np.abs(d))))
        peak = max(peak, float(np.max(np.abs(np.where(finite, y, 0.0)))))
    print(f"relative L2 {np.sqrt(num / den):.3e}, largest difference {worst / peak:.3e} of the "
          f"reference's peak, shape {a.shape}")


if __name__ == "__main__":
    main()
