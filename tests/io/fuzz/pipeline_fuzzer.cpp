// libFuzzer target: `stacklens-cli process` pipeline options through parsePipelineOptions and
// back through pipelineCommand.
#include "pipeline_harness.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  stacklens::io::fuzz::parsePipelineEverything(
      std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
