// stacklens-cli psf: the written PSF is the model's (compute/psf, checked against closed forms in
// tests/compute/psf_models_test.cpp), read back from FITS and TIFF with its shape, spacing, sum 1,
// centre and HISTORY; bad models and parameters are usage errors that leave no file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <vector>

#include "cli_runner.h"
#include "compute/psf/psf_models.h"
#include "io/stack.h"
#include "temp_folder_test.h"

namespace {

namespace fs = std::filesystem;

class CliPsf : public stacklens::testing::TempFolderTest {
 protected:
  CliPsf() : TempFolderTest("stacklens_cli_psf_") {}
  static std::vector<float> read(const std::string& file, stacklens::io::StackInfo* info) {
    auto r = stacklens::io::openStack(file);
    *info = r->info();
    std::vector<float> v(size_t(info->z * info->y * info->x));
    for (int64_t z = 0; z < info->z; ++z) r->readSlice(z, v.data() + z * info->y * info->x);
    return v;
  }
};

TEST_F(CliPsf, AMoffatStarIsTheModelsWithItsHistory) {
  CliResult r = runCli("psf " + path("m.fits") +
                       " --model moffat --fwhm 4 --beta 3 --ellipticity 0.2 --angle 30 --size 21");
  ASSERT_EQ(r.code, 0) << r.out;
  stacklens::io::StackInfo info;
  const std::vector<float> got = read(path("m.fits"), &info);
  stacklens::compute::psf::StarPsf p;
  p.profile = stacklens::compute::psf::StarPsf::Profile::Moffat;
  p.fwhm = 4, p.beta = 3, p.ellipticity = 0.2, p.angle = 30, p.size = 21;
  const auto want = stacklens::compute::psf::starPsf(p);
  ASSERT_EQ(got.size(), size_t(21 * 21));
  for (size_t i = 0; i < got.size(); ++i) ASSERT_FLOAT_EQ(got[i], want.data()[i]);
  EXPECT_EQ(std::max_element(got.begin(), got.end()) - got.begin(), 10 * 21 + 10);
  bool history = false;
  for (const auto& c : info.header)
    history |= c.key == "HISTORY" && c.comment.find("moffat") != std::string::npos;
  EXPECT_TRUE(history);
}

TEST_F(CliPsf, AGibsonLanniPsfHasItsVoxelsSpacingAndSumsToOne) {
  CliResult r = runCli("psf " + path("gl.tif") +
                       " --model gibson-lanni --size 17,9 --lateral 0.08 --axial 0.25 --na 1.3");
  ASSERT_EQ(r.code, 0) << r.out;
  stacklens::io::StackInfo info;
  const std::vector<float> v = read(path("gl.tif"), &info);
  EXPECT_EQ(info.z, 9);
  EXPECT_EQ(info.y, 17);
  EXPECT_TRUE(info.spacingKnown);
  EXPECT_NEAR(info.spacing[0], 0.25, 1e-6);
  EXPECT_NEAR(info.spacing[2], 0.08, 1e-6);
  double sum = 0;
  for (float x : v) sum += x;
  EXPECT_NEAR(sum, 1.0, 1e-5);
  // No aberration at the design conditions: the brightest voxel is the centre.
  EXPECT_EQ(std::max_element(v.begin(), v.end()) - v.begin(), 4 * 17 * 17 + 8 * 17 + 8);
}

TEST_F(CliPsf, UsageErrorsLeaveNoFile) {
  EXPECT_EQ(runCli("psf " + path("a.fits") + " --model airy").code, 2);
  EXPECT_EQ(runCli("psf " + path("a.fits") + " --model gaussian --size 10").code, 2);
  EXPECT_EQ(runCli("psf " + path("a.fits") + " --model born-wolf --na 1.6").code, 2);
  EXPECT_EQ(runCli("psf " + path("a.fits") + " --model gibson-lanni --mode sted").code, 2);
  EXPECT_EQ(runCli("psf " + path("a.xyz")).code, 2);
  EXPECT_FALSE(fs::exists(path("a.fits")));
}

// A size of 0 (or less) is refused, not taken as "the default size" it stands for inside.
TEST_F(CliPsf, ASizeOfZeroIsRefused) {
  for (const char* model : {"gaussian", "moffat", "born-wolf", "gibson-lanni"})
    for (const char* size : {"0", "-3", "0,9", "17,0", "2.5"}) {
      CliResult r = runCli("psf " + path("z.fits") + " --model " + model + " --size " + size);
      EXPECT_EQ(r.code, 2) << model << " --size " << size << ": " << r.out;
      EXPECT_NE(r.out.find("--size"), std::string::npos) << r.out;
      EXPECT_FALSE(fs::exists(path("z.fits"))) << model << " --size " << size;
    }
}

}  // namespace
