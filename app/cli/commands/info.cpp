// stacklens-cli info: describe a FITS or TIFF stack as JSON (reads headers only, never the data).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>

#include "app/cli/command.h"
#include "io/stack.h"
#include "io/wcs.h"

namespace stacklens::cli {
namespace {

// Valid UTF-8 passes through; invalid bytes (a corrupt EXTNAME, say) become U+FFFD so that the
// output is always valid JSON.
std::string jsonString(const std::string& s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
      ++i;
    } else if (c < 0x20 || c == 0x7f) {
      static const char* named[] = {"\\b", "\\t", "\\n", nullptr, "\\f", "\\r"};
      if (c >= 8 && c <= 13 && c != 11 && named[c - 8]) {
        out += named[c - 8];
      } else {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        out += buf;
      }
      ++i;
    } else if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
    } else {
      size_t n = c >= 0xf0 && c < 0xf5 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
      bool valid = n > 0 && i + n <= s.size();
      for (size_t k = 1; valid && k < n; ++k)
        valid = (static_cast<unsigned char>(s[i + k]) & 0xc0) == 0x80;
      if (valid) {
        out.append(s, i, n);
        i += n;
      } else {
        out += "\\ufffd";
        ++i;
      }
    }
  }
  return out + "\"";
}

std::string jsonNumber(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  // Shortest form that reads back the same (0.1 rather than 0.10000000000000001).
  // Exponent notation only where fixed notation would be unwieldy.
  const bool plain = v == 0 || (std::fabs(v) >= 1e-5 && std::fabs(v) < 1e15);
  for (int precision = 1; precision < 17; ++precision) {
    char shorter[32];
    std::snprintf(shorter, sizeof shorter, "%.*g", precision, v);
    if (plain && std::strchr(shorter, 'e')) continue;
    if (std::strtod(shorter, nullptr) == v) return shorter;
  }
  return buf;
}

int runInfo(const Args& args) {
  io::OpenOptions options;
  options.hdu = static_cast<int>(args.getInt("hdu", -1));
  options.plane = static_cast<int>(args.getInt("plane", 0));
  auto reader = io::openStack(args.positional(0), options);
  const io::StackInfo& info = reader->info();
  std::ostringstream out;
  out << "{\"path\": " << jsonString(info.path) << ", \"format\": " << jsonString(info.format)
      << ", \"shape\": [" << info.z << ", " << info.y << ", " << info.x << "]"
      << ", \"dtype\": " << jsonString(io::dtypeName(info.dtype)) << ", \"hdu\": " << info.hdu
      << ", \"planes\": " << info.planes << ", \"plane\": " << info.plane << ", \"hdus\": [";
  for (size_t i = 0; i < info.hdus.size(); ++i) {
    const io::HduInfo& h = info.hdus[i];
    out << (i ? ", " : "") << "{\"index\": " << h.index << ", \"name\": " << jsonString(h.name)
        << ", \"type\": " << jsonString(h.type) << ", \"shape\": [";
    // NumPy order (slowest axis first), like "shape" above.
    for (size_t a = 0; a < h.axes.size(); ++a)
      out << (a ? ", " : "") << h.axes[h.axes.size() - 1 - a];
    out << "]}";
  }
  out << "], \"spacing\": ";
  if (info.spacingKnown)
    out << "[" << jsonNumber(info.spacing[0]) << ", " << jsonNumber(info.spacing[1]) << ", "
        << jsonNumber(info.spacing[2]) << "]";
  else
    out << "null";
  out << ", \"units\": ";
  if (info.spacingKnown)
    out << "[" << jsonString(info.units[0]) << ", " << jsonString(info.units[1]) << ", "
        << jsonString(info.units[2]) << "]";
  else
    out << "null";
  out << ", \"bscale\": " << jsonNumber(info.bscale) << ", \"bzero\": " << jsonNumber(info.bzero)
      << ", \"blank\": " << (info.blank ? std::to_string(*info.blank) : "null") << ", \"wcs\": ";
  if (const io::Wcs* wcs = reader->wcs()) {
    out << "[";
    const auto types = wcs->axisTypes();
    for (size_t i = 0; i < types.size(); ++i) out << (i ? ", " : "") << jsonString(types[i]);
    out << "]";
  } else {
    out << "null";
  }
  out << ", \"warnings\": [";
  bool first = true;
  for (const auto& card : info.header)
    if (card.key == "warning") {
      out << (first ? "" : ", ") << jsonString(card.value);
      first = false;
    }
  out << "]}\n";
  std::cout << out.str();
  return kOk;
}

const CommandRegistration reg{
    {"info",
     "FILE",
     "print a stack's shape ([z, y, x]), type, HDUs, spacing, scaling and WCS axes as JSON",
     {{"hdu", "N", "FITS HDU to describe (0 = primary; default: the first with image data)"},
      {"plane", "P",
       "index along a 4th axis (FITS), channel/frame (TIFF hyperstacks) or sample (RGB)"}},
     1,
     1,
     runInfo}};

}  // namespace
}  // namespace stacklens::cli
