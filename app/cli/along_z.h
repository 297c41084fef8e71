// What `project` and `moments` share: the slices [--first, --last] of IN collapsed into one image
// (compute/blocked/along_z.h: bands of rows within --ram-budget-mb, never the whole stack), and
// the image written with the input's header and its WCS kept (z degenerate at the range's middle).
#pragma once

#include <functional>
#include <string>

#include "app/cli/command.h"
#include "compute/backend.h"
#include "compute/blocked/along_z.h"
#include "io/stack.h"
#include "io/stack_writer.h"

namespace stacklens::cli {

struct AlongZ {
  std::string stage;                                                // e.g. "project" (--timings)
  std::function<std::string(int64_t first, int64_t last)> history;  // the HISTORY line
  int64_t context = 0;  // slices read beyond each end of the range where there are any
  compute::Collapse collapse;
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
