// stacklens-cli moments: spectral moment maps (CASA's immoments, CARTA's moments) of a range of
// slices, in the world units of the z axis as the header gives them.
#include <cstdio>

#include "app/cli/along_z.h"
#include "app/cli/parameter_options.h"
#include "app/cli/processing.h"
#include "compute/params_text.h"
#include "io/z_coordinate.h"

namespace stacklens::cli {
namespace {

int runMoments(const Args& args) {
  if (!args.has("order")) throw UsageError("--order is required (0, 1 or 2)");
  compute::MomentParams p;
  p.order = args.getInt32("order", 0);
  if (args.has("clip")) p.clip = args.getDouble("clip", 0);
  checkParameters([&] { compute::validate(p); }, {{"order", "order"}, {"clip", "clip"}});
  const int order = p.order;
  InputStack probe;
  const io::ZCoordinate coordinate = io::zCoordinate(*openInput(args, probe));
  if (coordinate.what == "slice index")
    std::fprintf(stderr,
                 "note: %s has no spectral axis or z spacing; the coordinate is the "
                 "slice index\n",
                 probe.path.c_str());

  AlongZ run;
  run.stage = "moments";
  run.context = 1;  // the channel widths at the range's ends come from their neighbours
  run.collapse = [p, &coordinate](compute::Backend& b, const compute::ZBand& band) {
    compute::MomentParams q = p;
    q.first = band.first, q.last = band.last;
    q.coordinate.assign(coordinate.values.begin() + band.fileFirst,
                        coordinate.values.begin() + band.fileFirst + band.slices.shape().z);
    return b.moment(band.slices, q);
  };
  run.history = [&](int64_t first, int64_t last) {
    compute::MomentParams range = p;
    range.first = first, range.last = last;
    return "stacklens moments " + compute::describe(range) + " along " + coordinate.what;
  };
  run.describe = [&](const io::StackInfo& info, io::WriteOptions& o) {
    static const char* names[] = {"integrated intensity", "intensity-weighted coordinate",
                                  "intensity-weighted dispersion"};
    io::setMomentUnit(o.header, info, coordinate, int(order),
                      std::string("moment ") + std::to_string(order) + ": " + names[order]);
  };
  return runAlongZ(args, run);
}

std::vector<OptionSpec> momentsOptions() {
  std::vector<OptionSpec> options{
      {"order", "0|1|2",
       "0: Σ I·Δv, 1: intensity-weighted coordinate, 2: intensity-weighted dispersion "
       "(required)"},
      {"clip", "V", "leave out voxels below V (the noise); NaN voxels are always left out"}};
  for (auto& o : alongZOptions()) options.push_back(o);
  return options;
}

const CommandRegistration reg{{"moments", "IN OUT",
                               "spectral moment map (0, 1 or 2) of a range of slices, in the z "
                               "axis' world units (CASA immoments)",
                               momentsOptions(), 2, 2, runMoments}};

}  // namespace
}  // namespace stacklens::cli
