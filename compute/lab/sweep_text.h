// Sweep descriptions as a user types them ("256:8192", "1,all", "blur,rl2d"), parsed once for the
// CLI, the viewer and Python, and the default sweep they all start from.
#pragma once

#include <string>
#include <vector>

#include "compute/lab/sweep.h"

namespace stacklens::compute::lab {

// "A:B": A, 2A, 4A, ... up to B (B itself added when the doubling skips it); "A:B:F": the same
// with factor F > 1; "a,b,c": those sizes. Throws InvalidParameter("sizes", ...).
std::vector<int64_t> parseSizes(const std::string& text);
// "1,all" or "1,2,8": thread counts, "all" (or 0) for every hardware thread.
std::vector<int> parseThreads(const std::string& text);
// "blur,rl2d": op names (checked by validate(SweepSpec)); "all" for every op.
std::vector<std::string> parseOps(const std::string& text);

// The classroom default: the 2D ops and the projection from 256² to 2048², 1 and all threads,
// 3 repeats: a whole sweep in under 3 minutes on a 2-core laptop without a GPU (measured in
// docs/speedup_lab.md), every op crossing from launch-bound to throughput-bound on a GPU.
SweepSpec defaultSweepSpec();
// The text forms of the default, for help texts and the viewer's fields.
inline constexpr const char* kDefaultOps =
    "blur,median,outliers,sigmaclip,segment,rl2d,resample,projection";
inline constexpr const char* kDefaultSizes = "256:2048";

}  // namespace stacklens::compute::lab
