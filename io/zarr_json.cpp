// Reading Zarr metadata JSON files (local or over HTTP) with a cap, and checked access to their
// fields.
#include "io/zarr_json.h"

#include "io/io_error.h"

namespace stacklens::io {

namespace {
// Metadata of real arrays is a few kB; a larger file is damaged or hostile, and parsing it whole
// would cost memory in proportion.
constexpr int64_t kMaxMetadataBytes = 16 << 20;
}  // namespace

std::string jsonShort(const Json& value) {
  std::string text = value.dump();
  if (text.size() > 60) text = text.substr(0, 57) + "...";  // a message, not a copy of the file
  return text;
}

std::optional<Json> readJsonFile(const ZarrStore& store, const std::string& path) {
  std::optional<StoreBytes> bytes;
  try {
    bytes = store.read(path, kMaxMetadataBytes, StoreObject::Metadata);
  } catch (const StoreObjectTooLarge& e) {
    throw IoError(path, "metadata of " +
                            (e.size() >= 0 ? std::to_string(e.size()) + " bytes"
                                           : std::string("more bytes than announced")) +
                            ", more than the 16 MiB any Zarr metadata needs");
  }
  if (!bytes) return std::nullopt;
  Json parsed = Json::parse(bytes->begin(), bytes->end(), nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) throw IoError(path, "is not valid JSON");
  return parsed;
}

const Json& jsonMember(const Json& object, const char* key, const std::string& file) {
  if (!object.is_object()) throw IoError(file, std::string("expected an object holding ") + key);
  const auto it = object.find(key);
  if (it == object.end()) throw IoError(file, std::string("\"") + key + "\" is missing");
  return *it;
}

int64_t jsonInteger(const Json& value, const std::string& what, const std::string& file) {
  if (value.is_number_unsigned()) {
    if (value.get<uint64_t>() > uint64_t(INT64_MAX)) throw IoError(file, what + " is too large");
    return static_cast<int64_t>(value.get<uint64_t>());
  }
  if (value.is_number_integer()) return value.get<int64_t>();
  throw IoError(file, what + " must be an integer, not " + jsonShort(value));
}

std::string jsonText(const Json& value, const std::string& what, const std::string& file) {
  if (!value.is_string()) throw IoError(file, what + " must be a string, not " + jsonShort(value));
  return value.get<std::string>();
}

}  // namespace stacklens::io
