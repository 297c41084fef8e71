// FITS writer (cfitsio): float32 (BITPIX -32) or int32 labels (BITPIX 32) with the input's cards.
#include <fitsio.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <string>

#include "io/fits_support.h"
#include "io/write_stop.h"
#include "io/writers.h"

namespace stacklens::io {

bool isStructural(const std::string& key) {
  static const std::set<std::string> exact = {
      "SIMPLE",   "XTENSION", "BITPIX",   "NAXIS",    "EXTEND",   "PCOUNT",   "GCOUNT",
      "BSCALE",   "BZERO",    "BLANK",    "CHECKSUM", "DATASUM",  "END",      "GROUPS",
      "TFIELDS",  "THEAP",    "EXTNAME",  "EXTVER",   "EXTLEVEL", "INHERIT",  "DATAMIN",
      "DATAMAX",  "ZIMAGE",   "ZBITPIX",  "ZNAXIS",   "ZCMPTYPE", "ZQUANTIZ", "ZDITHER0",
      "ZSIMPLE",  "ZEXTEND",  "ZBLOCKED", "ZTENSION", "ZPCOUNT",  "ZGCOUNT",  "ZHECKSUM",
      "ZDATASUM", "ZBLANK",   "ZSCALE",   "ZZERO",    "ZTHEAP",   "HISTORY",  ""};
  if (exact.count(key)) return true;
  for (const char* prefix : {"NAXIS", "ZNAXIS", "ZTILE", "ZNAME", "ZVAL", "TTYPE", "TFORM", "TUNIT",
                             "TSCAL", "TZERO", "TNULL", "TDIM", "TDISP"})
    if (key.rfind(prefix, 0) == 0 && key.size() > std::strlen(prefix) &&
        std::all_of(key.begin() + static_cast<long>(std::strlen(prefix)), key.end(), ::isdigit))
      return true;
  return false;
}

namespace {

// A FITS keyword: up to 8 of A-Z 0-9 - _. TIFF tags ("tiff:..."), lower case and spaces are not.
bool isFitsKeyword(const std::string& key) {
  if (key.empty() || key.size() > 8) return false;
  return std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
  });
}

bool hasWcs(const std::vector<HeaderCard>& header) {
  for (const auto& card : header)
    for (const char* prefix : {"CTYPE", "CDELT", "CRPIX", "CRVAL", "CD1_", "CD2_", "PC1_", "PC2_"})
      if (card.key.rfind(prefix, 0) == 0) return true;
  return false;
}

std::string fitsUnit(const std::string& unit) { return isMicron(unit) ? "um" : unit; }

}  // namespace

fitsfile* createFitsImage(const std::string& path, const std::string& target, SampleKind kind,
                          int64_t z, int64_t y, int64_t x, const WriteOptions& options) {
  // cfitsio refuses to create a file that exists; the temporary name is ours alone.
  ::unlink(path.c_str());
  FitsStatus status(target);
  fitsfile* f = nullptr;
  fits_create_diskfile(&f, path.c_str(), status.ptr());
  status.check("cannot create the file");
  FitsHandle handle(f);
  long axes[3] = {static_cast<long>(x), static_cast<long>(y), static_cast<long>(z)};
  fits_create_img(f, kind == SampleKind::Float32 ? FLOAT_IMG : LONG_IMG, z > 1 ? 3 : 2, axes,
                  status.ptr());
  status.check("cannot write the image header");
  for (const auto& card : options.header) {
    if (card.key == "COMMENT") {
      const std::string& text = card.comment.empty() ? card.value : card.comment;
      // cfitsio writes the standard two-line FITS reference itself.
      if (text.find("FITS (Flexible Image Transport System) format") == std::string::npos &&
          text.find("and Astrophysics', volume 376") == std::string::npos)
        fits_write_comment(f, text.c_str(), status.ptr());
    } else if (card.key == "CONTINUE") {
      std::string line = "CONTINUE  " + card.value;
      if (!card.comment.empty()) line += " / " + card.comment;
      line.resize(80, ' ');
      fits_write_record(f, line.c_str(), status.ptr());
    } else if (isFitsKeyword(card.key) && !isStructural(card.key)) {
      char record[FLEN_CARD] = {};
      std::string value = card.value;
      fits_make_key(card.key.c_str(), value.data(), card.comment.c_str(), record, status.ptr());
      if (status.code() == 0) fits_write_record(f, record, status.ptr());
      // A card cfitsio cannot re-create is left out rather than failing the whole write.
      if (status.code() != 0) status.clear();
    }
    status.check("cannot write header card " + card.key);
  }
  if (options.spacingKnown && !hasWcs(options.header)) {
    for (int axis = 0; axis < (z > 1 ? 3 : 2); ++axis) {
      const int i = 2 - axis;  // spacing is (z, y, x); FITS axis 1 is x
      std::string cdelt = "CDELT" + std::to_string(axis + 1);
      double value = options.spacing[static_cast<size_t>(i)];
      fits_write_key(f, TDOUBLE, cdelt.c_str(), &value, "pixel spacing", status.ptr());
      std::string unit = fitsUnit(options.units[static_cast<size_t>(i)]);
      if (!unit.empty()) {
        std::string cunit = "CUNIT" + std::to_string(axis + 1);
        fits_write_key(f, TSTRING, cunit.c_str(), unit.data(), "unit of the spacing", status.ptr());
      }
    }
    status.check("cannot write the spacing");
  }
  // Provenance: the input's HISTORY first, then what this version of StackLens did.
  for (const auto& card : options.header)
    if (card.key == "HISTORY") {
      const std::string& text = card.comment.empty() ? card.value : card.comment;
      fits_write_history(f, text.c_str(), status.ptr());
    }
  if (!options.history.empty()) {
    const std::string version = "StackLens " STACKLENS_VERSION;
    fits_write_history(f, version.c_str(), status.ptr());
  }
  for (const auto& line : options.history) fits_write_history(f, line.c_str(), status.ptr());
  status.check("cannot write HISTORY");
  return handle.release();
}

void writeFitsFile(const std::string& path, const std::string& target, const void* data,
                   SampleKind kind, int64_t z, int64_t y, int64_t x, const WriteOptions& options) {
  FitsHandle handle(createFitsImage(path, target, kind, z, y, x, options));
  fitsfile* f = handle.get();
  FitsStatus status(target);
  const int64_t sliceCount = y * x;
  for (int64_t k = 0; k < z; ++k) {
    throwIfWritesStopped(target);
    LONGLONG first = static_cast<LONGLONG>(k * sliceCount + 1);
    if (kind == SampleKind::Float32)
      fits_write_img(f, TFLOAT, first, static_cast<LONGLONG>(sliceCount),
                     const_cast<float*>(static_cast<const float*>(data) + k * sliceCount),
                     status.ptr());
    else
      fits_write_img(f, TINT, first, static_cast<LONGLONG>(sliceCount),
                     const_cast<int32_t*>(static_cast<const int32_t*>(data) + k * sliceCount),
                     status.ptr());
    status.check("cannot write the data");
  }
  handle.close(status);
  status.check("cannot finish the file");
}

}  // namespace stacklens::io
