// stacklens-cli stats: summary and sigma-clipped statistics of a stack (or of each slice).
#include <cmath>
#include <iostream>
#include <sstream>

#include "app/cli/command.h"
#include "app/cli/interrupt.h"
#include "app/cli/parameter_options.h"
#include "app/cli/processing.h"

namespace stacklens::cli {
namespace {

std::string number(double v) {
  if (!std::isfinite(v)) return "null";  // JSON has no NaN
  std::ostringstream out;
  out.precision(9);
  out << v;
  return out.str();
}

// A JSON string; control characters (never in sane paths) are dropped rather than escaped.
std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) out += c;
  }
  return out + "\"";
}

std::string statsJson(const compute::ClipStats& s) {
  std::ostringstream out;
  out << "\"n\": " << s.all.n << ", \"mean\": " << number(s.all.mean)
      << ", \"median\": " << number(s.all.median) << ", \"std\": " << number(s.all.std)
      << ", \"min\": " << number(s.all.min) << ", \"max\": " << number(s.all.max)
      << ", \"clipped\": {\"n\": " << s.clipped.n << ", \"mean\": " << number(s.clipped.mean)
      << ", \"median\": " << number(s.clipped.median) << ", \"std\": " << number(s.clipped.std)
      << ", \"iterations\": " << s.iterations << "}";
  return out.str();
}

int runStats(const Args& args) {
  compute::ClipParams p;
  const double kappa = args.getDouble("kappa", 3.0);
  p.kappaLower = args.getDouble("kappa-lower", kappa);
  p.kappaUpper = args.getDouble("kappa-upper", kappa);
  p.maxIterations = args.getInt32("max-iter", 10);
  checkParameters([&] { compute::validate(p); },
                  {{"kappaLower", args.has("kappa-lower") ? "kappa-lower" : "kappa"},
                   {"kappaUpper", args.has("kappa-upper") ? "kappa-upper" : "kappa"}});
  StageTimer timer(args.has("timings"));
  timer.start("read");
  InputStack input = readInput(args);
  timer.stop();
  auto backend = chooseBackend(args);
  timer.start("compute");
  compute::Image image = backend->upload(input.image);
  compute::ClipStats s = backend->sigmaClip(image, p, interruptible());
  backend->synchronize();
  timer.stop();
  std::cout << "{\"path\": " << quoted(input.path) << ", ";
  if (args.has("slice")) std::cout << "\"slice\": " << args.getInt("slice", 0) << ", ";
  std::cout << statsJson(s) << "}\n";
  timer.print(backend->name());
  return kOk;
}

std::vector<OptionSpec> options() {
  auto o = processingOptions();
  o.push_back({"kappa", "K", "clipping bound in standard deviations, both sides (default 3)"});
  o.push_back({"kappa-lower", "K", "lower bound only (default --kappa)"});
  o.push_back({"kappa-upper", "K", "upper bound only (default --kappa)"});
  o.push_back({"max-iter", "N",
               "at most N clipping iterations; 0 or less: to convergence "
               "(default 10)"});
  return o;
}

const CommandRegistration reg{
    {"stats", "IN",
     "print statistics and astropy-style sigma-clipped statistics (median centre, population "
     "std) as JSON, over the whole stack or one --slice",
     options(), 1, 1, runStats}};

}  // namespace
}  // namespace stacklens::cli
