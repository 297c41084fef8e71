// Locating the arrays of an OME-Zarr image and reading its axes, scales and channel hints.
#include "io/ome_zarr.h"

#include <sys/stat.h>

#include <cctype>
#include <map>

#include "io/io_error.h"
#include "io/zarr_json.h"

namespace stacklens::io {

namespace {

// A component as a web server reads it: "%2e%2E" is "..".
std::string percentDecoded(const std::string& part) {
  std::string out;
  for (size_t i = 0; i < part.size(); ++i) {
    if (part[i] == '%' && i + 2 < part.size() &&
        std::isxdigit(static_cast<unsigned char>(part[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(part[i + 2]))) {
      out += char(std::stoi(part.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += part[i];
    }
  }
  return out;
}

// A dataset path must stay inside the image's folder: relative, without "..", "." or empty
// components, spelled plainly or percent-encoded (metadata is untrusted and could otherwise point
// anywhere on the disk, or, over HTTP, anywhere on the server).
void checkDatasetPath(const std::string& path, const std::string& file) {
  if (path.empty() || path.front() == '/' || path.back() == '/')
    throw IoError(file, "dataset path \"" + path + "\" is not a relative path inside the image");
  size_t start = 0;
  while (start <= path.size()) {
    const size_t end = std::min(path.find('/', start), path.size());
    const std::string part = percentDecoded(path.substr(start, end - start));
    if (part.empty() || part == "." || part == ".." || part.find('/') != std::string::npos)
      throw IoError(file, "dataset path \"" + path + "\" leaves the image's folder");
    start = end + 1;
  }
}

std::vector<OmeAxis> readAxes(const Json& multiscale, const std::string& file) {
  std::vector<OmeAxis> axes;
  const auto it = multiscale.find("axes");
  if (it == multiscale.end()) return axes;  // 0.1/0.2: tczyx, filled in by the caller
  if (!it->is_array()) throw IoError(file, "multiscales axes must be a list");
  for (const Json& a : *it) {
    OmeAxis axis;
    if (a.is_string()) {  // 0.3: names only
      axis.name = a.get<std::string>();
    } else {
      axis.name = jsonText(jsonMember(a, "name", file), "axis name", file);
      if (a.contains("type") && a["type"].is_string()) axis.type = a["type"].get<std::string>();
      if (a.contains("unit") && a["unit"].is_string()) axis.unit = a["unit"].get<std::string>();
    }
    if (axis.type.empty())
      axis.type = axis.name == "t"                                             ? "time"
                  : axis.name == "c"                                           ? "channel"
                  : (axis.name == "x" || axis.name == "y" || axis.name == "z") ? "space"
                                                                               : "";
    axes.push_back(axis);
  }
  return axes;
}

// The product of the "scale" transformations in a coordinateTransformations list (multiplied
// into scale), or false when there is none.
bool applyScales(const Json& owner, std::vector<double>& scale, const std::string& file) {
  const auto it = owner.find("coordinateTransformations");
  if (it == owner.end() || !it->is_array()) return false;
  bool found = false;
  for (const Json& t : *it) {
    if (!t.is_object() || t.value("type", "") != "scale" || !t.contains("scale")) continue;
    const Json& s = t["scale"];
    if (!s.is_array()) throw IoError(file, "a scale transformation must hold a list");
    if (scale.empty()) scale.assign(s.size(), 1.0);
    if (s.size() != scale.size())
      throw IoError(file, "scale " + jsonShort(s) + " does not have one value per axis");
    for (size_t i = 0; i < s.size(); ++i) {
      if (!s[i].is_number() || !(s[i].get<double>() > 0))
        throw IoError(file, "scale " + jsonShort(s) + " holds a value that is not positive");
      scale[i] *= s[i].get<double>();
    }
    found = true;
  }
  return found;
}

std::vector<OmeChannel> readOmero(const Json& omero) {
  std::vector<OmeChannel> out;
  if (!omero.is_object() || !omero.contains("channels") || !omero["channels"].is_array())
    return out;
  for (const Json& c : omero["channels"]) {
    if (!c.is_object()) continue;
    OmeChannel ch;
    if (c.contains("label") && c["label"].is_string()) ch.label = c["label"].get<std::string>();
    if (c.contains("color") && c["color"].is_string()) ch.color = c["color"].get<std::string>();
    if (c.contains("active") && c["active"].is_boolean()) ch.active = c["active"].get<bool>();
    if (c.contains("window") && c["window"].is_object()) {
      const Json& w = c["window"];
      if (w.contains("start") && w["start"].is_number() && w.contains("end") &&
          w["end"].is_number()) {
        ch.hasWindow = true;
        ch.start = w["start"].get<double>(), ch.end = w["end"].get<double>();
      }
    }
    out.push_back(ch);
  }
  return out;
}

std::string formatNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

void describeImage(ZarrImage& image) {
  if (!image.omeVersion.empty()) image.describe.push_back({"OME_VERSION", image.omeVersion, ""});
  image.describe.push_back({"LEVELS", std::to_string(image.levels.size()), "multiscale levels"});
  std::string axes;
  for (const OmeAxis& a : image.axes)
    axes += (axes.empty() ? "" : ", ") + a.name + (a.unit.empty() ? "" : " [" + a.unit + "]");
  if (!axes.empty()) image.describe.push_back({"AXES", axes, "slowest first"});
  for (size_t i = 0; i < image.channels.size(); ++i) {
    const OmeChannel& c = image.channels[i];
    std::string text = "label=" + c.label + " color=" + c.color;
    if (c.hasWindow) text += " window=" + formatNumber(c.start) + ".." + formatNumber(c.end);
    text += c.active ? " active" : " inactive";
    image.describe.push_back({"OMERO_CHANNEL_" + std::to_string(i), text, "display hint"});
  }
}

// The image of a group's multiscales (its first entry, as the spec says readers may).
ZarrImage readMultiscales(const std::string& folder, const Json& multiscales,
                          const std::string& version, const Json& omero, const std::string& file) {
  if (!multiscales.is_array() || multiscales.empty())
    throw IoError(file, "multiscales must be a non-empty list");
  const Json& m = multiscales[0];
  if (!m.is_object()) throw IoError(file, "multiscales must hold objects");
  ZarrImage image;
  image.folder = folder;
  image.omeVersion = version.empty() ? m.value("version", std::string("?")) : version;
  image.axes = readAxes(m, file);
  const Json& datasets = jsonMember(m, "datasets", file);
  if (!datasets.is_array() || datasets.empty())
    throw IoError(file, "multiscales datasets must be a non-empty list");
  for (const Json& d : datasets) {
    const std::string path = jsonText(jsonMember(d, "path", file), "dataset path", file);
    checkDatasetPath(path, file);
    image.levels.push_back(folder + "/" + path);
    std::vector<double> scale;
    const bool own = applyScales(d, scale, file);
    if (own) applyScales(m, scale, file);  // the multiscale's own transformations follow
    image.scales.push_back(own ? scale : std::vector<double>{});
  }
  image.channels = readOmero(omero);
  describeImage(image);
  return image;
}

// The HISTORY lines StackLens keeps in its own attribute (io/ome_zarr_metadata_writer.h), as
// HISTORY cards: a FITS written from the image carries them on, as it does a FITS input's.
ZarrImage withHistory(ZarrImage image, const Json& attributes) {
  const auto it = attributes.find("stacklens");
  if (it == attributes.end() || !it->is_object() || !it->contains("history") ||
      !(*it)["history"].is_array())
    return image;
  for (const Json& line : (*it)["history"])
    if (line.is_string()) image.describe.push_back({"HISTORY", "", line.get<std::string>()});
  return image;
}

// A plain Zarr array (v2 or v3) as an image of one level, without axes or scales.
ZarrImage singleArray(const std::string& folder) {
  ZarrImage image;
  image.folder = folder;
  image.levels = {folder};
  image.scales = {{}};
  describeImage(image);
  return image;
}

// The image in folder (findZarrImage without the JSON error translation).
ZarrImage findImage(const ZarrStore& store, const std::string& folder) {
  // A v3 node: an array, or a group whose attributes hold "ome" (0.5) or "multiscales".
  const std::string v3 = folder + "/zarr.json";
  if (const auto meta = readJsonFile(store, v3)) {
    if (!meta->is_object()) throw IoError(v3, "must hold a JSON object");
    const std::string type = meta->value("node_type", "");
    if (type == "array") return singleArray(folder);
    if (type != "group") throw IoError(v3, "node_type must be \"array\" or \"group\"");
    const Json attributes = meta->value("attributes", Json::object());
    if (attributes.contains("ome") && attributes["ome"].is_object()) {
      const Json& ome = attributes["ome"];
      if (ome.contains("multiscales"))
        return withHistory(readMultiscales(folder, ome["multiscales"], ome.value("version", "0.5"),
                                           ome.value("omero", Json()), v3),
                           attributes);
      if (ome.contains("bioformats2raw.layout") && store.exists(folder + "/0/zarr.json"))
        return findImage(store, folder + "/0");
    }
    if (attributes.contains("multiscales"))
      return withHistory(readMultiscales(folder, attributes["multiscales"], "",
                                         attributes.value("omero", Json()), v3),
                         attributes);
    throw IoError(v3, "a Zarr group without OME multiscales: open one of its arrays instead");
  }
  if (store.exists(folder + "/.zarray")) return singleArray(folder);
  const std::string v2 = folder + "/.zattrs";
  const auto attributes = readJsonFile(store, v2);
  if (attributes && attributes->is_object()) {
    if (attributes->contains("multiscales"))
      return withHistory(readMultiscales(folder, (*attributes)["multiscales"], "",
                                         attributes->value("omero", Json()), v2),
                         *attributes);
    if (attributes->contains("bioformats2raw.layout") && store.exists(folder + "/0/.zattrs"))
      return findImage(store, folder + "/0");
  }
  if (attributes || store.exists(folder + "/.zgroup"))
    throw IoError(folder, "a Zarr group without OME multiscales: open one of its arrays instead");
  throw IoError(folder, "not a Zarr folder (no zarr.json, .zarray, .zgroup or .zattrs)");
}

}  // namespace

bool isZarrFolder(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return false;
  for (const char* name : {"/zarr.json", "/.zarray", "/.zgroup", "/.zattrs"})
    if (::stat((path + name).c_str(), &st) == 0) return true;
  return false;
}

ZarrImage findZarrImage(const ZarrStore& store, const std::string& folder) {
  return asIoError(folder, [&] { return findImage(store, folder); });
}

std::string stackUnit(const std::string& omeUnit) {
  static const std::map<std::string, std::string> names = {
      {"micrometer", "micron"}, {"nanometer", "nm"},   {"millimeter", "mm"},
      {"centimeter", "cm"},     {"meter", "m"},        {"angstrom", "angstrom"},
      {"picometer", "pm"},      {"kilometer", "km"},   {"second", "s"},
      {"millisecond", "ms"},    {"microsecond", "us"}, {"nanosecond", "ns"},
      {"minute", "min"},        {"hour", "h"}};
  const auto it = names.find(omeUnit);
  return it == names.end() ? omeUnit : it->second;
}

}  // namespace stacklens::io
