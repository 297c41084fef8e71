#!/usr/bin/python3
"""Writes FITS and TIFF files that astropy, cfitsio or libtiff read cleanly but that StackLens
once refused (issue 38), each made with the reference tools, and what those tools read from them.

Run from anywhere with Debian's python3 (python3-astropy, python3-tifffile, python3-pil) and
libtiff-tools (tiffcp, tiff2rgba):
    /usr/bin/python3 tests/io/data/reference_agreement/make_reference_agreement.py
Outputs, next to this script:
  compressed_ztension_last.fits  a RICE image whose ZTENSION, ZPCOUNT and ZGCOUNT follow the
                                 image keywords (as in PyFITS' files, e.g. astropy's comp.fits):
                                 cfitsio's fits_convert_hdr2str fails with status 252 on it
  compressed_extname_twice.fits  a RICE image whose table repeats EXTNAME
  random_groups.fits             a random groups primary (astropy's GroupsHDU), then an image
  primary_naxis2_zero.fits       a primary of NAXIS1 = 10^12 and NAXIS2 = 0, then an image
  jpeg_ycbcr.tif                 two RGB pages through `tiffcp -c jpeg` (YCbCr, 2 x 2 subsampled,
                                 16-row strips, two a page)
  jpeg_ycbcr_tiled.tif           the same in 16 x 16 tiles
  ycbcr_uncompressed.tif         YCbCr samples without compression (subsampling 1, 1)
  ojpeg_ycbcr.tif, ojpeg_grey.tif  old-style JPEG (compression 6): a JFIF stream from libjpeg
                                 (Pillow) behind JPEGInterchangeFormat, as old scanners wrote
  <file>.p<plane>.f32            the reference reader's values of each plane (z, y, x order,
                                 little-endian float32): astropy for FITS, tiff2rgba (libtiff's
                                 RGBA interface) for TIFF
"""
import io
import os
import struct
import subprocess
import tempfile

import numpy as np
from astropy.io import fits
from PIL import Image
import tifffile

HERE = os.path.dirname(os.path.abspath(__file__))


def out(name):
    return os.path.join(HERE, name)


def expect(name, values, plane=0):
    v = np.asarray(values, dtype="<f4")
    while v.ndim < 3:
        v = v[np.newaxis]
    v.tofile(out(f"{name}.p{plane}.f32"))


def image_values():
    return (np.arange(120, dtype=np.int16).reshape(10, 12) * 7) % 251


def wcs_cards(header):
    for key, value in [("CTYPE1", "RA---TAN"), ("CTYPE2", "DEC--TAN"), ("CRVAL1", 150.0),
                       ("CRVAL2", 2.0), ("CRPIX1", 6.0), ("CRPIX2", 5.0),
                       ("CDELT1", -0.001), ("CDELT2", 0.001)]:
        header[key] = value


def compressed(name, edit):
    """A RICE image written by astropy, its table header then edited as a plain binary table."""
    data = image_values()
    hdu = fits.CompImageHDU(data, compression_type="RICE_1", name="SCI")
    wcs_cards(hdu.header)
    with tempfile.TemporaryDirectory() as tmp:
        first = os.path.join(tmp, "first.fits")
        fits.HDUList([fits.PrimaryHDU(), hdu]).writeto(first)
        with fits.open(first, disable_image_compression=True) as hdus:
            edit(hdus[1].header)
            hdus.writeto(out(name), overwrite=True)
    with fits.open(out(name)) as hdus:  # astropy reads it as the image it was
        assert np.array_equal(hdus[1].data, data), name
        expect(name, hdus[1].data)


def ztension_last(header):
    moved = [(k, header[k], header.comments[k]) for k in ("ZTENSION", "ZPCOUNT", "ZGCOUNT")]
    for key, _, _ in moved:
        del header[key]
    for card in moved:
        header.append(card)


def extname_twice(header):
    header.append(("EXTNAME", "AGAIN", "a second name"), useblanks=False, bottom=True)


def random_groups():
    groups = np.arange(3 * 1 * 2 * 3, dtype=np.float32).reshape(3, 1, 2, 3)
    parameters = [np.arange(3, dtype=np.float32), np.arange(3, dtype=np.float32) * 2]
    primary = fits.GroupsHDU(fits.GroupData(groups, parnames=["UU", "VV"], pardata=parameters,
                                            bitpix=-32))
    image = np.arange(20, dtype=np.float32).reshape(4, 5) - 3.5
    fits.HDUList([primary, fits.ImageHDU(image, name="IMG")]).writeto(out("random_groups.fits"),
                                                                      overwrite=True)
    with fits.open(out("random_groups.fits")) as hdus:
        assert isinstance(hdus[0], fits.GroupsHDU) and hdus[0].data.shape == (3,)
        expect("random_groups.fits", hdus[1].data)


def primary_naxis2_zero():
    primary = fits.PrimaryHDU(np.zeros((0, 10**12), dtype=np.uint8))
    image = np.arange(20, dtype=np.float32).reshape(4, 5) - 3.5
    fits.HDUList([primary, fits.ImageHDU(image, name="IMG")]).writeto(
        out("primary_naxis2_zero.fits"), overwrite=True)
    with fits.open(out("primary_naxis2_zero.fits")) as hdus:
        assert hdus[0].header["NAXIS1"] == 10**12 and hdus[0].header["NAXIS2"] == 0
        expect("primary_naxis2_zero.fits", hdus[1].data)


def rgb_page(offset, rows=16):
    y, x = np.mgrid[0:rows, 0:32]
    return np.stack([(x * 8 + offset) % 256, (y * 16) % 256, ((x + y) * 5 + offset) % 256],
                    axis=-1).astype(np.uint8)


def libtiff_rgba(name, pages, planes):
    """What libtiff's RGBA interface reads (tiff2rgba), plane by plane."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "rgba.tif")
        subprocess.run(["tiff2rgba", "-c", "none", out(name), path], check=True,
                       stderr=subprocess.DEVNULL)
        with tifffile.TiffFile(path) as converted:
            rgba = [page.asarray() for page in converted.pages]
    assert len(rgba) == pages, name
    stack = np.stack(rgba)  # z, y, x, rgba
    for plane in range(planes):
        expect(name, stack[..., plane], plane)


def jpeg_ycbcr():
    with tempfile.TemporaryDirectory() as tmp:
        pages = []
        for k in range(2):
            pages.append(os.path.join(tmp, f"rgb{k}.tif"))
            tifffile.imwrite(pages[-1], rgb_page(40 * k, rows=32), photometric="rgb")
        subprocess.run(["tiffcp", "-c", "jpeg", "-r", "16", *pages, out("jpeg_ycbcr.tif")],
                       check=True)
        subprocess.run(["tiffcp", "-c", "jpeg", "-t", "-w", "16", "-l", "16", pages[0],
                        out("jpeg_ycbcr_tiled.tif")], check=True)
    libtiff_rgba("jpeg_ycbcr.tif", 2, 3)
    libtiff_rgba("jpeg_ycbcr_tiled.tif", 1, 3)


def ifd(entries, at, extra_at):
    """Little-endian IFD at byte `at`; values over 4 bytes go to extra_at onwards."""
    body, extra = b"", b""
    for tag, kind, values in sorted(entries):
        packed = struct.pack("<" + {3: "H", 4: "I"}[kind] * len(values), *values)
        if len(packed) <= 4:
            body += struct.pack("<HHI", tag, kind, len(values)) + packed.ljust(4, b"\0")
        else:
            body += struct.pack("<HHII", tag, kind, len(values), extra_at + len(extra))
            extra += packed
    return struct.pack("<H", len(entries)) + body + struct.pack("<I", 0) + extra


def hand_tiff(name, pixels, width, height, samples, compression, photometric, more=()):
    """A classic TIFF of one strip: header, the strip, then the IFD."""
    strip_at = 8
    ifd_at = strip_at + len(pixels) + (len(pixels) & 1)
    entries = [(256, 3, [width]), (257, 3, [height]), (258, 3, [8] * samples),
               (259, 3, [compression]), (262, 3, [photometric]), (273, 4, [strip_at]),
               (277, 3, [samples]), (278, 3, [height]), (279, 4, [len(pixels)]),
               (284, 3, [1]), *more]
    extra_at = ifd_at + 2 + 12 * len(entries) + 4
    data = b"II*\0" + struct.pack("<I", ifd_at) + pixels + b"\0" * (len(pixels) & 1)
    with open(out(name), "wb") as f:
        f.write(data + ifd(entries, ifd_at, extra_at))


def ycbcr_uncompressed():
    rgb = rgb_page(0).astype(np.float64)
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    ycc = np.stack([0.299 * r + 0.587 * g + 0.114 * b,
                    128 - 0.168736 * r - 0.331264 * g + 0.5 * b,
                    128 + 0.5 * r - 0.418688 * g - 0.081312 * b], axis=-1)
    ycc = np.clip(np.rint(ycc), 0, 255).astype(np.uint8)
    hand_tiff("ycbcr_uncompressed.tif", ycc.tobytes(), 32, 16, 3, 1, 6, [(530, 3, [1, 1])])
    libtiff_rgba("ycbcr_uncompressed.tif", 1, 3)


def ojpeg(name, array, photometric):
    stream = io.BytesIO()
    Image.fromarray(array).save(stream, format="JPEG", quality=90)
    jpeg = stream.getvalue()
    samples = 1 if array.ndim == 2 else 3
    more = [(513, 4, [8]), (514, 4, [len(jpeg)])]
    if samples == 3:
        more.append((530, 3, [2, 2]))
    hand_tiff(name, jpeg, array.shape[1], array.shape[0], samples, 6, photometric, more)
    libtiff_rgba(name, 1, samples)


def main():
    compressed("compressed_ztension_last.fits", ztension_last)
    compressed("compressed_extname_twice.fits", extname_twice)
    random_groups()
    primary_naxis2_zero()
    jpeg_ycbcr()
    ycbcr_uncompressed()
    ojpeg("ojpeg_ycbcr.tif", rgb_page(0), 6)
    y, x = np.mgrid[0:16, 0:32]
    ojpeg("ojpeg_grey.tif", ((x * 8 + y * 3) % 256).astype(np.uint8), 1)


if __name__ == "__main__":
    main()
