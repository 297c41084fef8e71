// The viewer's pipeline as `stacklens-cli process` options and back: one table of the stage
// options serves both the command's parser and "Copy as command", so the two cannot drift.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "compute/pipeline.h"

namespace stacklens::compute {

// One option of `stacklens-cli process` that describes the pipeline or its side tables.
struct PipelineOptionSpec {
  std::string name;       // without the leading "--"
  std::string valueName;  // empty for a flag
  std::string help;
};
// In the order pipelineCommand writes them.
const std::vector<PipelineOptionSpec>& pipelineOptionSpecs();

// What the options gave. The PSF file is named, not read (compute reads no files): the caller
// reads it, passes it through normalisedPsf and sets pipeline.deconvolution.psf.
struct PipelineOptions {
  Pipeline pipeline;
  std::string psfPath;                    // --psf
  std::string sourcesCsv, statisticsCsv;  // --sources, --statistics (empty: not given)
};

// The value of an option by name (without "--"); a flag that is given has any value.
using OptionLookup = std::function<std::optional<std::string>(const std::string& name)>;

// Parses the options of pipelineOptionSpecs(). Throws InvalidArgument whose message starts with
// the option(s) at fault ("--blur: ..."): a malformed value, an option without the stage it
// modifies, or settings that Pipeline::validate refuses. A PSF file is not validated here.
PipelineOptions parsePipelineOptions(const OptionLookup& lookup);

// The PSF as the viewer's Processing dock takes a file's: finite, non-negative values scaled to
// sum to 1 (the sum in double), in a new image. Throws InvalidArgument otherwise or when the sum
// is 0.
Image normalisedPsf(const Image& psf);

// Where the command runs: what the viewer knows beyond the pipeline.
struct CommandContext {
  std::string input, output;
  int hdu = -1;
  int plane = -1;       // -1: default
  std::string psfPath;  // the PSF file the dock loaded; empty with a file-less PSF
  std::string backend;  // "cpu"/"cuda"/""
  std::string sourcesCsv, statisticsCsv;
};

struct PipelineCommand {
  std::vector<std::string> argv;   // "stacklens-cli", "process", IN, OUT, options...
  std::string line;                // argv shell-quoted, one line
  std::vector<std::string> notes;  // e.g. "the PSF was made in the viewer: save it and ..."
};

// The `stacklens-cli process` line that reproduces pipeline over the whole stack, as File ▸
// Process whole stack… does: the inverse of parsePipelineOptions (numbers round-trip exactly).
PipelineCommand pipelineCommand(const Pipeline& pipeline, const CommandContext& context);

// text as one POSIX shell word: unchanged when it has only safe characters, else single-quoted.
std::string shellQuote(const std::string& text);

}  // namespace stacklens::compute
