// deconvolve: Richardson–Lucy in 2D per slice, or in 3D, in overlapping blocks when the volume
// does not fit the memory budget (compute/blocked/), as `stacklens-cli deconvolve`.
#include <pybind11/stl.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "compute/auto_boundary.h"
#include "compute/blocked/planned_run.h"
#include "compute/blocked/seam_estimate.h"
#include "compute/blocked/seam_policy.h"
#include "compute/blocked/whole_stack_setup.h"
#include "compute/device_list.h"
#include "compute/mirror_psf.h"
#include "compute/params.h"
#include "compute/params_text.h"
#include "compute/rl_frame.h"
#include "python/src/arrays.h"
#include "python/src/backends.h"
#include "python/src/operations.h"

namespace stacklens::python {
namespace {

using compute::Image;
using namespace pybind11::literals;

compute::Boundary boundaryFrom(const std::string& name) {
  if (const std::optional<compute::Boundary> b = compute::boundaryNamed(name)) return *b;
  throw compute::InvalidArgument(std::string("boundary: expected ") + compute::kBoundaryWords +
                                 ", got '" + name + "'");
}

// One value for every axis, or (z, y, x); None: -1 (the default) or 0.
compute::Shape shapeFrom(const py::handle& v, int64_t none, const char* what) {
  if (v.is_none()) return {none, none, none};
  if (py::isinstance<py::int_>(v)) {
    const auto n = v.cast<int64_t>();
    return {n, n, n};
  }
  const auto n = v.cast<std::vector<int64_t>>();
  if (n.size() != 3)
    throw compute::InvalidArgument(std::string(what) + ": expected N or (Z, Y, X)");
  return {n[0], n[1], n[2]};
}

Image psfFrom(const py::handle& psf, const py::handle& sigma, bool threeD) {
  if (psf.is_none() == sigma.is_none())
    throw compute::InvalidArgument("give exactly one of psf (an array) and psf_sigma");
  if (!psf.is_none()) {
    // A copy on the host (the PSF is small and prepared there), used on other threads after the
    // call returns control to Python.
    const Image in = hostImageFrom(psf, "psf");
    return compute::cloneHost(in);
  }
  const std::vector<double> s = py::isinstance<py::float_>(sigma) || py::isinstance<py::int_>(sigma)
                                    ? std::vector<double>{sigma.cast<double>()}
                                    : sigma.cast<std::vector<double>>();
  try {
    return compute::gaussianPsfFromSigmas(s, threeD);
  } catch (const compute::InvalidArgument& e) {
    throw compute::InvalidArgument(std::string("psf_sigma: ") + e.what());
  }
}

// 3D Richardson-Lucy parameters, boundary "auto" resolved for the kernel, validated.
compute::DeconvolveParams threeDParams(int iterations, double tv, bool accelerate,
                                       const std::string& boundary, const Image& kernel) {
  compute::DeconvolveParams p;
  p.iterations = iterations;
  p.threeD = true;
  p.tvLambda = tv;
  p.accelerate = accelerate;
  p.boundary = boundary == compute::kAutoBoundaryWord ? compute::autoBoundary(kernel, p).boundary
                                                      : boundaryFrom(boundary);
  compute::validate(p);
  return p;
}

// The planned run's request for a 3D deconvolution, set up as the CLI's
// (compute/blocked/whole_stack_setup.h: a foreground job, the volume read from memory).
compute::PlannedRunRequest wholeStackRequest(const std::vector<compute::Backend*>& backends,
                                             compute::Shape volume, compute::Shape psf,
                                             const compute::DeconvolveParams& p,
                                             std::optional<int64_t> budgetMb,
                                             std::optional<int64_t> ramBudgetMb,
                                             compute::Shape halo, compute::Shape block) {
  compute::WholeStackJob setup;
  setup.volume = volume;
  setup.psf = psf;
  setup.params = p;
  setup.backends = backends;
  if (ramBudgetMb) setup.hostBudget = size_t(*ramBudgetMb) << 20;
  setup.deviceBudget = budgetMb ? size_t(*budgetMb) << 20 : 0;
  setup.halo = halo;
  setup.maxInterior = block;
  return compute::setUpWholeStackJob(setup);
}

// 3D: planned blocks on the backends (a one-block plan is the unblocked run; several CUDA
// backends share the blocks), set up by wholeStackRequest; out of device memory, smaller blocks,
// then the CPU (each step said on stderr).
Image deconvolve3d(const std::vector<compute::Backend*>& backends, const Image& volume,
                   const Image& psf, const compute::DeconvolveParams& p,
                   std::optional<int64_t> budgetMb, std::optional<int64_t> ramBudgetMb,
                   compute::Shape halo, compute::Shape block, compute::SeamRule seams,
                   const compute::Job& job) {
  compute::PlannedRunRequest r = wholeStackRequest(backends, volume.shape(), psf.shape(), p,
                                                   budgetMb, ramBudgetMb, halo, block);
  const bool cuda = backends.front()->name() == "cuda";
  struct RestoreBudgets {
    const std::vector<compute::Backend*>& backends;
    bool restore;
    ~RestoreBudgets() {
      if (restore)
        for (compute::Backend* b : backends) b->device().setMemoryBudget(0);
    }
  } restore{backends, cuda && budgetMb.has_value()};
  // The CLI's rule for seams (compute/blocked/seam_policy.h), with its bound on the trial's cost;
  // halo or block given ask for those blocks.
  if (halo == compute::Shape{-1, -1, -1} && block == compute::Shape{0, 0, 0}) {
    const double run =
        compute::planRun(r, backends.front()->name()).secondsPerIteration * p.iterations;
    const compute::SeamChoice choice =
        compute::chooseForSeams(*backends.front(), r, psf, seams, std::max(2.0, run / 20), job);
    if (!choice.summary.empty()) std::fprintf(stderr, "stacklens: %s\n", choice.summary.c_str());
    r = choice.request;
  }
  Image out = Image::hostUninitialized(volume.shape());
  out.spacing = volume.spacing;
  compute::planAndDeconvolve(
      backends, r, [&](const compute::BlockPlan&) { return compute::boxReader(volume); },
      compute::boxWriter(out), psf, job,
      [](const std::string& note) { std::fprintf(stderr, "stacklens: %s\n", note.c_str()); });
  return out;
}

// devices: None, "all", "N", "I,J", an int N or a list of indices.
std::vector<int> deviceList(const py::handle& devices) {
  const int visible = compute::cudaDeviceCount();
  if (py::isinstance<py::str>(devices))
    return compute::parseDeviceList(devices.cast<std::string>(), visible);
  if (py::isinstance<py::int_>(devices))
    return compute::parseDeviceList(std::to_string(devices.cast<int>()), visible);
  std::string text;
  for (int d : devices.cast<std::vector<int>>()) text += std::to_string(d) + ",";
  return compute::parseDeviceList(text, visible);
}

// A 3D host volume deconvolved on several GPUs at once, with the kept backends of those devices
// (taken in device order, so that two such calls cannot wait on each other).
Image deconvolveOnDevices(const std::vector<int>& devices, const Image& volume, const Image& psf,
                          const compute::DeconvolveParams& p, std::optional<int64_t> budgetMb,
                          std::optional<int64_t> ramBudgetMb, compute::Shape halo,
                          compute::Shape block, compute::SeamRule seams, const compute::Job& job) {
  std::vector<int> order = devices;
  std::sort(order.begin(), order.end());
  // Each use binds its device and gives back the one before it; this gives back the caller's.
  const CurrentDeviceKept callersDevice(true);
  std::vector<BackendUse> uses;
  for (int d : order) uses.push_back(useBackend("cuda:" + std::to_string(d)));
  std::vector<compute::Backend*> backends;
  for (int d : devices)
    backends.push_back(
        &uses[size_t(std::find(order.begin(), order.end(), d) - order.begin())].backend);
  return deconvolve3d(backends, volume, psf, p, budgetMb, ramBudgetMb, halo, block, seams, job);
}

// deconvolve: the module's main entry point, checked argument by argument as the CLI's
// `deconvolve` is, then run on several GPUs, planned in blocks, or whole.
void addDeconvolve(py::module_& m) {
  m.def(
      "deconvolve",
      [](const py::handle& image, const py::handle& psf, const py::handle& psfSigma, int iterations,
         const std::string& mode, const std::string& boundary, double tv, bool accelerate,
         const std::string& backend, std::optional<int64_t> budgetMb,
         std::optional<int64_t> ramBudgetMb, const py::handle& halo, const py::handle& block,
         const py::handle& devices, const std::string& seams) {
        const std::optional<compute::SeamRule> seamRule = compute::seamRuleNamed(seams);
        if (!seamRule)
          throw compute::InvalidArgument("seams: expected 'exact' or 'fast', got '" + seams + "'");
        compute::DeconvolveParams p;
        p.iterations = iterations;
        if (mode != "2d" && mode != "3d")
          throw compute::InvalidArgument("mode: expected '2d' or '3d', got '" + mode + "'");
        p.threeD = mode == "3d";
        const bool autoBoundary = boundary == compute::kAutoBoundaryWord;
        if (!autoBoundary) p.boundary = boundaryFrom(boundary);
        if (tv < 0) throw compute::InvalidArgument("tv: expected a weight >= 0");
        p.tvLambda = tv;
        p.accelerate = accelerate;
        compute::validate(p);
        if (!p.threeD && (!halo.is_none() || !block.is_none() || budgetMb || ramBudgetMb))
          throw compute::InvalidArgument("halo, block and the budgets need mode='3d'");
        const Image in = imageFrom(image, "image");
        const Image kernel = psfFrom(psf, psfSigma, p.threeD);
        if (autoBoundary) p.boundary = compute::autoBoundary(kernel, p).boundary;
        const compute::Shape h = shapeFrom(halo, -1, "halo"),
                             blockShape = shapeFrom(block, 0, "block");
        if (!devices.is_none()) {
          if (!p.threeD || !in.onHost() || backend == "cpu")
            throw compute::InvalidArgument(
                "devices: for mode='3d' on NumPy arrays with the CUDA backend");
          const std::vector<int> list = deviceList(devices);
          Image out;
          const InterruptibleCall call;
          try {
            py::gil_scoped_release release;
            out = deconvolveOnDevices(list, in, kernel, p, budgetMb, ramBudgetMb, h, blockShape,
                                      *seamRule, call.job());
          } catch (const compute::Cancelled&) {
            call.raiseWhatPythonRaises();
            throw;
          }
          return arrayFrom(out, false);
        }
        // A volume on a GPU (CuPy) is deconvolved there whole; on the host, 3D runs are planned
        // in blocks.
        const Image out = run(backend, in, [&](compute::Backend& b, const compute::Job& job) {
          if (p.threeD && in.onHost())
            return deconvolve3d({&b}, in, kernel, p, budgetMb, ramBudgetMb, h, blockShape,
                                *seamRule, job);
          return b.richardsonLucy(in, kernel, p, job);
        });
        return arrayFrom(out, isTwoD(image));
      },
      "image"_a, "psf"_a = py::none(), py::kw_only(), "psf_sigma"_a = py::none(),
      "iterations"_a = 20, "mode"_a = "2d", "boundary"_a = "auto", "tv"_a = 0.0,
      "accelerate"_a = false, "backend"_a = "auto", "budget_mb"_a = py::none(),
      "ram_budget_mb"_a = py::none(), "halo"_a = py::none(), "block"_a = py::none(),
      "devices"_a = py::none(), "seams"_a = "exact",
      R"(Richardson-Lucy deconvolution, as `stacklens-cli deconvolve`.

psf: an array (2D, or 3D for mode='3d'; 2D mode uses a 3D PSF's centre slice), or psf_sigma:
a Gaussian of S (or (Sz, Sy, Sx)) pixels. mode: '2d' (each slice) or '3d'. boundary:
'reflect' (half-sample symmetric padding by half the PSF), 'reflect-exact' (mirrored at every
convolution, no padding; needs a mirror-symmetric PSF and tv=0), 'zero', 'periodic', or 'auto'
(the default: 'reflect-exact' where it applies, else 'reflect'; auto_boundary says which).
tv: total variation weight (0: off). accelerate: Biggs-Andrews extrapolation.
3D volumes larger than the memory budget (budget_mb on the GPU, default 80 % of the free
memory; ram_budget_mb on the CPU, default half the RAM) are deconvolved in overlapping blocks:
halo (default half the PSF) and block (the largest interior, default planned) as N or
(Z, Y, X). On the CPU, when half of ram_budget_mb holds the whole volume's arrays (12 bytes a
voxel) and no halo is given, the blocks exchange halos every iteration and give the unblocked
result; otherwise seams may differ from it slightly. seams: 'exact' (the default) first measures
on a small trial what overlapping blocks would leave near their seams (printed on stderr) and,
where it exceeds 1e-4 relative L2 and the budget holds the volume as one block, deconvolves it as
one block instead; 'fast' keeps the fastest blocks (as `stacklens-cli deconvolve --seams`; a halo
or block given keeps those blocks). devices ('all', N, 'I,J' or a list of
indices; mode='3d', CUDA): the blocks are
shared among those GPUs, as `stacklens-cli deconvolve --devices`. Returns float32 where the
input was (a CuPy array on its GPU, deconvolved there whole).)");
}

// _whole_stack_plan: the block plan a 3D deconvolve would start from, without running it, so
// that tests and users can check a budget.
void addWholeStackPlan(py::module_& m) {
  m.def(
      "_whole_stack_plan",
      [](const std::vector<int64_t>& shape, const py::handle& psf, const py::handle& psfSigma,
         int iterations, const std::string& boundary, const std::string& backend,
         std::optional<int64_t> budgetMb, std::optional<int64_t> ramBudgetMb,
         const py::handle& halo, const py::handle& block) {
        if (shape.size() != 3) throw compute::InvalidArgument("shape: expected (Z, Y, X)");
        const Image kernel = psfFrom(psf, psfSigma, true);
        const compute::DeconvolveParams p = threeDParams(iterations, 0.0, false, boundary, kernel);
        const compute::Shape h = shapeFrom(halo, -1, "halo"), most = shapeFrom(block, 0, "block");
        compute::PlannedRunRequest r;
        compute::BlockPlan plan;
        {
          py::gil_scoped_release release;
          BackendUse use = useBackend(backend);
          // A budget given is the plan's only: the backend's default is back when it returns.
          struct RestoreBudget {
            compute::Backend& backend;
            bool restore;
            ~RestoreBudget() {
              if (restore) backend.device().setMemoryBudget(0);
            }
          } restore{use.backend, budgetMb.has_value()};
          r = wholeStackRequest({&use.backend}, {shape[0], shape[1], shape[2]}, kernel.shape(), p,
                                budgetMb, ramBudgetMb, h, most);
          plan = compute::planRun(r, use.backend.name());
        }
        py::dict out;
        out["describe"] = plan.describe(p.iterations);
        out["slab_slices"] = plan.slabSlices;
        out["frame_budget"] = r.frameBudget;
        out["slab_budget"] = r.slabBudget;
        out["cpu_frame_budget"] = r.cpuFrameBudget;
        return out;
      },
      "shape"_a, "psf"_a = py::none(), py::kw_only(), "psf_sigma"_a = py::none(),
      "iterations"_a = 20, "boundary"_a = "auto", "backend"_a = "auto", "budget_mb"_a = py::none(),
      "ram_budget_mb"_a = py::none(), "halo"_a = py::none(), "block"_a = py::none(),
      R"(The plan deconvolve(mode='3d') would start from for a volume of this shape on one backend
(before the seams' rule, as `stacklens-cli deconvolve --seams fast --dry-run` prints it): a dict
of describe (the plan's text), slab_slices, and the budgets it was made with in bytes
(frame_budget, slab_budget, cpu_frame_budget). For tests and for checking a budget.)");
}

// auto_boundary, gaussian_psf, symmetric_psf: the PSF and boundary choices deconvolve makes,
// exposed so that a caller can see or prepare them beforehand.
void addPsfPreparation(py::module_& m) {
  m.def(
      "auto_boundary",
      [](const py::handle& psf, const py::handle& psfSigma, const std::string& mode, double tv) {
        if (mode != "2d" && mode != "3d")
          throw compute::InvalidArgument("mode: expected '2d' or '3d', got '" + mode + "'");
        compute::DeconvolveParams p;
        p.threeD = mode == "3d";
        p.tvLambda = tv;
        const compute::BoundaryChoice c =
            compute::autoBoundary(psfFrom(psf, psfSigma, p.threeD), p);
        return py::make_tuple(compute::boundaryName(c.boundary), c.reason);
      },
      "psf"_a = py::none(), py::kw_only(), "psf_sigma"_a = py::none(), "mode"_a = "3d",
      "tv"_a = 0.0,
      R"(The boundary deconvolve(boundary='auto') takes for this PSF (or psf_sigma), mode and tv,
and why: ('reflect-exact', 'the PSF is mirror-symmetric') or ('reflect', reason).)");

  m.def(
      "gaussian_psf",
      [](const py::handle& sigma, const py::handle& size) {
        std::vector<double> s = py::isinstance<py::float_>(sigma) || py::isinstance<py::int_>(sigma)
                                    ? std::vector<double>{sigma.cast<double>()}
                                    : sigma.cast<std::vector<double>>();
        if (s.size() == 1) s = {0.0, s[0], s[0]};
        if (s.size() == 2) s = {0.0, s[0], s[1]};
        if (s.size() != 3)
          throw compute::InvalidArgument("sigma: expected S, (Sy, Sx) or (Sz, Sy, Sx)");
        const compute::Shape n =
            size.is_none() ? compute::Shape{0, 0, 0} : shapeFrom(size, 0, "size");
        const Image psf = compute::gaussianPsf(s[0], s[1], s[2], n);
        return arrayFrom(psf, s[0] == 0.0);
      },
      "sigma"_a, "size"_a = py::none(),
      R"(A Gaussian PSF normalised to sum 1, centred at index size // 2: 2D for S or (Sy, Sx),
3D for (Sz, Sy, Sx); odd size 2 * ceil(4 sigma) + 1 per axis unless size is given.)");

  m.def(
      "symmetric_psf",
      [](const py::handle& psf, std::optional<double> limit) {
        const Image in = hostImageFrom(psf, "psf");
        const compute::MirrorSymmetricPart part = compute::symmetrizedPsf(
            in.data(), in.shape(), limit.value_or(std::numeric_limits<double>::infinity()));
        return py::make_tuple(arrayFrom(part.psf, isTwoD(psf)), part.differs);
      },
      "psf"_a, py::kw_only(), "limit"_a = compute::kSymmetrizeLimit,
      R"(The PSF's mirror-symmetric part, which boundary='reflect-exact' needs, and how far the PSF
is from it: (part, differs). The part is the mean of the PSF's mirror images along each axis
after dropping the unpaired first sample of each even side (so its sides are odd); differs is
what that changes, in absolute value, as a fraction of the sum of the PSF's absolute values.
ValueError when differs is above limit (default 0.1, as stacklens-cli deconvolve
--symmetrize-psf: a PSF that far from symmetric is off-centre or aberrated, and its symmetric
part would misplace a tenth of its flux); limit=None takes any PSF.)");
}

// seam_estimate and _next_fast_frame_length: for callers that deconvolve in chunks of their own
// (stacklens.dask), what the seams will cost and the frame lengths the block planner takes.
void addChunkedDeconvolution(py::module_& m) {
  m.def(
      "seam_estimate",
      [](const std::vector<int64_t>& shape, const py::handle& chunks, const py::handle& psf,
         const py::handle& psfSigma, int iterations, const std::string& boundary,
         const py::handle& halo, double tv, bool accelerate, const std::string& backend,
         double maxSeconds) {
        const Image kernel = psfFrom(psf, psfSigma, true);
        const compute::DeconvolveParams p =
            threeDParams(iterations, tv, accelerate, boundary, kernel);
        if (shape.size() != 3) throw compute::InvalidArgument("shape: expected (Z, Y, X)");
        const compute::Shape volume{shape[0], shape[1], shape[2]};
        compute::BlockPlan plan = compute::planBlocks(
            volume, kernel.shape(), p, compute::frameCosts("cpu", p), size_t(1) << 50,
            shapeFrom(halo, -1, "halo"), shapeFrom(chunks, 0, "chunks"));
        compute::SeamEstimate e;
        const InterruptibleCall call;
        try {
          py::gil_scoped_release release;
          BackendUse use = useBackend(backend);
          e = compute::estimateSeamError(use.backend, plan, kernel, p, maxSeconds, call.job());
        } catch (const compute::Cancelled&) {
          call.raiseWhatPythonRaises();
          throw;
        }
        py::dict out;
        out["estimated"] = e.estimated;
        out["relative_l2"] = e.relativeL2;
        out["max_relative"] = e.maxRelative;
        out["description"] = e.describe();
        out["provenance"] = e.provenance();
        return out;
      },
      "shape"_a, "chunks"_a, "psf"_a = py::none(), py::kw_only(), "psf_sigma"_a = py::none(),
      "iterations"_a = 20, "boundary"_a = "auto", "halo"_a = py::none(), "tv"_a = 0.0,
      "accelerate"_a = false, "backend"_a = "auto", "max_seconds"_a = 30.0,
      R"(The seam error that 3D deconvolution in overlapping chunks (interiors of chunks (Z, Y, X),
halos of halo, default half the PSF), such as stacklens.dask.deconvolve's, is expected to leave
against the unblocked result, measured on a small synthetic trial cut the same way with this PSF,
boundary and iterations (as `stacklens-cli deconvolve` prints for overlapping blocks). Returns a
dict: estimated (False, with the reason in description, for one chunk or when the trial would
take more than max_seconds), relative_l2 and max_relative within a halo of the seams,
description, and provenance (for HISTORY).)");

  // For stacklens.dask, which widens chunks' halos to the lengths the block planner takes.
  m.def("_next_fast_frame_length", &compute::nextFastFrameLength, "n"_a);
}

}  // namespace

void addDeconvolution(py::module_& m) {
  addDeconvolve(m);
  addWholeStackPlan(m);
  addPsfPreparation(m);
  addChunkedDeconvolution(m);
}

}  // namespace stacklens::python
