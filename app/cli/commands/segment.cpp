// stacklens-cli segment: threshold, label connected sources, write the labels and a source table.
#include <iostream>

#include "app/cli/command.h"
#include "app/cli/interrupt.h"
#include "app/cli/parameter_options.h"
#include "app/cli/processing.h"
#include "compute/params_text.h"
#include "compute/source_table.h"
#include "io/whole_file.h"

namespace stacklens::cli {
namespace {

int runSegment(const Args& args) {
  compute::SegmentParams p;
  if (args.has("threshold") == args.has("nsigma"))
    throw UsageError("give exactly one of --nsigma N and --threshold V");
  if (args.has("threshold")) p.absoluteThreshold = args.getDouble("threshold", 0);
  p.nSigma = args.getDouble("nsigma", 5.0);
  p.connectivity = args.getInt32("connectivity", 8);
  p.minPixels = args.getInt("min-pixels", 1);
  p.clip.kappaLower = p.clip.kappaUpper = args.getDouble("kappa", 3.0);
  checkParameters([&] { compute::validate(p); }, {{"absoluteThreshold", "threshold"},
                                                  {"nSigma", "nsigma"},
                                                  {"connectivity", "connectivity"},
                                                  {"minPixels", "min-pixels"},
                                                  {"clip.kappaLower", "kappa"},
                                                  {"clip.kappaUpper", "kappa"}});
  const std::string outPath = args.positional(1);

  StageTimer timer(args.has("timings"));
  timer.start("read");
  InputStack input = readInput(args);
  timer.stop();
  auto backend = chooseBackend(args);
  timer.start("compute");
  compute::Segmentation seg = backend->segment(backend->upload(input.image), p, interruptible());
  compute::LabelImage labels = backend->download(seg.labels);
  timer.stop();
  timer.start("write");
  const compute::Shape s = labels.shape();
  std::string history = "stacklens segment " + compute::describe(p);
  // With nsigma the threshold comes from the data: the card says what it came to.
  if (!p.absoluteThreshold)
    history += " threshold=" + compute::describeNumber(seg.threshold, compute::Digits::Readable);
  io::writeLabelStack(outPath, labels.data(), s.z, s.y, s.x, writeOptionsFor(args, input, history));
  if (auto csv = args.get("sources"))
    io::writeWholeFile(*csv, compute::sourcesCsv(seg.sources, s.z > 1), input.path);
  timer.stop();
  std::cout << "{\"sources\": " << seg.sources.size() << ", \"threshold\": " << seg.threshold
            << ", \"background_median\": " << seg.background.clipped.median
            << ", \"background_std\": " << seg.background.clipped.std << "}\n";
  timer.print(backend->name());
  return kOk;
}

std::vector<OptionSpec> options() {
  auto o = processingOptions();
  o.push_back({"nsigma", "N", "threshold = clipped median + N · clipped std"});
  o.push_back({"threshold", "V", "absolute threshold (pixels strictly above it are sources)"});
  o.push_back({"connectivity", "4|8", "pixel neighbourhood (default 8)"});
  o.push_back({"min-pixels", "M", "drop sources smaller than M pixels (default 1)"});
  o.push_back({"kappa", "K", "clipping bound of the background statistics (default 3)"});
  o.push_back({"sources", "FILE.csv",
               "write the source table (label,x,y,flux,npix,peak,peak_x,"
               "peak_y,xmin,xmax,ymin,ymax; z added for a stack)"});
  for (auto& s : outputOptions())
    if (s.name != "levels") o.push_back(s);  // labels have one level
  return o;
}

const CommandRegistration reg{
    {"segment", "IN OUT",
     "threshold at a clipped-background level, label connected sources (numbered as "
     "scipy.ndimage.label; a stack slice by slice) and write the int32 label image",
     options(), 2, 2, runSegment}};

}  // namespace
}  // namespace stacklens::cli
