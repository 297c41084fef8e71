// The tables a segmentation or a statistics run produces, as CSV text (the CLI's --sources and
// the whole-stack job's side tables share one layout).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "compute/params.h"

namespace stacklens::compute {

// label,x,y,flux,npix,peak,peak_x,peak_y,xmin,xmax,ymin,ymax[,z]: one row per source.
std::string sourcesCsv(const std::vector<Source>& sources, bool withZ);

// z,n,mean,median,std,min,max,clipped_n,clipped_mean,clipped_median,clipped_std,iterations:
// one row per slice.
std::string statisticsCsv(const std::vector<std::pair<int64_t, ClipStats>>& statistics);

}  // namespace stacklens::compute
