// openStack: recognises FITS and TIFF by their first bytes, Zarr folders by their metadata files,
// HTTP(S) URLs as Zarr over the network, and opens the matching reader.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <vector>

#include "io/file_checks.h"
#include "io/fits_prescan.h"
#include "io/fits_reader.h"
#include "io/gzip_inflation.h"
#include "io/http_store.h"
#include "io/ome_zarr.h"
#include "io/stack.h"
#include "io/tiff_reader.h"
#include "io/unique_fd.h"
#include "io/zarr_reader.h"
#include "io/zarr_store.h"

namespace stacklens::io {

const char* dtypeName(DType t) {
  switch (t) {
    case DType::UInt8:
      return "uint8";
    case DType::Int8:
      return "int8";
    case DType::UInt16:
      return "uint16";
    case DType::Int16:
      return "int16";
    case DType::UInt32:
      return "uint32";
    case DType::Int32:
      return "int32";
    case DType::UInt64:
      return "uint64";
    case DType::Int64:
      return "int64";
    case DType::Float32:
      return "float32";
    case DType::Float64:
      return "float64";
  }
  return "unknown";
}

namespace {

UniqueFd openForReading(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) throw IoError(path, std::strerror(errno));
  return fd;
}

// Our own pass over the headers (io/fits_prescan.h) of the file at readPath (the file itself, or
// where it was inflated).
std::vector<PrescannedHdu> prescan(const std::string& readPath, uint64_t size) {
  const UniqueFd fd = openForReading(readPath);
  return prescanFits(
      [&fd](int64_t offset, size_t n) {
        std::string out(n, '\0');
        const ssize_t got = ::pread(fd.get(), out.data(), n, static_cast<off_t>(offset));
        out.resize(got > 0 ? static_cast<size_t>(got) : 0);
        return out;
      },
      static_cast<int64_t>(size));
}

// Where our pass lost track of the HDUs, cfitsio must not go on past that point either (it reads
// some headers our pass cannot, e.g. BITPIX with '=' in column 11, and would parse the unchecked
// HDUs behind them: found by fits_fuzzer). The end of what was checked, or -1 for the whole file.
int64_t checkedEnd(const std::vector<PrescannedHdu>& hdus, uint64_t size) {
  if (hdus.empty() || !hdus.back().endsScan) return -1;
  const PrescannedHdu& last = hdus.back();
  const int64_t end = last.headerStart + last.headerBytes;
  return end >= static_cast<int64_t>(size) ? -1 : end;  // -1: nothing behind it
}

// The first `bytes` of the file at readPath, which must fit the allocation cap to be read around
// a damaged HDU.
std::shared_ptr<std::vector<char>> readHead(const std::string& path, const std::string& readPath,
                                            uint64_t bytes, const std::vector<PrescannedHdu>& hdus,
                                            const std::map<int, std::string>& unreadable) {
  if (bytes > allocationCap()) {
    const int at =
        unreadable.empty() ? static_cast<int>(hdus.size()) - 1 : unreadable.begin()->first;
    throw IoError(path, "HDU " + std::to_string(at) + " is damaged (" +
                            (unreadable.empty() ? std::string("its header cannot be read")
                                                : unreadable.begin()->second) +
                            ") and the file is too large to read around it");
  }
  auto memory = std::make_shared<std::vector<char>>(bytes);
  const UniqueFd fd = openForReading(readPath);
  size_t done = 0;
  while (done < bytes) {
    const ssize_t got =
        ::pread(fd.get(), memory->data() + done, bytes - done, static_cast<off_t>(done));
    if (got <= 0) break;
    done += static_cast<size_t>(got);
  }
  if (done != bytes) throw IoError(path, "cannot read the file");
  return memory;
}

// Each rejected HDU's header replaced in memory by a harmless one of the same size, so that
// cfitsio never parses it.
void neutraliseRejected(std::vector<char>& memory, const std::vector<PrescannedHdu>& hdus,
                        const std::map<int, std::string>& unreadable) {
  for (const auto& entry : unreadable) {
    const PrescannedHdu& h = hdus[static_cast<size_t>(entry.first)];
    const int64_t room = static_cast<int64_t>(memory.size()) - h.headerStart;
    const int64_t data = std::max<int64_t>(0, std::min(h.dataBytes, room - h.headerBytes));
    const std::string header = neutralHeader(h.headerBytes, data);
    std::copy(header.begin(), header.end(), memory.begin() + h.headerStart);
    if (h.headerStart + h.headerBytes + data < static_cast<int64_t>(memory.size()) &&
        h.dataBytes > data)
      break;  // nothing after it can be located
  }
}

// Opens a FITS file (inflated into a temporary file for a .gz) after our own pass over its
// headers: when an HDU is rejected, cfitsio reads a copy in which that HDU's header is replaced
// by a harmless one of the same size, so that counting and moving through HDUs never parses it;
// the reader lists it as unreadable, with the reason.
std::unique_ptr<StackReader> openFits(const std::string& path, const OpenOptions& options,
                                      uint64_t size,
                                      std::shared_ptr<const InflatedFile> inflated = nullptr) {
  const std::string readPath = inflated ? inflated->readPath() : path;
  const std::vector<PrescannedHdu> hdus = prescan(readPath, size);
  std::map<int, std::string> unreadable;
  for (size_t i = 0; i < hdus.size(); ++i)
    if (!hdus[i].rejection.empty()) unreadable[static_cast<int>(i)] = hdus[i].rejection;
  const int64_t end = checkedEnd(hdus, size);
  if (unreadable.empty() && end < 0)
    return std::make_unique<FitsReader>(path, options, nullptr, std::move(unreadable),
                                        std::move(inflated));
  const uint64_t copied = end >= 0 ? static_cast<uint64_t>(end) : size;
  auto memory = readHead(path, readPath, copied, hdus, unreadable);
  neutraliseRejected(*memory, hdus, unreadable);
  return std::make_unique<FitsReader>(path, options, std::move(memory), std::move(unreadable));
}

}  // namespace

void StackReader::readRows(int64_t z, int64_t y0, int64_t y1, float* out) const {
  const StackInfo& i = info();
  if (y0 < 0 || y1 > i.y || y0 >= y1)
    throw IoError(i.path, "rows " + std::to_string(y0) + ".." + std::to_string(y1) +
                              " are outside the slice's " + std::to_string(i.y));
  std::vector<float> slice(static_cast<size_t>(i.y * i.x));
  readSlice(z, slice.data());
  std::copy(slice.begin() + y0 * i.x, slice.begin() + y1 * i.x, out);
}

void StackReader::readBox(int64_t z, int64_t y0, int64_t y1, int64_t x0, int64_t x1,
                          float* out) const {
  const StackInfo& i = info();
  if (x0 < 0 || x1 > i.x || x0 >= x1)
    throw IoError(i.path, "columns " + std::to_string(x0) + ".." + std::to_string(x1) +
                              " are outside the slice's " + std::to_string(i.x));
  thread_local std::vector<float> band;
  band.resize(static_cast<size_t>((y1 - y0) * i.x));
  readRows(z, y0, y1, band.data());
  const int64_t w = x1 - x0;
  for (int64_t y = 0; y < y1 - y0; ++y) std::copy_n(band.begin() + y * i.x + x0, w, out + y * w);
}

namespace {

// A Zarr array or OME-Zarr image is a folder; naming one of its metadata files (as a file
// dialog may) opens the folder. The folder's name without trailing slashes, or "" when path is
// not Zarr.
std::string zarrFolder(const std::string& path) {
  std::string folder = path;
  while (folder.size() > 1 && folder.back() == '/') folder.pop_back();
  if (isZarrFolder(folder)) return folder;
  const size_t slash = folder.rfind('/');
  const std::string name = folder.substr(slash == std::string::npos ? 0 : slash + 1);
  if (name == "zarr.json" || name == ".zarray" || name == ".zattrs" || name == ".zgroup") {
    const std::string parent = slash == std::string::npos ? "." : folder.substr(0, slash);
    if (isZarrFolder(parent)) return parent.empty() ? "/" : parent;
  }
  return "";
}

// An OME-Zarr image or Zarr array under an HTTP(S) URL's path, without a trailing slash or a
// metadata file's name (as a browser's address bar may give it).
std::string zarrUrl(const std::string& url) {
  std::string folder = url;
  while (!folder.empty() && folder.back() == '/') folder.pop_back();
  for (const char* name : {"/zarr.json", "/.zarray", "/.zattrs", "/.zgroup"}) {
    const size_t n = std::strlen(name);
    if (folder.size() > n && folder.compare(folder.size() - n, n, name) == 0) {
      folder.resize(folder.size() - n);
      break;
    }
  }
  return folder;
}

}  // namespace

std::unique_ptr<StackReader> openStack(const std::string& path, const OpenOptions& options) {
  if (isHttpUrl(path)) {
    const ZarrUrl url = splitZarrUrl(path);
    return std::make_unique<ZarrReader>(makeHttpStore(httpLimitsFromEnvironment(), url.query),
                                        zarrUrl(url.folder), options);
  }
  if (const std::string folder = zarrFolder(path); !folder.empty())
    return std::make_unique<ZarrReader>(localZarrStore(), folder, options);
  if (std::error_code ec; std::filesystem::is_directory(path, ec))
    throw IoError(path,
                  "is a directory, not a file nor a Zarr array or OME-Zarr image (it holds no "
                  "zarr.json, .zarray, .zgroup or .zattrs)");
  const uint64_t size = checkReadableFile(path);
  unsigned char magic[9] = {};
  ssize_t got = 0;
  {
    const UniqueFd fd = openForReading(path);
    got = ::read(fd.get(), magic, sizeof magic);
    if (got < 0) throw IoError(path, std::strerror(errno));
  }
  const auto starts = [&](const char* m, size_t n) {
    return static_cast<size_t>(got) >= n && std::memcmp(magic, m, n) == 0;
  };
  if (starts("SIMPLE  =", 9)) return openFits(path, options, size);
  // gzip-compressed FITS (.fits.gz), by its content: inflated into a temporary file, then read
  // as a plain one.
  if (starts("\x1f\x8b", 2)) {
    auto inflated = inflateGzip(path);
    const uint64_t inflatedSize = inflated->size();  // before the pointer moves into the call
    return openFits(path, options, inflatedSize, std::move(inflated));
  }
  if (starts("II*\0", 4) || starts("MM\0*", 4) || starts("II+\0", 4) || starts("MM\0+", 4))
    return std::make_unique<TiffReader>(path, options, size);
  if (size < 4) throw IoError(path, "the file is too short to be a FITS or TIFF file");
  throw IoError(path,
                "not a FITS or TIFF file (its first bytes are neither \"SIMPLE  =\", gzip "
                "nor a TIFF byte-order mark)");
}

}  // namespace stacklens::io
