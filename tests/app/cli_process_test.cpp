// stacklens-cli process: the line "Copy as command" writes, run through the shell, gives what
// runPipelineOverStack gives (the viewer's whole-stack job), side tables included.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "compute/pipeline_command.h"
#include "compute/pipeline_over_stack.h"
#include "compute/source_table.h"
#include "io/stack.h"
#include "io/stack_writer.h"
#include "temp_folder_test.h"

namespace {

namespace fs = std::filesystem;
namespace io = stacklens::io;
namespace compute = stacklens::compute;

struct Stack {
  int64_t z = 0, y = 0, x = 0;
  std::vector<float> v;
};

Stack readStack(const std::string& path) {
  auto reader = io::openStack(path);
  const io::StackInfo& info = reader->info();
  Stack s{info.z, info.y, info.x, std::vector<float>(size_t(info.z * info.y * info.x))};
  for (int64_t k = 0; k < s.z; ++k) reader->readSlice(k, s.v.data() + k * s.y * s.x);
  return s;
}

using stacklens::testing::readText;

// The HISTORY cards of a file, one text.
std::string history(const std::string& path) {
  std::string text;
  const auto reader = io::openStack(path);
  for (const io::HeaderCard& c : reader->info().header)
    if (c.key == "HISTORY") text += c.value + c.comment + "\n";
  return text;
}

class CliProcess : public stacklens::testing::TempFolderTest {
 protected:
  CliProcess() : TempFolderTest("stacklens_cli_process_") {}

  // Noise on a sloped background, hot and cold pixels, and a few sources that move with z.
  std::string writeSynthetic(const std::string& name, int64_t z, int64_t y, int64_t x) {
    std::mt19937 rng(7);
    std::normal_distribution<float> noise(0.f, 2.f);
    Stack s{z, y, x, std::vector<float>(size_t(z * y * x))};
    for (int64_t k = 0; k < z; ++k)
      for (int64_t j = 0; j < y; ++j)
        for (int64_t i = 0; i < x; ++i) {
          float v = 100.f + 0.3f * float(i) + noise(rng);
          for (int src = 0; src < 3; ++src) {
            const double cx = 4 + 6 * src + 0.5 * double(k), cy = 5 + 5 * src;
            const double r2 = (i - cx) * (i - cx) + (j - cy) * (j - cy);
            v += static_cast<float>(60 * std::exp(-r2 / 3.0));
          }
          s.v[size_t((k * y + j) * x + i)] = v;
        }
    for (size_t i = 13; i < s.v.size(); i += 101) s.v[i] = (i % 2) ? 5000.f : -800.f;
    io::WriteOptions options;
    io::writeStack(path(name), s.v.data(), z, y, x, options);
    return path(name);
  }

  // What the viewer's whole-stack job computes: runPipelineOverStack on the CPU.
  static compute::StackPipelineReport expected(const compute::Pipeline& pipeline,
                                               const std::string& in, Stack& out) {
    const Stack stack = readStack(in);
    out = {stack.z, stack.y, stack.x, std::vector<float>(stack.v.size())};
    const size_t plane = size_t(stack.y * stack.x);
    auto backend = compute::makeBackend("cpu");
    return compute::runPipelineOverStack(
        *backend, pipeline, {stack.z, stack.y, stack.x}, compute::Spacing{},
        [&](int64_t z, float* dst) { std::copy_n(stack.v.data() + z * plane, plane, dst); },
        [&](int64_t z, const float* src) { std::copy_n(src, plane, out.v.data() + z * plane); });
  }

  // Runs the command's line through the shell, as a user pasting it would.
  static CliResult runLine(const compute::PipelineCommand& command) {
    const std::string program = "stacklens-cli ";
    EXPECT_EQ(command.line.rfind(program, 0), 0u);
    return runCliSeparately(command.line.substr(program.size()));
  }

  static void expectSamePixels(const Stack& got, const Stack& want) {
    ASSERT_EQ(got.z, want.z);
    ASSERT_EQ(got.y, want.y);
    ASSERT_EQ(got.x, want.x);
    for (size_t i = 0; i < got.v.size(); ++i) {
      if (std::isnan(want.v[i]) && std::isnan(got.v[i])) continue;
      ASSERT_EQ(got.v[i], want.v[i]) << "voxel " << i;
    }
  }
};

TEST_F(CliProcess, TwoDPipelineMatchesTheLibrarySliceForSlice) {
  const std::string in = writeSynthetic("in stack.fits", 5, 24, 28);
  compute::Pipeline p;
  p.outliers.enabled = true;
  p.outliers.params = {3, 40.0, compute::OutlierMode::Both};
  p.median.enabled = true;
  p.median.size = 3;
  p.blur.enabled = true;
  p.blur.params.sigmaY = 1.25;
  p.blur.params.sigmaX = 0.7;
  compute::CommandContext context;
  context.input = in;
  context.output = path("out 'a'.fits");
  context.backend = "cpu";
  const compute::PipelineCommand command = compute::pipelineCommand(p, context);
  const CliResult r = runLine(command);
  ASSERT_EQ(r.code, 0) << command.line << "\n" << r.err;
  EXPECT_EQ(r.out, "{\"slices\": 5}\n");
  Stack want;
  expected(p, in, want);
  expectSamePixels(readStack(context.output), want);
  const std::string h = history(context.output);
  EXPECT_NE(h.find("stacklens whole-stack pipeline"), std::string::npos) << h;
  EXPECT_NE(h.find("backend=cpu"), std::string::npos) << h;
}

TEST_F(CliProcess, ThreeDSlabDeconvolutionWithAPsfFileMatchesTheLibrary) {
  const std::string in = writeSynthetic("in.fits", 6, 20, 22);
  // An unnormalised 3D PSF: the command scales it as the dock does.
  std::vector<float> psfValues(size_t(3 * 5 * 5));
  for (int k = 0; k < 3; ++k)
    for (int j = 0; j < 5; ++j)
      for (int i = 0; i < 5; ++i)
        psfValues[size_t((k * 5 + j) * 5 + i)] = static_cast<float>(
            7 * std::exp(-((k - 1) * (k - 1) / 1.5 + (j - 2) * (j - 2) + (i - 2) * (i - 2)) / 2));
  const std::string psfPath = path("the psf.tif");
  io::WriteOptions psfOptions;
  io::writeStack(psfPath, psfValues.data(), 3, 5, 5, psfOptions);
  const Stack psfRead = readStack(psfPath);
  compute::Image psf = compute::Image::host({3, 5, 5});
  std::copy(psfRead.v.begin(), psfRead.v.end(), psf.data());

  compute::Pipeline p;
  p.median.enabled = true;
  p.median.size = 3;
  p.deconvolution.enabled = true;
  p.deconvolution.params.iterations = 6;
  p.deconvolution.params.threeD = true;
  p.deconvolution.slabHalfWidth = 2;
  p.deconvolution.params.accelerate = true;
  p.deconvolution.psf = compute::normalisedPsf(psf);
  compute::CommandContext context;
  context.input = in;
  context.output = path("out.tif");
  context.psfPath = psfPath;
  context.backend = "cpu";
  const compute::PipelineCommand command = compute::pipelineCommand(p, context);
  ASSERT_EQ(command.notes.size(), 1u);  // the whole-volume alternative
  EXPECT_NE(command.notes[0].find("stacklens-cli deconvolve"), std::string::npos);
  const CliResult r = runLine(command);
  ASSERT_EQ(r.code, 0) << command.line << "\n" << r.err;
  Stack want;
  expected(p, in, want);
  expectSamePixels(readStack(context.output), want);
}

TEST_F(CliProcess, SideTablesAreTheLibrarysTables) {
  const std::string in = writeSynthetic("in.fits", 4, 24, 30);
  compute::Pipeline p = compute::preset("astronomy sources");
  p.segmentation.params.minPixels = 3;
  compute::CommandContext context;
  context.input = in;
  context.output = path("out.fits");
  context.backend = "cpu";
  context.sourcesCsv = path("my sources.csv");
  context.statisticsCsv = path("my stats.csv");
  const compute::PipelineCommand command = compute::pipelineCommand(p, context);
  const CliResult r = runLine(command);
  ASSERT_EQ(r.code, 0) << command.line << "\n" << r.err;
  Stack want;
  const compute::StackPipelineReport report = expected(p, in, want);
  ASSERT_FALSE(report.sources.empty());
  expectSamePixels(readStack(context.output), want);
  EXPECT_EQ(readText(context.sourcesCsv), compute::sourcesCsv(report.sources, true));
  EXPECT_EQ(readText(context.statisticsCsv), compute::statisticsCsv(report.statistics));
  EXPECT_EQ(r.out, "{\"slices\": 4, \"sources\": " + std::to_string(report.sources.size()) + "}\n");

  // Without --sources and --statistics the tables go where the viewer puts them.
  context.sourcesCsv = context.statisticsCsv = "";
  context.output = path("plain.fits");
  ASSERT_EQ(runLine(compute::pipelineCommand(p, context)).code, 0);
  EXPECT_EQ(readText(path("plain_sources.csv")), compute::sourcesCsv(report.sources, true));
  EXPECT_EQ(readText(path("plain_statistics.csv")), compute::statisticsCsv(report.statistics));
}

TEST_F(CliProcess, BadOptionsExitTwoNamingTheOption) {
  const std::string in = writeSynthetic("in.fits", 2, 8, 8);
  const std::string out = path("out.fits");
  const std::vector<std::pair<std::string, std::string>> cases{
      {"--median 4", "--median"},
      {"--blur 1,2", "--blur"},
      {"--outliers 3", "--outliers"},
      {"--deconvolve 5", "--psf"},
      {"--deconvolve 5 --psf-sigma 2 --slab 3", "--slab"},
      {"--segment 5 --segment-above 3", "--segment-above"},
      {"--statistics s.csv", "--statistics"},
      {"--stats 3 --slice 1", "--slice"},
      {"--median 3 --bogus", "--bogus"},
      {"", "at least one stage"}};
  for (const auto& [options, named] : cases) {
    const CliResult r = runCliSeparately("process " + in + " " + out + " " + options);
    EXPECT_EQ(r.code, 2) << options << ": " << r.err;
    EXPECT_NE(r.err.find(named), std::string::npos) << options << ": " << r.err;
    EXPECT_FALSE(fs::exists(out)) << options;
  }
  // A PSF file the dock would refuse is an input error.
  std::vector<float> zero(9, 0.f);
  io::WriteOptions options;
  io::writeStack(path("zero.fits"), zero.data(), 1, 3, 3, options);
  const CliResult r =
      runCliSeparately("process " + in + " " + out + " --deconvolve 2 --psf " + path("zero.fits"));
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_NE(r.err.find("all zero"), std::string::npos) << r.err;
}

}  // namespace
