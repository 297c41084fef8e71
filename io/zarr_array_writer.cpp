// ZarrArrayWriter: boxes gathered into whole chunks, each encoded and written once complete.
#include "io/zarr_array_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "io/block_boxes.h"
#include "io/file_checks.h"
#include "io/io_error.h"
#include "io/unique_fd.h"
#include "io/write_stop.h"
#include "io/zarr_chunk_encoder.h"
#include "io/zarr_chunk_key.h"
#include "io/zarr_shard_encoder.h"

namespace stacklens::io {

// The chunks are written in the machine's byte order and declared little-endian.
static_assert(std::endian::native == std::endian::little, "Zarr chunks are written little-endian");

struct ZarrArrayWriter::Pending {
  std::mutex lock;
  std::vector<uint32_t> values;  // the whole chunk; empty while spilled
  int64_t filled = 0;            // samples arrived
  bool spilled = false;
};

namespace {

// More chunks than this in one array means chunks far too small to be useful (and a per-chunk
// record of that many); refused when the writer is made.
constexpr int64_t kMaxChunks = int64_t(1) << 28;

}  // namespace

int64_t defaultZarrPendingBytes() {
  return std::min<int64_t>(int64_t(allocationCap() / 4), int64_t(2) << 30);
}

ZarrArrayWriter::ZarrArrayWriter(const std::string& folder, const std::string& scratch,
                                 const std::string& target, const OmeZarrLayout& layout,
                                 size_t level, int64_t pendingCap)
    : folder_(folder + "/" + std::to_string(level)),
      scratch_(scratch),
      target_(target),
      keys_(layout.keyMeta()),
      level_(level),
      shape_(layout.shapes[level]),
      chunks_(layout.levelObjects(level)),
      pendingCap_(pendingCap > 0 ? pendingCap : defaultZarrPendingBytes()) {
  int64_t count = 1;
  chunkSamples_ = 1;
  for (size_t a = 0; a < 3; ++a) {
    grid_[a] = (shape_[a] + chunks_[a] - 1) / chunks_[a];
    count *= grid_[a];
    chunkSamples_ *= chunks_[a];
  }
  if (count > kMaxChunks)
    throw IoError(target, std::to_string(count) + " chunks of " + std::to_string(chunks_[0]) +
                              " x " + std::to_string(chunks_[1]) + " x " +
                              std::to_string(chunks_[2]) + " are too many; choose larger chunks");
  done_.assign(size_t(count), 0);
  fill_ = layout.int32 ? 0u : 0x7FC00000u;  // int32 0, float32 quiet NaN
  nanFill_ = !layout.int32;
  if (layout.sharded()) inner_ = layout.levelChunks(level);
}

ZarrArrayWriter::~ZarrArrayWriter() = default;

std::array<int64_t, 3> ZarrArrayWriter::gridOf(int64_t index) const {
  return {index / (grid_[1] * grid_[2]), index / grid_[2] % grid_[1], index % grid_[2]};
}

int64_t ZarrArrayWriter::samplesInside(const std::array<int64_t, 3>& grid) const {
  int64_t n = 1;
  for (size_t a = 0; a < 3; ++a) n *= std::min(chunks_[a], shape_[a] - grid[a] * chunks_[a]);
  return n;
}

std::shared_ptr<ZarrArrayWriter::Pending> ZarrArrayWriter::pendingFor(int64_t index) {
  std::lock_guard guard(lock_);
  if (done_[size_t(index)])
    throw IoError(target_,
                  "boxes overlap: chunk " +
                      zarrChunkKey(keys_, {gridOf(index)[0], gridOf(index)[1], gridOf(index)[2]}) +
                      " of level " + std::to_string(level_) + " was already complete");
  auto& slot = pending_[index];
  if (!slot) slot = std::make_shared<Pending>();
  return slot;
}

void ZarrArrayWriter::writeBox(int64_t z0, int64_t z1, int64_t y0, int64_t y1, int64_t x0,
                               int64_t x1, const void* data) {
  throwIfWritesStopped(target_);
  if (finished_) throw IoError(target_, "the array is already finished");
  if (z0 < 0 || y0 < 0 || x0 < 0 || z1 > shape_[0] || y1 > shape_[1] || x1 > shape_[2] ||
      z0 >= z1 || y0 >= y1 || x0 >= x1)
    throw IoError(target_, "a block outside the stack");
  const auto* in = static_cast<const uint32_t*>(data);
  const int64_t by = y1 - y0, bx = x1 - x0;
  const auto [cz, cy, cx] = chunks_;
  for (int64_t gz = z0 / cz; gz <= (z1 - 1) / cz; ++gz)
    for (int64_t gy = y0 / cy; gy <= (y1 - 1) / cy; ++gy)
      for (int64_t gx = x0 / cx; gx <= (x1 - 1) / cx; ++gx) {
        const int64_t index = (gz * grid_[1] + gy) * grid_[2] + gx;
        const std::shared_ptr<Pending> p = pendingFor(index);
        std::lock_guard guard(p->lock);
        if (p->spilled) {
          reload(index, *p);
        } else if (p->values.empty()) {  // its first box
          p->values.assign(size_t(chunkSamples_), fill_);
          held_ += chunkSamples_ * 4;
        }
        const int64_t za = std::max(z0, gz * cz), zb = std::min(z1, (gz + 1) * cz);
        const int64_t ya = std::max(y0, gy * cy), yb = std::min(y1, (gy + 1) * cy);
        const int64_t xa = std::max(x0, gx * cx), xb = std::min(x1, (gx + 1) * cx);
        for (int64_t z = za; z < zb; ++z)
          for (int64_t y = ya; y < yb; ++y)
            std::memcpy(
                p->values.data() + ((z - gz * cz) * cy + (y - gy * cy)) * cx + (xa - gx * cx),
                in + ((z - z0) * by + (y - y0)) * bx + (xa - x0), size_t(xb - xa) * 4);
        p->filled += (zb - za) * (yb - ya) * (xb - xa);
        const int64_t inside = samplesInside({gz, gy, gx});
        if (p->filled > inside)
          throw IoError(target_, "boxes overlap in chunk " + zarrChunkKey(keys_, {gz, gy, gx}) +
                                     " of level " + std::to_string(level_));
        if (p->filled == inside)
          complete(index, *p);
        else if (held_.load() > pendingCap_)
          spill(index, *p);
      }
}

// Called with p locked: every sample has arrived.
void ZarrArrayWriter::complete(int64_t index, Pending& p) {
  store(index, p.values);
  std::vector<uint32_t>().swap(p.values);
  held_ -= chunkSamples_ * 4;
  std::lock_guard guard(lock_);
  done_[size_t(index)] = 1;
  pending_.erase(index);
}

// Called with p locked: the chunk's samples so far go to a scratch file, raw.
void ZarrArrayWriter::spill(int64_t index, Pending& p) {
  const std::string path = scratch_ + "/" + std::to_string(level_) + "-" + std::to_string(index);
  const UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (fd.get() < 0)
    throw IoError(target_,
                  "cannot set a partial chunk aside in " + path + ": " + std::strerror(errno));
  writeAll(fd.get(), p.values.data(), p.values.size() * 4, 0, target_);
  std::vector<uint32_t>().swap(p.values);
  p.spilled = true;
  held_ -= chunkSamples_ * 4;
  ++spills_;
}

void ZarrArrayWriter::reload(int64_t index, Pending& p) {
  const std::string path = scratch_ + "/" + std::to_string(level_) + "-" + std::to_string(index);
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0)
    throw IoError(target_, "cannot read back the partial chunk set aside in " + path + ": " +
                               std::strerror(errno));
  p.values.resize(size_t(chunkSamples_));
  readAll(fd.get(), p.values.data(), p.values.size() * 4, 0, path);
  ::unlink(path.c_str());
  p.spilled = false;
  held_ += chunkSamples_ * 4;
}

void ZarrArrayWriter::store(int64_t index, const std::vector<uint32_t>& values) {
  const std::array<int64_t, 3> g = gridOf(index);
  const std::string key = zarrChunkKey(keys_, {g[0], g[1], g[2]});
  const std::string path = folder_ + "/" + key;
  const ZarrBytes encoded =
      inner_[0] > 0 ? encodeZarrShard(values.data(), chunks_, inner_, {fill_, nanFill_}, path)
                    : encodeBloscChunk(values.data(), values.size() * 4, 4, path);
  if (encoded.empty()) return;  // a shard all of fill: not stored, it reads as the fill value
  // The key's folders below the level's (made with the metadata), one at a time: never the
  // level's folder itself, so that a writer in another process whose output was given up (its
  // temporary folder removed) fails instead of making it again.
  for (size_t slash = key.find('/'); slash != std::string::npos; slash = key.find('/', slash + 1)) {
    const std::string folder = folder_ + "/" + key.substr(0, slash);
    if (::mkdir(folder.c_str(), 0777) != 0 && errno != EEXIST)
      throw IoError(target_,
                    "cannot create the chunk folder " + folder + ": " + std::strerror(errno));
  }
  // Written under a temporary name and renamed: a reader of the folder (or a writer retried after
  // a failure) never meets half a chunk or shard, whose index would lie at the wrong end.
  const std::string temporary = path + ".partial";
  {
    const UniqueFd fd(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666));
    if (fd.get() < 0)
      throw IoError(target_,
                    "cannot create the chunk file " + temporary + ": " + std::strerror(errno));
    writeAll(fd.get(), encoded.data(), encoded.size(), 0, target_);
    if (sync_ && onNetworkFileSystem(fd.get()) && ::fdatasync(fd.get()) != 0)
      throw IoError(target_,
                    "cannot flush the chunk file " + temporary + ": " + std::strerror(errno));
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    throw IoError(target_,
                  "cannot rename " + temporary + " to " + path + ": " + std::strerror(error));
  }
}

void ZarrArrayWriter::finish() {
  if (finished_) throw IoError(target_, "the array is already finished");
  std::vector<std::pair<int64_t, std::shared_ptr<Pending>>> left;
  {
    std::lock_guard guard(lock_);
    left.assign(pending_.begin(), pending_.end());
  }
  std::sort(left.begin(), left.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [index, p] : left) {
    std::lock_guard guard(p->lock);
    if (p->spilled)
      reload(index, *p);
    else if (p->values.empty())
      p->values.assign(size_t(chunkSamples_), fill_);
    complete(index, *p);
  }
  finished_ = true;
}

}  // namespace stacklens::io
