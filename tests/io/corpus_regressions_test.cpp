// Replays every input kept in data/corpus_regressions/ (inputs that once crashed a fuzzer, plus
// hand-made hostile files) through the fuzzers' own harnesses, chosen by the name's prefix
// (catalog_, regions_, pipeline_, zarr_; anything else is a stack): each must be read or refused
// cleanly. Session files (session_) need Qt: run-fuzzers.sh seeds session_fuzzer with them and
// ui_tests holds a test for each.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "fuzz/catalog_harness.h"
#include "fuzz/fuzz_target.h"
#include "fuzz/pipeline_harness.h"
#include "fuzz/regions_harness.h"
#include "fuzz/zarr_harness.h"

namespace stacklens::io {
namespace {

std::string contents(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(CorpusRegressions, EveryKeptInputOpensOrFailsWithIoError) {
  const std::filesystem::path folder = std::string(STACKLENS_TEST_DATA) + "/corpus_regressions";
  ASSERT_TRUE(std::filesystem::is_directory(folder)) << folder;
  int inputs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_regular_file() || entry.path().extension() == ".md" ||
        name.starts_with("session_"))
      continue;
    SCOPED_TRACE(entry.path().string());
    // Reaching the next line without a crash or a foreign exception is the test.
    if (name.starts_with("catalog_"))
      EXPECT_NO_THROW(fuzz::readCatalogEverything(entry.path().string()));
    else if (name.starts_with("regions_"))
      EXPECT_NO_THROW(fuzz::parseRegionsEverything(contents(entry.path())));
    else if (name.starts_with("pipeline_"))
      EXPECT_NO_THROW(fuzz::parsePipelineEverything(contents(entry.path())));
    else if (name.starts_with("zarr_")) {
      const std::string input = contents(entry.path());
      const std::string root =
          fuzz::writeZarrInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
      EXPECT_NO_THROW(fuzz::openAndReadEverything(root));
      fuzz::removeZarrInput(root);
    } else
      EXPECT_NO_THROW(fuzz::openAndReadEverything(entry.path().string()));
    ++inputs;
  }
  EXPECT_GT(inputs, 0);
}

}  // namespace
}  // namespace stacklens::io
