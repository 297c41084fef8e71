// The catalog reader's FITS files: whole in memory, checked by the header pass, then cfitsio.
#include "io/fits_table_file.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <fstream>

#include "io/file_checks.h"
#include "io/fits_prescan.h"
#include "io/fits_support.h"
#include "io/io_error.h"

namespace stacklens::io {

namespace {

struct GzCloser {
  void operator()(gzFile_s* f) const { gzclose(f); }
};

// Every member of a gzip stream, refusing more than the allocation cap (cfitsio's own inflation
// trusts the trailer, which a damaged file can make claim gigabytes).
std::vector<char> inflated(const std::string& path) {
  const std::unique_ptr<gzFile_s, GzCloser> in(gzopen(path.c_str(), "rb"));
  if (!in) throw IoError(path, "cannot open the gzip stream");
  const uint64_t cap = allocationCap();
  std::vector<char> out;
  size_t used = 0;
  for (;;) {
    if (out.size() - used < (size_t(1) << 20)) {
      if (out.size() >= cap)
        throw IoError(path, "decompresses to more than " + std::to_string(cap >> 20) +
                                " MiB (STACKLENS_ALLOCATION_CAP_MB)");
      out.resize(std::min<uint64_t>(cap, std::max<uint64_t>(out.size() * 2, 1 << 20)));
    }
    const unsigned want = static_cast<unsigned>(std::min<size_t>(out.size() - used, 1u << 30));
    const int got = gzread(in.get(), out.data() + used, want);
    if (got < 0) {
      int code = 0;
      throw IoError(path, "damaged gzip file: " + std::string(gzerror(in.get(), &code)));
    }
    if (got == 0) break;
    used += static_cast<size_t>(got);
  }
  out.resize(used);
  return out;
}

std::vector<char> plain(const std::string& path, uint64_t size) {
  if (size > allocationCap())
    throw IoError(path, "a FITS catalog of " + std::to_string(size >> 20) +
                            " MiB: more than the allocation cap (STACKLENS_ALLOCATION_CAP_MB)");
  std::vector<char> out(static_cast<size_t>(size));
  std::ifstream in(path, std::ios::binary);
  in.read(out.data(), static_cast<std::streamsize>(size));
  if (static_cast<uint64_t>(in.gcount()) != size) throw IoError(path, "cannot read the file");
  return out;
}

// The header pass over the bytes: rejected HDUs get a harmless header of the same size, and
// where the pass lost track of the HDUs the bytes end there, so that cfitsio parses only what was
// checked.
std::vector<std::string> neutralise(std::vector<char>& bytes) {
  std::vector<std::string> rejected;
  const std::vector<PrescannedHdu> hdus = prescanFits(
      [&bytes](int64_t offset, size_t n) {
        if (offset >= static_cast<int64_t>(bytes.size())) return std::string();
        return std::string(bytes.data() + offset, std::min(n, bytes.size() - size_t(offset)));
      },
      static_cast<int64_t>(bytes.size()));
  for (size_t i = 0; i < hdus.size(); ++i) {
    const PrescannedHdu& h = hdus[i];
    if (h.rejection.empty()) continue;
    rejected.push_back("HDU " + std::to_string(i) + ": " + h.rejection);
    const int64_t room = static_cast<int64_t>(bytes.size()) - h.headerStart;
    if (room < h.headerBytes) break;
    const int64_t data = std::max<int64_t>(0, std::min(h.dataBytes, room - h.headerBytes));
    const std::string header = neutralHeader(h.headerBytes, data);
    std::copy(header.begin(), header.end(), bytes.begin() + h.headerStart);
    if (h.dataBytes > data) break;  // nothing after it can be located
  }
  if (!hdus.empty() && hdus.back().endsScan) {
    const PrescannedHdu& last = hdus.back();
    const int64_t end = last.headerStart + last.headerBytes;
    if (end < static_cast<int64_t>(bytes.size())) bytes.resize(static_cast<size_t>(end));
  }
  return rejected;
}

}  // namespace

FitsTableFile::FitsTableFile(const std::string& path) {
  const uint64_t fileSize = checkReadableFile(path);
  char magic[2] = {};
  std::ifstream(path, std::ios::binary).read(magic, 2);
  const bool gzip =
      static_cast<unsigned char>(magic[0]) == 0x1f && static_cast<unsigned char>(magic[1]) == 0x8b;
  bytes_ = gzip ? inflated(path) : plain(path, fileSize);
  if (bytes_.size() < 2880 || std::memcmp(bytes_.data(), "SIMPLE  =", 9) != 0)
    throw IoError(path, "not a FITS file");
  rejected_ = neutralise(bytes_);
  // cfitsio's memory driver reads whole 2880-byte records, past a file whose size is not a
  // multiple of that: zeros after the file keep those reads inside the buffer.
  size_ = bytes_.size();
  bytes_.resize(size_ + 2 * 2880, '\0');
  pointer_ = bytes_.data();
  FitsStatus status(path);
  fitsfile* opened = nullptr;
  fits_open_memfile(&opened, path.c_str(), READONLY, &pointer_, &size_, 0, nullptr, status.ptr());
  // A file cfitsio failed to open is not ours to close: cfitsio has released it.
  status.check("not a readable FITS file");
  file_.reset(opened);
}

}  // namespace stacklens::io
