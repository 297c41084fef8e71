// stacklens-cli deconvolve: Richardson–Lucy with a PSF file or a Gaussian PSF.
#include <atomic>
#include <cstdio>
#include <iostream>
#include <utility>

#include "app/cli/blocked_run.h"
#include "app/cli/command.h"
#include "app/cli/interrupt.h"
#include "app/cli/parameter_options.h"
#include "app/cli/processing.h"
#include "compute/auto_boundary.h"
#include "compute/blocked/seam_policy.h"
#include "compute/mirror_psf.h"
#include "compute/params_text.h"
#include "io/stack.h"

namespace stacklens::cli {
namespace {

compute::Image loadPsf(const Args& args, bool threeD) {
  if (args.has("psf") == args.has("psf-sigma"))
    throw UsageError("give exactly one of --psf FILE and --psf-sigma S[,S,S]");
  if (auto path = args.get("psf")) {
    auto reader = io::openStack(*path);
    const io::StackInfo& info = reader->info();
    compute::Image psf = compute::Image::host({info.z, info.y, info.x});
    for (int64_t z = 0; z < info.z; ++z) reader->readSlice(z, psf.slice(z));
    return psf;
  }
  try {
    return compute::gaussianPsfFromSigmas(args.getDoubles("psf-sigma"), threeD);
  } catch (const compute::InvalidArgument& e) {
    throw UsageError(std::string("--psf-sigma: ") + e.what());
  }
}

// --symmetrize-psf: the PSF's mirror-symmetric part, which reflect-exact takes, saying how far
// the PSF was from it.
compute::Image symmetrized(const compute::Image& psf, const std::string& name) {
  compute::MirrorSymmetricPart part;
  try {
    part = compute::symmetrizedPsf(psf.data(), psf.shape());
  } catch (const compute::InvalidArgument& e) {
    throw UsageError("--symmetrize-psf: " + name + ": " + e.what());
  }
  const compute::Shape s = part.psf.shape();
  std::fprintf(stderr,
               "stacklens: deconvolving with the PSF's mirror-symmetric part (%lld x %lld x %lld), "
               "which differs from the PSF by %.2g of its sum\n",
               static_cast<long long>(s.z), static_cast<long long>(s.y),
               static_cast<long long>(s.x), part.differs);
  return std::move(part.psf);
}

compute::Image psfFor(const Args& args, bool threeD) {
  compute::Image psf = loadPsf(args, threeD);
  return args.has("symmetrize-psf") ? symmetrized(psf, args.get("psf", "the PSF")) : psf;
}

int runDeconvolve(const Args& args) {
  compute::DeconvolveParams p;
  if (!args.has("iterations")) throw UsageError("--iterations N is required");
  p.iterations = args.getInt32("iterations", 20);
  const std::string mode = args.get("mode", "2d");
  if (mode != "2d" && mode != "3d") throw UsageError("--mode: expected 2d or 3d");
  p.threeD = mode == "3d";
  const std::string boundaryWord = args.get("boundary", compute::kAutoBoundaryWord);
  const bool autoBoundary = boundaryWord == compute::kAutoBoundaryWord;
  const std::optional<compute::Boundary> boundary = compute::boundaryNamed(boundaryWord);
  if (!autoBoundary && !boundary)
    throw UsageError(std::string("--boundary: expected auto, ") + compute::kBoundaryWords);
  if (boundary) p.boundary = *boundary;
  p.tvLambda = args.getDouble("tv", 0.0);
  p.accelerate = args.has("accelerate");
  checkParameters([&] { compute::validate(p); },
                  {{"iterations", "iterations"}, {"tvLambda", "tv"}});
  if (p.threeD && args.has("slice"))
    throw UsageError("--mode 3d needs the whole stack, not --slice");
  for (const char* o : {"budget-mb", "ram-budget-mb"})
    if (args.has(o) && args.getInt(o, 0) < 1)
      throw UsageError(std::string("--") + o + ": expected MiB ≥ 1");
  for (const char* o : {"halo", "block", "dry-run", "devices", "seams"})
    if (!p.threeD && args.has(o)) throw UsageError(std::string("--") + o + " needs --mode 3d");
  if (args.has("seams") && !compute::seamRuleNamed(args.get("seams", "")))
    throw UsageError("--seams: expected exact or fast");
  const std::string outPath = args.positional(1);

  // The PSF is read before the input: the boundary "auto" chooses depends on it.
  compute::Image psf = psfFor(args, p.threeD);
  std::string chosen;
  if (autoBoundary) {
    const compute::BoundaryChoice choice = compute::autoBoundary(psf, p);
    p.boundary = choice.boundary;
    chosen = std::string(" (auto: ") + choice.reason + ")";
    std::fprintf(stderr, "stacklens: boundary %s%s\n", compute::boundaryName(p.boundary),
                 chosen.c_str());
  }
  const std::string history = std::string("stacklens deconvolve richardson-lucy ") +
                              (args.has("symmetrize-psf") ? "symmetrize-psf " : "") +
                              compute::describe(p) + chosen;
  // Ctrl-C from here on stops the run (between iterations); nothing is written then.
  const std::atomic<bool>* stop = installInterruptHandler();
  if (p.threeD) return runDeconvolve3d(args, {p, std::move(psf), outPath, history, stop});

  StageTimer timer(args.has("timings"));
  timer.start("read");
  InputStack input = readInput(args);
  if (stop->load()) throw compute::Cancelled();
  timer.stop();
  auto backend = chooseBackend(args);
  timer.start("compute");
  const compute::Image result = backend->download(
      backend->richardsonLucy(backend->upload(input.image), psf, p, compute::Job(stop)));
  timer.stop();
  timer.start("write");
  const compute::Shape s = result.shape();
  io::writeStack(outPath, result.data(), s.z, s.y, s.x, writeOptionsFor(args, input, history));
  timer.stop();
  timer.print(backend->name());
  return kOk;
}

std::vector<OptionSpec> options() {
  auto o = processingOptions();
  o.push_back({"psf", "FILE", "the point-spread function (FITS or TIFF; 2D or 3D)"});
  o.push_back({"psf-sigma", "S[,S,S]", "a Gaussian PSF instead: one σ, or σz,σy,σx, in pixels"});
  o.push_back({"iterations", "N", "Richardson–Lucy iterations (required)"});
  o.push_back(
      {"mode", "2d|3d", "2d: each slice with the PSF's centre slice (default); 3d: the stack"});
  o.push_back({"boundary", "auto|reflect|periodic|zero|reflect-exact",
               "how the image continues past its edges. reflect: mirrored once into a padded "
               "frame; reflect-exact: mirrored at every convolution, no padding (smaller, faster "
               "frames), needs a PSF symmetric along each axis and no --tv. Default auto: "
               "reflect-exact when those hold, else reflect; the choice is printed and kept in "
               "the output's HISTORY"});
  o.push_back({"symmetrize-psf", "",
               "deconvolve with the PSF's mirror-symmetric part (the mean of its mirror images "
               "along each axis, an even side's unpaired first sample left out), saying how far "
               "the PSF is from it: reflect-exact then takes a measured PSF (refused past 0.1 of "
               "the PSF's sum: recentre it or use reflect)"});
  o.push_back({"tv", "LAMBDA", "total-variation regularisation weight (default 0: off)"});
  o.push_back({"accelerate", "", "Biggs–Andrews acceleration"});
  o.push_back({"budget-mb", "N",
               "3d on the GPU: plan with N MiB of GPU memory (default: 80 % of what is free); "
               "a volume that does not fit is deconvolved in overlapping blocks"});
  o.push_back({"ram-budget-mb", "N",
               "3d on the CPU: the same with N MiB of RAM (default: half); when half of it holds "
               "the whole volume's arrays (12 bytes a voxel), the blocks exchange halos every "
               "iteration and give the unblocked result"});
  o.push_back({"halo", "N|Z,Y,X",
               "3d blocks: voxels of real data past each block face (default: half the PSF); "
               "given, CPU blocks overlap instead of exchanging halos"});
  o.push_back({"block", "N|Z,Y,X", "3d blocks: longest block interior (default: from the budget)"});
  o.push_back({"dry-run", "", "3d: print the plan of blocks and exit"});
  o.push_back({"seams", "exact|fast",
               "3d blocks that overlap may leave seams: a small trial first estimates them. exact "
               "(default): where it expects more than 1e-4 relative L2 near the seams, the "
               "volume is deconvolved as one block if the memory budget holds it; fast: the "
               "fastest blocks whatever their seams (so are --halo and --block). Either way the "
               "estimate is printed and kept in HISTORY"});
  o.push_back({"devices", "all|N|I,J",
               "3d on CUDA: the GPUs that share the blocks (default all; N: the first N; a list: "
               "those, e.g. 0,2 or 1,)"});
  for (auto& s : outputOptions()) o.push_back(s);
  return o;
}

const CommandRegistration reg{
    {"deconvolve", "IN OUT", "Richardson–Lucy deconvolution; writes float32 FITS, TIFF or OME-Zarr",
     options(), 2, 2, runDeconvolve}};

}  // namespace
}  // namespace stacklens::cli
