// CSV text of source and statistics tables, values with 10 significant digits.
#include "compute/source_table.h"

#include <sstream>

namespace stacklens::compute {

std::string sourcesCsv(const std::vector<Source>& sources, bool withZ) {
  std::ostringstream out;
  out.precision(10);
  out << "label,x,y,flux,npix,peak,peak_x,peak_y,xmin,xmax,ymin,ymax" << (withZ ? ",z" : "")
      << "\n";
  for (const Source& s : sources) {
    out << s.label << "," << s.centroidX << "," << s.centroidY << "," << s.flux << "," << s.npix
        << "," << s.peak << "," << s.peakX << "," << s.peakY << "," << s.xMin << "," << s.xMax
        << "," << s.yMin << "," << s.yMax;
    if (withZ) out << "," << s.z;
    out << "\n";
  }
  return out.str();
}

std::string statisticsCsv(const std::vector<std::pair<int64_t, ClipStats>>& statistics) {
  std::ostringstream out;
  out.precision(10);
  out << "z,n,mean,median,std,min,max,clipped_n,clipped_mean,clipped_median,clipped_std,"
         "iterations\n";
  for (const auto& [z, c] : statistics)
    out << z << "," << c.all.n << "," << c.all.mean << "," << c.all.median << "," << c.all.std
        << "," << c.all.min << "," << c.all.max << "," << c.clipped.n << "," << c.clipped.mean
        << "," << c.clipped.median << "," << c.clipped.std << "," << c.iterations << "\n";
  return out.str();
}

}  // namespace stacklens::compute
