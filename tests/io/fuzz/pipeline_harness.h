// What the pipeline command-line fuzzer (and the corpus replay test) does with one input: its
// lines are the words after `stacklens-cli process IN OUT` (one word a line, so that values may
// hold blanks), parsed as the CLI parses them; a pipeline that parses is written back as a
// command (pipelineCommand) that must parse to the same command again. Any outcome but a parsed
// pipeline or an InvalidArgument (a crash, a sanitizer report, a command that does not read
// back) is a bug.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "compute/pipeline_command.h"

namespace stacklens::io::fuzz {

inline std::vector<std::string> linesOf(const std::string& text) {
  std::vector<std::string> words;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    words.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return words;
}

// The value of --name among words, as the CLI's parser gives it (a flag: "1").
inline compute::OptionLookup lookupIn(const std::vector<std::string>& words) {
  return [words](const std::string& name) -> std::optional<std::string> {
    for (const auto& spec : compute::pipelineOptionSpecs()) {
      if (spec.name != name) continue;
      for (size_t i = 0; i < words.size(); ++i) {
        if (words[i] != "--" + name) continue;
        if (spec.valueName.empty()) return "1";
        if (i + 1 < words.size()) return words[i + 1];
      }
    }
    return std::nullopt;
  };
}

// Returns true when the words parsed as a pipeline; throws std::logic_error when the command
// written from it does not read back.
inline bool parsePipelineEverything(const std::string& text) {
  compute::PipelineOptions options;
  try {
    options = compute::parsePipelineOptions(lookupIn(linesOf(text)));
  } catch (const compute::InvalidArgument&) {
    return false;
  }
  compute::CommandContext context;
  context.input = "in.fits";
  context.output = "out.fits";
  context.psfPath = options.psfPath;
  context.sourcesCsv = options.sourcesCsv;
  context.statisticsCsv = options.statisticsCsv;
  const compute::PipelineCommand command = compute::pipelineCommand(options.pipeline, context);
  const std::vector<std::string> words(command.argv.begin() + 4, command.argv.end());
  compute::PipelineOptions back;
  try {
    back = compute::parsePipelineOptions(lookupIn(words));
  } catch (const compute::InvalidArgument& e) {
    throw std::logic_error("the written command does not parse: " + command.line + ": " + e.what());
  }
  context.psfPath = back.psfPath;
  if (compute::pipelineCommand(back.pipeline, context).line != command.line)
    throw std::logic_error("the written command reads back as another: " + command.line);
  return true;
}

}  // namespace stacklens::io::fuzz
