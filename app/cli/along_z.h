// What `project` and `moments` share: the slices [--first, --last] of IN collapsed into one image,
// read in bands of rows that fit the host budget (never the whole stack), each band computed on
// the backend, and the image written with the input's header and its WCS kept (the z axis
// degenerate at the range's middle).
#pragma once

#include <functional>
#include <string>

#include "app/cli/command.h"
#include "compute/backend.h"
#include "io/stack.h"
#include "io/stack_writer.h"

namespace stacklens::cli {

struct ZBand {
  compute::Image slices;  // rows [y0, y1) of the file's slices [fileFirst, fileFirst + z)
  int64_t fileFirst = 0;  // the file's slice that is the band's slice 0
  int64_t first = 0;      // the range [first, last] in the band's slices
  int64_t last = 0;
};

struct AlongZ {
  std::string stage;                                                // e.g. "project" (--timings)
  std::function<std::string(int64_t first, int64_t last)> history;  // the HISTORY line
  int64_t context = 0;  // slices read beyond each end of the range where there are any
  std::function<compute::Image(compute::Backend&, const ZBand&)> collapse;
  // Changes to the output's header (e.g. BUNIT), given the input.
  std::function<void(const io::StackInfo&, io::WriteOptions&)> describe;
};

// --first and --last (inclusive, 0-based; default the whole stack), checked against info.
std::pair<int64_t, int64_t> zRange(const Args& args, const io::StackInfo& info);

int runAlongZ(const Args& args, const AlongZ& run);

// --first, --last and the processing options of both commands.
std::vector<OptionSpec> alongZOptions();

// Sets (or adds) a header card, value as FITS writes it.
void setCard(io::WriteOptions& o, const std::string& key, const std::string& value,
             const std::string& comment);

}  // namespace stacklens::cli
