// stacklens-cli project: max/min/mean/sum/std/median of a range of slices (Fiji's Z Project).
#include "app/cli/along_z.h"
#include "compute/params_text.h"
#include "compute/projection.h"

namespace stacklens::cli {
namespace {

int runProject(const Args& args) {
  if (!args.has("op")) throw UsageError("--op is required (max, min, mean, sum, std or median)");
  compute::Projection op;
  try {
    op = compute::parseProjection(args.get("op", ""));
  } catch (const compute::InvalidArgument& e) {
    throw UsageError(std::string("--op: ") + e.what());
  }
  AlongZ run;
  run.stage = "project";
  run.collapse = [op](compute::Backend& b, const compute::ZBand& band) {
    return b.project(band.slices, {op, band.first, band.last});
  };
  run.history = [op](int64_t first, int64_t last) {
    return "stacklens project " + compute::describe(compute::ProjectParams{op, first, last});
  };
  return runAlongZ(args, run);
}

std::vector<OptionSpec> projectOptions() {
  std::vector<OptionSpec> options{
      {"op", "max|min|mean|sum|std|median",
       "the projection of each pixel's column; NaN voxels are left out (required)"}};
  for (auto& o : alongZOptions()) options.push_back(o);
  return options;
}

const CommandRegistration reg{{"project", "IN OUT",
                               "projection along z of a range of slices into one image "
                               "(Fiji's Z Project; numpy's nanmax etc. over axis 0)",
                               projectOptions(), 2, 2, runProject}};

}  // namespace
}  // namespace stacklens::cli
