// listHdus and chooseHdu: walking a FITS file's HDUs through cfitsio.
#include "io/fits_hdu_list.h"

#include <algorithm>

#include "io/fits_support.h"

namespace stacklens::io {
namespace {

constexpr int kMaxHdusListed = 10000;
const char* const kRandomGroups = "random groups array";

std::string readExtname(fitsfile* f, int index) {
  if (auto name = readOptionalKey(f, "EXTNAME")) return *name;
  return index == 0 ? "PRIMARY" : "";
}

// The NAXISn of the current (image) HDU.
std::vector<int64_t> readImageAxes(fitsfile* f, int index, FitsStatus& status,
                                   const std::string& path) {
  int naxis = 0;
  fits_get_img_dim(f, &naxis, status.ptr());
  status.check("cannot read NAXIS of HDU " + std::to_string(index));
  if (naxis < 0 || naxis > 999)
    throw IoError(path, "HDU " + std::to_string(index) + " has NAXIS = " + std::to_string(naxis));
  std::vector<LONGLONG> axes(static_cast<size_t>(naxis));
  if (naxis > 0) fits_get_img_sizell(f, naxis, axes.data(), status.ptr());
  status.check("cannot read the axes of HDU " + std::to_string(index));
  return {axes.begin(), axes.end()};
}

// Random groups (NAXIS1 = 0, GROUPS = T: radio interferometers' uv data, astropy's GroupsHDU)
// are records of parameters and small arrays, not an image: listed, never shown.
bool isRandomGroups(fitsfile* f, const std::vector<int64_t>& axes) {
  if (axes.empty() || axes[0] != 0) return false;
  int groups = 0, status = 0;
  if (fits_read_key(f, TLOGICAL, "GROUPS", &groups, nullptr, &status) != 0) {
    fits_clear_errmsg();
    return false;
  }
  return groups != 0;
}

// The current HDU, of cfitsio's type hduType.
HduInfo describeHdu(fitsfile* f, int index, int hduType, const std::string& path) {
  HduInfo hdu;
  hdu.index = index;
  hdu.name = readExtname(f, index);
  if (hduType != IMAGE_HDU) {
    hdu.type = hduType == ASCII_TBL ? "ascii table" : "binary table";
    return hdu;
  }
  FitsStatus status(path);
  hdu.type = fits_is_compressed_image(f, status.ptr()) ? "compressed image" : "image";
  hdu.axes = readImageAxes(f, index, status, path);
  if (isRandomGroups(f, hdu.axes)) hdu.type = kRandomGroups;
  return hdu;
}

bool isImage(const HduInfo& hdu) { return hdu.type == "image" || hdu.type == "compressed image"; }

bool hasImageData(const HduInfo& hdu) {
  return isImage(hdu) && !hdu.axes.empty() &&
         std::all_of(hdu.axes.begin(), hdu.axes.end(), [](int64_t n) { return n > 0; });
}

// options.hdu, checked to be a readable image.
int requestedHdu(const std::vector<HduInfo>& hdus, int requested, const std::string& path) {
  const int count = static_cast<int>(hdus.size());
  if (requested >= count)
    throw IoError(path, "HDU " + std::to_string(requested) + " does not exist (the file has " +
                            std::to_string(count) + (count == 1 ? " HDU)" : " HDUs)"));
  const HduInfo& h = hdus[static_cast<size_t>(requested)];
  if (h.type.rfind("unreadable: ", 0) == 0)
    throw IoError(path, "HDU " + std::to_string(requested) + " is damaged: " + h.type.substr(12));
  if (!isImage(h))
    throw IoError(path, "HDU " + std::to_string(requested) + " is a " + h.type + ", not an image");
  return requested;
}

}  // namespace

std::vector<HduInfo> listHdus(fitsfile* f, const std::string& path,
                              const std::map<int, std::string>& unreadable) {
  FitsStatus status(path);
  int count = 0;
  fits_get_num_hdus(f, &count, status.ptr());
  status.check("cannot read the HDU list");
  count = std::min(count, kMaxHdusListed);
  std::vector<HduInfo> hdus;
  for (int i = 0; i < count; ++i) {
    int type = 0;
    fits_movabs_hdu(f, i + 1, &type, status.ptr());
    status.check("cannot read HDU " + std::to_string(i));
    if (auto bad = unreadable.find(i); bad != unreadable.end()) {
      HduInfo hdu;
      hdu.index = i;
      hdu.type = "unreadable: " + bad->second;
      hdus.push_back(std::move(hdu));
      continue;
    }
    hdus.push_back(describeHdu(f, i, type, path));
  }
  return hdus;
}

int chooseHdu(const std::vector<HduInfo>& hdus, const OpenOptions& options,
              const std::map<int, std::string>& unreadable, const std::string& path) {
  if (options.hdu >= 0) return requestedHdu(hdus, options.hdu, path);
  for (const HduInfo& hdu : hdus)
    if (hasImageData(hdu)) return hdu.index;
  if (!unreadable.empty())
    throw IoError(path, "HDU " + std::to_string(unreadable.begin()->first) +
                            " is damaged: " + unreadable.begin()->second);
  for (const HduInfo& hdu : hdus)
    if (hdu.type == kRandomGroups)
      throw IoError(path, "no HDU holds image data (HDU " + std::to_string(hdu.index) +
                              " is a random groups array, uv data rather than an image)");
  throw IoError(path, "no HDU holds image data (NAXIS = 0 or an axis of length 0)");
}

}  // namespace stacklens::io
