// stacklens-cli blur: Gaussian blur of a stack, 2D per slice (one sigma) or 3D (three sigmas).
#include "app/cli/command.h"
#include "app/cli/interrupt.h"
#include "app/cli/parameter_options.h"
#include "app/cli/processing.h"
#include "compute/params_text.h"

namespace stacklens::cli {
namespace {

int runBlur(const Args& args) {
  if (!args.has("sigma")) throw UsageError("--sigma is required (S, or SZ,SY,SX)");
  compute::BlurParams p;
  try {
    const compute::Sigmas s =
        compute::sigmasFromList(args.getDoubles("sigma"), compute::OneSigma::PerSlice);
    p.sigmaZ = s.z, p.sigmaY = s.y, p.sigmaX = s.x;
  } catch (const compute::InvalidArgument& e) {
    throw UsageError(std::string("--sigma: ") + e.what());
  }
  p.truncate = args.getDouble("truncate", 4.0);
  p.nanAware = args.has("nan-aware");
  checkParameters(
      [&] { compute::validate(p); },
      {{"sigmaZ", "sigma"}, {"sigmaY", "sigma"}, {"sigmaX", "sigma"}, {"truncate", "truncate"}});
  // A 3D blur reads its kernel's radius of slices on each side (as the backends' kernels).
  const int64_t reach = compute::blurRadius(p.sigmaZ, p.truncate);
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
