// Where Zarr metadata, chunks and shards are read from: files under a local folder, or objects
// under an HTTP(S) URL (io/http_store.h). The readers above it do not care which. Locations are
// whole paths or URLs ("<image>/<key>"), so that every message names what was read as it is.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "io/io_error.h"

namespace stacklens::io {

using StoreBytes = std::vector<unsigned char>;

// Part of a stored object, and the whole object's size in bytes.
struct StoreRange {
  StoreBytes bytes;  // shorter than asked for where the object ends first
  int64_t objectSize = 0;
};

// What read() throws for an object larger than it may hold: callers say what the size means.
class StoreObjectTooLarge : public IoError {
 public:
  StoreObjectTooLarge(const std::string& location, int64_t size, int64_t maxBytes)
      : IoError(location, (size >= 0 ? std::to_string(size) + " bytes" : "an unannounced size") +
                              ", more than the " + std::to_string(maxBytes) + " read at most"),
        size_(size),
        maxBytes_(maxBytes) {}
  int64_t size() const { return size_; }  // -1 where a server streams more than it announced
  int64_t maxBytes() const { return maxBytes_; }

 private:
  int64_t size_, maxBytes_;
};

// What an object is to the reader: an HTTP store takes a 403 for an absent chunk, never for
// absent metadata (io/http_store.h).
enum class StoreObject { Metadata, Chunk };

class ZarrStore {
 public:
  virtual ~ZarrStore() = default;
  // Whether an object (a file) is stored at location.
  virtual bool exists(const std::string& location) const = 0;
  // The whole object, or nullopt where nothing is stored (a chunk never written). Throws IoError
  // naming location when it cannot be read, StoreObjectTooLarge when the object is larger than
  // maxBytes (before more than that is read).
  virtual std::optional<StoreBytes> read(const std::string& location, int64_t maxBytes,
                                         StoreObject what) const = 0;
  // n bytes of a shard from offset, or the last n bytes when offset < 0 (its index), with the
  // object's size; nullopt where nothing is stored. Throws IoError naming location.
  virtual std::optional<StoreRange> readRange(const std::string& location, int64_t offset,
                                              int64_t n) const = 0;
  // How many reads of one slice are worth having in flight at once.
  virtual int parallelReads() const = 0;
  // How many chunk reads so far found nothing because the server answered 403 Forbidden.
  virtual int64_t forbiddenAsAbsent() const { return 0; }
  // The location as it is opened again, for StackInfo::path (an HTTP store adds its URL's
  // query, which the locations in messages leave out).
  virtual std::string reopenable(const std::string& location) const { return location; }
};

// The store for files on this machine.
std::shared_ptr<const ZarrStore> localZarrStore();

// Whether path is an http:// or https:// URL (case-insensitive scheme).
bool isHttpUrl(const std::string& path);

}  // namespace stacklens::io
