#!/usr/bin/python3
"""Writes the small FITS/TIFF fixtures of tests/io with writers independent of StackLens
(astropy, tifffile, Pillow for LZW/PackBits) and the values the tests expect from them.

Run from anywhere with Debian's python3 (python3-astropy, python3-tifffile, python3-pil):
    /usr/bin/python3 tests/io/data/make_fixtures.py
Outputs, next to this script:
  fixtures/*.fits, *.tif ...           the files
  fixtures/<name>.h<hdu>.p<plane>.f32  expected float32 values (z, y, x order, little-endian)
  fixtures.txt                         one line per file: name plane z y x dtype hdu
                                       spacingKnown sz sy sx unit ('-' when none)
  wcs.txt                              name x y z world... (astropy all_pix2world, 0-based)
  real_files.txt                       HorseHead.fits pixels and RA/Dec from astropy
"""
import gzip
import os
import shutil
import sys

import numpy as np
from astropy.io import fits
from astropy.wcs import WCS
import tifffile
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "fixtures")
SHARED = os.path.join(HERE, "..", "..", "..", "..", "shared", "data")

manifest = []


def pattern(shape, dtype, offset=0):
    """Deterministic values covering each dtype's range ends."""
    n = int(np.prod(shape))
    info = np.iinfo(dtype) if np.issubdtype(dtype, np.integer) else None
    a = (np.arange(n, dtype=np.float64) * 7 + offset) % 251
    if info is not None:
        a = a.astype(np.int64) + (info.min if info.min < 0 else 0)
        a = a.astype(dtype).reshape(shape)
        flat = a.reshape(-1)
        flat[0] = info.min
        flat[-1] = info.max
        return a
    a = (a - 100.5) * 0.25
    return a.astype(dtype).reshape(shape)


def expect(name, values, dtype, plane=0, hdu=0, spacing=None, unit="-"):
    v = np.asarray(values, dtype=np.float32)
    while v.ndim < 3:
        v = v[np.newaxis]
    v.astype("<f4").tofile(os.path.join(OUT, f"{name}.h{hdu}.p{plane}.f32"))
    z, y, x = v.shape
    known = 1 if spacing else 0
    sz, sy, sx = spacing if spacing else (1, 1, 1)
    manifest.append(f"{name} {plane} {z} {y} {x} {dtype} {hdu} {known} {sz:.9g} {sy:.9g} {sx:.9g} {unit}")


def fits_file(name, data, header=None, dtype=None, **kw):
    hdu = fits.PrimaryHDU(data, header=header)
    hdu.writeto(os.path.join(OUT, name), overwrite=True)
    scaled = fits.getdata(os.path.join(OUT, name)).astype(np.float64)
    expect(name, scaled, dtype or str(data.dtype), **kw)


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)
    shape = (3, 5, 7)
    # Every BITPIX, with astropy's BZERO conventions for the unsigned (and int8) types.
    for dt in ["uint8", "int8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
               "float32", "float64"]:
        fits_file(f"bitpix_{dt}.fits", pattern(shape, np.dtype(dt)), dtype=dt)
    # BSCALE/BZERO scaling of int16 keeps the stored type.
    raw = pattern(shape, np.int16)
    h = fits.Header()
    hdu = fits.PrimaryHDU(raw)
    hdu.scale("int16", bscale=0.5, bzero=10.0)
    hdu.data = raw.copy()
    hdu.header["BSCALE"] = 0.5
    hdu.header["BZERO"] = 10.0
    hdu.writeto(os.path.join(OUT, "scaled_int16.fits"), overwrite=True)
    with fits.open(os.path.join(OUT, "scaled_int16.fits"), do_not_scale_image_data=True) as f:
        stored = f[0].data.astype(np.float64)
    expect("scaled_int16.fits", stored * 0.5 + 10.0, "int16")
    # BLANK → NaN for integers; NaN kept for floats.
    raw = pattern(shape, np.int16)
    raw.reshape(-1)[5] = -999
    h = fits.Header()
    h["BLANK"] = -999
    fits.PrimaryHDU(raw, header=h).writeto(os.path.join(OUT, "blank_int16.fits"), overwrite=True)
    e = raw.astype(np.float64)
    e.reshape(-1)[5] = np.nan
    expect("blank_int16.fits", e, "int16")
    f = pattern(shape, np.float32)
    f.reshape(-1)[[3, 17]] = np.nan
    fits_file("nan_float32.fits", f)
    # A spectral cube: RA/Dec TAN plus optical velocity.
    cube = pattern((4, 6, 5), np.float32)
    h = fits.Header()
    for k, v in [("CTYPE1", "RA---TAN"), ("CTYPE2", "DEC--TAN"), ("CTYPE3", "VOPT"),
                 ("CRPIX1", 3.0), ("CRPIX2", 3.5), ("CRPIX3", 1.0),
                 ("CRVAL1", 85.25), ("CRVAL2", -2.45), ("CRVAL3", 12500.0),
                 ("CDELT1", -0.001), ("CDELT2", 0.001), ("CDELT3", 2500.0),
                 ("CUNIT1", "deg"), ("CUNIT2", "deg"), ("CUNIT3", "m/s"),
                 ("OBJECT", "spectral test"), ("BUNIT", "Jy/beam")]:
        h[k] = v
    fits_file("cube_vopt.fits", cube, header=h)
    w = WCS(os.path.join(OUT, "cube_vopt.fits"))
    wcs_lines = []
    for p in [(0, 0, 0), (2, 2.5, 0), (4, 5, 3), (1.25, 3.5, 2)]:
        world = w.all_pix2world([p], 0)[0]
        wcs_lines.append("cube_vopt.fits " + " ".join(f"{c:.12g}" for c in p) + " " +
                         " ".join(f"{c:.12f}" for c in world))
    # Radio-style 4D: RA, Dec, a length-1 STOKES axis, then VRAD. The z axis is file axis 4, and
    # the dropped STOKES axis must be given pixel 0 in the WCS.
    d = pattern((3, 1, 4, 5), np.float32)
    h = fits.Header()
    for k, v in [("CTYPE1", "RA---SIN"), ("CTYPE2", "DEC--SIN"), ("CTYPE3", "STOKES"),
                 ("CTYPE4", "VRAD"), ("CRPIX1", 3.0), ("CRPIX2", 2.0), ("CRPIX3", 1.0),
                 ("CRPIX4", 2.0), ("CRVAL1", 201.365), ("CRVAL2", -43.019), ("CRVAL3", 1.0),
                 ("CRVAL4", -1500.0), ("CDELT1", -0.0005), ("CDELT2", 0.0005), ("CDELT3", 1.0),
                 ("CDELT4", 1000.0), ("CUNIT1", "deg"), ("CUNIT2", "deg"), ("CUNIT4", "m/s")]:
        h[k] = v
    fits.PrimaryHDU(d, header=h).writeto(os.path.join(OUT, "radio_4d.fits"), overwrite=True)
    expect("radio_4d.fits", d[:, 0], "float32")
    w = WCS(os.path.join(OUT, "radio_4d.fits"))
    for p in [(0, 0, 0), (2, 1, 1), (4, 3, 2)]:
        world = w.all_pix2world([[p[0], p[1], 0, p[2]]], 0)[0]
        wcs_lines.append("radio_4d.fits " + " ".join(f"{c:.12g}" for c in p) + " " +
                         " ".join(f"{c:.12f}" for c in world))
    # Microscopy-style FITS: linear axes with CDELT/CUNIT give the spacing.
    h = fits.Header()
    h["CDELT1"], h["CDELT2"], h["CDELT3"] = 0.1, 0.1, 0.3
    h["CUNIT1"], h["CUNIT2"], h["CUNIT3"] = "um", "um", "um"
    fits_file("linear_spacing.fits", pattern(shape, np.float32), header=h, spacing=(0.3, 0.1, 0.1),
              unit="um")
    # NAXIS = 4 with a degenerate axis: (x=7, y=5, 1, z=3) in FITS order.
    d = pattern((3, 1, 5, 7), np.int16)
    fits.PrimaryHDU(d).writeto(os.path.join(OUT, "degenerate_4d.fits"), overwrite=True)
    expect("degenerate_4d.fits", d[:, 0].astype(np.float64), "int16")
    # A 4th axis of length 2 (e.g. Stokes): plane 1 is the second cube.
    d = pattern((2, 3, 5, 7), np.float32)
    fits.PrimaryHDU(d).writeto(os.path.join(OUT, "planes_4d.fits"), overwrite=True)
    expect("planes_4d.fits", d[0], "float32", plane=0)
    expect("planes_4d.fits", d[1], "float32", plane=1)
    # Multi-extension: empty primary, a table, a 2D SCI image, a 3D ERR image.
    sci = pattern((5, 7), np.float32)
    err = pattern(shape, np.int32)
    table = fits.BinTableHDU.from_columns([fits.Column(name="a", format="J", array=np.arange(4))],
                                          name="TAB")
    fits.HDUList([fits.PrimaryHDU(), table, fits.ImageHDU(sci, name="SCI"),
                  fits.ImageHDU(err, name="ERR")]).writeto(os.path.join(OUT, "multi_ext.fits"),
                                                          overwrite=True)
    expect("multi_ext.fits", sci, "float32", hdu=2)
    expect("multi_ext.fits", err, "int32", hdu=3)
    # Tile-compressed (RICE, lossless for integers) in the .fz convention.
    d = pattern((3, 20, 24), np.int16)
    fits.HDUList([fits.PrimaryHDU(), fits.CompImageHDU(d, compression_type="RICE_1",
                                                       tile_size=(1, 8, 24))]).writeto(
        os.path.join(OUT, "rice.fits.fz"), overwrite=True)
    expect("rice.fits.fz", d, "int16", hdu=1)
    # gzip of a whole FITS file.
    d = pattern(shape, np.float32)
    buf = os.path.join(OUT, "plain.fits")
    fits.PrimaryHDU(d).writeto(buf, overwrite=True)
    with open(buf, "rb") as src, gzip.GzipFile(os.path.join(OUT, "plain.fits.gz"), "wb", mtime=0) as dst:
        dst.write(src.read())
    os.remove(buf)
    expect("plain.fits.gz", d, "float32")
    # The same files gzipped: read through cfitsio instead of StackLens's direct plain-file path.
    for name in ["blank_int16.fits", "scaled_int16.fits", "bitpix_uint64.fits", "bitpix_int8.fits",
                 "bitpix_uint32.fits", "bitpix_float64.fits", "planes_4d.fits"]:
        with open(os.path.join(OUT, name), "rb") as src, \
                gzip.GzipFile(os.path.join(OUT, name + ".gz"), "wb", mtime=0) as dst:
            dst.write(src.read())
        for line in [m for m in manifest if m.split()[0] == name]:
            parts = line.split()
            plane = parts[1]
            shutil.copy(os.path.join(OUT, f"{name}.h0.p{plane}.f32"),
                        os.path.join(OUT, f"{name}.gz.h0.p{plane}.f32"))
            manifest.append(" ".join([name + ".gz"] + parts[1:]))

    # TIFF: every sample type, little- and big-endian.
    for dt in ["uint8", "int8", "uint16", "int16", "uint32", "int32", "float32", "float64"]:
        d = pattern(shape, np.dtype(dt))
        tifffile.imwrite(os.path.join(OUT, f"tiff_{dt}.tif"), d, photometric="minisblack")
        expect(f"tiff_{dt}.tif", d, dt)
    d = pattern(shape, np.float32)
    tifffile.imwrite(os.path.join(OUT, "bigendian_float32.tif"), d, byteorder=">", photometric="minisblack")
    expect("bigendian_float32.tif", d, "float32")
    d = pattern(shape, np.uint16)
    tifffile.imwrite(os.path.join(OUT, "bigtiff_uint16.tif"), d, bigtiff=True, photometric="minisblack")
    expect("bigtiff_uint16.tif", d, "uint16")
    # Tiles that overhang the image on the right and bottom.
    d = pattern((2, 21, 37), np.uint16)
    tifffile.imwrite(os.path.join(OUT, "tiled_uint16.tif"), d, tile=(16, 16), photometric="minisblack")
    expect("tiled_uint16.tif", d, "uint16")
    d = pattern((2, 21, 37), np.float32)
    tifffile.imwrite(os.path.join(OUT, "deflate_float32.tif"), d, compression="zlib",
                     rowsperstrip=5, photometric="minisblack")
    expect("deflate_float32.tif", d, "float32")
    d = pattern((2, 21, 37), np.int16)
    tifffile.imwrite(os.path.join(OUT, "deflate_predictor_int16.tif"), d, compression="zlib",
                     predictor=True, rowsperstrip=4, photometric="minisblack")
    expect("deflate_predictor_int16.tif", d, "int16")
    # LZW and PackBits through Pillow (tifffile needs imagecodecs to encode them).
    d = pattern((3, 21, 37), np.uint16)
    for name, codec in [("lzw_uint16.tif", "tiff_lzw"), ("packbits_uint16.tif", "packbits")]:
        pages = [Image.fromarray(p) for p in d]
        pages[0].save(os.path.join(OUT, name), compression=codec, save_all=True,
                      append_images=pages[1:])
        with Image.open(os.path.join(OUT, name)) as im:
            for k in range(d.shape[0]):
                im.seek(k)
                assert np.array_equal(np.array(im), d[k]), name
        with tifffile.TiffFile(os.path.join(OUT, name)) as tf:
            assert tf.pages[0].compression == (5 if codec == "tiff_lzw" else 32773), name
        expect(name, d, "uint16")
    # ImageJ hyperstack: 3 slices x 2 channels, 0.25 µm z spacing, 0.125 µm pixels.
    d = pattern((3, 2, 6, 8), np.uint16)  # Z, C, Y, X
    tifffile.imwrite(os.path.join(OUT, "imagej_hyperstack.tif"), d, imagej=True,
                     resolution=(8.0, 8.0), metadata={"spacing": 0.25, "unit": "micron", "axes": "ZCYX"})
    expect("imagej_hyperstack.tif", d[:, 0], "uint16", plane=0, spacing=(0.25, 0.125, 0.125),
           unit="micron")
    expect("imagej_hyperstack.tif", d[:, 1], "uint16", plane=1, spacing=(0.25, 0.125, 0.125),
           unit="micron")
    # OME-TIFF with physical sizes.
    d = pattern((4, 6, 5), np.uint16)
    tifffile.imwrite(os.path.join(OUT, "ome.ome.tif"), d, ome=True,
                     metadata={"axes": "ZYX", "PhysicalSizeX": 0.2, "PhysicalSizeY": 0.2,
                               "PhysicalSizeZ": 0.5})
    expect("ome.ome.tif", d, "uint16", spacing=(0.5, 0.2, 0.2), unit="micron")
    # OME-TIFF pyramid as Bio-Formats reads them: each slice's levels in its SubIFDs (tiled),
    # every 2nd and every 4th pixel, so that each level's values are known exactly.
    d = pattern((3, 96, 80), np.uint16)
    with tifffile.TiffWriter(os.path.join(OUT, "pyramid.ome.tif")) as tw:
        options = dict(tile=(32, 32), photometric="minisblack")
        tw.write(d, subifds=2, metadata={"axes": "ZYX", "PhysicalSizeX": 0.2,
                                         "PhysicalSizeY": 0.2, "PhysicalSizeZ": 0.5}, **options)
        tw.write(d[:, ::2, ::2], subfiletype=1, **options)
        tw.write(d[:, ::4, ::4], subfiletype=1, **options)
    for hdu, step in ((0, 1), (1, 2), (2, 4)):
        expect("pyramid.ome.tif", d[:, ::step, ::step], "uint16", hdu=hdu,
               spacing=(0.5, 0.2 * step, 0.2 * step), unit="micron")
    # A single image's pyramid as libvips writes it: reduced-resolution pages after the image in
    # the page chain (no SubIFDs), each half the one before.
    d = pattern((100, 72), np.float32)
    with tifffile.TiffWriter(os.path.join(OUT, "pyramid_pages.tif")) as tw:
        for step in (1, 2, 4):
            tw.write(d[::step, ::step], tile=(16, 16), photometric="minisblack",
                     subfiletype=0 if step == 1 else 1)
    for hdu, step in ((0, 1), (1, 2), (2, 4)):
        expect("pyramid_pages.tif", d[::step, ::step], "float32", hdu=hdu)
    # Pages of different size: the first series (3 pages) is shown, with a warning.
    d = pattern(shape, np.uint8)
    path = os.path.join(OUT, "mixed_sizes.tif")
    with tifffile.TiffWriter(path) as tw:
        tw.write(d, photometric="minisblack")
        tw.write(pattern((4, 4), np.uint8), photometric="minisblack")
    expect("mixed_sizes.tif", d, "uint8")

    with open(os.path.join(HERE, "fixtures.txt"), "w") as out:
        out.write("\n".join(manifest) + "\n")
    with open(os.path.join(HERE, "wcs.txt"), "w") as out:
        out.write("\n".join(wcs_lines) + "\n")

    horse = os.path.join(SHARED, "HorseHead.fits")
    if os.path.exists(horse):
        lines = []
        with fits.open(horse) as f:
            data = f[0].data
            for (x, y) in [(0, 0), (100, 200), (445, 446), (890, 892)]:
                lines.append(f"pixel {x} {y} {float(data[y, x]):.9g}")
            w = WCS(f[0].header)
            for (x, y) in [(0, 0), (445, 446), (890, 892), (123.5, 456.25)]:
                c = w.pixel_to_world(x, y)
                lines.append(f"world {x} {y} {c.ra.deg:.12f} {c.dec.deg:.12f}")
        with open(os.path.join(HERE, "real_files.txt"), "w") as out:
            out.write("\n".join(lines) + "\n")
    else:
        print("note: HorseHead.fits not found; real_files.txt left as it is", file=sys.stderr)


if __name__ == "__main__":
    main()
