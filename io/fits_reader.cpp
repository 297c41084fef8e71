// FitsReader: opens one image HDU of a FITS file and reads z-slices of it as float32.
#include "io/fits_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

#include "io/fits_cards.h"
#include "io/fits_support.h"
#include "io/plio_check.h"
#include "io/rice_check.h"
#include "io/wcs.h"

namespace stacklens::io {
namespace {

constexpr int kMaxHdusListed = 10000;

// A descriptor closed at scope exit unless released.
class UniqueFd {
 public:
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(' ');
  if (b == std::string::npos) return "";
  auto e = s.find_last_not_of(' ');
  return s.substr(b, e - b + 1);
}

// Whether file axis `axis` (0-based) of the current HDU is a Stokes axis (CTYPEn = 'STOKES').
bool isStokesAxis(fitsfile* f, int axis) {
  char value[FLEN_VALUE] = {};
  int status = 0;
  const std::string key = "CTYPE" + std::to_string(axis + 1);
  fits_read_key_str(f, key.c_str(), value, nullptr, &status);
  if (status != 0) {
    fits_clear_errmsg();
    return false;
  }
  return std::string(value).rfind("STOKES", 0) == 0;
}

// The cards of the current HDU as one string of 80-character cards (for compressed images, the
// header of the image, not of the table that holds it).
std::string headerCards(fitsfile* f, int& count, FitsStatus& status) {
  char* text = nullptr;
  count = 0;
  fits_convert_hdr2str(f, 0, nullptr, 0, &text, &count, status.ptr());
  std::string cards;
  if (text) {
    cards.assign(text, static_cast<size_t>(count) * 80);
    int freeStatus = 0;
    fits_free_memory(text, &freeStatus);
  }
  status.check("cannot read the header");
  return cards;
}

const HeaderCard* findCard(const std::vector<HeaderCard>& header, const std::string& key) {
  for (const auto& c : header)
    if (c.key == key) return &c;
  return nullptr;
}

std::string unquote(const std::string& v) {
  if (v.size() >= 2 && v.front() == '\'' && v.back() == '\'') {
    std::string s = v.substr(1, v.size() - 2);
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
      out += s[i];
      if (s[i] == '\'' && i + 1 < s.size() && s[i + 1] == '\'') ++i;
    }
    return trim(out);
  }
  return v;
}

bool cardNumber(const std::vector<HeaderCard>& header, const std::string& key, double& out) {
  const HeaderCard* c = findCard(header, key);
  if (!c) return false;
  std::string v = c->value;
  std::replace(v.begin(), v.end(), 'D', 'E');
  char* end = nullptr;
  double d = std::strtod(v.c_str(), &end);
  if (end == v.c_str() || !std::isfinite(d)) return false;
  out = d;
  return true;
}

// An integer card read exactly (BLANK of a 64-bit image does not survive a double).
bool cardInteger(const std::vector<HeaderCard>& header, const std::string& key, int64_t& out) {
  const HeaderCard* c = findCard(header, key);
  if (!c) return false;
  const std::string& v = c->value;
  char* end = nullptr;
  errno = 0;
  const long long n = std::strtoll(v.c_str(), &end, 10);
  if (end == v.c_str() || errno == ERANGE) return false;
  while (*end == ' ') ++end;
  if (*end != '\0') return false;  // not an integer (e.g. 1.5 or 1E3)
  out = n;
  return true;
}

// A spatial axis with a linear scale: no CTYPE, or a CTYPE that is neither celestial nor spectral
// ("LINEAR", "X", "Z", ...). Celestial axes ("RA---TAN") carry a projection code after a dash.
bool isLinearAxis(const std::vector<HeaderCard>& header, int axis) {
  const HeaderCard* c = findCard(header, "CTYPE" + std::to_string(axis + 1));
  if (!c) return true;
  std::string type = unquote(c->value);
  if (type.empty() || type == "LINEAR" || type == "PIXEL") return true;
  if (type.find('-') != std::string::npos) return false;
  static const char* kNonSpatial[] = {"RA",   "DEC",  "GLON", "GLAT", "ELON",   "ELAT",
                                      "FREQ", "ENER", "WAVN", "VRAD", "WAVE",   "VOPT",
                                      "ZOPT", "AWAV", "VELO", "BETA", "STOKES", "TIME",
                                      "UTC",  "TAI",  "TT",   "MJD",  "JD"};
  for (const char* name : kNonSpatial)
    if (type == name) return false;
  return true;
}

std::string hduName(fitsfile* f, int index) {
  char name[FLEN_VALUE] = {};
  int status = 0;
  fits_read_key(f, TSTRING, "EXTNAME", name, nullptr, &status);
  if (status != 0) {
    fits_clear_errmsg();
    return index == 0 ? "PRIMARY" : "";
  }
  return name;
}

DType storedType(int bitpix, double bscale, double bzero) {
  const bool unitScale = bscale == 1.0;
  switch (bitpix) {
    case BYTE_IMG:
      return unitScale && bzero == -128.0 ? DType::Int8 : DType::UInt8;
    case SHORT_IMG:
      return unitScale && bzero == 32768.0 ? DType::UInt16 : DType::Int16;
    case LONG_IMG:
      return unitScale && bzero == 2147483648.0 ? DType::UInt32 : DType::Int32;
    case LONGLONG_IMG:
      return unitScale && bzero == 9223372036854775808.0 ? DType::UInt64 : DType::Int64;
    case FLOAT_IMG:
      return DType::Float32;
    default:
      return DType::Float64;
  }
}

// cfitsio allocates each compressed tile's buffer from the length in its heap descriptor before
// reading it, so a damaged descriptor can ask for gigabytes. Every descriptor must lie inside
// the heap (PCOUNT bytes).
// RICE tiles whose bit stream would run past their bytes (io/rice_check.h) and PLIO tiles whose
// line list would (io/plio_check.h): checked before cfitsio decodes any, since its decoders
// read past a damaged tile's end.
void checkTileStreams(fitsfile* f, const std::string& path, const std::string& where) {
  int st = 0;
  char value[FLEN_VALUE] = {};
  fits_read_key_str(f, "ZCMPTYPE", value, nullptr, &st);
  const std::string type = st == 0 ? trim(value) : "";
  fits_clear_errmsg();
  const bool rice = type == "RICE_1" || type == "RICE_ONE", plio = type == "PLIO_1";
  if (!rice && !plio) return;
  int znaxis = 0, col = 0;
  st = 0;
  fits_read_key(f, TINT, "ZNAXIS", &znaxis, nullptr, &st);
  fits_get_colnum(f, CASEINSEN, const_cast<char*>("COMPRESSED_DATA"), &col, &st);
  if (st != 0 || znaxis < 1 || znaxis > 6) {
    fits_clear_errmsg();
    return;  // the header pass and cfitsio's own checks report these
  }
  std::vector<LONGLONG> n(size_t(znaxis), 1), tile(size_t(znaxis), 1);
  for (int i = 0; i < znaxis; ++i) {
    const std::string k = std::to_string(i + 1);
    fits_read_key(f, TLONGLONG, ("ZNAXIS" + k).c_str(), &n[size_t(i)], nullptr, &st);
    int tst = 0;
    tile[size_t(i)] = i == 0 ? n[0] : 1;
    fits_read_key(f, TLONGLONG, ("ZTILE" + k).c_str(), &tile[size_t(i)], nullptr, &tst);
    tile[size_t(i)] = std::clamp<LONGLONG>(tile[size_t(i)], 1, std::max<LONGLONG>(n[size_t(i)], 1));
  }
  int bytePix = 4, blockSize = 32;
  for (int k = 1; k <= 10; ++k) {
    char name[FLEN_VALUE] = {};
    int nst = 0, v = 0;
    fits_read_key_str(f, ("ZNAME" + std::to_string(k)).c_str(), name, nullptr, &nst);
    fits_read_key(f, TINT, ("ZVAL" + std::to_string(k)).c_str(), &v, nullptr, &nst);
    if (nst != 0) break;
    if (trim(name) == "BYTEPIX") bytePix = v;
    if (trim(name) == "BLOCKSIZE") blockSize = v;
  }
  fits_clear_errmsg();
  if (st != 0) return;
  LONGLONG rows = 0;
  fits_get_num_rowsll(f, &rows, &st);
  std::vector<unsigned char> bytes;
  std::vector<int16_t> words;
  for (LONGLONG row = 1; row <= rows && st == 0; ++row) {
    // The tile's pixels: its place in the grid of tiles (axis 1 fastest), clipped at the edges.
    LONGLONG index = row - 1, pixels = 1;
    for (int i = 0; i < znaxis; ++i) {
      const LONGLONG per = (n[size_t(i)] + tile[size_t(i)] - 1) / tile[size_t(i)];
      const LONGLONG at = index % per;
      index /= per;
      pixels *= std::min(tile[size_t(i)], n[size_t(i)] - at * tile[size_t(i)]);
    }
    LONGLONG length = 0, offset = 0;
    fits_read_descriptll(f, col, row, &length, &offset, &st);
    if (st != 0 || length <= 0) break;  // an uncompressed tile lives in another column
    bool fits = true;
    if (rice) {
      bytes.resize(static_cast<size_t>(length));
      fits_read_col(f, TBYTE, col, row, 1, length, nullptr, bytes.data(), nullptr, &st);
      fits = st != 0 || riceTileFits(bytes.data(), bytes.size(), pixels, bytePix, blockSize);
    } else {
      // As cfitsio gives them to its decoder: the column's elements read as 16-bit integers.
      words.resize(static_cast<size_t>(length));
      fits_read_col(f, TSHORT, col, row, 1, length, nullptr, words.data(), nullptr, &st);
      fits = st != 0 || plioTileFits(words.data(), words.size(), pixels);
    }
    if (!fits)
      throw IoError(path, "damaged compressed image" + where + ": " + (rice ? "RICE" : "PLIO") +
                              " tile " + std::to_string(row) + " ends before its " +
                              std::to_string(pixels) + " pixels");
  }
  fits_clear_errmsg();
}

void checkTileDescriptors(fitsfile* f, const std::string& path, const std::string& where) {
  FitsStatus status(path);
  LONGLONG rows = 0, heap = 0;
  int columns = 0;
  fits_get_num_rowsll(f, &rows, status.ptr());
  fits_get_num_cols(f, &columns, status.ptr());
  fits_read_key(f, TLONGLONG, "PCOUNT", &heap, nullptr, status.ptr());
  status.check("cannot read the tile table" + where);
  for (int col = 1; col <= columns; ++col) {
    int type = 0;
    LONGLONG repeat = 0, width = 0;
    fits_get_coltypell(f, col, &type, &repeat, &width, status.ptr());
    status.check("cannot read the tile table" + where);
    if (type >= 0) continue;  // not a variable-length column
    for (LONGLONG row = 1; row <= rows; ++row) {
      LONGLONG length = 0, offset = 0;
      fits_read_descriptll(f, col, row, &length, &offset, status.ptr());
      status.check("cannot read tile " + std::to_string(row) + where);
      if (length < 0 || offset < 0 || width < 0 || (width > 0 && length > heap / width) ||
          offset > heap - length * std::max<LONGLONG>(width, 1))
        throw IoError(path, "damaged compressed image" + where + ": tile " + std::to_string(row) +
                                " claims " + std::to_string(length) + " elements at heap offset " +
                                std::to_string(offset) + " but the heap holds " +
                                std::to_string(heap) + " bytes");
    }
  }
}

}  // namespace

FitsReader::FitsReader(const std::string& path, const OpenOptions& options,
                       std::shared_ptr<std::vector<char>> memory,
                       std::map<int, std::string> unreadable)
    : memory_(std::move(memory)) {
  info_.path = path;
  info_.format = "fits";
  FitsStatus status(path);
  // The file the pread() path will read, opened before cfitsio parses it by name: both must be
  // the same file (checked below), or a file replaced in between would be read as this one.
  struct stat before {};
  UniqueFd fd(memory_ ? -1 : ::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() >= 0 && ::fstat(fd.get(), &before) != 0) before = {};
  if (memory_) {
    // cfitsio's memory driver loads whole 2880-byte records: past a file whose size is not a
    // multiple of that it reads beyond the bytes it was given (found by fits_fuzzer). Zeros after
    // the file keep those reads inside the buffer; the size cfitsio sees stays the file's.
    memorySize_ = memory_->size();
    memory_->resize(memorySize_ + 2 * 2880, '\0');
    memoryPointer_ = memory_->data();
    fits_open_memfile(&file_, path.c_str(), READONLY, &memoryPointer_, &memorySize_, 0, nullptr,
                      status.ptr());
  } else {
    // The disk-file entry point takes the name literally (no cfitsio "[ext]" filename syntax).
    fits_open_diskfile(&file_, path.c_str(), READONLY, status.ptr());
  }
  if (status.code() != 0) {
    file_ = nullptr;
    status.check("not a readable FITS file");
  }
  try {
    int nhdus = 0;
    fits_get_num_hdus(file_, &nhdus, status.ptr());
    status.check("cannot read the HDU list");
    nhdus = std::min(nhdus, kMaxHdusListed);
    int chosen = -1;
    for (int i = 0; i < nhdus; ++i) {
      int type = 0;
      fits_movabs_hdu(file_, i + 1, &type, status.ptr());
      status.check("cannot read HDU " + std::to_string(i));
      HduInfo hdu;
      hdu.index = i;
      if (auto bad = unreadable.find(i); bad != unreadable.end()) {
        hdu.type = "unreadable: " + bad->second;
        info_.hdus.push_back(std::move(hdu));
        continue;
      }
      hdu.name = hduName(file_, i);
      if (type == IMAGE_HDU) {
        hdu.type = fits_is_compressed_image(file_, status.ptr()) ? "compressed image" : "image";
        int naxis = 0;
        fits_get_img_dim(file_, &naxis, status.ptr());
        status.check("cannot read NAXIS of HDU " + std::to_string(i));
        if (naxis < 0 || naxis > 999)
          throw IoError(path, "HDU " + std::to_string(i) + " has NAXIS = " + std::to_string(naxis));
        std::vector<LONGLONG> axes(static_cast<size_t>(naxis));
        if (naxis > 0) fits_get_img_sizell(file_, naxis, axes.data(), status.ptr());
        status.check("cannot read the axes of HDU " + std::to_string(i));
        hdu.axes.assign(axes.begin(), axes.end());
        bool hasData =
            naxis > 0 && std::all_of(axes.begin(), axes.end(), [](LONGLONG n) { return n > 0; });
        if (chosen < 0 && options.hdu < 0 && hasData) chosen = i;
      } else {
        hdu.type = type == ASCII_TBL ? "ascii table" : "binary table";
      }
      info_.hdus.push_back(std::move(hdu));
    }
    if (options.hdu >= 0) {
      if (options.hdu >= nhdus)
        throw IoError(path, "HDU " + std::to_string(options.hdu) +
                                " does not exist (the file has " + std::to_string(nhdus) +
                                (nhdus == 1 ? " HDU)" : " HDUs)"));
      const HduInfo& h = info_.hdus[static_cast<size_t>(options.hdu)];
      if (h.type.rfind("unreadable: ", 0) == 0)
        throw IoError(path,
                      "HDU " + std::to_string(options.hdu) + " is damaged: " + h.type.substr(12));
      if (h.type != "image" && h.type != "compressed image")
        throw IoError(path,
                      "HDU " + std::to_string(options.hdu) + " is a " + h.type + ", not an image");
      chosen = options.hdu;
    }
    if (chosen < 0 && !unreadable.empty())
      throw IoError(path, "HDU " + std::to_string(unreadable.begin()->first) +
                              " is damaged: " + unreadable.begin()->second);
    if (chosen < 0)
      throw IoError(path, "no HDU holds image data (NAXIS = 0 or an axis of length 0)");
    info_.hdu = chosen;
    int type = 0;
    fits_movabs_hdu(file_, chosen + 1, &type, status.ptr());
    status.check("cannot move to HDU " + std::to_string(chosen));
    const std::vector<int64_t> axes = info_.hdus[static_cast<size_t>(chosen)].axes;
    const std::string where = chosen == 0 ? "" : " of HDU " + std::to_string(chosen);
    if (axes.empty()) throw IoError(path, "NAXIS = 0" + where + ": there is no image data");
    for (size_t a = 0; a < axes.size(); ++a)
      if (axes[a] <= 0)
        throw IoError(path, "NAXIS" + std::to_string(a + 1) + " = " + std::to_string(axes[a]) +
                                where + ": an axis must have at least one pixel");
    std::vector<int> kept;
    for (size_t a = 0; a < axes.size(); ++a)
      if (axes[a] > 1) kept.push_back(static_cast<int>(a));
    if (kept.size() > 4)
      throw IoError(path,
                    std::to_string(kept.size()) +
                        " axes longer than 1; StackLens shows at most 3 axes plus a plane axis");
    // Radio cubes put Stokes before frequency (RA, DEC, STOKES, FREQ): the spectral axis is the
    // one to scrub, Stokes the plane, as CARTA and DS9 show them.
    if (kept.size() == 4 && isStokesAxis(file_, kept[2]) && !isStokesAxis(file_, kept[3]))
      std::swap(kept[2], kept[3]);
    auto len = [&](size_t role) {
      return role < kept.size() ? axes[static_cast<size_t>(kept[role])] : 1;
    };
    info_.x = len(0);
    info_.y = len(1);
    info_.z = len(2);
    info_.planes = len(3);
    zAxis_ = kept.size() > 2 ? kept[2] : -1;
    const int planeAxis = kept.size() > 3 ? kept[3] : -1;
    if (options.plane < 0 || options.plane >= info_.planes)
      throw IoError(path, "plane " + std::to_string(options.plane) + " is outside 0.." +
                              std::to_string(info_.planes - 1));
    info_.plane = options.plane;

    int bitpix = 0;
    fits_get_img_type(file_, &bitpix, status.ptr());
    status.check("cannot read BITPIX");
    const int bytesPerPixel = std::abs(bitpix) / 8;
    // The element count must fit in 64 bits and, for plain images, in the file itself:
    // a header may claim any size.
    int64_t elements = 1;
    for (int64_t n : axes) {
      if (n > (int64_t{1} << 56) / elements)
        throw IoError(
            path, "the image dimensions" + where + " are absurdly large (their product overflows)");
      elements *= n;
    }
    if (info_.x * info_.y > (int64_t{1} << 34))
      throw IoError(path, "a slice of " + std::to_string(info_.x) + " x " +
                              std::to_string(info_.y) + " pixels is too large to read");
    if (memory_) {
      // cfitsio's memory driver does not stop a read at the end of the bytes it was given: the
      // data unit as cfitsio sizes it (BITPIX, the axes, PCOUNT and GCOUNT, whichever cards it
      // took) must lie inside them (found by fits_fuzzer: a header with its structural cards
      // twice, read from a copy made around a damaged HDU, sent cfitsio past the file).
      LONGLONG headStart = 0, dataStart = 0, dataEnd = 0;
      fits_get_hduaddrll(file_, &headStart, &dataStart, &dataEnd, status.ptr());
      status.check("cannot locate the data");
      // (A last record short of its 2880 bytes is common and harmless: the buffer's zeros
      // past the file cover it.)
      if (dataEnd > static_cast<LONGLONG>((memorySize_ + 2879) / 2880 * 2880))
        throw IoError(path, "the file is truncated or damaged: the data unit" + where +
                                " ends at byte " + std::to_string(dataEnd) + " of " +
                                std::to_string(memorySize_));
    }
    int compressed = fits_is_compressed_image(file_, status.ptr());
    bitpix_ = bitpix;
    if (compressed) {
      checkTileDescriptors(file_, path, where);
      checkTileStreams(file_, path, where);
    }
    if (!compressed) {
      LONGLONG headStart = 0, dataStart = 0, dataEnd = 0;
      fits_get_hduaddrll(file_, &headStart, &dataStart, &dataEnd, status.ptr());
      status.check("cannot locate the data");
      dataStart_ = dataStart;
      const int64_t need = dataStart + elements * bytesPerPixel;
      const LONGLONG have = file_->Fptr->logfilesize;
      if (need > have)
        throw IoError(path,
                      "the file is truncated: the header" + where + " describes " +
                          std::to_string(elements * bytesPerPixel) + " bytes of data but only " +
                          std::to_string(std::max<LONGLONG>(0, have - dataStart)) + " follow it");
    }

    int count = 0;
    const std::string cards = headerCards(file_, count, status);
    info_.header = parseCards(cards, count);
    cardNumber(info_.header, "BSCALE", info_.bscale);
    cardNumber(info_.header, "BZERO", info_.bzero);
    int64_t blank = 0;
    if (bitpix > 0 && cardInteger(info_.header, "BLANK", blank)) info_.blank = blank;
    info_.dtype = storedType(bitpix, info_.bscale, info_.bzero);

    // Spacing only for linear (microscopy-style) axes; sky and spectral axes are left to the WCS.
    std::array<double, 3> spacing{1.0, 1.0, 1.0};
    bool known = true;
    for (size_t role = 0; role < 3 && role < std::max<size_t>(kept.size(), 2); ++role) {
      const int axis = role < kept.size() ? kept[role] : -1;
      if (axis < 0) break;
      const std::string n = std::to_string(axis + 1);
      double d = 0;
      if (!isLinearAxis(info_.header, axis) ||
          !(cardNumber(info_.header, "CDELT" + n, d) ||
            cardNumber(info_.header, "CD" + n + "_" + n, d)) ||
          d == 0) {
        known = false;
        break;
      }
      spacing[2 - role] = std::abs(d);
      if (const HeaderCard* unit = findCard(info_.header, "CUNIT" + n))
        info_.units[2 - role] = unquote(unit->value);
    }
    if (kept.size() < 2) known = false;
    info_.spacingKnown = known;
    if (known)
      info_.spacing = spacing;
    else
      info_.units = {};

    // Element strides of the z and plane axes, for the pread() path.
    std::vector<int64_t> stride(axes.size(), 1);
    for (size_t a = 1; a < axes.size(); ++a) stride[a] = stride[a - 1] * axes[a - 1];
    zStride_ = zAxis_ >= 0 ? stride[static_cast<size_t>(zAxis_)] : 0;
    planeElements_ = planeAxis >= 0 ? options.plane * stride[static_cast<size_t>(planeAxis)] : 0;
    // The pread() path needs the file on disk as cfitsio sees it: a plain FITS file (not from a
    // .gz, not tile-compressed), the same inode as the name cfitsio opened, the same size.
    struct stat now {};
    if (fd.get() >= 0 && !compressed && ::stat(path.c_str(), &now) == 0 &&
        now.st_dev == before.st_dev && now.st_ino == before.st_ino &&
        static_cast<LONGLONG>(before.st_size) == file_->Fptr->logfilesize)
      fd_ = fd.release();
    firstPixel_.assign(axes.size(), 1);
    if (planeAxis >= 0) firstPixel_[static_cast<size_t>(planeAxis)] = options.plane + 1;
    std::vector<double> fixedPixel(axes.size(), 0.0);
    if (planeAxis >= 0) fixedPixel[static_cast<size_t>(planeAxis)] = options.plane;
    const std::array<int, 3> roles{kept.size() > 0 ? kept[0] : -1, kept.size() > 1 ? kept[1] : -1,
                                   zAxis_};
    wcs_ = Wcs::fromFitsHeader(cards, count, fixedPixel, roles);
    info_.fileAxes = roles;
    info_.fixedPixel = fixedPixel;
  } catch (...) {
    int closeStatus = 0;
    fits_close_file(file_, &closeStatus);
    fits_clear_errmsg();
    throw;
  }
}

FitsReader::~FitsReader() {
  int status = 0;
  if (file_) fits_close_file(file_, &status);
  if (fd_ >= 0) ::close(fd_);
}

namespace {

template <class Raw, class Unsigned>
Raw bigEndian(const unsigned char* p) {
  Unsigned u;
  std::memcpy(&u, p, sizeof u);
  if constexpr (sizeof(Unsigned) == 2) u = __builtin_bswap16(u);
  if constexpr (sizeof(Unsigned) == 4) u = __builtin_bswap32(u);
  if constexpr (sizeof(Unsigned) == 8) u = __builtin_bswap64(u);
  Raw r;
  std::memcpy(&r, &u, sizeof r);
  return r;
}

// Raw big-endian samples → float, as cfitsio would: value = raw·bscale + bzero in double, BLANK
// (integers only) → NaN.
template <class Raw, class Unsigned>
void convertSamples(const unsigned char* in, int64_t count, double bscale, double bzero,
                    const std::optional<int64_t>& blank, float* out) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const bool scaled = bscale != 1.0 || bzero != 0.0;
  const bool checkBlank = std::is_integral_v<Raw> && blank.has_value();
  const Raw blankValue = checkBlank ? static_cast<Raw>(*blank) : Raw{};
  // 8- and 16-bit samples with an integral offset (BZERO 32768: unsigned 16-bit) add exactly in
  // 32-bit integers, and every sum is a float exactly: the same values, vectorised.
  if constexpr (std::is_integral_v<Raw> && sizeof(Raw) <= 2) {
    if (!checkBlank && bscale == 1.0 && bzero == std::floor(bzero) && std::abs(bzero) < 1e6) {
      const int32_t offset = static_cast<int32_t>(bzero);
      for (int64_t i = 0; i < count; ++i)
        out[i] = static_cast<float>(
            static_cast<int32_t>(bigEndian<Raw, Unsigned>(in + i * int64_t(sizeof(Raw)))) + offset);
      return;
    }
  }
  for (int64_t i = 0; i < count; ++i) {
    const Raw raw = bigEndian<Raw, Unsigned>(in + i * static_cast<int64_t>(sizeof(Raw)));
    if (checkBlank && raw == blankValue) {
      out[i] = nan;
    } else if (scaled) {
      out[i] = static_cast<float>(static_cast<double>(raw) * bscale + bzero);
    } else {
      out[i] = static_cast<float>(raw);
    }
  }
}

}  // namespace

void FitsReader::readPlainRows(int64_t z, int64_t y0, int64_t y1, float* out) const {
  const int64_t count = (y1 - y0) * info_.x;
  const int64_t bytes = std::abs(bitpix_) / 8;
  thread_local std::vector<unsigned char> buffer;
  buffer.resize(static_cast<size_t>(count * bytes));
  const int64_t offset = dataStart_ + (planeElements_ + z * zStride_ + y0 * info_.x) * bytes;
  size_t done = 0;
  while (done < buffer.size()) {
    const ssize_t got = ::pread(fd_, buffer.data() + done, buffer.size() - done,
                                static_cast<off_t>(offset + static_cast<int64_t>(done)));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0)
      throw IoError(info_.path, "cannot read slice " + std::to_string(z) + ": " +
                                    (got < 0 ? std::strerror(errno) : "unexpected end of file"));
    done += static_cast<size_t>(got);
  }
  const unsigned char* in = buffer.data();
  const double s = info_.bscale, b = info_.bzero;
  switch (bitpix_) {
    case BYTE_IMG:
      convertSamples<uint8_t, uint8_t>(in, count, s, b, info_.blank, out);
      break;
    case SHORT_IMG:
      convertSamples<int16_t, uint16_t>(in, count, s, b, info_.blank, out);
      break;
    case LONG_IMG:
      convertSamples<int32_t, uint32_t>(in, count, s, b, info_.blank, out);
      break;
    case LONGLONG_IMG:
      if (info_.dtype == DType::UInt64) {
        // raw + 2^63 is not exact in double; flipping the sign bit is (as cfitsio does).
        for (int64_t i = 0; i < count; ++i) {
          const uint64_t u = bigEndian<uint64_t, uint64_t>(in + i * 8) ^ (uint64_t{1} << 63);
          out[i] = info_.blank && bigEndian<int64_t, uint64_t>(in + i * 8) == *info_.blank
                       ? std::numeric_limits<float>::quiet_NaN()
                       : static_cast<float>(u);
        }
      } else {
        convertSamples<int64_t, uint64_t>(in, count, s, b, info_.blank, out);
      }
      break;
    case FLOAT_IMG:
      convertSamples<float, uint32_t>(in, count, s, b, info_.blank, out);
      break;
    case DOUBLE_IMG:
      convertSamples<double, uint64_t>(in, count, s, b, info_.blank, out);
      break;
    default:
      throw IoError(info_.path, "unsupported BITPIX " + std::to_string(bitpix_));
  }
}

void FitsReader::readSlice(int64_t z, float* out) const {
  if (z < 0 || z >= info_.z)
    throw IoError(info_.path,
                  "slice " + std::to_string(z) + " is outside 0.." + std::to_string(info_.z - 1));
  if (fd_ >= 0) return readPlainRows(z, 0, info_.y, out);
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<LONGLONG> first = firstPixel_;
  if (zAxis_ >= 0) first[static_cast<size_t>(zAxis_)] = z + 1;
  // Integer images: BLANK pixels become NaN. Float images are read unchecked, because cfitsio's
  // null check would also turn ±Inf into the null value; NaN stays NaN either way.
  const bool floating = info_.dtype == DType::Float32 || info_.dtype == DType::Float64;
  float nan = floating ? 0.0f : std::numeric_limits<float>::quiet_NaN();
  int anyNull = 0;
  FitsStatus status(info_.path);
  // Degenerate axes have length 1, so the slice is one contiguous run of y·x pixels.
  fits_read_pixll(file_, TFLOAT, first.data(), static_cast<LONGLONG>(info_.y * info_.x), &nan, out,
                  &anyNull, status.ptr());
  status.check("cannot read slice " + std::to_string(z));
}

void FitsReader::readRows(int64_t z, int64_t y0, int64_t y1, float* out) const {
  if (z < 0 || z >= info_.z || y0 < 0 || y1 > info_.y || y0 >= y1)
    throw IoError(info_.path, "rows " + std::to_string(y0) + ".." + std::to_string(y1) +
                                  " of slice " + std::to_string(z) + " are outside the stack");
  if (fd_ >= 0) return readPlainRows(z, y0, y1, out);
  StackReader::readRows(z, y0, y1, out);
}

}  // namespace stacklens::io
