// stacklens-cli lab: the speedup lab headless — sweep ops over sizes on the CPU (1 and all
// threads) and the GPU (kernel-only and with transfers), write CSV and an SVG figure.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "app/cli/command.h"
#include "app/cli/interrupt.h"
#include "app/cli/svg_png.h"
#include "compute/lab/break_even.h"
#include "compute/lab/lab_ops.h"
#include "compute/lab/plot_data.h"
#include "compute/lab/svg_plot.h"
#include "compute/lab/sweep_csv.h"
#include "compute/lab/sweep_runner.h"
#include "compute/lab/sweep_text.h"
#include "compute/params.h"
#include "io/whole_file.h"

namespace stacklens::cli {
namespace {

namespace lab = compute::lab;

bool endsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The figure's format from its name, checked before the sweep runs rather than after it.
bool plotIsPng(const Args& args) {
  const auto plot = args.get("plot");
  if (!plot) return false;
  if (endsWith(*plot, ".svg")) return false;
  if (!endsWith(*plot, ".png"))
    throw compute::InvalidArgument("--plot: " + *plot +
                                   ": the figure's name must end in .svg or .png");
  if (!canWritePng()) pngFromSvg({}, 1);  // throws the reason
  return true;
}

lab::SweepSpec specFrom(const Args& args) try {
  lab::SweepSpec spec = lab::defaultSweepSpec();
  if (auto ops = args.get("ops")) spec.ops = lab::parseOps(*ops);
  if (auto sizes = args.get("sizes")) spec.sizes = lab::parseSizes(*sizes);
  if (auto threads = args.get("threads")) spec.threads = lab::parseThreads(*threads);
  spec.repeats = args.getInt32("repeats", spec.repeats);
  spec.gpu = !args.has("cpu-only");
  lab::validate(spec);  // before minutes of work: a typo fails at once
  return spec;
} catch (const compute::InvalidParameter& e) {
  throw UsageError(e.what());  // the library's message names the option's field
}

void printPoint(const lab::Point& p) {
  char line[256];
  std::snprintf(line, sizeof line, "%-10s %-8s %-19s %10s  [%s .. %s]  floor %s", p.op.c_str(),
                lab::sizeLabel(double(p.elements())).c_str(), p.variantName.c_str(),
                std::isfinite(p.medianS) ? lab::secondsLabel(p.medianS).c_str() : "failed",
                lab::secondsLabel(p.minS).c_str(), lab::secondsLabel(p.maxS).c_str(),
                lab::secondsLabel(p.floorS).c_str());
  std::cerr << line;
  if (!std::isnan(p.maxRelDiff)) std::cerr << "  max rel diff " << p.maxRelDiff;
  if (!p.error.empty()) std::cerr << "  error: " << p.error;
  std::cerr << std::endl;
}

void printSummary(const lab::Sweep& s) {
  std::cout << "machine: CPU " << s.machine.cpu << " (" << s.machine.cpuThreads << " threads), GPU "
            << (s.machine.gpu.empty() ? "none" : s.machine.gpu) << "\n";
  if (!s.machine.note.empty()) std::cout << "note: " << s.machine.note << "\n";
  for (const auto& op : lab::opsOf(s.points)) {
    const auto be = lab::breakEven(s.points, op);
    std::cout << op << ": ";
    if (s.machine.gpu.empty())
      std::cout << "no GPU curve, no break-even";
    else if (!be)
      std::cout << "the GPU with transfers is not ahead of the CPU at the largest size";
    else
      std::cout << (be->atSmallest ? "GPU faster from the smallest size, " : "break-even at ")
                << lab::sizeLabel(be->elements);
    std::cout << "\n  " << lab::explainOp(op) << "\n";
  }
}

// The sweep measured now, or the one saved at --from (figures for slides without the GPU machine).
lab::Sweep sweepFor(const Args& args) {
  if (auto from = args.get("from")) {
    for (const char* option : {"ops", "sizes", "threads", "repeats", "cpu-only"})
      if (args.has(option))
        throw UsageError(std::string("--") + option + " describes a new sweep; --from reads one");
    return lab::readCsvFile(*from);
  }
  const lab::SweepSpec spec = specFrom(args);
  lab::SweepCallbacks cb;
  cb.cancel = installInterruptHandler();
  const bool quiet = args.has("quiet");
  cb.point = [quiet](const lab::Point& p) {
    if (!quiet) printPoint(p);
  };
  lab::Sweep sweep = lab::runSweep(spec, cb);
  if (sweep.cancelled) throw compute::Cancelled();  // nothing half-written
  return sweep;
}

int runLab(const Args& args) {
  const bool png = plotIsPng(args);
  const auto start = std::chrono::steady_clock::now();
  const lab::Sweep sweep = sweepFor(args);
  if (auto csv = args.get("csv")) io::writeWholeFile(*csv, lab::csvText(sweep));
  if (auto plot = args.get("plot")) {
    lab::SvgStyle style;
    if (args.has("presentation")) style.fontSize = 24, style.lineWidth = 4;
    const std::string svg = lab::sweepSvg(sweep, style);
    // Twice the SVG's size: sharp on a projector and in slides.
    io::writeWholeFile(*plot, png ? pngFromSvg(svg, 2) : svg);
  }
  printSummary(sweep);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "sweep: " << sweep.points.size() << " points in " << std::lround(seconds) << " s\n";
  return kOk;
}

const CommandRegistration reg{
    {"lab",
     "",
     "the speedup lab: time ops over a range of sizes on the CPU (1 and all threads) and the GPU "
     "(kernel-only and with transfers), with the break-even size and the bandwidth floor; points "
     "print to stderr as they are measured",
     {{"ops", "LIST",
       std::string("comma-separated ops, or all (default ") + lab::kDefaultOps +
           "; known: blur, median, outliers, sigmaclip, segment, rl2d, rl3d, resample, "
           "projection, volume)"},
      {"sizes", "A:B[:F]|LIST",
       std::string("image edges N (N×N; volume ops use a cube of as many voxels): A to B doubling "
                   "(or ×F), or a list (default ") +
           lab::kDefaultSizes + ")"},
      {"threads", "LIST", "CPU thread counts, 'all' for every thread (default 1,all)"},
      {"repeats", "N", "timed runs after one warm-up; the median is plotted (default 3)"},
      {"cpu-only", "", "do not time the GPU even when one is usable"},
      {"from", "SWEEP.csv", "draw and summarise a saved sweep instead of measuring one"},
      {"csv", "OUT.csv", "write every point (times in s, bytes, bandwidth in B/s)"},
      {"plot", "OUT.svg|OUT.png", "write the log–log figure as SVG or PNG (by the name's ending)"},
      {"presentation", "", "large fonts and thick lines in the figure"},
      {"quiet", "", "do not print the points as they arrive"}},
     0,
     0,
     runLab}};

}  // namespace
}  // namespace stacklens::cli
