// encodeZarrShard: inner chunks copied out of the shard, skipped when all fill, blosc encoded (on
// several threads) and laid end to end before the checksummed index.
#include "io/zarr_shard_encoder.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <thread>
#include <vector>

#include "io/io_error.h"
#include "io/parallel_tasks.h"
#include "io/zarr_chunk_encoder.h"

namespace stacklens::io {

static_assert(std::endian::native == std::endian::little, "the shard index is written as is");

namespace {

void appendLittleEndian(ZarrBytes& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<unsigned char>(v >> (8 * i)));
}

}  // namespace

ZarrBytes encodeZarrShard(const uint32_t* values, const std::array<int64_t, 3>& shard,
                          const std::array<int64_t, 3>& inner, ZarrFillSample fill,
                          const std::string& where) {
  std::array<int64_t, 3> grid{};
  for (size_t a = 0; a < 3; ++a) {
    if (inner[a] < 1 || shard[a] % inner[a] != 0)
      throw IoError(where, "a shard of " + std::to_string(shard[a]) + " is not a multiple of " +
                               "its inner chunks of " + std::to_string(inner[a]));
    grid[a] = shard[a] / inner[a];
  }
  const int64_t count = grid[0] * grid[1] * grid[2];
  // Inner chunks are encoded on several threads (Blosc's compressor is most of a shard's cost),
  // then laid end to end in slot order: the same bytes as one thread writes.
  std::vector<ZarrBytes> encoded(static_cast<size_t>(count));
  const int threads = int(std::clamp<int64_t>(std::thread::hardware_concurrency(), 1, count));
  runTasks(count, threads, [&](int64_t slot) {
    const int64_t gz = slot / (grid[1] * grid[2]), gy = slot / grid[2] % grid[1],
                  gx = slot % grid[2];
    std::vector<uint32_t> chunk(size_t(inner[0] * inner[1] * inner[2]));
    uint32_t* to = chunk.data();
    for (int64_t z = 0; z < inner[0]; ++z)
      for (int64_t y = 0; y < inner[1]; ++y, to += inner[2])
        std::memcpy(to,
                    values + ((gz * inner[0] + z) * shard[1] + gy * inner[1] + y) * shard[2] +
                        gx * inner[2],
                    size_t(inner[2]) * 4);
    if (std::all_of(chunk.begin(), chunk.end(), [&](uint32_t v) { return fill.matches(v); }))
      return;  // left out of the shard: its index entry says so
    encoded[size_t(slot)] = encodeBloscChunk(chunk.data(), chunk.size() * 4, 4, where);
  });
  std::vector<uint64_t> index(size_t(2 * count), kZarrMissingInnerChunk);
  ZarrBytes out;
  for (int64_t slot = 0; slot < count; ++slot) {
    const ZarrBytes& bytes = encoded[size_t(slot)];
    if (bytes.empty()) continue;
    index[size_t(2 * slot)] = out.size();
    index[size_t(2 * slot + 1)] = bytes.size();
    out.insert(out.end(), bytes.begin(), bytes.end());
  }
  if (out.empty()) return out;
  const size_t indexStart = out.size();
  for (const uint64_t v : index) appendLittleEndian(out, v, 8);
  appendLittleEndian(out, crc32c(out.data() + indexStart, out.size() - indexStart), 4);
  return out;
}

}  // namespace stacklens::io
