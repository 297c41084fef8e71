// Parsing and checking Zarr v2 (.zarray) and v3 (zarr.json) array metadata.
#include "io/zarr_metadata.h"

#include <algorithm>
#include <numeric>

#include "io/file_checks.h"
#include "io/io_error.h"
#include "io/zarr_dtype.h"
#include "io/zarr_json.h"

namespace stacklens::io {

namespace {

// More axes than any image format has; beyond it the metadata is not an image.
constexpr size_t kMaxAxes = 32;
// A shard index is read whole; 2^24 inner chunks (256 MiB of index) is far beyond real layouts.
constexpr int64_t kMaxInnerChunks = int64_t(1) << 24;

std::string joined(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

std::vector<int64_t> readShape(const Json& value, const std::string& what,
                               const std::string& file) {
  if (!value.is_array()) throw IoError(file, what + " must be a list of integers");
  if (value.size() > kMaxAxes)
    throw IoError(file, what + " has " + std::to_string(value.size()) + " axes, more than " +
                            std::to_string(kMaxAxes));
  std::vector<int64_t> out;
  for (const Json& v : value) out.push_back(jsonInteger(v, what, file));
  return out;
}

// Sizes that cannot be real are refused here, before anything is allocated from them.
void checkGrid(ZarrArrayMeta& m) {
  const std::string& file = m.metadataFile;
  if (m.shape.empty()) throw IoError(file, "a zero-dimensional array is a scalar, not an image");
  if (m.chunks.size() != m.shape.size())
    throw IoError(file, "chunks " + joined(m.chunks) + " do not match the " +
                            std::to_string(m.shape.size()) + " axes of shape " + joined(m.shape));
  int64_t elements = 1;
  for (size_t i = 0; i < m.shape.size(); ++i) {
    if (m.shape[i] < 0) throw IoError(file, "negative size in shape " + joined(m.shape));
    if (m.chunks[i] < 1) throw IoError(file, "chunk size below 1 in chunks " + joined(m.chunks));
    if (__builtin_mul_overflow(elements, m.shape[i], &elements))
      throw IoError(file, "shape " + joined(m.shape) + " has more elements than can be counted");
  }
  if (elements == 0) throw IoError(file, "shape " + joined(m.shape) + " holds no elements");
  ZarrChunkCoding& c = m.coding;
  int64_t chunkElements = 1;
  for (const int64_t n : c.shape)
    if (n < 1 || __builtin_mul_overflow(chunkElements, n, &chunkElements) ||
        chunkElements > (int64_t(1) << 40))
      throw IoError(file, "chunk shape " + joined(c.shape) +
                              " holds more elements than StackLens decodes at once");
  const int64_t bytes = chunkElements * m.dtype.bytes;
  // Several chunks are decoded at once, each also as float32, and kept in a cache; one must be a
  // small part of memory in either form.
  const int64_t cap = std::min<int64_t>(int64_t(allocationCap() / 8), int64_t(1) << 31);
  if (chunkElements * std::max(m.dtype.bytes, 4) > cap)
    throw IoError(file, "chunks of " + joined(c.shape) + " " + m.dtype.name + " decode to " +
                            std::to_string(bytes >> 20) + " MiB each, more than the " +
                            std::to_string(cap >> 20) + " MiB StackLens decodes at once");
  c.decodedBytes = bytes;
}

// v2 "compressor" (a numcodecs configuration or null) and "filters" (must be empty).
void readV2Coding(const Json& meta, ZarrArrayMeta& m) {
  const std::string& file = m.metadataFile;
  const auto filters = meta.find("filters");
  if (filters != meta.end() && !filters->is_null() && !(filters->is_array() && filters->empty()))
    throw IoError(file, "filters " + jsonShort(*filters) +
                            " are not read by StackLens (only a compressor is)");
  const Json& compressor = jsonMember(meta, "compressor", file);
  if (!compressor.is_null()) {
    const std::string id = jsonText(jsonMember(compressor, "id", file), "compressor id", file);
    if (id == "blosc")
      m.coding.compressions = {ZarrCompression::Blosc};
    else if (id == "zstd")
      m.coding.compressions = {ZarrCompression::Zstd};
    else if (id == "gzip")
      m.coding.compressions = {ZarrCompression::Gzip};
    else if (id == "zlib")
      m.coding.compressions = {ZarrCompression::Zlib};
    else
      throw IoError(file, "compressor \"" + id +
                              "\" is not read by StackLens (blosc, zstd, gzip and zlib are)");
  }
  const std::string order = meta.contains("order") ? jsonText(meta["order"], "order", file) : "C";
  if (order != "C" && order != "F") throw IoError(file, "order must be \"C\" or \"F\"");
  const int n = static_cast<int>(m.chunks.size());
  m.coding.order.resize(static_cast<size_t>(n));
  std::iota(m.coding.order.begin(), m.coding.order.end(), 0);
  if (order == "F") std::reverse(m.coding.order.begin(), m.coding.order.end());
  m.coding.shape = m.chunks;  // chunk-axis order; coding.order says how they are stored
}

ZarrArrayMeta readV2(const std::string& folder, const Json& meta, const std::string& file) {
  ZarrArrayMeta m;
  m.folder = folder;
  m.metadataFile = file;
  m.zarrFormat = 2;
  if (jsonInteger(jsonMember(meta, "zarr_format", file), "zarr_format", file) != 2)
    throw IoError(file, "zarr_format must be 2 in a .zarray");
  m.shape = readShape(jsonMember(meta, "shape", file), "shape", file);
  m.chunks = readShape(jsonMember(meta, "chunks", file), "chunks", file);
  m.dtype = parseZarrV2Type(jsonMember(meta, "dtype", file), file);
  m.fillValue = parseZarrFillValue(meta.value("fill_value", Json()), m.dtype, file);
  if (meta.contains("dimension_separator")) {
    m.keySeparator = jsonText(meta["dimension_separator"], "dimension_separator", file);
    if (m.keySeparator != "." && m.keySeparator != "/")
      throw IoError(file, "dimension_separator must be \".\" or \"/\"");
  }
  readV2Coding(meta, m);
  checkGrid(m);
  m.describe = {{"ZARR_FORMAT", "2", ""},
                {"SHAPE", joined(m.shape), ""},
                {"CHUNKS", joined(m.chunks), ""},
                {"DTYPE", m.dtype.name, ""},
                {"COMPRESSOR", jsonShort(meta["compressor"]), ""},
                {"ORDER", meta.value("order", "C"), ""},
                {"FILL_VALUE", jsonShort(meta.value("fill_value", Json())), ""}};
  return m;
}

std::string codecName(const Json& codec, const std::string& file) {
  if (codec.is_string()) return codec.get<std::string>();  // short form allowed by the spec
  return jsonText(jsonMember(codec, "name", file), "codec name", file);
}

Json codecConfiguration(const Json& codec) {
  return codec.is_object() ? codec.value("configuration", Json::object()) : Json::object();
}

// v3 "chunk_key_encoding": default ("c" prefix, "/" unless told) or v2 ("." unless told).
void readKeyEncoding(const Json& meta, ZarrArrayMeta& m) {
  const std::string& file = m.metadataFile;
  const Json& encoding = jsonMember(meta, "chunk_key_encoding", file);
  const std::string name = codecName(encoding, file);
  const Json config = codecConfiguration(encoding);
  if (name == "default") {
    m.keyPrefixC = true;
    m.keySeparator =
        config.contains("separator") ? jsonText(config["separator"], "separator", file) : "/";
  } else if (name == "v2") {
    m.keySeparator =
        config.contains("separator") ? jsonText(config["separator"], "separator", file) : ".";
  } else {
    throw IoError(file, "chunk_key_encoding \"" + name + "\" is not read by StackLens");
  }
  if (m.keySeparator != "." && m.keySeparator != "/")
    throw IoError(file, "chunk key separator must be \".\" or \"/\"");
}

// A v3 codec list up to and including its array-to-bytes codec; returns the index just after
// it. Array-to-array transposes compose into coding.order; "bytes" gives the byte order.
size_t readArrayCodecs(const Json& codecs, ZarrArrayMeta& m, ZarrChunkCoding& c,
                       const std::string& file, bool inner) {
  const size_t n = c.shape.size();
  c.order.resize(n);
  std::iota(c.order.begin(), c.order.end(), 0);
  for (size_t i = 0; i < codecs.size(); ++i) {
    const std::string name = codecName(codecs[i], file);
    const Json config = codecConfiguration(codecs[i]);
    if (name == "transpose") {
      const Json& order = jsonMember(config, "order", file);
      std::vector<int> step;
      if (order.is_array()) {
        for (const Json& v : order) step.push_back(static_cast<int>(jsonInteger(v, "order", file)));
      } else if (order.is_string() && (order == "C" || order == "F")) {  // early v3 drafts
        step.resize(n);
        std::iota(step.begin(), step.end(), 0);
        if (order == "F") std::reverse(step.begin(), step.end());
      }
      std::vector<int> sorted = step;
      std::sort(sorted.begin(), sorted.end());
      for (size_t k = 0; k < sorted.size(); ++k)
        if (sorted[k] != int(k)) sorted.clear();
      if (step.size() != n || sorted.size() != n)
        throw IoError(file, "transpose order " + jsonShort(order) + " is not a permutation of " +
                                std::to_string(n) + " axes");
      std::vector<int> composed(n);
      for (size_t j = 0; j < n; ++j) composed[j] = c.order[size_t(step[j])];
      c.order = composed;
    } else if (name == "bytes" || name == "endian") {
      const std::string endian =
          config.contains("endian") ? jsonText(config["endian"], "endian", file) : "little";
      if (endian != "little" && endian != "big")
        throw IoError(file, "bytes codec endian must be \"little\" or \"big\"");
      m.dtype.bigEndian = endian == "big";
      return i + 1;
    } else if (name == "sharding_indexed") {
      if (inner) throw IoError(file, "nested sharding is not read by StackLens");
      if (i != 0)
        throw IoError(file, "array-to-array codecs before sharding are not read by StackLens");
      return i;  // the caller reads the shard
    } else {
      throw IoError(file, "codec \"" + name +
                              "\" is not read by StackLens (transpose, bytes, "
                              "sharding_indexed, blosc, zstd, gzip, crc32c are)");
    }
  }
  throw IoError(file, "the codec list has no array-to-bytes codec (\"bytes\")");
}

void readBytesCodecs(const Json& codecs, size_t from, ZarrChunkCoding& c, const std::string& file) {
  bool compressed = false;
  for (size_t i = from; i < codecs.size(); ++i) {
    const std::string name = codecName(codecs[i], file);
    ZarrCompression z;
    if (name == "blosc")
      z = ZarrCompression::Blosc;
    else if (name == "zstd")
      z = ZarrCompression::Zstd;
    else if (name == "gzip")
      z = ZarrCompression::Gzip;
    else if (name == "crc32c")
      z = ZarrCompression::Crc32c;
    else
      throw IoError(file, "codec \"" + name +
                              "\" is not read by StackLens (blosc, zstd, gzip "
                              "and crc32c are, after bytes)");
    if (z != ZarrCompression::Crc32c) {
      // Only one compressor: the size between two would be unknown, so unbounded.
      if (compressed) throw IoError(file, "two compressors in one codec list");
      compressed = true;
    }
    c.compressions.push_back(z);
  }
}

void readSharding(const Json& codec, ZarrArrayMeta& m) {
  const std::string& file = m.metadataFile;
  const Json config = codecConfiguration(codec);
  ZarrChunkCoding inner;
  inner.shape = readShape(jsonMember(config, "chunk_shape", file), "sharding chunk_shape", file);
  if (inner.shape.size() != m.chunks.size())
    throw IoError(file, "sharding chunk_shape " + joined(inner.shape) + " does not match the " +
                            std::to_string(m.chunks.size()) + " axes of the shards");
  ZarrSharding s;
  s.innerCount = 1;
  for (size_t i = 0; i < inner.shape.size(); ++i) {
    if (inner.shape[i] < 1 || m.chunks[i] % inner.shape[i] != 0)
      throw IoError(file, "shard shape " + joined(m.chunks) +
                              " is not a multiple of the inner "
                              "chunk shape " +
                              joined(inner.shape));
    s.chunksPerShard.push_back(m.chunks[i] / inner.shape[i]);
    if (__builtin_mul_overflow(s.innerCount, s.chunksPerShard.back(), &s.innerCount) ||
        s.innerCount > kMaxInnerChunks)
      throw IoError(file, "shards of " + joined(m.chunks) + " hold more than 2^24 inner chunks");
  }
  const Json& codecs = jsonMember(config, "codecs", file);
  if (!codecs.is_array()) throw IoError(file, "sharding codecs must be a list");
  const size_t next = readArrayCodecs(codecs, m, inner, file, true);
  readBytesCodecs(codecs, next, inner, file);
  const Json& index = jsonMember(config, "index_codecs", file);
  if (!index.is_array()) throw IoError(file, "index_codecs must be a list");
  // The index must have a fixed size to be found: bytes (little endian) and crc32c only.
  for (const Json& c : index) {
    const std::string name = codecName(c, file);
    const Json cc = codecConfiguration(c);
    if (name == "bytes" && cc.value("endian", "little") == "little") continue;
    if (name == "crc32c" && !s.indexChecksum) {
      s.indexChecksum = true;
      continue;
    }
    throw IoError(file, "index codec " + jsonShort(c) +
                            " is not read by StackLens (bytes little-endian and crc32c are)");
  }
  const std::string location = config.value("index_location", "end");
  if (location != "end" && location != "start")
    throw IoError(file, "index_location must be \"start\" or \"end\"");
  s.indexAtEnd = location == "end";
  s.indexBytes = 16 * s.innerCount + (s.indexChecksum ? 4 : 0);
  m.coding = inner;
  m.sharding = s;
}

ZarrArrayMeta readV3(const std::string& folder, const Json& meta, const std::string& file) {
  ZarrArrayMeta m;
  m.folder = folder;
  m.metadataFile = file;
  m.zarrFormat = 3;
  m.shape = readShape(jsonMember(meta, "shape", file), "shape", file);
  const Json& grid = jsonMember(meta, "chunk_grid", file);
  if (codecName(grid, file) != "regular")
    throw IoError(file, "chunk_grid \"" + codecName(grid, file) +
                            "\" is not read by StackLens "
                            "(regular is)");
  m.chunks =
      readShape(jsonMember(codecConfiguration(grid), "chunk_shape", file), "chunk_shape", file);
  if (m.chunks.size() != m.shape.size())
    throw IoError(file,
                  "chunk_shape " + joined(m.chunks) + " does not match shape " + joined(m.shape));
  m.dtype = parseZarrV3Type(jsonMember(meta, "data_type", file), file);
  readKeyEncoding(meta, m);
  const Json& codecs = jsonMember(meta, "codecs", file);
  if (!codecs.is_array() || codecs.empty()) throw IoError(file, "codecs must be a non-empty list");
  m.coding.shape = m.chunks;
  const size_t next = readArrayCodecs(codecs, m, m.coding, file, false);
  if (next < codecs.size() && codecName(codecs[next], file) == "sharding_indexed") {
    if (codecs.size() > 1)
      throw IoError(file, "codecs after sharding_indexed are not read by StackLens");
    readSharding(codecs[0], m);
  } else {
    readBytesCodecs(codecs, next, m.coding, file);
  }
  // After the codecs: a "bytes" codec decides the byte order the fill value's hex form ignores.
  m.fillValue = parseZarrFillValue(jsonMember(meta, "fill_value", file), m.dtype, file);
  checkGrid(m);
  if (const auto names = meta.find("dimension_names"); names != meta.end() && names->is_array())
    for (const Json& n : *names)
      m.dimensionNames.push_back(n.is_string() ? n.get<std::string>() : "");
  std::string codecList;
  for (const Json& c : codecs) codecList += (codecList.empty() ? "" : ", ") + codecName(c, file);
  m.describe = {{"ZARR_FORMAT", "3", ""},
                {"SHAPE", joined(m.shape), ""},
                {m.sharding ? "SHARDS" : "CHUNKS", joined(m.chunks), ""},
                {"DTYPE", m.dtype.name, ""},
                {"CODECS", codecList, ""},
                {"FILL_VALUE", jsonShort(meta["fill_value"]), ""}};
  if (m.sharding) m.describe.push_back({"CHUNKS", joined(m.coding.shape), "inner chunks"});
  return m;
}

}  // namespace

ZarrArrayMeta readZarrArrayMeta(const ZarrStore& store, const std::string& folder) {
  const std::string v3 = folder + "/zarr.json";
  if (const auto meta = readJsonFile(store, v3)) {
    if (jsonInteger(jsonMember(*meta, "zarr_format", v3), "zarr_format", v3) != 3)
      throw IoError(v3, "zarr_format must be 3 in a zarr.json");
    if (jsonText(jsonMember(*meta, "node_type", v3), "node_type", v3) != "array")
      throw IoError(v3, "is a group, not an array");
    return asIoError(v3, [&] { return readV3(folder, *meta, v3); });
  }
  const std::string v2 = folder + "/.zarray";
  if (const auto meta = readJsonFile(store, v2))
    return asIoError(v2, [&] { return readV2(folder, *meta, v2); });
  throw IoError(folder, "no Zarr array here (neither zarr.json nor .zarray)");
}

}  // namespace stacklens::io
