#!/usr/bin/python3
"""Hand-made hostile inputs replayed by CorpusRegressions (next to any fuzzer findings kept here).
Run: /usr/bin/python3 tests/io/data/corpus_regressions/make_hostile_inputs.py"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def fits(cards, data=b""):
    text = "".join(c.ljust(80) for c in cards + ["END"])
    text = text.ljust((len(text) + 2879) // 2880 * 2880)
    return text.encode() + data


def card(k, v):
    return f"{k:<8}= {v:>20}"


def tiff(entries, extra=b"", next_ifd=0):
    body = struct.pack("<H", len(entries))
    for tag, typ, count, value in entries:
        body += struct.pack("<HHII", tag, typ, count, value)
    body += struct.pack("<I", next_ifd)
    return b"II*\0" + struct.pack("<I", 8) + body + extra


def main():
    files = {
        "hostile_fits_naxis_overflow.fits": fits([card("SIMPLE", "T"), card("BITPIX", "-64"),
                                                  card("NAXIS", "3")] +
                                                 [card(f"NAXIS{i}", "9223372036854775807") for i in (1, 2, 3)]),
        "hostile_fits_blank_on_float.fits": fits([card("SIMPLE", "T"), card("BITPIX", "-32"),
                                                  card("NAXIS", "2"), card("NAXIS1", "2"),
                                                  card("NAXIS2", "2"), card("BLANK", "7")],
                                                 b"\x7f\xc0\0\0" * 4),
        "hostile_fits_bad_wcs.fits": fits([card("SIMPLE", "T"), card("BITPIX", "8"), card("NAXIS", "2"),
                                           card("NAXIS1", "2"), card("NAXIS2", "2"),
                                           card("CTYPE1", "'RA---XXX'"), card("CTYPE2", "'DEC--TAN'"),
                                           card("CDELT1", "0"), card("CDELT2", "0")], b"\0" * 4),
        # ImageWidth/Length 2^32-1 in a 100-byte file.
        "hostile_tiff_absurd_dims.tif": tiff([(256, 4, 1, 0xFFFFFFFF), (257, 4, 1, 0xFFFFFFFF),
                                             (258, 3, 1, 16), (273, 4, 1, 8), (279, 4, 1, 4)]),
        # The IFD's next pointer leads back to itself.
        "hostile_tiff_ifd_loop.tif": tiff([(256, 4, 1, 2), (257, 4, 1, 2), (258, 3, 1, 8),
                                          (273, 4, 1, 8), (279, 4, 1, 4)], next_ifd=8),
        "hostile_gzip_garbage.fits.gz": b"\x1f\x8b\x08\x00" + b"\xff" * 60,
    }
    for name, data in files.items():
        with open(os.path.join(HERE, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
