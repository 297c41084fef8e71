// Zarr and OME-Zarr metadata files read as JSON (nlohmann-json), with a size cap and errors that
// name the file; plus typed field access that throws instead of guessing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "io/io_error.h"
#include "io/zarr_store.h"

namespace stacklens::io {

using Json = nlohmann::json;

// The parsed file (a local file or a URL, as the store reads it), or nullopt when it does not
// exist. Throws IoError when it exists but cannot be read, is larger than 16 MiB (metadata never
// is) or is not valid JSON.
std::optional<Json> readJsonFile(const ZarrStore& store, const std::string& path);

// Checked field access for messages of the form "<file>: <what> must be ...".
const Json& jsonMember(const Json& object, const char* key, const std::string& file);
int64_t jsonInteger(const Json& value, const std::string& what, const std::string& file);
// Runs read(), turning a JSON library error (a member of an unexpected type that a checked
// accessor above did not catch first) into IoError(file, ...): metadata is untrusted.
template <class Read>
auto asIoError(const std::string& file, Read read) -> decltype(read()) {
  try {
    return read();
  } catch (const Json::exception& e) {
    throw IoError(file, std::string("metadata of an unexpected form (") + e.what() + ")");
  }
}

// The value as JSON text, shortened for a message.
std::string jsonShort(const Json& value);
std::string jsonText(const Json& value, const std::string& what, const std::string& file);

}  // namespace stacklens::io
