// stacklens-cli process: the viewer's live pipeline at every slice of a stack, as File ▸ Process
// whole stack… runs it with "the current pipeline" (slice z of OUT is what the viewer shows at z).
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "app/cli/command.h"
#include "app/cli/interrupt.h"
#include "app/cli/processing.h"
#include "compute/pipeline_command.h"
#include "compute/pipeline_over_stack.h"
#include "compute/source_table.h"
#include "compute/stack_spacing.h"
#include "io/block_writer.h"
#include "io/io_error.h"
#include "io/stack.h"
#include "io/whole_file.h"

namespace stacklens::cli {
namespace {

// The PSF file as the Processing dock loads it (compute::normalisedPsf).
compute::Image loadPsf(const std::string& path) {
  auto reader = io::openStack(path);
  const io::StackInfo& info = reader->info();
  compute::Image psf = compute::Image::host({info.z, info.y, info.x});
  for (int64_t z = 0; z < info.z; ++z) reader->readSlice(z, psf.slice(z));
  try {
    return compute::normalisedPsf(psf);
  } catch (const compute::InvalidArgument& e) {
    throw io::IoError(path, e.what());
  }
}

// Where the viewer's whole-stack job puts a side table: OUT's folder, OUT's stem + "_table.csv".
std::string sideTablePath(const std::string& outPath, const std::string& table) {
  const std::filesystem::path out(outPath);
  return (out.parent_path() / (out.stem().string() + "_" + table + ".csv")).string();
}

// The header and HISTORY of the viewer's whole-stack job, so that the two outputs are the same.
io::WriteOptions wholeStackWriteOptions(const Args& args, const InputStack& input,
                                        const std::string& history) {
  io::WriteOptions options = writeOptionsFor(args, input, history);
  options.history.push_back("stacklens input " + input.info.path);
  return options;
}

// Each percent on a terminal (one line, redrawn), else each tenth on a line of its own.
compute::Job progressJob(const std::atomic<bool>* stop, int64_t slices) {
  const bool terminal = isatty(STDERR_FILENO);
  return compute::Job(stop, [terminal, slices, last = -1](double f) mutable {
    const int step = terminal ? 1 : 10;
    const int percent = static_cast<int>(f * 100) / step * step;
    if (slices <= 1 || percent == last) return;
    last = percent;
    if (terminal)
      std::fprintf(stderr, "\rprocessing: %3d %%%s", percent, percent == 100 ? "\n" : "");
    else
      std::fprintf(stderr, "processing: %d %%\n", percent);
  });
}

int runProcess(const Args& args) {
  compute::PipelineOptions parsed;
  try {
    parsed =
        compute::parsePipelineOptions([&args](const std::string& name) { return args.get(name); });
  } catch (const compute::InvalidArgument& e) {
    throw UsageError(e.what());
  }
  compute::Pipeline& pipeline = parsed.pipeline;
  if (!pipeline.anyEnabled())
    throw UsageError(
        "give at least one stage: --outliers, --median, --blur, --deconvolve, --stats or "
        "--segment(-above)");
  const std::string outPath = args.positional(1);
  if (io::outputFormat(outPath) == io::OutputFormat::Unknown)
    throw UsageError("OUT must end in .fits, .fit, .fts, .tif, .tiff or .zarr: '" + outPath + "'");
  // Ctrl-C from here on stops the run between slices; nothing is written then.
  const std::atomic<bool>* stop = installInterruptHandler();

  StageTimer timer(args.has("timings"));
  timer.start("open");
  InputStack input;
  std::shared_ptr<io::StackReader> reader = openInput(args, input);
  const io::StackInfo& info = input.info;
  if (!parsed.psfPath.empty()) pipeline.deconvolution.psf = loadPsf(parsed.psfPath);
  pipeline.validate();
  timer.stop();
  auto backend = chooseBackend(args);

  io::StackBlockWriter writer(
      outPath, info.z, info.y, info.x,
      wholeStackWriteOptions(
          args, input,
          "stacklens whole-stack pipeline " + pipeline.describe() + " backend=" + backend->name()));
  timer.start("process");
  const compute::StackPipelineReport report = compute::runPipelineOverStack(
      *backend, pipeline, {info.z, info.y, info.x}, compute::spacingOf(info),
      [&reader](int64_t z, float* out) { reader->readSlice(z, out); },
      [&writer, &info](int64_t z, const float* data) {
        writer.writeBox(z, z + 1, 0, info.y, 0, info.x, data);
      },
      progressJob(stop, info.z));
  timer.stop();
  if (stop->load()) throw compute::Cancelled();
  timer.start("write");
  writer.commit();
  if (pipeline.statistics.enabled)
    io::writeWholeFile(
        parsed.statisticsCsv.empty() ? sideTablePath(outPath, "statistics") : parsed.statisticsCsv,
        compute::statisticsCsv(report.statistics), info.path);
  if (pipeline.segmentation.enabled)
    io::writeWholeFile(
        parsed.sourcesCsv.empty() ? sideTablePath(outPath, "sources") : parsed.sourcesCsv,
        compute::sourcesCsv(report.sources, true), info.path);
  std::cout << "{\"slices\": " << info.z;
  if (pipeline.segmentation.enabled) std::cout << ", \"sources\": " << report.sources.size();
  std::cout << "}\n";
  timer.stop();
  timer.print(backend->name());
  return kOk;
}

std::vector<OptionSpec> options() {
  std::vector<OptionSpec> o;
  for (const auto& s : compute::pipelineOptionSpecs()) o.push_back({s.name, s.valueName, s.help});
  // The whole stack, always: what the viewer shows at every slice.
  for (auto& s : processingOptions())
    if (s.name != "slice") o.push_back(s);
  for (auto& s : outputOptions()) o.push_back(s);
  return o;
}

const CommandRegistration reg{
    {"process", "IN OUT",
     "the viewer's processing pipeline at every slice (outliers → median → blur → "
     "Richardson–Lucy → statistics → segmentation; 3D stages on a slab around each slice), as "
     "File ▸ Process whole stack… runs it; the viewer's \"Copy as command\" writes this line",
     options(), 2, 2, runProcess}};

}  // namespace
}  // namespace stacklens::cli
