// stacklens-cli resample: zoom a stack by linear or cubic B-spline interpolation, optionally to
// isotropic voxels.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <regex>

#include "app/cli/command.h"
#include "app/cli/interrupt.h"
#include "app/cli/parameter_options.h"
#include "app/cli/processing.h"
#include "compute/blocked/streamed_resample.h"
#include "compute/device_list.h"
#include "compute/params_text.h"
#include "io/block_writer.h"

namespace stacklens::cli {
namespace {

// Zoom factors (z, y, x) that give every axis the finest spacing. A single slice keeps z.
std::array<double, 3> isotropicZoom(const InputStack& input, int64_t slices) {
  const io::StackInfo& info = input.info;
  if (!info.spacingKnown)
    throw UsageError("--isotropic: " + input.path + " has no voxel spacing in its header");
  const bool useZ = slices > 1;
  double finest = std::min(info.spacing[1], info.spacing[2]);
  if (useZ) finest = std::min(finest, info.spacing[0]);
  for (int a = useZ ? 0 : 1; a < 3; ++a)
    if (!(info.spacing[a] > 0) || !std::isfinite(info.spacing[a]))
      throw UsageError("--isotropic: " + input.path + " has an unusable spacing " +
                       std::to_string(info.spacing[a]));
  return {useZ ? info.spacing[0] / finest : 1.0, info.spacing[1] / finest,
          info.spacing[2] / finest};
}

// Keeps a carried FITS WCS consistent with the new grid: input pixel p = 1 + (p' − 1)·s per
// axis (s = (n − 1)/(n' − 1), SciPy's grid_mode=False), so CRPIX' = 1 + (CRPIX − 1)/s and the
// pixel-to-world steps CDELT and CDi_j (column j) are multiplied by s; PCi_j is left alone.
// A DSS plate solution maps pixel p to plate position XPIXELSZ·(CNPIX1 + p − 0.5), so
// XPIXELSZ' = XPIXELSZ·s and CNPIX1' = (CNPIX1 + 0.5 − s)/s + 0.5 (likewise Y, axis 2) keep it
// exact. SIP polynomials in pixel units are dropped rather than carried wrong (CTYPE loses
// "-SIP"): the linear WCS stays, good to the distortion's size.
void rescaleWcs(std::vector<io::HeaderCard>& header, const std::array<double, 4>& scaleOfAxis) {
  static const std::regex crpix("CRPIX([123])[A-Z]?"), cdelt("CDELT([123])[A-Z]?"),
      cd("CD[123]_([123])[A-Z]?"), cnpix("CNPIX([12])"), pixelsz("([XY])PIXELSZ"),
      sip("(A|B|AP|BP)_(ORDER|[0-9]+_[0-9]+|DMAX)");
  std::vector<io::HeaderCard> kept;
  for (io::HeaderCard card : header) {
    if (std::regex_match(card.key, sip)) continue;
    if (card.key.rfind("CTYPE", 0) == 0) {
      if (auto sip = card.value.find("-SIP"); sip != std::string::npos) card.value.erase(sip, 4);
    }
    // kind 1: CRPIX, 2: a step (CDELT, CDi_j, [XY]PIXELSZ), 3: CNPIX; axis 1 = x, 2 = y, 3 = z.
    std::smatch m;
    int kind = 0, axis = 0;
    if (std::regex_match(card.key, m, crpix))
      kind = 1;
    else if (std::regex_match(card.key, m, cdelt) || std::regex_match(card.key, m, cd))
      kind = 2;
    else if (std::regex_match(card.key, m, cnpix))
      kind = 3;
    if (kind) axis = std::stoi(m[1].str());
    if (std::regex_match(card.key, m, pixelsz)) kind = 2, axis = m[1].str() == "X" ? 1 : 2;
    const double s = kind ? scaleOfAxis[axis] : 1.0;
    char* end = nullptr;
    const double v = kind ? std::strtod(card.value.c_str(), &end) : 0.0;
    if (kind && s != 1.0 && end != card.value.c_str()) {  // a number: rescale it
      const double rescaled = kind == 1   ? 1.0 + (v - 1.0) / s
                              : kind == 2 ? v * s
                                          : (v + 0.5 - s) / s + 0.5;
      char text[32];
      std::snprintf(text, sizeof text, "%.15G", rescaled);
      card.value = text;
    }
    kept.push_back(std::move(card));
  }
  header = std::move(kept);
}

// Output spacing and WCS follow the new grid.
io::WriteOptions resampledOptions(const Args& args, const InputStack& input, compute::Shape in,
                                  compute::Shape out, const compute::ResampleParams& p,
                                  bool isotropic) {
  io::WriteOptions options = writeOptionsFor(
      args, input, "stacklens resample " + compute::describe(p) + (isotropic ? " isotropic" : ""));
  const std::array<int64_t, 3> nIn{in.z, in.y, in.x}, nOut{out.z, out.y, out.x};
  std::array<double, 4> scaleOfFitsAxis{1.0, 1.0, 1.0, 1.0};  // [1] = x, [2] = y, [3] = z
  for (int a = 0; a < 3; ++a) {
    if (nIn[a] == nOut[a]) continue;
    options.spacing[a] *= double(nIn[a]) / double(nOut[a]);
    scaleOfFitsAxis[3 - a] = nOut[a] > 1 ? double(nIn[a] - 1) / double(nOut[a] - 1) : 1.0;
  }
  if (nIn != nOut) rescaleWcs(options.header, scaleOfFitsAxis);
  return options;
}

// A stack whose input and output would not fit the host budget twice over goes through in slabs
// of output slices (compute/blocked/streamed_resample.h).
int streamResample(const Args& args, io::StackReader& reader, const compute::ResampleParams& p,
                   const io::WriteOptions& options, compute::Shape in, compute::Shape out,
                   StageTimer& timer) {
  const auto backends = chooseBackends(args);
  // Every device zooms its own input slices: the budget holds a raw slice for each.
  const int64_t slab =
      compute::resampleSlabSlicesFor(in, p, hostBudget(args), static_cast<int>(backends.size()));
  std::fprintf(
      stderr, "streaming: %lld output slices at a time%s\n", static_cast<long long>(slab),
      backends.size() > 1
          ? (", input slices zoomed on " + std::to_string(backends.size()) + " GPUs").c_str()
          : "");
  io::StackBlockWriter writer(args.positional(1), out.z, out.y, out.x, options);
  timer.start("stream");
  const compute::StreamedResampleReport report =
      compute::streamResample(compute::pointersTo(backends), sliceBoxReader(reader),
                              boxWriter(writer), in, p, slab, interruptible());
  timer.stop();
  for (const std::string& failure : report.failures)
    std::fprintf(stderr, "stacklens: %s; the other GPUs zoomed its slices\n", failure.c_str());
  finishStreamed(args, writer, timer, backends.front()->name(),
                 {report.slabs, report.readSeconds, report.computeSeconds, report.writeSeconds});
  return kOk;
}

void checkZoomOptions(bool isotropic, const std::vector<double>& zoomList) {
  if (isotropic == !zoomList.empty())
    throw UsageError("give exactly one of --zoom F|FY,FX|FZ,FY,FX and --isotropic");
  if (zoomList.size() > 3)
    throw UsageError("--zoom takes one, two (FY,FX) or three (FZ,FY,FX) values, got " +
                     std::to_string(zoomList.size()));
}

// The factors and the order as given, checked before the file is opened.
void checkGivenParameters(const std::vector<double>& zoomList, int order) {
  compute::ResampleParams given{1.0, 1.0, 1.0, order};
  if (zoomList.size() == 1) given.zoomZ = given.zoomY = given.zoomX = zoomList[0];
  if (zoomList.size() == 2) given.zoomY = zoomList[0], given.zoomX = zoomList[1];
  if (zoomList.size() == 3)
    given.zoomZ = zoomList[0], given.zoomY = zoomList[1], given.zoomX = zoomList[2];
  checkParameters([&] { compute::validate(given); },
                  {{"zoomZ", "zoom"}, {"zoomY", "zoom"}, {"zoomX", "zoom"}, {"order", "order"}});
}

// One factor for every axis, or one per axis the image has: FY,FX for an image (or a single
// slice; FZ,FY,FX with FZ = 1 is taken too), FZ,FY,FX for a stack.
void checkZoomCount(const std::vector<double>& zoomList, int64_t slices) {
  const bool oneSlice = slices == 1;
  const bool counted = zoomList.size() == 1 || (zoomList.size() == 2 && oneSlice) ||
                       (zoomList.size() == 3 && (!oneSlice || zoomList[0] == 1.0));
  if (!zoomList.empty() && !counted)
    throw UsageError(
        "--zoom takes one value (all axes) or " +
        std::string(oneSlice ? "two (FY,FX) for an image" : "three (FZ,FY,FX) for a stack") +
        ", got " + std::to_string(zoomList.size()));
}

// The zoom factors (z, y, x): --isotropic's from the header, or --zoom's.
std::array<double, 3> zoomFactors(const std::vector<double>& zoomList, bool isotropic,
                                  const InputStack& probe, int64_t slices) {
  std::array<double, 3> zoom{};
  if (isotropic)
    zoom = isotropicZoom(probe, slices);
  else if (zoomList.size() == 1)
    zoom = {zoomList[0], zoomList[0], zoomList[0]};
  else if (zoomList.size() == 2)
    zoom = {1.0, zoomList[0], zoomList[1]};
  else
    zoom = {zoomList[0], zoomList[1], zoomList[2]};
  // One slice stays one slice when a single factor is given for all axes.
  if (zoomList.size() == 1 && slices == 1) zoom[0] = 1.0;
  return zoom;
}

// A stack that fits the host budget: read whole, zoomed on one device, written whole.
int resampleInMemory(const Args& args, const compute::ResampleParams& p, bool isotropic,
                     StageTimer& timer) {
  auto backend = chooseFirstDevice(args);
  timer.start("read");
  InputStack input = readInput(args);
  timer.stop();
  timer.start("upload");
  compute::Image image = backend->upload(input.image);
  backend->synchronize();
  timer.stop();
  timer.start("resample");
  compute::Image zoomed = backend->resample(image, p, interruptible().onHost());
  backend->synchronize();
  timer.stop();
  timer.start("download");
  compute::Image result = backend->download(zoomed);
  timer.stop();
  const io::WriteOptions options =
      resampledOptions(args, input, input.image.shape(), result.shape(), p, isotropic);
  timer.start("write");
  const compute::Shape s = result.shape();
  io::writeStack(args.positional(1), result.data(), s.z, s.y, s.x, options);
  timer.stop();
  timer.print(backend->name());
  return kOk;
}

int runResample(const Args& args) {
  const bool isotropic = args.has("isotropic");
  const std::vector<double> zoomList = args.getDoubles("zoom");
  checkZoomOptions(isotropic, zoomList);
  const int order = args.getInt32("order", 3);
  checkGivenParameters(zoomList, order);

  StageTimer timer(args.has("timings"));
  InputStack probe;
  std::shared_ptr<io::StackReader> reader = openInput(args, probe);
  const int64_t slices = args.has("slice") ? 1 : probe.info.z;
  checkZoomCount(zoomList, slices);
  const std::array<double, 3> zoom = zoomFactors(zoomList, isotropic, probe, slices);
  const compute::ResampleParams p{zoom[0], zoom[1], zoom[2], order};
  const compute::Shape in{slices, probe.info.y, probe.info.x};
  const compute::Shape out = compute::resampledShape(in, p);

  const double bytes = 2.0 * 4.0 * (double(in.count()) + double(out.count()));
  if (!args.has("slice") && bytes > double(hostBudget(args))) {
    return streamResample(args, *reader, p, resampledOptions(args, probe, in, out, p, isotropic),
                          in, out, timer);
  }
  return resampleInMemory(args, p, isotropic, timer);
}

std::vector<OptionSpec> resampleOptions() {
  std::vector<OptionSpec> options{
      {"zoom", "F|FY,FX|FZ,FY,FX",
       "zoom factors; output length = round(n·F) per axis (one value: every axis, but a single "
       "slice stays one; two for an image, three for a stack)"},
      {"isotropic", "", "zoom every axis to the finest voxel spacing in the header"},
      {"order", "1|3", "1: linear, 3: cubic B-spline (default 3)"},
      ramBudgetOption(),
      devicesOption()};
  for (auto& o : processingOptions()) options.push_back(o);
  for (auto& o : outputOptions()) options.push_back(o);
  return options;
}

const CommandRegistration reg{{"resample", "IN OUT",
                               "zoom by linear or cubic-spline interpolation (SciPy zoom)",
                               resampleOptions(), 2, 2, runResample}};

}  // namespace
}  // namespace stacklens::cli
