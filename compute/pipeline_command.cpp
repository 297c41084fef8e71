// The table of `stacklens-cli process`'s pipeline options: each entry both writes its value from a
// Pipeline and reads it back, so "Copy as command" and the command's parser share one description.
#include "compute/pipeline_command.h"
#include "compute/auto_boundary.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <sstream>

#include "compute/params_text.h"

namespace stacklens::compute {
namespace {

// ---- values ----------------------------------------------------------------------------------

// The shortest text that reads back as the same double.
std::string number(double v) { return describeNumber(v, Digits::Exact); }

std::string joined(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ",") + p;
  return out;
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, ',')) parts.push_back(part);
  if (!text.empty() && text.back() == ',') parts.emplace_back();
  return parts;
}

double parseDouble(const std::string& text) {
  char* end = nullptr;
  const double v = text.empty() ? 0 : std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v))
    throw InvalidArgument("'" + text + "' is not a finite number");
  return v;
}

int64_t parseInteger(const std::string& text, int64_t lo, int64_t hi) {
  const double v = parseDouble(text);
  if (v != std::floor(v) || v < static_cast<double>(lo) || v > static_cast<double>(hi))
    throw InvalidArgument("'" + text + "' is not an integer from " + std::to_string(lo) + " to " +
                          std::to_string(hi));
  return static_cast<int64_t>(v);
}

int parseInt(const std::string& text) {
  return static_cast<int>(
      parseInteger(text, std::numeric_limits<int>::min(), std::numeric_limits<int>::max()));
}

std::vector<std::string> parts(const std::string& value, size_t least, size_t most,
                               const char* syntax) {
  std::vector<std::string> p = split(value);
  if (p.size() < least || p.size() > most)
    throw InvalidArgument(std::string("expected ") + syntax + ", got '" + value + "'");
  return p;
}

// S (z = 0, y = x = S) or SZ,SY,SX: the blur command's --sigma and the PSF's σ.
std::string sigmas(double z, double y, double x) {
  if (z == 0 && y == x) return number(y);
  return joined({number(z), number(y), number(x)});
}

void parseSigmas(const std::string& value, double& z, double& y, double& x, OneSigma one) {
  std::vector<double> values;
  for (const std::string& part : parts(value, 1, 3, "S or SZ,SY,SX"))
    values.push_back(parseDouble(part));
  const Sigmas s = sigmasFromList(values, one);
  z = s.z, y = s.y, x = s.x;
}

// KLOWER,KUPPER,MAXITER; K alone clips both sides, MAXITER defaults to ClipParams's.
std::string clip(const ClipParams& c) {
  return joined({number(c.kappaLower), number(c.kappaUpper), std::to_string(c.maxIterations)});
}

ClipParams parseClip(const std::string& value) {
  const auto p = parts(value, 1, 3, "K or KLOWER,KUPPER[,MAXITER]");
  ClipParams c;
  c.kappaLower = parseDouble(p[0]);
  c.kappaUpper = p.size() > 1 ? parseDouble(p[1]) : c.kappaLower;
  if (p.size() > 2) c.maxIterations = parseInt(p[2]);
  return c;
}

bool sameClip(const ClipParams& a, const ClipParams& b) {
  return a.kappaLower == b.kappaLower && a.kappaUpper == b.kappaUpper &&
         a.maxIterations == b.maxIterations;
}

// THRESHOLD[,CONNECTIVITY,MIN_PIXELS] of --segment and --segment-above.
std::string segmentValue(const SegmentParams& s, double threshold) {
  const SegmentParams defaults;
  if (s.connectivity == defaults.connectivity && s.minPixels == defaults.minPixels)
    return number(threshold);
  return joined({number(threshold), std::to_string(s.connectivity), std::to_string(s.minPixels)});
}

double parseSegmentValue(const std::string& value, SegmentParams& s) {
  const auto p = parts(value, 1, 3, "V[,CONNECTIVITY[,MIN_PIXELS]]");
  if (p.size() > 1) s.connectivity = parseInt(p[1]);
  if (p.size() > 2)
    s.minPixels = parseInteger(p[2], std::numeric_limits<int64_t>::min(),
                               std::numeric_limits<int64_t>::max());
  return parseDouble(p[0]);
}

// ---- the table -------------------------------------------------------------------------------

using Format = std::function<std::optional<std::string>(const Pipeline&, const CommandContext&)>;
using Parse = std::function<void(const std::string&, PipelineOptions&)>;

struct Rule {
  PipelineOptionSpec spec;
  std::optional<Stage> stage;      // the stage the option sets (its errors name the option)
  std::vector<std::string> needs;  // one of these options must be given as well
  Format format;                   // the value for a pipeline; nullopt: left out; flags: ""
  Parse parse;                     // flags get any value
};

// Stands for the PSF file in a command whose PSF the viewer made (notes say so).
const char* const kPsfPlaceholder = "PSF_FILE";

std::optional<std::string> flag(bool set) {
  return set ? std::optional<std::string>("") : std::nullopt;
}

// Outlier removal: a SIZE×SIZE median's stand-ins for pixels too far from it.
void addOutlierRules(std::vector<Rule>& r) {
  r.push_back({{"outliers", "SIZE,THRESHOLD[,MODE]",
                "outlier removal: a pixel farther than THRESHOLD from its SIZE×SIZE median "
                "becomes that median; MODE bright|dark|both (default both)"},
               Stage::Outliers,
               {},
               [](const Pipeline& p, const CommandContext&) -> std::optional<std::string> {
                 if (!p.outliers.enabled) return std::nullopt;
                 const auto& o = p.outliers.params;
                 std::string v = std::to_string(o.size) + "," + number(o.threshold);
                 if (o.mode != OutlierMode::Both) v += std::string(",") + outlierModeName(o.mode);
                 return v;
               },
               [](const std::string& value, PipelineOptions& o) {
                 const auto p = parts(value, 2, 3, "SIZE,THRESHOLD[,MODE]");
                 auto& s = o.pipeline.outliers;
                 s.enabled = true;
                 s.params.size = parseInt(p[0]);
                 s.params.threshold = parseDouble(p[1]);
                 const std::string mode = p.size() > 2 ? p[2] : "both";
                 if (mode == "bright")
                   s.params.mode = OutlierMode::Bright;
                 else if (mode == "dark")
                   s.params.mode = OutlierMode::Dark;
                 else if (mode == "both")
                   s.params.mode = OutlierMode::Both;
                 else
                   throw InvalidArgument("MODE must be bright, dark or both, got '" + mode + "'");
               }});
}

void addMedianRules(std::vector<Rule>& r) {
  r.push_back({{"median", "SIZE", "SIZE×SIZE median filter of each slice (odd SIZE)"},
               Stage::Median,
               {},
               [](const Pipeline& p, const CommandContext&) -> std::optional<std::string> {
                 if (!p.median.enabled) return std::nullopt;
                 return std::to_string(p.median.size);
               },
               [](const std::string& value, PipelineOptions& o) {
                 o.pipeline.median.enabled = true;
                 o.pipeline.median.size = parseInt(value);
               }});
}

// The Gaussian blur: its σ, its kernel's radius and whether it ignores NaN.
void addBlurRules(std::vector<Rule>& r) {
  r.push_back({{"blur", "S|SZ,SY,SX",
                "Gaussian blur in pixels: one σ blurs each slice, three blur across the "
                "neighbouring slices too"},
               Stage::Blur,
               {},
               [](const Pipeline& p, const CommandContext&) -> std::optional<std::string> {
                 if (!p.blur.enabled) return std::nullopt;
                 const auto& b = p.blur.params;
                 return sigmas(b.sigmaZ, b.sigmaY, b.sigmaX);
               },
               [](const std::string& value, PipelineOptions& o) {
                 auto& b = o.pipeline.blur;
                 b.enabled = true;
                 parseSigmas(value, b.params.sigmaZ, b.params.sigmaY, b.params.sigmaX,
                             OneSigma::PerSlice);
               }});
  r.push_back({{"blur-truncate", "T", "blur kernel radius = int(T·σ + 0.5) (default 4)"},
               Stage::Blur,
               {"blur"},
               [](const Pipeline& p, const CommandContext&) -> std::optional<std::string> {
                 if (!p.blur.enabled || p.blur.params.truncate == BlurParams{}.truncate)
                   return std::nullopt;
                 return number(p.blur.params.truncate);
               },
               [](const std::string& value, PipelineOptions& o) {
                 o.pipeline.blur.params.truncate = parseDouble(value);
               }});
  r.push_back(
      {{"blur-nan-aware", "", "the blur ignores NaN pixels (which stay NaN)"},
       Stage::Blur,
       {"blur"},
       [](const Pipeline& p, const CommandContext&) {
         return flag(p.blur.enabled && p.blur.params.nanAware);
       },
       [](const std::string&, PipelineOptions& o) { o.pipeline.blur.params.nanAware = true; }});
}

// The filters run first on each slice: outliers, median, blur, in --help's order.
void addFilterRules(std::vector<Rule>& r) {
  addOutlierRules(r);
  addMedianRules(r);
  addBlurRules(r);
}

// Richardson–Lucy itself: its iterations, 2d or 3d, and the slab that 3d sees.
void addDeconvolutionRunRules(std::vector<Rule>& r,
                              const std::vector<std::string>& needsDeconvolve) {
  r.push_back(
      {{"deconvolve", "ITERATIONS", "Richardson–Lucy deconvolution with --psf or --psf-sigma"},
       Stage::Deconvolution,
       {},
       [](const Pipeline& p, const CommandContext&) -> std::optional<std::string> {
         if (!p.deconvolution.enabled) return std::nullopt;
         return std::to_string(p.deconvolution.params.iterations);
       },
       [](const std::string& value, PipelineOptions& o) {
         o.pipeline.deconvolution.enabled = true;
         o.pipeline.deconvolution.params.iterations = parseInt(value);
       }});
  r.push_back({{"rl-mode", "2d|3d",
                "2d: each slice with the PSF's centre slice (default); 3d: the slab of --slab "
                "slices on each side, keeping its centre"},
               Stage::Deconvolution,
               needsDeconvolve,
               [](const Pipeline& p, const CommandContext&) -> std::optional<std::string> {
                 if (!p.deconvolution.enabled) return std::nullopt;
                 return p.deconvolution.params.threeD ? "3d" : "2d";
               },
               [](const std::string& value, PipelineOptions& o) {
                 if (value != "2d" && value != "3d")
                   throw InvalidArgument("expected 2d or 3d, got '" + value + "'");
                 o.pipeline.deconvolution.params.threeD = value == "3d";
               }});
  r.push_back({{"slab", "N",
                "3d: slices on each side of each slice that the deconvolution sees (default " +
                    std::to_string(Pipeline{}.deconvolution.slabHalfWidth) + ")"},
               Stage::Deconvolution,
               needsDeconvolve,
               [](const Pipeline& p, const CommandContext&) -> std::optional<std::string> {
                 const auto& d = p.deconvolution;
                 if (!d.enabled || !d.params.threeD) return std::nullopt;
                 return std::to_string(d.slabHalfWidth);
               },
               [](const std::string& value, PipelineOptions& o) {
                 o.pipeline.deconvolution.slabHalfWidth = parseInt(value);
               }});
}

// The PSF: a file, or a Gaussian's σ.
void addPsfRules(std::vector<Rule>& r, const std::vector<std::string>& needsDeconvolve) {
  r.push_back(
      {{"psf", "FILE", "the point-spread function (FITS or TIFF, 2D or 3D; scaled to sum to 1)"},
       Stage::Deconvolution,
       needsDeconvolve,
       [](const Pipeline& p, const CommandContext& c) -> std::optional<std::string> {
         const auto& d = p.deconvolution;
         if (!d.enabled || d.psf.empty()) return std::nullopt;
         return c.psfPath.empty() ? kPsfPlaceholder : c.psfPath;
       },
       [](const std::string& value, PipelineOptions& o) {
         if (value.empty()) throw InvalidArgument("expected a file name");
         o.psfPath = value;
       }});
  r.push_back({{"psf-sigma", "S|SZ,SY,SX",
                "a Gaussian PSF instead: one σ, or σz,σy,σx, in pixels (2d uses σy,σx)"},
               Stage::Deconvolution,
               needsDeconvolve,
               [](const Pipeline& p, const CommandContext&) -> std::optional<std::string> {
                 const auto& d = p.deconvolution;
                 if (!d.enabled || !d.psf.empty()) return std::nullopt;
                 if (d.psfSigmaZ == d.psfSigmaY && d.psfSigmaY == d.psfSigmaX)
                   return number(d.psfSigmaY);
                 return joined({number(d.psfSigmaZ), number(d.psfSigmaY), number(d.psfSigmaX)});
               },
               [](const std::string& value, PipelineOptions& o) {
                 auto& d = o.pipeline.deconvolution;
                 parseSigmas(value, d.psfSigmaZ, d.psfSigmaY, d.psfSigmaX, OneSigma::EveryAxis);
               }});
}

// How the deconvolution continues past the edges, regularises, accelerates and guards its ratio.
void addDeconvolutionTuningRules(std::vector<Rule>& r,
                                 const std::vector<std::string>& needsDeconvolve) {
  r.push_back({{"boundary", "auto|reflect|periodic|zero|reflect-exact",
                "how the deconvolved image continues past its edges (default auto: "
                "reflect-exact when the PSF is mirror-symmetric and --tv is 0, else reflect, as "
                "stacklens-cli deconvolve)"},
               Stage::Deconvolution,
               needsDeconvolve,
               [](const Pipeline& p, const CommandContext&) -> std::optional<std::string> {
                 const auto& d = p.deconvolution;
                 if (!d.enabled || d.autoBoundary) return std::nullopt;
                 return boundaryName(d.params.boundary);
               },
               [](const std::string& value, PipelineOptions& o) {
                 auto& d = o.pipeline.deconvolution;
                 d.autoBoundary = value == kAutoBoundaryWord;
                 if (d.autoBoundary) return;
                 const std::optional<Boundary> b = boundaryNamed(value);
                 if (!b)
                   throw InvalidArgument(std::string("expected auto, ") + kBoundaryWords +
                                         ", got '" + value + "'");
                 d.params.boundary = *b;
               }});
  r.push_back({{"tv", "LAMBDA", "total-variation regularisation weight (default 0: off)"},
               Stage::Deconvolution,
               needsDeconvolve,
               [](const Pipeline& p, const CommandContext&) -> std::optional<std::string> {
                 const auto& d = p.deconvolution;
                 if (!d.enabled || d.params.tvLambda == 0) return std::nullopt;
                 return number(d.params.tvLambda);
               },
               [](const std::string& value, PipelineOptions& o) {
                 o.pipeline.deconvolution.params.tvLambda = parseDouble(value);
               }});
  r.push_back({{"accelerate", "", "Biggs–Andrews acceleration of the deconvolution"},
               Stage::Deconvolution,
               needsDeconvolve,
               [](const Pipeline& p, const CommandContext&) {
                 return flag(p.deconvolution.enabled && p.deconvolution.params.accelerate);
               },
               [](const std::string&, PipelineOptions& o) {
                 o.pipeline.deconvolution.params.accelerate = true;
               }});
  r.push_back({{"rl-epsilon", "E",
                "guard of the deconvolution's ratio image / (PSF ⊛ estimate) (default 1e-12)"},
               Stage::Deconvolution,
               needsDeconvolve,
               [](const Pipeline& p, const CommandContext&) -> std::optional<std::string> {
                 const auto& d = p.deconvolution;
                 if (!d.enabled || d.params.epsilon == DeconvolveParams{}.epsilon)
                   return std::nullopt;
                 return number(static_cast<double>(d.params.epsilon));
               },
               [](const std::string& value, PipelineOptions& o) {
                 // Past float's range this is ±inf or 0, which the stage's validation refuses.
                 o.pipeline.deconvolution.params.epsilon = static_cast<float>(parseDouble(value));
               }});
}

// Richardson–Lucy and its PSF, mode and boundary, in --help's order.
void addDeconvolutionRules(std::vector<Rule>& r) {
  const std::vector<std::string> kDeconvolve{"deconvolve"};
  addDeconvolutionRunRules(r, kDeconvolve);
  addPsfRules(r, kDeconvolve);
  addDeconvolutionTuningRules(r, kDeconvolve);
}

void addStatisticsRules(std::vector<Rule>& r) {
  r.push_back({{"stats", "K|KLOWER,KUPPER[,MAXITER]",
                "sigma-clipped statistics of each processed slice (astropy sigma_clip; "
                "MAXITER default 10, ≤ 0: to convergence)"},
               Stage::Statistics,
               {},
               [](const Pipeline& p, const CommandContext&) -> std::optional<std::string> {
                 if (!p.statistics.enabled) return std::nullopt;
                 return clip(p.statistics.params);
               },
               [](const std::string& value, PipelineOptions& o) {
                 o.pipeline.statistics.enabled = true;
                 o.pipeline.statistics.params = parseClip(value);
               }});
}

// Segmentation at a clipped-background level or an absolute one, and its background clipping.
void addSegmentationRules(std::vector<Rule>& r, const std::vector<std::string>& needsSegment) {
  r.push_back({{"segment", "NSIGMA[,CONNECTIVITY[,MIN_PIXELS]]",
                "sources above the clipped median + NSIGMA · clipped std of each slice; "
                "CONNECTIVITY 4|8 (default 8), MIN_PIXELS (default 1)"},
               Stage::Segmentation,
               {},
               [](const Pipeline& p, const CommandContext&) -> std::optional<std::string> {
                 const auto& s = p.segmentation;
                 if (!s.enabled || s.params.absoluteThreshold) return std::nullopt;
                 return segmentValue(s.params, s.params.nSigma);
               },
               [](const std::string& value, PipelineOptions& o) {
                 auto& s = o.pipeline.segmentation;
                 s.enabled = true;
                 s.params.absoluteThreshold.reset();
                 s.params.nSigma = parseSegmentValue(value, s.params);
               }});
  r.push_back({{"segment-above", "VALUE[,CONNECTIVITY[,MIN_PIXELS]]",
                "the same with an absolute threshold: pixels above VALUE"},
               Stage::Segmentation,
               {},
               [](const Pipeline& p, const CommandContext&) -> std::optional<std::string> {
                 const auto& s = p.segmentation;
                 if (!s.enabled || !s.params.absoluteThreshold) return std::nullopt;
                 return segmentValue(s.params, *s.params.absoluteThreshold);
               },
               [](const std::string& value, PipelineOptions& o) {
                 auto& s = o.pipeline.segmentation;
                 s.enabled = true;
                 s.params.absoluteThreshold = parseSegmentValue(value, s.params);
               }});
  r.push_back({{"segment-clip", "K|KLOWER,KUPPER[,MAXITER]",
                "the segmentation's background clipping (default 3,3,10)"},
               Stage::Segmentation,
               needsSegment,
               [](const Pipeline& p, const CommandContext&) -> std::optional<std::string> {
                 const auto& s = p.segmentation;
                 if (!s.enabled || sameClip(s.params.clip, ClipParams{})) return std::nullopt;
                 return clip(s.params.clip);
               },
               [](const std::string& value, PipelineOptions& o) {
                 o.pipeline.segmentation.params.clip = parseClip(value);
               }});
}

// The CSV tables of the sources and the statistics, each written only with its stage.
void addTableRules(std::vector<Rule>& r, const std::vector<std::string>& needsSegment) {
  r.push_back({{"sources", "FILE.csv",
                "the sources of every slice (label,x,y,flux,...,z; default OUT's name with "
                "_sources.csv, as the viewer writes it)"},
               std::nullopt,
               needsSegment,
               [](const Pipeline& p, const CommandContext& c) -> std::optional<std::string> {
                 if (!p.segmentation.enabled || c.sourcesCsv.empty()) return std::nullopt;
                 return c.sourcesCsv;
               },
               [](const std::string& value, PipelineOptions& o) {
                 if (value.empty()) throw InvalidArgument("expected a file name");
                 o.sourcesCsv = value;
               }});
  r.push_back({{"statistics", "FILE.csv",
                "the statistics of every slice (z,n,mean,...; default OUT's name with "
                "_statistics.csv, as the viewer writes it)"},
               std::nullopt,
               {"stats"},
               [](const Pipeline& p, const CommandContext& c) -> std::optional<std::string> {
                 if (!p.statistics.enabled || c.statisticsCsv.empty()) return std::nullopt;
                 return c.statisticsCsv;
               },
               [](const std::string& value, PipelineOptions& o) {
                 if (value.empty()) throw InvalidArgument("expected a file name");
                 o.statisticsCsv = value;
               }});
}

// Statistics and segmentation, and the tables they write, in --help's order.
void addMeasurementRules(std::vector<Rule>& r) {
  const std::vector<std::string> kSegment{"segment", "segment-above"};
  addStatisticsRules(r);
  addSegmentationRules(r, kSegment);
  addTableRules(r, kSegment);
}

// Called from other files' static initialisers (the CLI's command registration): no globals of
// this file with constructors may be used here.
std::vector<Rule> makeRules() {
  std::vector<Rule> r;
  addFilterRules(r);
  addDeconvolutionRules(r);
  addMeasurementRules(r);
  return r;
}

const std::vector<Rule>& rules() {
  static const std::vector<Rule> table = makeRules();
  return table;
}

std::string optionList(const std::vector<std::string>& names, const char* sep) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : sep) + ("--" + n);
  return out;
}

// The option of the table that sets one of stage's parameters (InvalidParameter::parameter()).
std::string optionOf(Stage stage, const std::string& parameter) {
  switch (stage) {
    case Stage::Outliers:
      return "outliers";
    case Stage::Median:
      return "median";
    case Stage::Blur:
      return parameter == "truncate" ? "blur-truncate" : "blur";
    case Stage::Deconvolution:
      return parameter == "iterations" ? "deconvolve"
             : parameter == "tvLambda" ? "tv"
             : parameter == "epsilon"  ? "rl-epsilon"
                                       : "boundary";
    case Stage::Statistics:
      return "stats";
    case Stage::Segmentation:
      return parameter.rfind("clip.", 0) == 0 ? "segment-clip" : "segment";
  }
  return "";
}

// The pipeline with only stage enabled: Pipeline::validate then speaks of that stage alone.
Pipeline onlyStage(Pipeline p, Stage stage) {
  p.outliers.enabled = stage == Stage::Outliers && p.outliers.enabled;
  p.median.enabled = stage == Stage::Median && p.median.enabled;
  p.blur.enabled = stage == Stage::Blur && p.blur.enabled;
  p.deconvolution.enabled = stage == Stage::Deconvolution && p.deconvolution.enabled;
  p.statistics.enabled = stage == Stage::Statistics && p.statistics.enabled;
  p.segmentation.enabled = stage == Stage::Segmentation && p.segmentation.enabled;
  return p;
}

}  // namespace

const std::vector<PipelineOptionSpec>& pipelineOptionSpecs() {
  static const std::vector<PipelineOptionSpec> specs = [] {
    std::vector<PipelineOptionSpec> s;
    for (const Rule& r : rules()) s.push_back(r.spec);
    return s;
  }();
  return specs;
}

PipelineOptions parsePipelineOptions(const OptionLookup& lookup) {
  PipelineOptions options;
  std::map<std::string, bool> given;
  std::map<Stage, std::vector<std::string>> byStage;
  for (const Rule& r : rules()) {
    const std::optional<std::string> value = lookup(r.spec.name);
    if (!value) continue;
    given[r.spec.name] = true;
    if (r.stage) byStage[*r.stage].push_back(r.spec.name);
    try {
      r.parse(*value, options);
    } catch (const InvalidArgument& e) {
      throw InvalidArgument("--" + r.spec.name + ": " + e.what());
    }
  }
  auto has = [&](const std::string& name) { return given.count(name) > 0; };
  for (const Rule& r : rules()) {
    if (!has(r.spec.name) || r.needs.empty()) continue;
    bool found = false;
    for (const auto& n : r.needs) found = found || has(n);
    if (!found) throw InvalidArgument("--" + r.spec.name + " needs " + optionList(r.needs, " or "));
  }
  if (has("segment") && has("segment-above"))
    throw InvalidArgument("--segment, --segment-above: give one of the two");
  if (has("deconvolve") && has("psf") == has("psf-sigma"))
    throw InvalidArgument(
        "--deconvolve needs exactly one of --psf FILE and --psf-sigma S|SZ,SY,SX");
  if (has("slab") && !options.pipeline.deconvolution.params.threeD)
    throw InvalidArgument("--slab needs --rl-mode 3d");
  // The library's rules: a parameter's error names the option that set it; the pipeline's own
  // (slab, PSF) name every option of the stage.
  for (const auto& [stage, names] : byStage) {
    try {
      onlyStage(options.pipeline, stage).validate();
    } catch (const InvalidParameter& e) {
      std::string option = optionOf(stage, e.parameter());
      if (option == "segment" && has("segment-above")) option = "segment-above";
      throw InvalidArgument((has(option) ? "--" + option : optionList(names, ", ")) + ": " +
                            e.what());
    } catch (const InvalidArgument& e) {
      throw InvalidArgument(optionList(names, ", ") + ": " + e.what());
    }
  }
  return options;
}

Image normalisedPsf(const Image& file) {
  if (file.empty()) throw InvalidArgument("the PSF is empty");
  if (!file.onHost()) throw InvalidArgument("the PSF must be a host image");
  Image psf = cloneHost(file);
  const Shape s = psf.shape();
  if (s.z > 512 || s.y > 1024 || s.x > 1024)
    throw InvalidArgument("too large for a PSF (at most 512 × 1024 × 1024)");
  float* data = psf.data();
  double sum = 0;
  for (int64_t i = 0; i < s.count(); ++i) {
    if (!std::isfinite(data[i]) || data[i] < 0)
      throw InvalidArgument("a PSF needs finite, non-negative values");
    sum += data[i];
  }
  if (!(sum > 0)) throw InvalidArgument("the PSF is all zero");
  for (int64_t i = 0; i < s.count(); ++i) data[i] = static_cast<float>(data[i] / sum);
  return psf;
}

std::string shellQuote(const std::string& text) {
  if (text.empty()) return "''";
  bool safe = true;
  for (const char c : text) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       std::string_view("@%+=:,./_-").find(c) != std::string_view::npos;
    safe = safe && plain;
  }
  if (safe) return text;
  std::string out = "'";
  for (const char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

namespace {

std::string commandLine(const std::vector<std::string>& argv) {
  std::string line;
  for (const auto& a : argv) line += (line.empty() ? "" : " ") + shellQuote(a);
  return line;
}

void addInputOptions(std::vector<std::string>& argv, const CommandContext& c) {
  if (c.hdu >= 0) argv.insert(argv.end(), {"--hdu", std::to_string(c.hdu)});
  if (c.plane >= 0) argv.insert(argv.end(), {"--plane", std::to_string(c.plane)});
}

// `stacklens-cli deconvolve --mode 3d`: the whole volume at once instead of slab by slab.
std::string wholeVolumeLine(const Pipeline& p, const CommandContext& c, const std::string& in,
                            const std::string& out) {
  const auto& d = p.deconvolution;
  std::vector<std::string> argv{"stacklens-cli", "deconvolve", in, out};
  addInputOptions(argv, c);
  argv.insert(argv.end(), {"--mode", "3d", "--iterations", std::to_string(d.params.iterations)});
  if (!d.psf.empty())
    argv.insert(argv.end(), {"--psf", c.psfPath.empty() ? kPsfPlaceholder : c.psfPath});
  else
    argv.insert(
        argv.end(),
        {"--psf-sigma", joined({number(d.psfSigmaZ), number(d.psfSigmaY), number(d.psfSigmaX)})});
  // deconvolve's default is auto, as the pipeline's.
  if (!d.autoBoundary) argv.insert(argv.end(), {"--boundary", boundaryName(d.params.boundary)});
  if (d.params.tvLambda != 0) argv.insert(argv.end(), {"--tv", number(d.params.tvLambda)});
  if (d.params.accelerate) argv.push_back("--accelerate");
  if (!c.backend.empty()) argv.insert(argv.end(), {"--backend", c.backend});
  return commandLine(argv);
}

}  // namespace

PipelineCommand pipelineCommand(const Pipeline& pipeline, const CommandContext& context) {
  PipelineCommand command;
  const std::string in = context.input.empty() ? "IN.fits" : context.input;
  const std::string out = context.output.empty() ? "OUT.fits" : context.output;
  command.argv = {"stacklens-cli", "process", in, out};
  addInputOptions(command.argv, context);
  for (const Rule& r : rules()) {
    const std::optional<std::string> value = r.format(pipeline, context);
    if (!value) continue;
    command.argv.push_back("--" + r.spec.name);
    if (!r.spec.valueName.empty()) command.argv.push_back(*value);
  }
  if (!context.backend.empty())
    command.argv.insert(command.argv.end(), {"--backend", context.backend});
  command.line = commandLine(command.argv);

  auto& notes = command.notes;
  if (context.input.empty())
    notes.push_back("the input stack is not known: put it in place of IN.fits");
  if (context.output.empty()) notes.push_back("choose the output file in place of OUT.fits");
  const auto& d = pipeline.deconvolution;
  if (d.enabled && !d.psf.empty() && context.psfPath.empty())
    notes.push_back(std::string("the PSF was made in the viewer: save it and pass --psf FILE in "
                                "place of ") +
                    kPsfPlaceholder);
  if (d.enabled && d.params.threeD) {
    std::string note = "3D Richardson–Lucy runs here on ±" + std::to_string(d.slabHalfWidth) +
                       " slices around each slice, keeping the centre one, as the viewer shows "
                       "it; to deconvolve the whole volume at once instead";
    if (pipeline.outliers.enabled || pipeline.median.enabled || pipeline.blur.enabled ||
        pipeline.statistics.enabled || pipeline.segmentation.enabled)
      note += " (the deconvolution alone, without the other stages)";
    notes.push_back(note + ": " + wholeVolumeLine(pipeline, context, in, out));
  }
  if (!pipeline.outliers.enabled && !pipeline.median.enabled && !pipeline.blur.enabled &&
      !d.enabled)
    notes.push_back(
        "no stage changes the image: OUT is a copy of the input and the tables are the "
        "result");
  if (!context.sourcesCsv.empty() && !pipeline.segmentation.enabled)
    notes.push_back("no segmentation stage: no sources table is written");
  if (!context.statisticsCsv.empty() && !pipeline.statistics.enabled)
    notes.push_back("no statistics stage: no statistics table is written");
  return command;
}

}  // namespace stacklens::compute
