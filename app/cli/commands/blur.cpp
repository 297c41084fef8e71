// stacklens-cli blur: Gaussian blur of a stack, 2D per slice (one sigma) or 3D (three sigmas).
#include "app/cli/command.h"
#include "app/cli/interrupt.h"
#include "app/cli/parameter_options.h"
#include "app/cli/processing.h"
#include "compute/params_text.h"

namespace stacklens::cli {
namespace {

int runBlur(const Args& args) {
  const std::vector<double> sigma = args.getDoubles("sigma");
  compute::BlurParams p;
  if (sigma.size() == 1) {
    p.sigmaZ = 0;
    p.sigmaY = p.sigmaX = sigma[0];
  } else if (sigma.size() == 3) {
    p.sigmaZ = sigma[0];
    p.sigmaY = sigma[1];
    p.sigmaX = sigma[2];
  } else if (sigma.empty()) {
    throw UsageError("--sigma is required (S, or SZ,SY,SX)");
  } else {
    throw UsageError("--sigma takes one value (2D per slice) or three (SZ,SY,SX), got " +
                     std::to_string(sigma.size()));
  }
  p.truncate = args.getDouble("truncate", 4.0);
  p.nanAware = args.has("nan-aware");
  checkParameters(
      [&] { compute::validate(p); },
      {{"sigmaZ", "sigma"}, {"sigmaY", "sigma"}, {"sigmaX", "sigma"}, {"truncate", "truncate"}});
  // A 3D blur reads its kernel's radius of slices on each side (as the backends' kernels).
  const int64_t reach = p.sigmaZ > 0 ? static_cast<int64_t>(p.truncate * p.sigmaZ + 0.5) : 0;
  return runImageOperation(
      args, "blur", "stacklens blur " + compute::describe(p),
      [&](compute::Backend& b, const compute::Image& in) {
        return b.gaussianBlur(in, p, interruptible().onHost());
      },
      reach);
}

std::vector<OptionSpec> blurOptions() {
  std::vector<OptionSpec> options{
      {"sigma", "S|SZ,SY,SX",
       "Gaussian sigma in pixels: one value blurs each slice in 2D, "
       "three blur in 3D (required)"},
      {"truncate", "T", "kernel radius = int(T·sigma + 0.5) (default 4, as SciPy)"},
      {"nan-aware", "", "ignore NaN pixels (normalised convolution); NaN pixels stay NaN"}};
  for (auto& o : processingOptions()) options.push_back(o);
  for (auto& o : outputOptions()) options.push_back(o);
  options.push_back(ramBudgetOption());
  options.push_back(devicesOption());
  return options;
}

const CommandRegistration reg{{"blur", "IN OUT",
                               "Gaussian blur, 2D per slice or 3D (SciPy gaussian_filter)",
                               blurOptions(), 2, 2, runBlur}};

}  // namespace
}  // namespace stacklens::cli
