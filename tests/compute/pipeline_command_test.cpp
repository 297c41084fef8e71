// pipelineCommand and parsePipelineOptions: one the inverse of the other, paths quoted, notes.
#include "compute/pipeline_command.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace stacklens::compute;

// The options of argv (after "stacklens-cli process IN OUT") by name, as the CLI's parser hands
// them to parsePipelineOptions; every option must be a pipeline option or an input/backend one.
OptionLookup lookupIn(const std::vector<std::string>& argv) {
  return [argv](const std::string& name) -> std::optional<std::string> {
    for (size_t i = 4; i < argv.size(); ++i)
      if (argv[i] == "--" + name) {
        for (const auto& s : pipelineOptionSpecs())
          if (s.name == name) return s.valueName.empty() ? "1" : argv.at(i + 1);
      }
    return std::nullopt;
  };
}

// Every option of argv past IN OUT is known, and takes the value its spec says.
void expectKnownOptions(const std::vector<std::string>& argv) {
  for (size_t i = 4; i < argv.size(); ++i) {
    ASSERT_EQ(argv[i].rfind("--", 0), 0u) << argv[i];
    const std::string name = argv[i].substr(2);
    if (name == "hdu" || name == "plane" || name == "backend") {
      ++i;
      continue;
    }
    bool known = false;
    for (const auto& s : pipelineOptionSpecs())
      if (s.name == name) {
        known = true;
        if (!s.valueName.empty()) ++i;
      }
    EXPECT_TRUE(known) << argv[i];
  }
}

// The context of a command from in to out, everything else left at its default.
CommandContext paths(const std::string& in, const std::string& out) {
  CommandContext c;
  c.input = in;
  c.output = out;
  return c;
}

PipelineOptions parse(const std::vector<std::string>& options) {
  std::vector<std::string> argv{"stacklens-cli", "process", "in.fits", "out.fits"};
  argv.insert(argv.end(), options.begin(), options.end());
  return parsePipelineOptions(lookupIn(argv));
}

std::string parseError(const std::vector<std::string>& options) {
  try {
    parse(options);
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "(no error)";
}

// A pipeline the dock could hold: every stage on or off, parameters anywhere in their ranges with
// all the digits a spin box or a computation could give.
Pipeline randomPipeline(std::mt19937& rng, Image& psf) {
  auto coin = [&] { return std::bernoulli_distribution(0.5)(rng); };
  auto real = [&](double lo, double hi) { return std::uniform_real_distribution<>(lo, hi)(rng); };
  auto integer = [&](int lo, int hi) { return std::uniform_int_distribution<>(lo, hi)(rng); };
  Pipeline p;
  p.outliers.enabled = coin();
  p.outliers.params.size = 2 * integer(1, 5) + 1;
  p.outliers.params.threshold = coin() ? real(0, 1000) : 0.0;
  p.outliers.params.mode = static_cast<OutlierMode>(integer(0, 2));
  p.median.enabled = coin();
  p.median.size = 2 * integer(0, 5) + 1;
  p.blur.enabled = coin();
  p.blur.params.sigmaZ = coin() ? 0.0 : real(0.1, 3);
  p.blur.params.sigmaY = real(0.1, 5);
  p.blur.params.sigmaX = coin() ? p.blur.params.sigmaY : real(0.1, 5);
  p.blur.params.truncate = coin() ? 4.0 : real(1, 6);
  p.blur.params.nanAware = coin();
  p.deconvolution.enabled = coin();
  auto& d = p.deconvolution;
  d.params.iterations = integer(1, 200);
  d.params.threeD = coin();
  d.autoBoundary = coin();
  d.params.boundary = static_cast<Boundary>(integer(0, 2));
  d.params.tvLambda = coin() ? 0.0 : real(0, 0.02);
  d.params.accelerate = coin();
  if (coin()) d.params.epsilon = static_cast<float>(real(1e-9, 1e-3));
  d.slabHalfWidth = integer(1, 64);
  d.psfSigmaZ = real(0.5, 4);
  d.psfSigmaY = real(0.5, 4);
  d.psfSigmaX = coin() ? d.psfSigmaY : real(0.5, 4);
  if (coin()) {
    psf = Image::host({integer(1, 3), integer(3, 5), integer(3, 5)});
    for (int64_t i = 0; i < psf.shape().count(); ++i)
      psf.data()[i] = static_cast<float>(real(0, 1));
    d.psf = psf;
  }
  p.statistics.enabled = coin();
  p.statistics.params = {real(0.5, 5), real(0.5, 5), integer(-1, 20)};
  p.segmentation.enabled = coin();
  auto& s = p.segmentation.params;
  // With an absolute threshold nσ is not used and the command does not carry it: the dock's
  // value stays in the fingerprint, so these pipelines keep the default.
  if (coin()) s.absoluteThreshold = real(-100, 1000);
  if (!s.absoluteThreshold) s.nSigma = real(0.5, 10);
  s.connectivity = coin() ? 8 : 4;
  s.minPixels = coin() ? 1 : integer(1, 50);
  if (coin()) s.clip = {real(0.5, 5), real(0.5, 5), integer(-1, 20)};
  return p;
}

TEST(PipelineCommand, RandomPipelinesReadBackToTheSameFingerprint) {
  std::mt19937 rng(20);
  for (int run = 0; run < 500; ++run) {
    Image psf;
    const Pipeline p = randomPipeline(rng, psf);
    if (!p.anyEnabled()) continue;
    CommandContext context = paths("in dir/stack.fits", "out.fits");
    context.backend = "cpu";
    if (!psf.empty()) context.psfPath = "the psf's file.tif";
    if (p.segmentation.enabled && run % 3 == 0) context.sourcesCsv = "sources.csv";
    if (p.statistics.enabled && run % 4 == 0) context.statisticsCsv = "stats table.csv";
    const PipelineCommand command = pipelineCommand(p, context);
    SCOPED_TRACE(command.line);
    expectKnownOptions(command.argv);
    PipelineOptions back;
    ASSERT_NO_THROW(back = parsePipelineOptions(lookupIn(command.argv)));
    EXPECT_EQ(back.psfPath, p.deconvolution.enabled ? context.psfPath : "");
    EXPECT_EQ(back.sourcesCsv, context.sourcesCsv);
    EXPECT_EQ(back.statisticsCsv, context.statisticsCsv);
    back.pipeline.deconvolution.psf = psf;  // what the CLI reads from back.psfPath
    EXPECT_EQ(back.pipeline.fingerprint(), p.fingerprint());
    EXPECT_EQ(back.pipeline.describe(), p.describe());
  }
}

TEST(PipelineCommand, DoublesKeepEveryBit) {
  Pipeline p;
  p.blur.enabled = true;
  p.blur.params.sigmaY = 0.1 + 0.2;  // 0.30000000000000004
  p.blur.params.sigmaX = 1.0 / 3.0;
  p.blur.params.truncate = 2.0000000000000004;
  const PipelineCommand command = pipelineCommand(p, paths("in.fits", "out.fits"));
  EXPECT_NE(command.line.find("--blur 0,0.30000000000000004,0.3333333333333333"), std::string::npos)
      << command.line;
  const PipelineOptions back = parsePipelineOptions(lookupIn(command.argv));
  EXPECT_EQ(back.pipeline.blur.params.sigmaY, p.blur.params.sigmaY);
  EXPECT_EQ(back.pipeline.blur.params.sigmaX, p.blur.params.sigmaX);
  EXPECT_EQ(back.pipeline.blur.params.truncate, p.blur.params.truncate);
}

TEST(PipelineCommand, WritesTheOptionsAUserWouldType) {
  Pipeline p;
  p.outliers.enabled = true;
  p.outliers.params = {5, 50.0, OutlierMode::Bright};
  p.median.enabled = true;
  p.blur.enabled = true;
  p.blur.params.sigmaY = p.blur.params.sigmaX = 1.5;
  p.deconvolution.enabled = true;
  p.deconvolution.params.threeD = true;
  p.deconvolution.slabHalfWidth = 3;
  p.statistics.enabled = true;
  p.segmentation.enabled = true;
  CommandContext context = paths("in.fits", "out.tif");
  context.hdu = 1;
  context.backend = "cuda";
  EXPECT_EQ(pipelineCommand(p, context).line,
            "stacklens-cli process in.fits out.tif --hdu 1 --outliers 5,50,bright --median 3 "
            "--blur 1.5 --deconvolve 20 --rl-mode 3d --slab 3 --psf-sigma 2,1.5,1.5 "
            "--stats 3,3,10 --segment 5 --backend cuda");
}

// The line through /bin/sh gives back argv, whatever the paths hold.
TEST(PipelineCommand, LineQuotesPathsForTheShell) {
  const std::vector<std::string> awkward{"plain/path.fits",    "with space.fits",   "it's.fits",
                                         "$HOME`x`\"q\".fits", "a\\b;c&d|e*f?.tif", ""};
  for (const std::string& path : awkward) {
    std::string cmd = "printf '%s\\n' " + shellQuote(path);
    FILE* pipe = popen(cmd.c_str(), "r");
    ASSERT_NE(pipe, nullptr);
    std::string out;
    char buf[256];
    while (size_t n = fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
    ASSERT_EQ(pclose(pipe), 0);
    EXPECT_EQ(out, path + "\n") << shellQuote(path);
  }
  EXPECT_EQ(shellQuote("plain/path-1.fits"), "plain/path-1.fits");
  EXPECT_EQ(shellQuote("it's"), "'it'\\''s'");

  Pipeline p;
  p.median.enabled = true;
  const PipelineCommand command = pipelineCommand(p, paths("my stack.fits", "out 'v2'.fits"));
  EXPECT_EQ(command.line,
            "stacklens-cli process 'my stack.fits' 'out '\\''v2'\\''.fits' --median 3");
  EXPECT_EQ(command.argv.at(2), "my stack.fits");
}

TEST(PipelineCommand, NotesAViewerMadePsfAndAPlaceholderForIt) {
  Pipeline p;
  p.deconvolution.enabled = true;
  p.deconvolution.psf = Image::host({1, 3, 3});
  const PipelineCommand command = pipelineCommand(p, paths("in.fits", "out.fits"));
  EXPECT_NE(command.line.find("--psf PSF_FILE"), std::string::npos) << command.line;
  ASSERT_EQ(command.notes.size(), 1u);
  EXPECT_NE(command.notes[0].find("the PSF was made in the viewer: save it and pass --psf FILE"),
            std::string::npos);
  CommandContext withFile = paths("in.fits", "out.fits");
  withFile.psfPath = "psf.tif";
  const PipelineCommand fromFile = pipelineCommand(p, withFile);
  EXPECT_NE(fromFile.line.find("--psf psf.tif"), std::string::npos);
  EXPECT_TRUE(fromFile.notes.empty());
}

TEST(PipelineCommand, ThreeDDeconvolutionNotesTheWholeVolumeLine) {
  Pipeline p;
  p.deconvolution.enabled = true;
  p.deconvolution.params.threeD = true;
  p.deconvolution.params.iterations = 30;
  p.deconvolution.autoBoundary = false;
  p.deconvolution.params.boundary = Boundary::Periodic;
  p.deconvolution.params.accelerate = true;
  p.deconvolution.psf = Image::host({3, 3, 3});
  CommandContext context = paths("in.fits", "out.fits");
  context.psfPath = "my psf.tif";
  context.plane = 2;
  const PipelineCommand command = pipelineCommand(p, context);
  ASSERT_EQ(command.notes.size(), 1u);
  EXPECT_NE(command.notes[0].find(
                "stacklens-cli deconvolve in.fits out.fits --plane 2 --mode 3d --iterations 30 "
                "--psf 'my psf.tif' --boundary periodic --accelerate"),
            std::string::npos)
      << command.notes[0];
  EXPECT_EQ(command.notes[0].find("without the other stages"), std::string::npos);
  p.median.enabled = true;
  EXPECT_NE(pipelineCommand(p, context).notes[0].find("without the other stages"),
            std::string::npos);
  p.deconvolution.params.threeD = false;
  EXPECT_TRUE(pipelineCommand(p, context).notes.empty());
}

// The boundary is auto by default, as deconvolve's: not written then, and a chosen one is always
// written, reflect included (deconvolve would otherwise choose for itself).
TEST(PipelineCommand, AutoBoundaryIsTheDefaultAndAChosenOneIsWritten) {
  Pipeline p;
  p.deconvolution.enabled = true;
  p.deconvolution.params.threeD = true;
  const CommandContext context = paths("in.fits", "out.fits");
  ASSERT_TRUE(p.deconvolution.autoBoundary);
  const PipelineCommand automatic = pipelineCommand(p, context);
  EXPECT_EQ(automatic.line.find("--boundary"), std::string::npos) << automatic.line;
  ASSERT_EQ(automatic.notes.size(), 1u);
  EXPECT_EQ(automatic.notes[0].find("--boundary"), std::string::npos) << automatic.notes[0];
  p.deconvolution.autoBoundary = false;
  p.deconvolution.params.boundary = Boundary::Reflect;
  const PipelineCommand chosen = pipelineCommand(p, context);
  EXPECT_NE(chosen.line.find("--boundary reflect"), std::string::npos) << chosen.line;
  EXPECT_NE(chosen.notes[0].find("--boundary reflect"), std::string::npos) << chosen.notes[0];
  // And back: auto, or the word given.
  EXPECT_TRUE(parse({"--deconvolve", "5", "--psf-sigma", "1.5", "--boundary", "auto"})
                  .pipeline.deconvolution.autoBoundary);
  const Pipeline zero =
      parse({"--deconvolve", "5", "--psf-sigma", "1.5", "--boundary", "zero"}).pipeline;
  EXPECT_FALSE(zero.deconvolution.autoBoundary);
  EXPECT_EQ(zero.deconvolution.params.boundary, Boundary::Zero);
  EXPECT_TRUE(
      parse({"--deconvolve", "5", "--psf-sigma", "1.5"}).pipeline.deconvolution.autoBoundary);
}

// What auto runs: reflect-exact for a mirror-symmetric PSF (the default Gaussian) without TV,
// reflect with TV or a PSF that is not its mirror image; a chosen boundary is kept.
TEST(Pipeline, AutoBoundaryChoosesFromThePsf) {
  Pipeline p;
  p.deconvolution.enabled = true;
  EXPECT_EQ(deconvolutionParams(p).boundary, Boundary::ReflectExact);
  Pipeline tv = p;
  tv.deconvolution.params.tvLambda = 0.002;
  EXPECT_EQ(deconvolutionParams(tv).boundary, Boundary::Reflect);
  Pipeline lopsided = p;
  lopsided.deconvolution.psf = Image::host({1, 3, 3});
  for (int i = 0; i < 9; ++i) lopsided.deconvolution.psf.data()[i] = float(i + 1);
  EXPECT_EQ(deconvolutionParams(lopsided).boundary, Boundary::Reflect);
  Pipeline chosen = p;
  chosen.deconvolution.autoBoundary = false;
  chosen.deconvolution.params.boundary = Boundary::Zero;
  EXPECT_EQ(deconvolutionParams(chosen).boundary, Boundary::Zero);
  EXPECT_NE(p.describe().find("boundary=reflect-exact"), std::string::npos) << p.describe();
  EXPECT_NE(p.describe().find("(auto)"), std::string::npos) << p.describe();
}

TEST(PipelineCommand, NotesAPipelineThatLeavesTheImage) {
  Pipeline p;
  p.segmentation.enabled = true;
  const PipelineCommand command = pipelineCommand(p, paths("in.fits", "out.fits"));
  ASSERT_EQ(command.notes.size(), 1u);
  EXPECT_NE(command.notes[0].find("no stage changes the image"), std::string::npos);
}

TEST(PipelineCommand, ErrorsNameTheOption) {
  EXPECT_EQ(parseError({"--blur", "0"}).rfind("--blur: ", 0), 0u);
  EXPECT_EQ(parseError({"--blur", "1,2"}).rfind("--blur: expected", 0), 0u);
  EXPECT_EQ(parseError({"--median", "4"}).rfind("--median: ", 0), 0u);
  EXPECT_EQ(parseError({"--median", "x"}).rfind("--median: 'x' is not", 0), 0u);
  EXPECT_EQ(parseError({"--outliers", "5"}).rfind("--outliers: expected SIZE,THRESHOLD", 0), 0u);
  EXPECT_EQ(parseError({"--outliers", "5,1,hot"}).rfind("--outliers: MODE", 0), 0u);
  EXPECT_EQ(parseError({"--slab", "3"}), "--slab needs --deconvolve");
  EXPECT_EQ(parseError({"--deconvolve", "5", "--psf-sigma", "2", "--slab", "3"}),
            "--slab needs --rl-mode 3d");
  EXPECT_EQ(parseError({"--deconvolve", "5"}).rfind("--deconvolve needs exactly one of --psf", 0),
            0u);
  EXPECT_EQ(parseError({"--deconvolve", "0", "--psf-sigma", "2"}),
            "--deconvolve: deconvolution iterations must be ≥ 1, got 0");
  EXPECT_EQ(parseError({"--deconvolve", "5", "--psf-sigma", "2", "--tv", "-1"}),
            "--tv: deconvolution TV weight must be finite and ≥ 0, got -1");
  EXPECT_EQ(parseError({"--blur", "1", "--blur-truncate", "0"}),
            "--blur-truncate: blur truncate must be finite and > 0, got 0");
  EXPECT_EQ(parseError({"--segment-above", "1,6"}),
            "--segment-above: segmentation connectivity must be 4 or 8, got 6");
  EXPECT_EQ(parseError({"--segment", "3", "--segment-clip", "-1"}),
            "--segment-clip: segmentation background clipping kappa lower must be finite and ≥ 0, "
            "got -1");
  const std::string slab =
      parseError({"--deconvolve", "5", "--psf-sigma", "2", "--rl-mode", "3d", "--slab", "65"});
  EXPECT_EQ(slab.rfind("--deconvolve, --rl-mode, --slab, --psf-sigma: deconvolution: 3D slab", 0),
            0u)
      << slab;
  EXPECT_EQ(parseError({"--rl-mode", "4d", "--deconvolve", "5"}).rfind("--rl-mode: expected", 0),
            0u);
  EXPECT_EQ(parseError({"--segment", "5", "--segment-above", "3"}),
            "--segment, --segment-above: give one of the two");
  EXPECT_EQ(parseError({"--segment", "5,6"}).rfind("--segment: ", 0), 0u);
  EXPECT_EQ(parseError({"--sources", "s.csv"}), "--sources needs --segment or --segment-above");
  EXPECT_EQ(parseError({"--statistics", "s.csv"}), "--statistics needs --stats");
  EXPECT_EQ(parseError({"--stats", "-1"}).rfind("--stats: ", 0), 0u);
  EXPECT_EQ(parseError({"--blur", "1", "--blur-truncate", "inf"}).rfind("--blur-truncate: ", 0),
            0u);
}

TEST(PipelineCommand, ShortFormsMeanWhatTheSingleCommandsMean) {
  const PipelineOptions o =
      parse({"--blur", "2", "--deconvolve", "7", "--psf-sigma", "1.5", "--rl-mode", "3d", "--stats",
             "2.5", "--segment-above", "10,4,3", "--segment-clip", "2,4"});
  EXPECT_EQ(o.pipeline.blur.params.sigmaZ, 0.0);  // one σ: each slice in 2D, as `blur --sigma`
  EXPECT_EQ(o.pipeline.blur.params.sigmaY, 2.0);
  EXPECT_EQ(o.pipeline.deconvolution.psfSigmaZ, 1.5);  // one σ: isotropic, as `deconvolve`
  EXPECT_EQ(o.pipeline.deconvolution.slabHalfWidth, Pipeline{}.deconvolution.slabHalfWidth);
  EXPECT_EQ(o.pipeline.statistics.params.kappaLower, 2.5);
  EXPECT_EQ(o.pipeline.statistics.params.kappaUpper, 2.5);
  EXPECT_EQ(o.pipeline.statistics.params.maxIterations, ClipParams{}.maxIterations);
  EXPECT_EQ(*o.pipeline.segmentation.params.absoluteThreshold, 10.0);
  EXPECT_EQ(o.pipeline.segmentation.params.connectivity, 4);
  EXPECT_EQ(o.pipeline.segmentation.params.minPixels, 3);
  EXPECT_EQ(o.pipeline.segmentation.params.clip.kappaUpper, 4.0);
}

TEST(PipelineCommand, NormalisedPsfIsTheDocksScaling) {
  Image psf = Image::host({1, 1, 3});
  psf.data()[0] = 1;
  psf.data()[1] = 2;
  psf.data()[2] = 1;
  const Image n = normalisedPsf(psf);
  EXPECT_EQ(n.data()[1], static_cast<float>(2.0 / 4.0));
  Image zero = Image::host({1, 1, 2});
  zero.data()[0] = zero.data()[1] = 0;
  EXPECT_THROW(normalisedPsf(zero), InvalidArgument);
  Image negative = Image::host({1, 1, 2});
  negative.data()[0] = 1;
  negative.data()[1] = -1;
  EXPECT_THROW(normalisedPsf(negative), InvalidArgument);
}

}  // namespace
