// Chunk decompression for Zarr: each decoder writes at most the chunk's decoded size, so a
// damaged or hostile chunk can never make it allocate more than the metadata (already capped)
// allows.
#include "io/zarr_codecs.h"

#include <array>
#include <cstring>

#include <blosc.h>
#include <zlib.h>
#include <zstd.h>

#include "io/io_error.h"

namespace stacklens::io {

namespace {

[[noreturn]] void damaged(const std::string& where, const std::string& reason) {
  throw IoError(where, "damaged chunk: " + reason);
}

// Each decoder writes exactly expected bytes to out or throws.
void decodeBlosc(const unsigned char* in, size_t n, int64_t expected, const std::string& where,
                 unsigned char* out) {
  size_t nbytes = 0;
  if (n < BLOSC_MIN_HEADER_LENGTH || blosc_cbuffer_validate(in, n, &nbytes) != 0)
    damaged(where,
            "blosc header invalid or larger than the stored " + std::to_string(n) + " bytes");
  if (int64_t(nbytes) != expected)
    damaged(where, "blosc says " + std::to_string(nbytes) + " bytes, the chunk holds " +
                       std::to_string(expected));
  // One thread: slices already decode several chunks at once.
  const int got = blosc_decompress_ctx(in, out, size_t(expected), 1);
  if (got < 0 || int64_t(got) != expected)
    damaged(where, "blosc decompression failed (" + std::to_string(got) + ")");
}

void decodeZstd(const unsigned char* in, size_t n, int64_t expected, const std::string& where,
                unsigned char* out) {
  const unsigned long long content = ZSTD_getFrameContentSize(in, n);
  if (content == ZSTD_CONTENTSIZE_ERROR) damaged(where, "not a zstd frame");
  if (content != ZSTD_CONTENTSIZE_UNKNOWN && content != static_cast<unsigned long long>(expected))
    damaged(where, "zstd says " + std::to_string(content) + " bytes, the chunk holds " +
                       std::to_string(expected));
  const size_t got = ZSTD_decompress(out, size_t(expected), in, n);
  if (ZSTD_isError(got)) damaged(where, std::string("zstd: ") + ZSTD_getErrorName(got));
  if (int64_t(got) != expected)
    damaged(where, "zstd gave " + std::to_string(got) + " bytes, the chunk holds " +
                       std::to_string(expected));
}

// gzip (windowBits 15 + 32: gzip, or zlib from writers that mislabel it) or zlib (15) streams;
// inflation stops at the expected size, and anything beyond it is damage, not data.
void decodeInflate(const unsigned char* in, size_t n, int64_t expected, bool gzip,
                   const std::string& where, unsigned char* out) {
  const char* name = gzip ? "gzip" : "zlib";
  z_stream s{};
  if (inflateInit2(&s, gzip ? 15 + 32 : 15) != Z_OK) damaged(where, "cannot start zlib");
  s.next_in = const_cast<unsigned char*>(in);
  s.avail_in = static_cast<uInt>(n);
  s.next_out = out;
  s.avail_out = static_cast<uInt>(expected);
  if (n > UINT32_MAX || uint64_t(expected) > UINT32_MAX) {
    inflateEnd(&s);
    damaged(where, std::string(name) + " chunk larger than 4 GiB");
  }
  int rc = inflate(&s, Z_FINISH);
  if (rc == Z_BUF_ERROR && s.avail_out == 0) {
    unsigned char probe = 0;  // more output than the chunk holds?
    s.next_out = &probe;
    s.avail_out = 1;
    rc = inflate(&s, Z_FINISH);
    if (rc == Z_OK || rc == Z_STREAM_END) rc = s.avail_out == 0 ? Z_BUF_ERROR : rc;
  }
  const std::string message = s.msg ? s.msg : "";
  const uLong total = s.total_out;
  inflateEnd(&s);
  if (rc != Z_STREAM_END) {
    if (rc == Z_BUF_ERROR && total >= uLong(expected))
      damaged(where, std::string(name) + " inflates to more than the chunk's " +
                         std::to_string(expected) + " bytes");
    damaged(where, std::string(name) + ": " + (message.empty() ? "truncated stream" : message));
  }
  if (int64_t(total) != expected)
    damaged(where, std::string(name) + " gave " + std::to_string(total) +
                       " bytes, the chunk holds " + std::to_string(expected));
}

// The length of data without its trailing little-endian crc32c, which is checked.
size_t checkedCrc32cLength(const unsigned char* data, size_t n, const std::string& where) {
  if (n < 4) damaged(where, "shorter than its crc32c checksum");
  n -= 4;
  const uint32_t stored = uint32_t(data[n]) | uint32_t(data[n + 1]) << 8 |
                          uint32_t(data[n + 2]) << 16 | uint32_t(data[n + 3]) << 24;
  if (crc32c(data, n) != stored) damaged(where, "crc32c checksum mismatch");
  return n;
}

std::array<uint32_t, 256> crcTable() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = c & 1 ? 0x82F63B78u ^ (c >> 1) : c >> 1;
    t[i] = c;
  }
  return t;
}

}  // namespace

uint32_t crc32c(const unsigned char* data, size_t n) {
  static const std::array<uint32_t, 256> table = crcTable();
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; ++i) c = table[(c ^ data[i]) & 0xff] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

void stripCrc32c(ZarrBytes& bytes, const std::string& where) {
  bytes.resize(checkedCrc32cLength(bytes.data(), bytes.size(), where));
}

void decodeZarrChunk(const unsigned char* stored, size_t n, const ZarrChunkCoding& coding,
                     const std::string& where, unsigned char* out) {
  const int64_t expected = coding.decodedBytes;
  const unsigned char* at = stored;  // the bytes as far as decoded, and their length
  size_t length = n;
  // Only the first-applied compression must give the decoded size; a crc32c after it checks the
  // compressed bytes. Intermediate sizes of two stacked compressors are not known, so a second
  // one is refused at open (io/zarr_metadata.cpp).
  for (auto it = coding.compressions.rbegin(); it != coding.compressions.rend(); ++it) {
    switch (*it) {
      case ZarrCompression::Crc32c:
        length = checkedCrc32cLength(at, length, where);
        continue;
      case ZarrCompression::Blosc:
        decodeBlosc(at, length, expected, where, out);
        break;
      case ZarrCompression::Zstd:
        decodeZstd(at, length, expected, where, out);
        break;
      case ZarrCompression::Gzip:
      case ZarrCompression::Zlib:
        decodeInflate(at, length, expected, *it == ZarrCompression::Gzip, where, out);
        break;
    }
    at = out;
    length = size_t(expected);
  }
  if (int64_t(length) != expected)
    damaged(where,
            std::to_string(length) + " bytes where the chunk holds " + std::to_string(expected));
  if (at != out) std::memcpy(out, at, length);  // stored uncompressed
}

}  // namespace stacklens::io
