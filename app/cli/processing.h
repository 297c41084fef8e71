// What the processing subcommands share: reading the input stack (or one slice) into an Image,
// choosing the backend, timing the stages, and writing the result next to the input's header.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "app/cli/command.h"
#include "compute/backend.h"
#include "compute/blocked/blocked_deconvolution.h"
#include "compute/blocked/frame_fill.h"
#include "io/block_writer.h"
#include "io/stack.h"
#include "io/stack_writer.h"

namespace stacklens::cli {

struct InputStack {
  std::string path;
  io::StackInfo info;
  compute::Image image;    // host, float32; one slice when --slice was given
  int64_t firstSlice = 0;  // the file's slice that is image's slice 0
};

// Reads IN (the first positional argument), honouring --slice and --hdu when declared.
InputStack readInput(const Args& args);
// Opens IN (honouring --hdu and --plane) without reading its pixels: input gets the path and
// the header; the reader reads slices on demand.
std::shared_ptr<io::StackReader> openInput(const Args& args, InputStack& input);

// --backend cpu|cuda|auto (default auto); a note about the choice goes to stderr for auto.
std::unique_ptr<compute::Backend> chooseBackend(const Args& args);
// The same, and with CUDA one backend per GPU of --devices (default all; commands that take the
// option and run in blocks or slabs).
std::vector<std::unique_ptr<compute::Backend>> chooseBackends(const Args& args);
// A stack that fits in memory runs on one device: chooseBackend, on the first of --devices.
std::unique_ptr<compute::Backend> chooseFirstDevice(const Args& args);
// The --devices option of those commands.
OptionSpec devicesOption();

// Write options that carry the input's header and spacing, plus a HISTORY line, and the
// outputOptions() given for OUT (the second positional argument).
io::WriteOptions writeOptionsFor(const Args& args, const InputStack& input,
                                 const std::string& history);
// Applies --zarr-version, --zarr-chunks, --zarr-shards and --levels to options for the output
// out; a UsageError when they are given for an output that is not .zarr, or malformed (shards
// without 0.5, or not multiples of the chunks given).
void applyOutputOptions(const Args& args, const std::string& out, io::WriteOptions& options);

// The image-to-image commands' whole run: read IN, upload, run `operation` (timed as `stage`),
// download, write OUT with `history` as a HISTORY line; --timings reports each stage.
// With zReach (the slices the operation reads past each output slice), a stack whose copies would
// not fit the host budget (--ram-budget-mb, default half the memory) streams through the
// operation in slabs (compute/blocked/slab_stream.h) with the same result.
using ImageOperation = std::function<compute::Image(compute::Backend&, const compute::Image&)>;
int runImageOperation(const Args& args, const std::string& stage, const std::string& history,
                      const ImageOperation& operation,
                      std::optional<int64_t> zReach = std::nullopt);

// Host memory a command may use: --ram-budget-mb, else compute::defaultHostBudget().
size_t hostBudget(const Args& args);
// The --ram-budget-mb option of the commands that stream stacks larger than memory.
OptionSpec ramBudgetOption();

class StageTimer;

// A streaming command's plumbing: whole slices of reader as boxes, boxes into writer, and the
// end (commit, --timings lines).
compute::BoxReader sliceBoxReader(const io::StackReader& reader);
compute::BoxWriter boxWriter(io::StackBlockWriter& writer);
struct StreamedTimes {
  int slabs = 0;
  double readSeconds = 0, computeSeconds = 0, writeSeconds = 0;
};
void finishStreamed(const Args& args, io::StackBlockWriter& writer, StageTimer& timer,
                    const std::string& backend, const StreamedTimes& times);

// Per-stage wall-clock seconds, printed as one JSON line on stderr when --timings is given.
class StageTimer {
 public:
  explicit StageTimer(bool enabled) : enabled_(enabled) {}
  void start(const std::string& stage);
  void stop();
  void print(const std::string& backend) const;

 private:
  bool enabled_;
  std::string current_;
  std::chrono::steady_clock::time_point started_;
  std::vector<std::pair<std::string, double>> stages_;
};

}  // namespace stacklens::cli
