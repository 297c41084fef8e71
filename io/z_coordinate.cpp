#include "io/z_coordinate.h"

#include <algorithm>

#include "io/wcs.h"

namespace stacklens::io {
namespace {

// A FITS string value without its quotes and trailing blanks ("'Jy/beam '" → "Jy/beam").
std::string unquoted(std::string v) {
  if (v.size() >= 2 && v.front() == '\'' && v.back() == '\'') v = v.substr(1, v.size() - 2);
  while (!v.empty() && v.back() == ' ') v.pop_back();
  return v;
}

}  // namespace

ZCoordinate zCoordinate(const StackReader& reader) {
  const StackInfo& info = reader.info();
  ZCoordinate c;
  Wcs::ZAxis axis;
  if (reader.wcs() && reader.wcs()->zAxis(info.z, axis)) {
    c.values = axis.values, c.unit = axis.unit, c.what = axis.type;
  } else if (info.spacingKnown && info.z > 1) {
    for (int64_t z = 0; z < info.z; ++z) c.values.push_back(double(z) * info.spacing[0]);
    c.unit = info.units[0], c.what = "z spacing";
  } else {
    for (int64_t z = 0; z < info.z; ++z) c.values.push_back(double(z));
    c.what = "slice index";
  }
  return c;
}

std::string momentUnit(const StackInfo& info, const ZCoordinate& z, int order) {
  if (order != 0) return z.unit;
  std::string data;
  if (info.format == "fits")
    for (const HeaderCard& c : info.header)
      if (c.key == "BUNIT") data = unquoted(c.value);
  if (data.empty() || z.unit.empty()) return data.empty() ? z.unit : data;
  return data + "." + z.unit;
}

void setMomentUnit(std::vector<HeaderCard>& header, const StackInfo& info, const ZCoordinate& z,
                   int order, const std::string& comment) {
  const std::string unit = momentUnit(info, z, order);
  std::erase_if(header, [](const HeaderCard& c) { return c.key == "BUNIT"; });
  if (!unit.empty()) header.push_back({"BUNIT", "'" + unit + "'", comment});
}

}  // namespace stacklens::io
