// stacklens-cli deconvolve: Richardson–Lucy with a PSF file or a Gaussian PSF.
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "app/cli/command.h"
#include "app/cli/interrupt.h"
#include "app/cli/processing.h"
#include "compute/blocked/blocked_deconvolution.h"
#include "io/block_writer.h"
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
  std::vector<double> sigma = args.getDoubles("psf-sigma");
  double sz = 0, sy, sx;
  if (sigma.size() == 1) {
    sy = sx = sigma[0];
    if (threeD) sz = sigma[0];
  } else if (sigma.size() == 3) {
    sz = sigma[0];
    sy = sigma[1];
    sx = sigma[2];
  } else {
    throw UsageError("--psf-sigma: expected S or Sz,Sy,Sx");
  }
  if (sy <= 0 || sx <= 0 || sz < 0) throw UsageError("--psf-sigma: sigmas must be positive");
  return compute::gaussianPsf(threeD ? sz : 0.0, sy, sx);
}

// Z,Y,X or one value for all three (non-negative integers), or `fallback` when not given.
compute::Shape shapeOption(const Args& args, const std::string& name, int64_t fallback) {
  if (!args.has(name)) return {fallback, fallback, fallback};
  const std::vector<double> v = args.getDoubles(name);
  if (v.size() != 1 && v.size() != 3) throw UsageError("--" + name + ": expected N or Z,Y,X");
  for (double d : v)
    if (d < 0 || d != std::floor(d)) throw UsageError("--" + name + ": expected whole numbers ≥ 0");
  if (v.size() == 1) return {int64_t(v[0]), int64_t(v[0]), int64_t(v[0])};
  return {int64_t(v[0]), int64_t(v[1]), int64_t(v[2])};
}

// The memory a 3D run may plan with: the GPU budget (--budget-mb, else the backend's default)
// or, on the CPU, --ram-budget-mb (default: half the machine's memory).
size_t planningBudget(const Args& args, compute::Backend& backend) {
  if (backend.name() == "cuda") {
    const size_t mb = static_cast<size_t>(args.getInt("budget-mb", 0));
    return backend.setMemoryBudget(mb << 20);
  }
  if (args.has("ram-budget-mb")) return static_cast<size_t>(args.getInt("ram-budget-mb", 0)) << 20;
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<size_t>(pages) * static_cast<size_t>(page) / 2
                               : size_t(4) << 30;
}

int runDeconvolve(const Args& args) {
  compute::DeconvolveParams p;
  if (!args.has("iterations")) throw UsageError("--iterations N is required");
  p.iterations = static_cast<int>(args.getInt("iterations", 20));
  if (p.iterations < 1) throw UsageError("--iterations: expected at least 1");
  const std::string mode = args.get("mode", "2d");
  if (mode != "2d" && mode != "3d") throw UsageError("--mode: expected 2d or 3d");
  p.threeD = mode == "3d";
  const std::string boundary = args.get("boundary", "reflect");
  if (boundary == "reflect")
    p.boundary = compute::Boundary::Reflect;
  else if (boundary == "periodic")
    p.boundary = compute::Boundary::Periodic;
  else if (boundary == "zero")
    p.boundary = compute::Boundary::Zero;
  else
    throw UsageError("--boundary: expected reflect, periodic or zero");
  p.tvLambda = args.getDouble("tv", 0.0);
  if (p.tvLambda < 0) throw UsageError("--tv: expected a weight ≥ 0");
  p.accelerate = args.has("accelerate");
  if (p.threeD && args.has("slice"))
    throw UsageError("--mode 3d needs the whole stack, not --slice");
  for (const char* o : {"budget-mb", "ram-budget-mb"})
    if (args.has(o) && args.getInt(o, 0) < 1)
      throw UsageError(std::string("--") + o + ": expected MiB ≥ 1");
  for (const char* o : {"halo", "block", "dry-run"})
    if (!p.threeD && args.has(o)) throw UsageError(std::string("--") + o + " needs --mode 3d");
  const std::string outPath = args.positional(1);

  if (p.threeD && args.has("dry-run")) {
    // The plan only: the stack's shape from its header, nothing read or written.
    auto reader = io::openStack(args.positional(0));
    const io::StackInfo& info = reader->info();
    const compute::Image psf = loadPsf(args, true);
    auto backend = chooseBackend(args);
    const compute::BlockPlan plan = compute::planBlocks(
        {info.z, info.y, info.x}, psf.shape(), p, planningBudget(args, *backend),
        compute::frameBytesPerVoxel(backend->name(), p), shapeOption(args, "halo", -1),
        shapeOption(args, "block", 0));
    std::printf("backend %s\n%s", backend->name().c_str(), plan.describe(p.iterations).c_str());
    return kOk;
  }

  StageTimer timer(args.has("timings"));
  timer.start("read");
  // Ctrl-C from here on stops the run (between iterations); nothing is written then.
  const std::atomic<bool>* stop = installInterruptHandler();
  InputStack input = readInput(args);
  if (stop->load()) throw compute::Cancelled();
  compute::Image psf = loadPsf(args, p.threeD);
  timer.stop();
  auto backend = chooseBackend(args);
  const std::string history =
      "stacklens deconvolve richardson-lucy iterations=" + std::to_string(p.iterations) +
      " mode=" + mode + " boundary=" + boundary;
  timer.start("compute");
  compute::Image result;
  if (p.threeD) {
    // Blocks when the volume does not fit the memory budget (one block: the unblocked run).
    const compute::BlockPlan plan =
        compute::planBlocks(input.image.shape(), psf.shape(), p, planningBudget(args, *backend),
                            compute::frameBytesPerVoxel(backend->name(), p),
                            shapeOption(args, "halo", -1), shapeOption(args, "block", 0));
    if (plan.count() > 1) std::fprintf(stderr, "%s", plan.describe(p.iterations).c_str());
    const bool terminal = isatty(STDERR_FILENO);
    const auto started = std::chrono::steady_clock::now();
    const compute::Job job(stop, [&, last = -1](double f) mutable {
      // Each percent on a terminal (one line, redrawn, with the time left), else each tenth on a
      // line of its own.
      const int percent = static_cast<int>(f * 100) / (terminal ? 1 : 10) * (terminal ? 1 : 10);
      if (plan.count() == 1 || percent == last) return;
      last = percent;
      const double elapsed =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      const double left = f > 0 ? elapsed * (1 - f) / f : 0;
      if (terminal)
        std::fprintf(stderr, "\rdeconvolving: %3d %%, about %.0f s left%s", percent, left,
                     percent == 100 ? "\n" : "   ");
      else
        std::fprintf(stderr, "deconvolving: %d %%\n", percent);
    });
    if (io::StackBlockWriter::supports(outPath)) {
      // FITS: each block's interior goes to the file as it is done, so the result is never
      // whole in memory; the file appears when the last block is in.
      const compute::Shape s = input.image.shape();
      io::StackBlockWriter writer(outPath, s.z, s.y, s.x, writeOptionsFor(input, history));
      compute::deconvolveBlocked(
          *backend, compute::boxReader(input.image),
          [&](const compute::Box& b, const float* data) {
            writer.writeBox(b.z0, b.z1, b.y0, b.y1, b.x0, b.x1, data);
          },
          psf, p, plan, job);
      timer.stop();
      timer.start("write");
      writer.commit();
      timer.stop();
    } else {
      result = compute::deconvolveBlocked(*backend, input.image, psf, p, plan, job);
    }
  } else {
    result = backend->download(
        backend->richardsonLucy(backend->upload(input.image), psf, p, compute::Job(stop)));
  }
  if (!result.empty()) {
    timer.stop();
    timer.start("write");
    const compute::Shape s = result.shape();
    io::writeStack(outPath, result.data(), s.z, s.y, s.x, writeOptionsFor(input, history));
    timer.stop();
  }
  timer.print(backend->name());
  if (p.threeD) {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    std::fprintf(stderr, "peak host memory %ld MiB\n", usage.ru_maxrss / 1024);
  }
  return kOk;
}

std::vector<OptionSpec> options() {
  auto o = processingOptions();
  o.push_back({"psf", "FILE", "the point-spread function (FITS or TIFF; 2D or 3D)"});
  o.push_back({"psf-sigma", "S[,S,S]", "a Gaussian PSF instead: one σ, or σz,σy,σx, in pixels"});
  o.push_back({"iterations", "N", "Richardson–Lucy iterations (required)"});
  o.push_back(
      {"mode", "2d|3d", "2d: each slice with the PSF's centre slice (default); 3d: the stack"});
  o.push_back({"boundary", "reflect|periodic|zero",
               "how the image continues past its edges "
               "(default reflect)"});
  o.push_back({"tv", "LAMBDA", "total-variation regularisation weight (default 0: off)"});
  o.push_back({"accelerate", "", "Biggs–Andrews acceleration"});
  o.push_back({"budget-mb", "N",
               "3d on the GPU: plan with N MiB of GPU memory (default: 80 % of what is free); "
               "a volume that does not fit is deconvolved in overlapping blocks"});
  o.push_back({"ram-budget-mb", "N", "3d on the CPU: the same with N MiB of RAM (default: half)"});
  o.push_back({"halo", "N|Z,Y,X",
               "3d blocks: voxels of real data past each block face (default: half the PSF)"});
  o.push_back({"block", "N|Z,Y,X", "3d blocks: longest block interior (default: from the budget)"});
  o.push_back({"dry-run", "", "3d: print the plan of blocks and exit"});
  return o;
}

const CommandRegistration reg{{"deconvolve", "IN OUT",
                               "Richardson–Lucy deconvolution; writes float32 FITS or TIFF",
                               options(), 2, 2, runDeconvolve}};

}  // namespace
}  // namespace stacklens::cli
