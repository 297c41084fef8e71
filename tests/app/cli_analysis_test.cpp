// stacklens-cli stats, segment, deconvolve and bench: outputs, JSON, exit codes.
#include <gtest/gtest.h>

#include <unistd.h>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "fft_rounding.h"
#include "fits_history.h"
#include "io/stack.h"
#include "io/stack_writer.h"
#include "temp_folder_test.h"

namespace {

namespace fs = std::filesystem;
namespace io = stacklens::io;
const std::string kHorseHead = std::string(STACKLENS_SHARED_DATA) + "/HorseHead.fits";
const std::string kPsf = std::string(STACKLENS_SHARED_DATA) + "/psf_rfi_8bit_imagej.tif";

// The number after "key": in a flat JSON text (enough for our one-line outputs).
double jsonNumber(const std::string& json, const std::string& key, size_t from = 0) {
  auto at = json.find("\"" + key + "\": ", from);
  if (at == std::string::npos) return std::nan("");
  return std::stod(json.substr(at + key.size() + 4));
}

class CliAnalysis : public stacklens::testing::TempFolderTest {
 protected:
  CliAnalysis() : TempFolderTest("stacklens_cli_analysis_") {}

  // A float32 FITS image written through io.
  std::string writeImage(const std::string& name, const std::vector<float>& v, int64_t z, int64_t y,
                         int64_t x) {
    io::WriteOptions options;
    io::writeStack(path(name), v.data(), z, y, x, options);
    return path(name);
  }
  // cube.fits: values 5 to 93 in a fixed scramble.
  std::string writeCube(int64_t z, int64_t y, int64_t x) {
    std::vector<float> v(size_t(z * y * x));
    for (int64_t i = 0; i < z * y * x; ++i) v[size_t(i)] = 5.f + float((i * 7919) % 89);
    return writeImage("cube.fits", v, z, y, x);
  }
  // psf7.fits: a symmetric 7³ Gaussian S (σ² 1.2), sum 1. psf8.fits: S in samples 1…7 of an 8³
  // cube whose 169 unpaired first samples hold 1e-4 each (asymmetric).
  std::string writeSymmetricPsf() { return writePsf(false); }
  std::string writeAsymmetricPsf() { return writePsf(true); }

 private:
  std::string writePsf(bool inEvenCube) {
    double g[7], sum = 0;
    for (int i = 0; i < 7; ++i) sum += g[i] = std::exp(-0.5 * (i - 3) * (i - 3) / 1.2);
    const int n = inEvenCube ? 8 : 7, at = inEvenCube ? 1 : 0;
    std::vector<float> psf(size_t(n * n * n), inEvenCube ? 1e-4f : 0.f);
    for (int a = 0; a < 7; ++a)
      for (int b = 0; b < 7; ++b)
        for (int c = 0; c < 7; ++c)
          psf[size_t(((a + at) * n + b + at) * n + c + at)] =
              float(g[a] * g[b] * g[c] / (sum * sum * sum));
    return writeImage(inEvenCube ? "psf8.fits" : "psf7.fits", psf, n, n, n);
  }
};

TEST_F(CliAnalysis, StatsMatchesAstropyOnHorseHead) {
  // astropy 5.2 SigmaClip(sigma=3, maxiters=10) on the float64 plate: 4 iterations,
  // clipped n 794022, median 9636, mean 9809.363385397382, std 2995.8276316069296.
  CliResult r = runCliSeparately("stats " + kHorseHead + " --backend cpu --kappa 3 --max-iter 10");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(jsonNumber(r.out, "n"), 795663);
  EXPECT_NEAR(jsonNumber(r.out, "median"), 9658.0, 1e-9);
  const size_t clipped = r.out.find("\"clipped\"");
  ASSERT_NE(clipped, std::string::npos) << r.out;
  EXPECT_EQ(jsonNumber(r.out, "n", clipped), 794022);
  EXPECT_NEAR(jsonNumber(r.out, "median", clipped), 9636.0, 1e-9);
  EXPECT_NEAR(jsonNumber(r.out, "mean", clipped), 9809.363385397382, 1e-3);
  EXPECT_NEAR(jsonNumber(r.out, "std", clipped), 2995.8276316069296, 1e-3);
  EXPECT_EQ(jsonNumber(r.out, "iterations", clipped), 4);
}

TEST_F(CliAnalysis, StatsPerSliceAndErrors) {
  std::vector<float> v(2 * 3 * 4);
  for (size_t i = 0; i < v.size(); ++i) v[i] = i < 12 ? 1.0f : 5.0f;
  const std::string in = writeImage("stack.fits", v, 2, 3, 4);
  CliResult whole = runCliSeparately("stats " + in + " --backend cpu");
  ASSERT_EQ(whole.code, 0) << whole.err;
  EXPECT_EQ(jsonNumber(whole.out, "n"), 24);
  EXPECT_NEAR(jsonNumber(whole.out, "mean"), 3.0, 1e-9);
  CliResult one = runCliSeparately("stats " + in + " --backend cpu --slice 1");
  ASSERT_EQ(one.code, 0) << one.err;
  EXPECT_EQ(jsonNumber(one.out, "n"), 12);
  EXPECT_NEAR(jsonNumber(one.out, "median"), 5.0, 1e-9);
  EXPECT_EQ(runCliSeparately("stats " + in + " --kappa -1").code, 2);
  const CliResult lower = runCliSeparately("stats " + in + " --kappa 2 --kappa-lower -0.5");
  EXPECT_EQ(lower.code, 2);
  EXPECT_NE(lower.err.find("stats: --kappa-lower: clipping kappa lower must be finite and ≥ 0, "
                           "got -0.5"),
            std::string::npos)
      << lower.err;
  EXPECT_EQ(runCliSeparately("stats " + in + " --backend cpu --kappa 0").code, 0);  // the boundary
  EXPECT_EQ(runCliSeparately("stats " + in + " --kappa abc").code, 2);
  EXPECT_EQ(runCliSeparately("stats " + in + " --slice 7").code, 2);
  CliResult missing = runCliSeparately("stats " + path("nope.fits"));
  EXPECT_EQ(missing.code, 3);
  EXPECT_NE(missing.err.find("nope.fits"), std::string::npos) << missing.err;
}

TEST_F(CliAnalysis, SegmentWritesLabelsAndASourceTable) {
  // Two sources on a flat background: a 2×2 block and a single pixel; threshold 0.5.
  const int64_t h = 10, w = 12;
  std::vector<float> v(h * w, 0.f);
  for (int y = 2; y < 4; ++y)
    for (int x = 3; x < 5; ++x) v[y * w + x] = 2.f;
  v[7 * w + 9] = 4.f;
  const std::string in = writeImage("two.fits", v, 1, h, w);
  const std::string labels = path("labels.fits"), csv = path("sources.csv");
  CliResult r = runCliSeparately("segment " + in + " " + labels +
                                 " --threshold 0.5 --backend cpu --sources " + csv);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(jsonNumber(r.out, "sources"), 2);
  auto reader = io::openStack(labels);
  ASSERT_EQ(reader->info().y, h);
  std::vector<float> got(h * w);
  reader->readSlice(0, got.data());
  EXPECT_EQ(got[2 * w + 3], 1.f);
  EXPECT_EQ(got[3 * w + 4], 1.f);
  EXPECT_EQ(got[7 * w + 9], 2.f);
  EXPECT_EQ(got[0], 0.f);
  std::ifstream table(csv);
  std::string header, row1, row2, extra;
  std::getline(table, header);
  std::getline(table, row1);
  std::getline(table, row2);
  EXPECT_EQ(header, "label,x,y,flux,npix,peak,peak_x,peak_y,xmin,xmax,ymin,ymax");
  EXPECT_EQ(row1, "1,3.5,2.5,8,4,2,3,2,3,4,2,3");
  EXPECT_EQ(row2, "2,9,7,4,1,4,9,7,9,9,7,7");
  EXPECT_FALSE(std::getline(table, extra));
  // --min-pixels 2 drops the single pixel.
  CliResult big =
      runCliSeparately("segment " + in + " " + labels + " --threshold 0.5 --min-pixels 2");
  ASSERT_EQ(big.code, 0) << big.err;
  EXPECT_EQ(jsonNumber(big.out, "sources"), 1);
}

TEST_F(CliAnalysis, SegmentUsageErrors) {
  const std::string in = writeImage("one.fits", {0, 1, 0, 1}, 1, 2, 2);
  const std::string out = path("l.fits");
  EXPECT_EQ(runCliSeparately("segment " + in + " " + out).code,
            2);  // neither --nsigma nor --threshold
  EXPECT_EQ(runCliSeparately("segment " + in + " " + out + " --nsigma 3 --threshold 1").code, 2);
  EXPECT_EQ(runCliSeparately("segment " + in + " " + out + " --threshold 1 --connectivity 6").code,
            2);
  EXPECT_EQ(runCliSeparately("segment " + in + " " + out + " --threshold 1 --min-pixels 0").code,
            2);
  const CliResult nsigma = runCliSeparately("segment " + in + " " + out + " --nsigma 0");
  EXPECT_EQ(nsigma.code, 2);
  EXPECT_NE(nsigma.err.find("--nsigma: segmentation nsigma must be finite and > 0, got 0"),
            std::string::npos)
      << nsigma.err;
  EXPECT_EQ(runCliSeparately("segment " + in + " " + in + " --threshold 0.5").code,
            3);  // over the input
}

TEST_F(CliAnalysis, DeconvolveKeepsAConstantImageConstant) {
  std::vector<float> v(3 * 20 * 24, 7.5f);
  const std::string in = writeImage("flat.fits", v, 3, 20, 24);
  const std::string out = path("rl.fits");
  for (const std::string mode : {"2d", "3d"}) {
    CliResult r =
        runCliSeparately("deconvolve " + in + " " + out +
                         " --psf-sigma 1.5 --iterations 3 --mode " + mode + " --backend cpu");
    ASSERT_EQ(r.code, 0) << r.err;
    auto reader = io::openStack(out);
    ASSERT_EQ(reader->info().z, 3);
    std::vector<float> got(20 * 24);
    for (int64_t z = 0; z < 3; ++z) {
      reader->readSlice(z, got.data());
      for (float g : got) ASSERT_NEAR(g, 7.5f, 1e-3) << mode;
    }
  }
}

TEST_F(CliAnalysis, DeconvolveWithAMeasuredPsfFile) {
  const std::string out = path("hh.fits");
  CliResult r = runCliSeparately("deconvolve " + kHorseHead + " " + out + " --psf " + kPsf +
                                 " --iterations 2 --accelerate --backend cpu");
  ASSERT_EQ(r.code, 0) << r.err;
  auto reader = io::openStack(out);
  EXPECT_EQ(reader->info().y, 893);
  EXPECT_EQ(reader->info().x, 891);
  std::vector<float> got(891 * 893);
  reader->readSlice(0, got.data());
  double sum = 0;
  for (float g : got) {
    ASSERT_TRUE(std::isfinite(g));
    sum += g;
  }
  EXPECT_GT(sum, 0);
}

TEST_F(CliAnalysis, DeconvolveUsageErrors) {
  const std::string in = writeImage("d.fits", std::vector<float>(64, 1.f), 1, 8, 8);
  const std::string out = path("o.fits");
  EXPECT_EQ(runCliSeparately("deconvolve " + in + " " + out + " --psf-sigma 1").code,
            2);  // no iterations
  EXPECT_EQ(runCliSeparately("deconvolve " + in + " " + out + " --iterations 3").code,
            2);  // no PSF
  EXPECT_EQ(runCliSeparately("deconvolve " + in + " " + out + " --iterations 0 --psf-sigma 1").code,
            2);
  EXPECT_EQ(runCliSeparately("deconvolve " + in + " " + out +
                             " --iterations 2 --psf-sigma 1 --boundary x")
                .code,
            2);
  EXPECT_EQ(
      runCliSeparately("deconvolve " + in + " " + out + " --iterations 2 --psf-sigma 1,2").code, 2);
  EXPECT_EQ(runCliSeparately("deconvolve " + in + " " + out + " --iterations 2 --psf " + in +
                             " --psf-sigma 1")
                .code,
            2);
  // --devices is for 3D runs on CUDA: on the CPU, or in 2D, a usage error that says so.
  CliResult devices = runCliSeparately("deconvolve " + in + " " + out +
                                       " --iterations 2 --psf-sigma 1 --mode 3d --backend cpu "
                                       "--devices 2");
  EXPECT_EQ(devices.code, 2);
  EXPECT_NE(devices.err.find("--devices needs the CUDA backend"), std::string::npos) << devices.err;
  EXPECT_EQ(runCliSeparately("deconvolve " + in + " " + out +
                             " --iterations 2 --psf-sigma 1 --devices all")
                .code,
            2);
  // A 9×9 PSF does not fit an 8×8 periodic image: a clear InvalidArgument, exit 2.
  CliResult r = runCliSeparately("deconvolve " + in + " " + out +
                                 " --iterations 2 --psf-sigma 1 --boundary periodic --backend cpu");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("larger than the image"), std::string::npos) << r.err;
}

// A PSF that is not symmetric is refused by reflect-exact, which says --symmetrize-psf takes its
// mirror-symmetric part; with it, the run equals one with that part as the PSF file, and says how
// far the PSF was from it. The PSF: a symmetric 7³ Gaussian S in samples 1…7 of an 8³ cube whose
// 169 unpaired first samples hold c each, so it differs from S by 169c / (1 + 169c).
TEST_F(CliAnalysis, DeconvolveTakesThePsfsSymmetricPartWhenAsked) {
  const int64_t z = 9, y = 20, x = 22;
  const std::string in = writeCube(z, y, x);
  const std::string psfPath = writeAsymmetricPsf(), symmetricPath = writeSymmetricPsf();
  const std::string run = " --mode 3d --iterations 3 --boundary reflect-exact --backend cpu";
  CliResult refused =
      runCliSeparately("deconvolve " + in + " " + path("no.fits") + " --psf " + psfPath + run);
  EXPECT_EQ(refused.code, 2);
  EXPECT_NE(refused.err.find("symmetric"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("--symmetrize-psf"), std::string::npos) << refused.err;
  EXPECT_FALSE(std::filesystem::exists(path("no.fits")));
  CliResult taken = runCliSeparately("deconvolve " + in + " " + path("taken.fits") + " --psf " +
                                     psfPath + run + " --symmetrize-psf");
  ASSERT_EQ(taken.code, 0) << taken.err;
  EXPECT_NE(taken.err.find("mirror-symmetric part (7 x 7 x 7)"), std::string::npos) << taken.err;
  char differs[32];
  std::snprintf(differs, sizeof differs, "by %.2g of its sum", 169e-4 / (1 + 169e-4));
  EXPECT_NE(taken.err.find(differs), std::string::npos) << differs << " in " << taken.err;
  CliResult direct = runCliSeparately("deconvolve " + in + " " + path("direct.fits") + " --psf " +
                                      symmetricPath + run);
  ASSERT_EQ(direct.code, 0) << direct.err;
  // Two processes: the same values up to the rounding of their own FFT plans.
  auto a = io::openStack(path("taken.fits")), b = io::openStack(path("direct.fits"));
  std::vector<float> sa(size_t(z * y * x)), sb(size_t(z * y * x));
  for (int64_t k = 0; k < z; ++k) {
    a->readSlice(k, sa.data() + k * y * x);
    b->readSlice(k, sb.data() + k * y * x);
  }
  stacklens::testing::expectWithinFftRounding(sa, sb, "symmetrized against symmetric");
  // The output's provenance says so.
  std::ifstream file(path("taken.fits"), std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  EXPECT_NE(bytes.find("symmetrize-psf"), std::string::npos);
}

// With no --boundary, deconvolve takes reflect-exact where the PSF allows it (mirror-symmetric,
// no --tv) and reflect otherwise; it says which and why, the output's HISTORY keeps it, and the
// result is the named boundary's. PSFs as in the test above: a symmetric 7³ Gaussian, and the same
// in an 8³ cube whose unpaired first samples hold 1e-4 each (asymmetric).
TEST_F(CliAnalysis, DeconvolveChoosesReflectExactByItselfWhenThePsfAllows) {
  const int64_t z = 9, y = 20, x = 22;
  const std::string in = writeCube(z, y, x);
  const std::string symmetricPath = writeSymmetricPsf(), asymmetricPath = writeAsymmetricPsf();
  auto read = [&](const std::string& name) {
    auto r = io::openStack(path(name));
    std::vector<float> out(size_t(z * y * x));
    for (int64_t k = 0; k < z; ++k) r->readSlice(k, out.data() + k * y * x);
    return out;
  };
  auto history = [&](const std::string& name) {
    return stacklens::testing::fitsHistory(path(name));
  };
  const std::string run = " --mode 3d --iterations 3 --backend cpu";
  struct Case {
    std::string psf, extra, chosen, why;
  } cases[] = {
      {symmetricPath, "", "reflect-exact", "(auto: the PSF is mirror-symmetric)"},
      {asymmetricPath, "", "reflect", "(auto: the PSF differs from its mirror image by"},
      {symmetricPath, " --tv 0.001", "reflect", "(auto: the TV term needs the padded frame)"},
  };
  int k = 0;
  for (const Case& c : cases) {
    const std::string automatic = "auto" + std::to_string(k) + ".fits",
                      named = "named" + std::to_string(k++) + ".fits";
    const CliResult a = runCliSeparately("deconvolve " + in + " " + path(automatic) + " --psf " +
                                         c.psf + run + c.extra);
    ASSERT_EQ(a.code, 0) << a.err;
    EXPECT_NE(a.err.find("boundary " + c.chosen + " " + c.why), std::string::npos) << a.err;
    // After the parameters (" tv=…" follows the boundary), the reason.
    const std::string h = history(automatic);
    EXPECT_NE(h.find("boundary=" + c.chosen + " "), std::string::npos) << h;
    EXPECT_NE(h.find(c.why), std::string::npos) << h;
    const CliResult b = runCliSeparately("deconvolve " + in + " " + path(named) + " --psf " +
                                         c.psf + run + c.extra + " --boundary " + c.chosen);
    ASSERT_EQ(b.code, 0) << b.err;
    EXPECT_EQ(b.err.find("(auto: "), std::string::npos) << b.err;
    stacklens::testing::expectWithinFftRounding(read(automatic), read(named), c.chosen);
  }
  // The plan names the boundary too.
  const CliResult plan = runCliSeparately("deconvolve " + in + " " + path("plan.fits") + " --psf " +
                                          symmetricPath + run + " --dry-run");
  ASSERT_EQ(plan.code, 0) << plan.err;
  EXPECT_NE(plan.out.find("boundary reflect-exact"), std::string::npos) << plan.out;
}

// --symmetrize-psf refuses a PSF far from symmetric (compute::kSymmetrizeLimit), naming the file
// and how far: here all the flux two voxels off the centre along x, whose symmetric part splits it
// between x = 1 and x = 5, differing by 1 of the sum. Nothing is written.
TEST_F(CliAnalysis, SymmetrizePsfRefusesAPsfFarFromSymmetric) {
  const int64_t z = 9, y = 20, x = 22;
  std::vector<float> v(size_t(z * y * x), 10.f);
  const std::string in = writeImage("flat.fits", v, z, y, x);
  std::vector<float> psf(343, 0.f);
  psf[size_t((3 * 7 + 3) * 7 + 5)] = 1.f;
  const std::string psfPath = writeImage("offcentre.fits", psf, 7, 7, 7);
  CliResult r = runCliSeparately("deconvolve " + in + " " + path("no.fits") + " --psf " + psfPath +
                                 " --mode 3d --iterations 2 --boundary reflect-exact "
                                 "--backend cpu --symmetrize-psf");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find(psfPath), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("by 1 of its sum, more than the 0.1"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(path("no.fits")));
}

// 3D deconvolution beyond the memory budget runs in blocks: --dry-run prints the plan and writes
// nothing; the blocked result is close to the unblocked one (tests/compute has the tight bounds).
TEST_F(CliAnalysis, Deconvolve3dInBlocksBeyondTheBudget) {
  const int64_t z = 12, y = 80, x = 72;
  std::vector<float> v(size_t(z * y * x));
  for (int64_t i = 0; i < z * y * x; ++i)
    v[size_t(i)] = 10.f + float((i * 7919) % 97) + ((i % x) == 30 ? 200.f : 0.f);
  const std::string in = writeImage("vol.fits", v, z, y, x);
  const std::string out = path("blocked.fits"), whole = path("whole.fits");
  const std::string common = " --psf-sigma 1 --iterations 4 --mode 3d --backend cpu";
  CliResult plan =
      runCliSeparately("deconvolve " + in + " " + out + common + " --ram-budget-mb 1 --dry-run");
  ASSERT_EQ(plan.code, 0) << plan.err;
  EXPECT_NE(plan.out.find("blocks "), std::string::npos) << plan.out;
  EXPECT_EQ(plan.out.find("blocks 1 "), std::string::npos) << plan.out;
  EXPECT_FALSE(std::filesystem::exists(out));
  ASSERT_EQ(runCliSeparately("deconvolve " + in + " " + whole + common).code, 0);
  // Streamed to FITS (blocks at their place) and to TIFF (pages as they fill).
  for (const std::string& blocked : {out, path("blocked.tif")}) {
    CliResult r = runCliSeparately("deconvolve " + in + " " + blocked + common +
                                   " --ram-budget-mb 2 --halo 6");
    EXPECT_EQ(r.err.find("blocks 1 "), std::string::npos) << r.err;  // blocked indeed
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.err.find("halo 6 x 6 x 6"), std::string::npos) << r.err;
    auto a = io::openStack(blocked), b = io::openStack(whole);
    ASSERT_EQ(a->info().z, z);
    std::vector<float> sa(size_t(y * x)), sb(size_t(y * x));
    double num = 0, den = 0;
    for (int64_t k = 0; k < z; ++k) {
      a->readSlice(k, sa.data());
      b->readSlice(k, sb.data());
      for (size_t i = 0; i < sa.size(); ++i) {
        num += double(sa[i] - sb[i]) * (sa[i] - sb[i]);
        den += double(sb[i]) * sb[i];
      }
    }
    EXPECT_LT(std::sqrt(num / den), 1e-2) << blocked;
  }
  // A budget that cannot hold one block: a clear error, exit 2, no output.
  const std::string none = path("none.fits");
  CliResult small = runCliSeparately("deconvolve " + in + " " + none +
                                     " --psf-sigma 8 --iterations 2 --mode 3d --backend cpu "
                                     "--ram-budget-mb 1");
  EXPECT_EQ(small.code, 2);
  EXPECT_NE(small.err.find("cannot hold one block"), std::string::npos) << small.err;
  EXPECT_FALSE(std::filesystem::exists(none));
  EXPECT_EQ(runCliSeparately("deconvolve " + in + " " + none +
                             " --psf-sigma 1 --iterations 2 "
                             "--halo 4")
                .code,
            2);  // --halo needs --mode 3d
}

// A stack larger than --ram-budget-mb streams through blur, median and outlier removal in slabs
// of slices, with the whole stack's result (FITS and TIFF outputs); too small a budget for one
// slice is a clear error.
TEST_F(CliAnalysis, LocalOperationsStreamStacksLargerThanTheBudget) {
  const int64_t z = 40, y = 128, x = 128;  // 2.5 MiB as float32
  std::vector<float> v(size_t(z * y * x));
  for (int64_t i = 0; i < z * y * x; ++i) v[size_t(i)] = float((i * 7919) % 1013) * 0.1f;
  const std::string in = writeImage("stream.fits", v, z, y, x);
  for (const std::string op :
       {"blur --sigma 1.5,1,1", "median --size 3", "outliers --size 3 --threshold 20"}) {
    const std::string whole = path("whole.fits");
    ASSERT_EQ(runCliSeparately(op.substr(0, op.find(' ')) + " " + in + " " + whole +
                               op.substr(op.find(' ')) + " --backend cpu")
                  .code,
              0);
    for (const char* name : {"slabs.fits", "slabs.tif"}) {
      const std::string out = path(name);
      CliResult r = runCliSeparately(op.substr(0, op.find(' ')) + " " + in + " " + out +
                                     op.substr(op.find(' ')) + " --backend cpu --ram-budget-mb 5");
      ASSERT_EQ(r.code, 0) << r.err;
      EXPECT_NE(r.err.find("streaming:"), std::string::npos) << op << ": " << r.err;
      auto a = io::openStack(out), b = io::openStack(whole);
      ASSERT_EQ(a->info().z, z);
      std::vector<float> sa(size_t(y * x)), sb(size_t(y * x));
      for (int64_t k = 0; k < z; ++k) {
        a->readSlice(k, sa.data());
        b->readSlice(k, sb.data());
        for (size_t i = 0; i < sa.size(); ++i)
          ASSERT_NEAR(sa[i], sb[i], 1e-5f * std::abs(sb[i]) + 1e-6f) << op << " " << name;
      }
      std::filesystem::remove(out);
    }
    std::filesystem::remove(whole);
  }
  CliResult small = runCliSeparately("blur " + in + " " + path("none.fits") +
                                     " --sigma 4,1,1 --backend cpu --ram-budget-mb 1");
  EXPECT_EQ(small.code, 2);
  EXPECT_NE(small.err.find("cannot hold one slice"), std::string::npos) << small.err;
}

// Resampling a stack larger than --ram-budget-mb streams output slabs with the whole stack's
// result (to float rounding), and keeps the output's spacing.
TEST_F(CliAnalysis, ResampleStreamsStacksLargerThanTheBudget) {
  const int64_t z = 60, y = 96, x = 80;  // 1.8 MiB as float32
  std::vector<float> v(size_t(z * y * x));
  for (int64_t i = 0; i < z * y * x; ++i) v[size_t(i)] = float((i * 7919) % 1013) * 0.1f;
  const std::string in = writeImage("resample.fits", v, z, y, x);
  const std::string whole = path("whole.fits"), out = path("streamed.tif");
  const std::string common = " --zoom 1.5,0.5,1 --backend cpu";
  ASSERT_EQ(runCliSeparately("resample " + in + " " + whole + common).code, 0);
  CliResult r = runCliSeparately("resample " + in + " " + out + common + " --ram-budget-mb 4");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("streaming:"), std::string::npos) << r.err;
  auto a = io::openStack(out), b = io::openStack(whole);
  ASSERT_EQ(a->info().z, 90);
  ASSERT_EQ(a->info().y, 48);
  std::vector<float> sa(size_t(48 * 80)), sb(size_t(48 * 80));
  for (int64_t k = 0; k < 90; ++k) {
    a->readSlice(k, sa.data());
    b->readSlice(k, sb.data());
    for (size_t i = 0; i < sa.size(); ++i) ASSERT_NEAR(sa[i], sb[i], 1e-3f) << k << " " << i;
  }
}

TEST_F(CliAnalysis, BenchPrintsOneJsonLinePerWorkload) {
  // blur2d is another engineer's operation: a timing line once it lands, an error line before.
  CliResult r = runCliSeparately(
      "bench --backend cpu --workload sigmaclip --workload blur2d_gaussian_f32 "
      "--repeat 1");
  ASSERT_EQ(r.code, 0) << r.err;
  const size_t second = r.out.find('\n') + 1;
  ASSERT_GT(second, 0u);
  EXPECT_EQ(
      r.out.rfind("{\"workload\": \"sigmaclip\", \"backend\": \"cpu\", \"shape\": [2048, 2048]", 0),
      0u)
      << r.out;
  EXPECT_GT(jsonNumber(r.out, "median_s"), 0);
  EXPECT_GT(jsonNumber(r.out, "threads"), 0);
  EXPECT_NE(r.out.find("\"device\": "), std::string::npos);
  EXPECT_EQ(r.out.find("{\"workload\": \"blur2d_gaussian_f32\"", second), second) << r.out;
  EXPECT_EQ(r.out.back(), '\n');
}

TEST_F(CliAnalysis, BenchRejectsUnknownWorkloadsAndBackends) {
  EXPECT_EQ(runCliSeparately("bench --workload nope").code, 2);
  EXPECT_EQ(runCliSeparately("bench --backend gpu").code, 2);
  EXPECT_EQ(runCliSeparately("bench --repeat 0 --workload sigmaclip").code, 2);
}

}  // namespace
