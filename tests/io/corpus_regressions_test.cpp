// Replays every input kept in data/corpus_regressions/ (inputs that once crashed a fuzzer, plus
// hand-made hostile files) through the fuzzers' own harness: each must open or fail cleanly.
#include <gtest/gtest.h>

#include <filesystem>

#include "fuzz/fuzz_target.h"

namespace stacklens::io {
namespace {

TEST(CorpusRegressions, EveryKeptInputOpensOrFailsWithIoError) {
  const std::filesystem::path folder = std::string(STACKLENS_TEST_DATA) + "/corpus_regressions";
  ASSERT_TRUE(std::filesystem::is_directory(folder)) << folder;
  int inputs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    if (!entry.is_regular_file() || entry.path().extension() == ".md") continue;
    SCOPED_TRACE(entry.path().string());
    // Reaching the next line without a crash or a foreign exception is the test.
    EXPECT_NO_THROW(fuzz::openAndReadEverything(entry.path().string()));
    ++inputs;
  }
  EXPECT_GT(inputs, 0);
}

}  // namespace
}  // namespace stacklens::io
