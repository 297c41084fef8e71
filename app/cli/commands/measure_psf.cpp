// stacklens-cli measure-psf: the PSF measured from stars in an image or beads in a stack
// (compute/psf/measured_psf.h), at given positions or at sources picked from a segmentation;
// written normalised to sum 1 with the data's spacing and a HISTORY line, the FWHM and each
// star's fate reported as one JSON line on stdout (the rejected ones also on stderr).
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "app/cli/command.h"
#include "app/cli/interrupt.h"
#include "app/cli/processing.h"
#include "compute/psf/measured_psf.h"

namespace stacklens::cli {
namespace {

using compute::psf::PsfStar;

std::vector<PsfStar> positions(const Args& args, bool threeD) {
  std::vector<PsfStar> stars;
  for (const std::string& text : args.getAll("at")) {
    std::vector<double> v;
    std::stringstream ss(text);
    std::string part;
    while (std::getline(ss, part, ',')) v.push_back(parseNumber(part, "--at"));
    if (v.size() < 2 || v.size() > 3 || (threeD && v.size() != 3))
      throw UsageError("--at: expected X,Y" + std::string(threeD ? ",Z (3D)" : "[,Z]") + ", got '" +
                       text + "'");
    stars.push_back({v[0], v[1], v.size() == 3 ? v[2] : 0.0});
  }
  return stars;
}

std::string jsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) out += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
  return out + "\"";
}

compute::psf::MeasuredPsfParams measurementParams(const Args& args) {
  compute::psf::MeasuredPsfParams p;
  p.size = int(args.getInt("size", 0));
  p.sizeZ = int(args.getInt("size-z", 0));
  p.clipSigma = args.getDouble("kappa", p.clipSigma);
  p.recentreIterations = int(args.getInt("iterations", p.recentreIterations));
  p.saturation = args.getDouble("saturation", p.saturation);
  p.searchRadius = args.getDouble("search", p.searchRadius);
  return p;
}

// --stars: how many stars to pick from a segmentation (0: none).
long long starsToPick(const Args& args) {
  const long long pick = args.getInt("stars", 0);
  if (args.has("stars") && pick < 1) throw UsageError("--stars: expected a count ≥ 1");
  return pick;
}

// --mode as given ("" when left to the input's shape), checked before the input is read.
std::string requestedMode(const Args& args) {
  const std::string mode = args.get("mode", "");
  if (!mode.empty() && mode != "2d" && mode != "3d") throw UsageError("--mode: expected 2d or 3d");
  if (mode == "3d" && args.has("slice"))
    throw UsageError("--slice takes one slice: a 3D measurement needs the whole stack");
  return mode;
}

bool measuresInThreeD(const std::string& mode, const InputStack& input) {
  const compute::Shape shape = input.image.shape();
  const bool threeD = mode.empty() ? shape.z > 1 : mode == "3d";
  if (threeD && shape.z < 2) throw UsageError("--mode 3d: " + input.path + " is one image");
  if (!threeD && shape.z > 1)
    throw UsageError("--mode 2d on a stack of " + std::to_string(shape.z) +
                     " slices: choose one with --slice Z");
  return threeD;
}

// Adds up to `pick` isolated, unsaturated sources of a segmentation of the image to `stars`.
void addPickedStars(const Args& args, const compute::Image& image, int pick, double saturation,
                    std::vector<PsfStar>& stars) {
  compute::SegmentParams sp;
  sp.nSigma = args.getDouble("nsigma", 5.0);
  auto backend = chooseBackend(args);
  const compute::Segmentation seg = backend->segment(backend->upload(image), sp, interruptible());
  const auto picked = compute::psf::pickPsfStars(seg.sources, image.shape(), pick, saturation);
  std::fprintf(stderr, "stacklens-cli: %zu of %zu sources picked as PSF stars\n", picked.size(),
               seg.sources.size());
  stars.insert(stars.end(), picked.begin(), picked.end());
  if (stars.empty())
    throw compute::InvalidArgument("no isolated, unsaturated source away from the edges (of " +
                                   std::to_string(seg.sources.size()) + " found)");
}

// Writes the PSF with its spacing and a HISTORY line of how it was measured.
void writePsf(const Args& args, const std::string& outPath, const std::string& inputPath,
              const compute::psf::MeasuredPsfParams& p, const compute::psf::MeasuredPsf& result,
              size_t starCount) {
  char history[256];
  std::snprintf(history, sizeof history,
                "stacklens measure-psf %s: %d of %zu stars, FWHM %.3f x %.3f%s px",
                p.threeD ? "3d" : "2d", result.used, starCount, result.fwhmX, result.fwhmY,
                p.threeD ? (" x " + std::to_string(result.fwhmZ)).c_str() : "");
  io::WriteOptions options;
  options.history.push_back(history);
  options.sourcePath = inputPath;
  const compute::Spacing& s = result.psf.spacing;
  if (s.known) {
    options.spacing = {s.z, s.y, s.x};
    options.units = {s.unit, s.unit, s.unit};
    options.spacingKnown = true;
  }
  applyOutputOptions(args, outPath, options);
  const compute::Shape ps = result.psf.shape();
  io::writeStack(outPath, result.psf.data(), ps.z, ps.y, ps.x, options);
}

void reportRejectedStars(const compute::psf::MeasuredPsf& result, const std::vector<PsfStar>& stars,
                         bool threeD) {
  for (size_t i = 0; i < result.stars.size(); ++i) {
    const auto& r = result.stars[i];
    if (!r.used)
      std::fprintf(stderr, "stacklens-cli: star %zu at (%g, %g%s): not used: %s\n", i, stars[i].x,
                   stars[i].y, threeD ? (", " + std::to_string(stars[i].z)).c_str() : "",
                   r.reason.c_str());
  }
}

// The FWHM, the PSF's shape and each star's fate, as one JSON line.
std::string resultJson(const compute::psf::MeasuredPsf& result) {
  const compute::Shape ps = result.psf.shape();
  std::ostringstream json;
  json << "{\"used\": " << result.used << ", \"fwhm_x\": " << result.fwhmX
       << ", \"fwhm_y\": " << result.fwhmY << ", \"fwhm_z\": " << result.fwhmZ << ", \"shape\": ["
       << ps.z << ", " << ps.y << ", " << ps.x << "], \"stars\": [";
  for (size_t i = 0; i < result.stars.size(); ++i) {
    const auto& r = result.stars[i];
    json << (i ? ", " : "") << "{\"x\": " << r.refined.x << ", \"y\": " << r.refined.y
         << ", \"z\": " << r.refined.z << ", \"used\": " << (r.used ? "true" : "false")
         << ", \"reason\": " << jsonString(r.reason) << "}";
  }
  json << "]}";
  return json.str();
}

int runMeasurePsf(const Args& args) {
  const std::string outPath = args.positional(1);
  if (io::outputFormat(outPath) == io::OutputFormat::Unknown)
    throw UsageError("OUT: expected a .fits, .tif or .zarr name, got '" + outPath + "'");
  if (!args.has("at") && !args.has("stars"))
    throw UsageError("give the stars with --at X,Y[,Z] or let --stars N pick them");
  compute::psf::MeasuredPsfParams p = measurementParams(args);
  const long long pick = starsToPick(args);
  const std::string mode = requestedMode(args);

  InputStack input = readInput(args);
  p.threeD = measuresInThreeD(mode, input);
  std::vector<PsfStar> stars = positions(args, p.threeD);
  if (pick > 0) addPickedStars(args, input.image, int(pick), p.saturation, stars);

  const compute::Job job(installInterruptHandler());
  const compute::psf::MeasuredPsf result = compute::psf::measurePsf(input.image, stars, p, job);
  writePsf(args, outPath, input.path, p, result, stars.size());

  // Each rejected star on stderr too, so that a person running it sees why.
  reportRejectedStars(result, stars, p.threeD);
  std::cout << resultJson(result) << "\n";
  const compute::Shape ps = result.psf.shape();
  std::fprintf(stderr, "%lld x %lld x %lld PSF from %d of %zu stars written to %s\n",
               static_cast<long long>(ps.z), static_cast<long long>(ps.y),
               static_cast<long long>(ps.x), result.used, stars.size(), outPath.c_str());
  return kOk;
}

std::vector<OptionSpec> options() {
  std::vector<OptionSpec> o{
      {"at", "X,Y[,Z]", "a star (bead) near this 0-based pixel position; repeatable", true},
      {"stars", "N", "pick up to N isolated stars (beads) from a segmentation of IN"},
      {"nsigma", "N", "--stars: detection threshold, clipped median + N · σ (default 5)"},
      {"mode", "2d|3d", "stars in an image or beads in a stack (default: 3d for a stack)"},
      {"size", "N", "odd PSF side in pixels (default about 4.5 FWHM, at least 9)"},
      {"size-z", "N", "3d: odd PSF depth in slices (default likewise from the axial FWHM)"},
      {"kappa", "K", "clipping bound of each cut-out's background ring (default 3)"},
      {"iterations", "N", "passes of centring and combining (default 3)"},
      {"saturation", "V", "reject stars with a pixel at or above V (default none)"},
      {"search", "R", "look for each star's peak within R pixels of --at (default 3)"}};
  for (const OptionSpec& shared : processingOptions())
    if (shared.name != "timings") o.push_back(shared);
  for (const OptionSpec& shared : outputOptions()) o.push_back(shared);
  return o;
}

const CommandRegistration reg{
    {"measure-psf", "IN OUT",
     "the PSF measured from stars (2D) or beads (3D): cut-outs background-subtracted, centred "
     "to sub-pixel accuracy, median-combined, sum 1; reports FWHM and the stars used",
     options(), 2, 2, runMeasurePsf}};

}  // namespace
}  // namespace stacklens::cli
