// OME-Zarr 0.4/0.5 group and array metadata for the images StackLens writes.
#include "io/ome_zarr_metadata_writer.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <set>

#include "io/io_error.h"
#include "io/ome_zarr.h"
#include "io/writers.h"
#include "io/zarr_chunk_encoder.h"

namespace stacklens::io {

namespace {

constexpr const char* kAxisNames[3] = {"z", "y", "x"};

Json shapeJson(const std::array<int64_t, 3>& v) { return Json::array({v[0], v[1], v[2]}); }

void writeJson(const std::string& path, const Json& value, const std::string& target) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << value.dump(2) << '\n';
  out.close();
  if (!out)
    throw IoError(target, "cannot write the metadata file " + path + ": " + std::strerror(errno));
}

// Level k averages 2^k × 2^k samples of level 0 in y and x: its pixel size is 2^k times level
// 0's, and its first pixel's centre lies (2^k − 1)/2 of level 0's pixels from level 0's.
Json levelTransforms(const std::array<double, 3>& spacing, size_t level) {
  const double factor = std::ldexp(1.0, int(level));
  Json t = Json::array();
  t.push_back(
      {{"type", "scale"}, {"scale", {spacing[0], spacing[1] * factor, spacing[2] * factor}}});
  if (level > 0)
    t.push_back(
        {{"type", "translation"},
         {"translation", {0.0, spacing[1] * (factor - 1) / 2, spacing[2] * (factor - 1) / 2}}});
  return t;
}

// Provenance as the FITS writer keeps it: the input's HISTORY, then this version and what it did.
Json historyLines(const WriteOptions& options) {
  Json lines = Json::array();
  for (const HeaderCard& c : options.header)
    if (c.key == "HISTORY") lines.push_back(c.comment.empty() ? c.value : c.comment);
  if (!options.history.empty()) lines.push_back("StackLens " STACKLENS_VERSION);
  for (const std::string& line : options.history) lines.push_back(line);
  return lines;
}

// The input's header cards (WCS, keywords) as [key, value, comment]: not the FITS structure nor
// HISTORY (above), nor what the Zarr reader says about the input's own storage (io/zarr_reader.h).
Json carriedCards(const std::vector<HeaderCard>& header) {
  static const std::set<std::string> zarrDescription = {
      "ZARR_FORMAT", "SHAPE",      "CHUNKS",      "SHARDS", "DTYPE", "CODECS", "COMPRESSOR",
      "ORDER",       "FILL_VALUE", "OME_VERSION", "LEVELS", "AXES",  "ARRAY"};
  Json cards = Json::array();
  for (const HeaderCard& c : header) {
    if (isStructural(c.key) || zarrDescription.count(c.key) ||
        c.key.rfind("OMERO_CHANNEL_", 0) == 0)
      continue;
    if (c.key == "COMMENT" &&
        (c.comment.find("FITS (Flexible Image Transport System)") != std::string::npos ||
         c.comment.find("and Astrophysics', volume 376") != std::string::npos))
      continue;
    cards.push_back({c.key, c.value, c.comment});
  }
  return cards;
}

}  // namespace

std::array<int64_t, 3> OmeZarrLayout::levelChunks(size_t level) const {
  std::array<int64_t, 3> c{};
  for (size_t a = 0; a < 3; ++a) c[a] = std::max<int64_t>(1, std::min(chunks[a], shapes[level][a]));
  return c;
}

std::array<int64_t, 3> OmeZarrLayout::levelShards(size_t level) const {
  const std::array<int64_t, 3> c = levelChunks(level);
  std::array<int64_t, 3> s{};
  for (size_t a = 0; a < 3; ++a) {
    const int64_t wholeChunks = (shapes[level][a] + c[a] - 1) / c[a] * c[a];
    s[a] = std::min(shards[a], wholeChunks);
  }
  return s;
}

ZarrArrayMeta OmeZarrLayout::keyMeta() const {
  ZarrArrayMeta m;
  m.zarrFormat = zarrFormat();
  m.keyPrefixC = m.zarrFormat == 3;
  m.keySeparator = m.zarrFormat == 3 ? "/" : ".";
  return m;
}

std::string omeSpaceUnit(const std::string& unit) {
  if (isMicron(unit)) return "micrometer";
  static const std::map<std::string, std::string> names = {
      {"nm", "nanometer"}, {"mm", "millimeter"}, {"cm", "centimeter"},     {"m", "meter"},
      {"km", "kilometer"}, {"pm", "picometer"},  {"angstrom", "angstrom"}, {"Angstrom", "angstrom"},
      {"pc", "parsec"},    {"inch", "inch"},     {"foot", "foot"}};
  if (const auto it = names.find(unit); it != names.end()) return it->second;
  for (const auto& [stack, ome] : names)  // already an OME name ("nanometer", "meter", ...)
    if (unit == ome) return ome;
  static const char* other[] = {"micrometer", "decimeter", "femtometer", "attometer"};
  for (const char* name : other)
    if (unit == name) return name;
  return "";
}

Json zarrArrayMetadata(const OmeZarrLayout& layout, size_t level) {
  const std::array<int64_t, 3> chunks = layout.levelChunks(level);
  const Json fill = layout.int32 ? Json(0) : Json("NaN");
  if (layout.zarrFormat() == 2)
    return {{"zarr_format", 2},
            {"shape", shapeJson(layout.shapes[level])},
            {"chunks", shapeJson(chunks)},
            {"dtype", layout.int32 ? "<i4" : "<f4"},
            {"compressor",
             {{"id", "blosc"},
              {"cname", ZarrBloscSettings::cname},
              {"clevel", ZarrBloscSettings::clevel},
              {"shuffle", ZarrBloscSettings::shuffle},
              {"blocksize", 0}}},
            {"fill_value", fill},
            {"order", "C"},
            {"filters", nullptr},
            {"dimension_separator", "."}};
  const Json codecs = Json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
                                   {{"name", "blosc"},
                                    {"configuration",
                                     {{"cname", ZarrBloscSettings::cname},
                                      {"clevel", ZarrBloscSettings::clevel},
                                      {"shuffle", "shuffle"},
                                      {"typesize", 4},
                                      {"blocksize", 0}}}}});
  const Json sharding = {
      {"name", "sharding_indexed"},
      {"configuration",
       {{"chunk_shape", shapeJson(chunks)},
        {"codecs", codecs},
        {"index_codecs",
         Json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
                      {{"name", "crc32c"}}})},
        {"index_location", "end"}}}};
  return {{"zarr_format", 3},
          {"node_type", "array"},
          {"shape", shapeJson(layout.shapes[level])},
          {"data_type", layout.int32 ? "int32" : "float32"},
          {"chunk_grid",
           {{"name", "regular"},
            {"configuration", {{"chunk_shape", shapeJson(layout.levelObjects(level))}}}}},
          {"chunk_key_encoding", {{"name", "default"}, {"configuration", {{"separator", "/"}}}}},
          {"fill_value", fill},
          {"codecs", layout.sharded() ? Json::array({sharding}) : codecs},
          {"attributes", Json::object()},
          {"dimension_names", Json::array({"z", "y", "x"})}};
}

Json omeImageAttributes(const OmeZarrLayout& layout, const WriteOptions& options) {
  const std::array<double, 3> spacing =
      options.spacingKnown ? options.spacing : std::array<double, 3>{1.0, 1.0, 1.0};
  Json axes = Json::array();
  Json originalUnits = Json::object();
  for (size_t a = 0; a < 3; ++a) {
    Json axis = {{"name", kAxisNames[a]}, {"type", "space"}};
    if (options.spacingKnown && !options.units[a].empty()) {
      const std::string unit = omeSpaceUnit(options.units[a]);
      if (!unit.empty())
        axis["unit"] = unit;
      else
        originalUnits[kAxisNames[a]] = options.units[a];
    }
    axes.push_back(axis);
  }
  Json datasets = Json::array();
  for (size_t level = 0; level < layout.shapes.size(); ++level)
    datasets.push_back({{"path", std::to_string(level)},
                        {"coordinateTransformations", levelTransforms(spacing, level)}});
  Json multiscale = {{"name", layout.name}, {"axes", axes}, {"datasets", datasets}};
  if (layout.shapes.size() > 1) {
    multiscale["type"] = "mean";
    multiscale["metadata"] = {{"description",
                               "each level is the mean of every 2 x 2 samples in y and x of the "
                               "level before (NaN ignored); z is kept"},
                              {"method", "StackLens " STACKLENS_VERSION}};
  }
  if (layout.omeVersion == "0.4") multiscale["version"] = "0.4";
  Json stacklens = {{"version", STACKLENS_VERSION},
                    {"history", historyLines(options)},
                    {"header", carriedCards(options.header)}};
  if (!originalUnits.empty()) stacklens["units"] = originalUnits;
  if (layout.omeVersion == "0.4")
    return {{"multiscales", Json::array({multiscale})}, {"stacklens", stacklens}};
  return {{"ome", {{"version", "0.5"}, {"multiscales", Json::array({multiscale})}}},
          {"stacklens", stacklens}};
}

void writeOmeZarrMetadata(const std::string& folder, const std::string& target,
                          const OmeZarrLayout& layout, const WriteOptions& options) {
  const Json attributes = omeImageAttributes(layout, options);
  const bool v2 = layout.zarrFormat() == 2;
  if (v2) {
    writeJson(folder + "/.zgroup", {{"zarr_format", 2}}, target);
    writeJson(folder + "/.zattrs", attributes, target);
  } else {
    writeJson(folder + "/zarr.json",
              {{"zarr_format", 3}, {"node_type", "group"}, {"attributes", attributes}}, target);
  }
  for (size_t level = 0; level < layout.shapes.size(); ++level) {
    const std::string array = folder + "/" + std::to_string(level);
    if (::mkdir(array.c_str(), 0777) != 0 && errno != EEXIST)
      throw IoError(target, "cannot create the folder " + array + ": " + std::strerror(errno));
    writeJson(array + (v2 ? "/.zarray" : "/zarr.json"), zarrArrayMetadata(layout, level), target);
  }
}

}  // namespace stacklens::io
