// FitsReader: opens one image HDU of a FITS file and reads z-slices of it as float32.
#include "io/fits_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <utility>

#include "io/fits_axes.h"
#include "io/fits_cards.h"
#include "io/fits_compressed_header.h"
#include "io/fits_hdu_list.h"
#include "io/fits_samples.h"
#include "io/fits_tile_checks.h"
#include "io/wcs.h"

namespace stacklens::io {
namespace {

// The file opened for pread() before cfitsio parses it by name, and what it was then.
struct PlainFile {
  UniqueFd fd;
  struct stat before {};
};

PlainFile openPlainFile(const std::string& path) {
  PlainFile plain{UniqueFd(::open(path.c_str(), O_RDONLY | O_CLOEXEC))};
  if (plain.fd.get() >= 0 && ::fstat(plain.fd.get(), &plain.before) != 0) plain.before = {};
  return plain;
}

// The descriptor, if path is still the file it was opened on (the same inode) and cfitsio sees
// the same size: else a file replaced in between would be read as this one. -1 otherwise.
UniqueFd keepIfSameFile(PlainFile plain, const std::string& path, LONGLONG cfitsioSize) {
  struct stat now {};
  if (plain.fd.get() >= 0 && ::stat(path.c_str(), &now) == 0 && now.st_dev == plain.before.st_dev &&
      now.st_ino == plain.before.st_ino &&
      static_cast<LONGLONG>(plain.before.st_size) == cfitsioSize)
    return std::move(plain.fd);
  return UniqueFd();
}

// count cards of 80 characters that cfitsio allocated, copied and freed.
std::string cardText(char* text, int count) {
  std::string cards;
  if (text) {
    cards.assign(text, static_cast<size_t>(count) * 80);
    int freeStatus = 0;
    fits_free_memory(text, &freeStatus);
  }
  return cards;
}

// The cards of the current HDU as one string of 80-character cards (for compressed images, the
// header of the image, not of the table that holds it).
std::string headerCards(fitsfile* f, const std::string& path, int& count) {
  FitsStatus status(path);
  char* text = nullptr;
  count = 0;
  fits_convert_hdr2str(f, 0, nullptr, 0, &text, &count, status.ptr());
  std::string cards = cardText(text, count);
  int compressedStatus = 0;
  if (status.code() != 0 && fits_is_compressed_image(f, &compressedStatus)) {
    // cfitsio could not rebuild the image's header from the table's (io/fits_compressed_header.h
    // says when): rebuilt here from the table's own cards, which cfitsio reads as they are.
    const std::string why = status.message("cannot read the header");
    text = nullptr;
    count = 0;
    fits_hdr2str(f, 0, nullptr, 0, &text, &count, status.ptr());
    const std::string table = cardText(text, count);
    if (status.code() != 0) {
      status.clear();  // or the next error would quote this one
      throw IoError(path, why);
    }
    cards = imageHeaderFromTableCards(table);
    count = static_cast<int>(cards.size() / 80);
  }
  status.check("cannot read the header");
  return cards;
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

// The data unit's first and last byte offsets in the current HDU.
std::pair<LONGLONG, LONGLONG> locateDataUnit(fitsfile* f, FitsStatus& status) {
  LONGLONG headStart = 0, dataStart = 0, dataEnd = 0;
  fits_get_hduaddrll(f, &headStart, &dataStart, &dataEnd, status.ptr());
  status.check("cannot locate the data");
  return {dataStart, dataEnd};
}

// The image's element count, which must fit in 64 bits: a header may claim any size.
int64_t countElements(const std::vector<int64_t>& axes, const std::string& path,
                      const std::string& where) {
  int64_t elements = 1;
  for (int64_t n : axes) {
    if (n > (int64_t{1} << 56) / elements)
      throw IoError(
          path, "the image dimensions" + where + " are absurdly large (their product overflows)");
    elements *= n;
  }
  return elements;
}

}  // namespace

FitsReader::FitsReader(const std::string& path, const OpenOptions& options,
                       std::shared_ptr<std::vector<char>> memory,
                       std::map<int, std::string> unreadable,
                       std::shared_ptr<const InflatedFile> inflated)
    : memory_(std::move(memory)), inflated_(std::move(inflated)) {
  info_.path = path;
  info_.format = "fits";
  const std::string readPath = inflated_ ? inflated_->readPath() : path;
  PlainFile plain = memory_ ? PlainFile{} : openPlainFile(readPath);
  openFile(readPath);
  info_.hdus = listHdus(file_.get(), path, unreadable);
  info_.hdu = chooseHdu(info_.hdus, options, unreadable, path);
  moveToHdu(info_.hdu);
  const std::string where = info_.hdu == 0 ? "" : " of HDU " + std::to_string(info_.hdu);
  const FitsAxisRoles roles =
      assignAxisRoles(file_.get(), info_.hdus[static_cast<size_t>(info_.hdu)].axes, path, where);
  setShape(roles, options.plane);
  const bool compressed = checkDataUnit(roles.lengths, where);
  int count = 0;
  const std::string cards = readHeader(count);
  readLinearSpacing(info_.header, roles, info_);
  setUpReads(roles, compressed
                        ? UniqueFd()
                        : keepIfSameFile(std::move(plain), readPath, file_->Fptr->logfilesize));
  readWcs(cards, count, roles);
}

FitsReader::~FitsReader() = default;

void FitsReader::openFile(const std::string& readPath) {
  FitsStatus status(info_.path);
  fitsfile* opened = nullptr;
  if (memory_) {
    // cfitsio's memory driver loads whole 2880-byte records: past a file whose size is not a
    // multiple of that it reads beyond the bytes it was given (found by fits_fuzzer). Zeros after
    // the file keep those reads inside the buffer; the size cfitsio sees stays the file's.
    memorySize_ = memory_->size();
    memory_->resize(memorySize_ + 2 * 2880, '\0');
    memoryPointer_ = memory_->data();
    fits_open_memfile(&opened, info_.path.c_str(), READONLY, &memoryPointer_, &memorySize_, 0,
                      nullptr, status.ptr());
  } else {
    // The disk-file entry point takes the name literally (no cfitsio "[ext]" filename syntax).
    fits_open_diskfile(&opened, readPath.c_str(), READONLY, status.ptr());
  }
  // A file cfitsio failed to open is not ours to close: cfitsio has released it.
  status.check("not a readable FITS file");
  file_.reset(opened);
}

void FitsReader::moveToHdu(int index) {
  FitsStatus status(info_.path);
  int type = 0;
  fits_movabs_hdu(file_.get(), index + 1, &type, status.ptr());
  status.check("cannot move to HDU " + std::to_string(index));
}

void FitsReader::setShape(const FitsAxisRoles& roles, int plane) {
  info_.x = roles.length(0);
  info_.y = roles.length(1);
  info_.z = roles.length(2);
  info_.planes = roles.length(3);
  zAxis_ = roles.zAxis();
  if (plane < 0 || plane >= info_.planes)
    throw IoError(info_.path, "plane " + std::to_string(plane) + " is outside 0.." +
                                  std::to_string(info_.planes - 1));
  info_.plane = plane;
}

// BITPIX, and whether the data the header describes can be read: a size that fits, inside the
// file (or the memory it was inflated to), tiles that cfitsio can decode safely. Returns whether
// the image is tile-compressed.
bool FitsReader::checkDataUnit(const std::vector<int64_t>& axes, const std::string& where) {
  FitsStatus status(info_.path);
  fits_get_img_type(file_.get(), &bitpix_, status.ptr());
  status.check("cannot read BITPIX");
  const int64_t elements = countElements(axes, info_.path, where);
  if (info_.x * info_.y > (int64_t{1} << 34))
    throw IoError(info_.path, "a slice of " + std::to_string(info_.x) + " x " +
                                  std::to_string(info_.y) + " pixels is too large to read");
  if (memory_) checkDataInMemory(where);
  const bool compressed = fits_is_compressed_image(file_.get(), status.ptr());
  if (compressed) {
    checkTileDescriptors(file_.get(), info_.path, where);
    checkTileStreams(file_.get(), info_.path, where);
  } else {
    checkDataInFile(elements * (std::abs(bitpix_) / 8), where, status);
  }
  return compressed;
}

// cfitsio's memory driver does not stop a read at the end of the bytes it was given: the data
// unit as cfitsio sizes it (BITPIX, the axes, PCOUNT and GCOUNT, whichever cards it took) must lie
// inside them (found by fits_fuzzer: a header with its structural cards twice, read from a copy
// made around a damaged HDU, sent cfitsio past the file).
void FitsReader::checkDataInMemory(const std::string& where) {
  FitsStatus status(info_.path);
  const LONGLONG dataEnd = locateDataUnit(file_.get(), status).second;
  // (A last record short of its 2880 bytes is common and harmless: the buffer's zeros past the
  // file cover it.)
  if (dataEnd > static_cast<LONGLONG>((memorySize_ + 2879) / 2880 * 2880))
    throw IoError(info_.path, "the file is truncated or damaged: the data unit" + where +
                                  " ends at byte " + std::to_string(dataEnd) + " of " +
                                  std::to_string(memorySize_));
}

// An uncompressed image's data must all be in the file.
void FitsReader::checkDataInFile(int64_t dataBytes, const std::string& where, FitsStatus& status) {
  dataStart_ = locateDataUnit(file_.get(), status).first;
  const LONGLONG have = file_->Fptr->logfilesize;
  if (dataStart_ + dataBytes > have)
    throw IoError(info_.path, "the file is truncated: the header" + where + " describes " +
                                  std::to_string(dataBytes) + " bytes of data but only " +
                                  std::to_string(std::max<LONGLONG>(0, have - dataStart_)) +
                                  " follow it");
}

// The header cards (returned as cfitsio's text for the WCS), the scaling, BLANK and the stored
// type.
std::string FitsReader::readHeader(int& count) {
  std::string cards = headerCards(file_.get(), info_.path, count);
  info_.header = parseCards(cards, count);
  cardNumber(info_.header, "BSCALE", info_.bscale);
  cardNumber(info_.header, "BZERO", info_.bzero);
  int64_t blank = 0;
  if (bitpix_ > 0 && cardInteger(info_.header, "BLANK", blank)) info_.blank = blank;
  info_.dtype = storedType(bitpix_, info_.bscale, info_.bzero);
  return cards;
}

// Where slices lie: element strides of the z and plane axes for the pread() path (used when
// plainFd is open), the first pixel for cfitsio's reads otherwise.
void FitsReader::setUpReads(const FitsAxisRoles& roles, UniqueFd plainFd) {
  const std::vector<int64_t>& axes = roles.lengths;
  std::vector<int64_t> stride(axes.size(), 1);
  for (size_t a = 1; a < axes.size(); ++a) stride[a] = stride[a - 1] * axes[a - 1];
  const int planeAxis = roles.planeAxis();
  zStride_ = zAxis_ >= 0 ? stride[static_cast<size_t>(zAxis_)] : 0;
  planeElements_ = planeAxis >= 0 ? info_.plane * stride[static_cast<size_t>(planeAxis)] : 0;
  plainFd_ = std::move(plainFd);
  firstPixel_.assign(axes.size(), 1);
  if (planeAxis >= 0) firstPixel_[static_cast<size_t>(planeAxis)] = info_.plane + 1;
}

// The WCS of the shown axes, the others fixed at the chosen plane (or pixel 0 for length-1 axes).
void FitsReader::readWcs(const std::string& cards, int count, const FitsAxisRoles& roles) {
  std::vector<double> fixedPixel(roles.lengths.size(), 0.0);
  if (roles.planeAxis() >= 0) fixedPixel[static_cast<size_t>(roles.planeAxis())] = info_.plane;
  const std::array<int, 3> fileAxes{roles.fileAxis(0), roles.fileAxis(1), zAxis_};
  wcs_ = Wcs::fromFitsHeader(cards, count, fixedPixel, fileAxes);
  info_.fileAxes = fileAxes;
  info_.fixedPixel = fixedPixel;
}

void FitsReader::readPlainBytes(int64_t z, int64_t offset, std::vector<unsigned char>& into) const {
  size_t done = 0;
  while (done < into.size()) {
    const ssize_t got = ::pread(plainFd_.get(), into.data() + done, into.size() - done,
                                static_cast<off_t>(offset + static_cast<int64_t>(done)));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0)
      throw IoError(info_.path, "cannot read slice " + std::to_string(z) + ": " +
                                    (got < 0 ? std::strerror(errno) : "unexpected end of file"));
    done += static_cast<size_t>(got);
  }
}

void FitsReader::readPlainRows(int64_t z, int64_t y0, int64_t y1, float* out, int64_t x0,
                               int64_t x1) const {
  if (x1 < 0) x1 = info_.x;
  // From the first wanted sample to the last: whole rows in between are read, converted only
  // where wanted (a lateral block of a wide stack converts its own columns, not the row's).
  const int64_t count = (y1 - y0 - 1) * info_.x + (x1 - x0);
  const int64_t bytes = std::abs(bitpix_) / 8;
  thread_local std::vector<unsigned char> buffer;
  buffer.resize(static_cast<size_t>(count * bytes));
  const int64_t offset = dataStart_ + (planeElements_ + z * zStride_ + y0 * info_.x + x0) * bytes;
  readPlainBytes(z, offset, buffer);
  const FitsSampleScaling scaling{bitpix_, info_.dtype, info_.bscale, info_.bzero, info_.blank};
  const int64_t width = x1 - x0;
  if (width == info_.x) {
    if (!convertFitsSamples(buffer.data(), count, scaling, out))
      throw IoError(info_.path, "unsupported BITPIX " + std::to_string(bitpix_));
    return;
  }
  for (int64_t y = 0; y < y1 - y0; ++y)
    if (!convertFitsSamples(buffer.data() + y * info_.x * bytes, width, scaling, out + y * width))
      throw IoError(info_.path, "unsupported BITPIX " + std::to_string(bitpix_));
}

void FitsReader::readStridedPlain(int64_t z, int64_t y0, int64_t y1, int64_t x0, int64_t x1,
                                  int64_t step, float* out) const {
  const int64_t bytes = std::abs(bitpix_) / 8;
  const int64_t across = (x1 - x0 + step - 1) / step;
  const int64_t span = (across - 1) * step + 1;  // first to last wanted sample of a row
  const FitsSampleScaling scaling{bitpix_, info_.dtype, info_.bscale, info_.bzero, info_.blank};
  // pread, not mmap: pages read through a mapping would count in the viewer's resident memory.
  thread_local std::vector<unsigned char> row;
  row.resize(static_cast<size_t>(span * bytes));
  for (int64_t y = y0; y < y1; y += step, out += across) {
    const int64_t offset = dataStart_ + (planeElements_ + z * zStride_ + y * info_.x + x0) * bytes;
    readPlainBytes(z, offset, row);
    bool converted = true;
    if (step == 1)
      converted = convertFitsSamples(row.data(), across, scaling, out);
    else
      for (int64_t i = 0; i < across && converted; ++i)
        converted = convertFitsSamples(row.data() + i * step * bytes, 1, scaling, out + i);
    if (!converted) throw IoError(info_.path, "unsupported BITPIX " + std::to_string(bitpix_));
  }
}

void FitsReader::readCfitsioRows(int64_t z, int64_t y0, int64_t y1, float* out) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<LONGLONG> first = firstPixel_;
  if (zAxis_ >= 0) first[static_cast<size_t>(zAxis_)] = z + 1;
  if (info_.fileAxes[1] >= 0) first[static_cast<size_t>(info_.fileAxes[1])] = y0 + 1;
  // Integer images: BLANK pixels become NaN. Float images are read unchecked, because cfitsio's
  // null check would also turn ±Inf into the null value; NaN stays NaN either way.
  const bool floating = info_.dtype == DType::Float32 || info_.dtype == DType::Float64;
  float nan = floating ? 0.0f : std::numeric_limits<float>::quiet_NaN();
  int anyNull = 0;
  FitsStatus status(info_.path);
  // Degenerate axes have length 1, so the rows are one contiguous run of pixels.
  fits_read_pixll(file_.get(), TFLOAT, first.data(), static_cast<LONGLONG>((y1 - y0) * info_.x),
                  &nan, out, &anyNull, status.ptr());
  status.check("cannot read slice " + std::to_string(z));
}

void FitsReader::readSlice(int64_t z, float* out) const {
  if (z < 0 || z >= info_.z)
    throw IoError(info_.path,
                  "slice " + std::to_string(z) + " is outside 0.." + std::to_string(info_.z - 1));
  if (plainFd_.get() >= 0) return readPlainRows(z, 0, info_.y, out);
  readCfitsioRows(z, 0, info_.y, out);
}

void FitsReader::readRows(int64_t z, int64_t y0, int64_t y1, float* out) const {
  if (z < 0 || z >= info_.z || y0 < 0 || y1 > info_.y || y0 >= y1)
    throw IoError(info_.path, "rows " + std::to_string(y0) + ".." + std::to_string(y1) +
                                  " of slice " + std::to_string(z) + " are outside the stack");
  if (plainFd_.get() >= 0) return readPlainRows(z, y0, y1, out);
  readCfitsioRows(z, y0, y1, out);
}

void FitsReader::readBox(int64_t z, int64_t y0, int64_t y1, int64_t x0, int64_t x1,
                         float* out) const {
  if (z < 0 || z >= info_.z || y0 < 0 || y1 > info_.y || y0 >= y1 || x0 < 0 || x1 > info_.x ||
      x0 >= x1)
    throw IoError(info_.path, "box " + std::to_string(y0) + ".." + std::to_string(y1) + " × " +
                                  std::to_string(x0) + ".." + std::to_string(x1) + " of slice " +
                                  std::to_string(z) + " is outside the stack");
  if (plainFd_.get() >= 0) return readPlainRows(z, y0, y1, out, x0, x1);
  StackReader::readBox(z, y0, y1, x0, x1, out);
}

}  // namespace stacklens::io
