// writeStack/writeLabelStack: round trips through our readers and through astropy/tifffile's
// view of the same files (header cards, spacing), atomicity and refusal to overwrite the input.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "io/stack.h"
#include "io/stack_writer.h"
#include "test_support.h"

namespace stacklens::io {
namespace {

std::vector<float> ramp(int64_t n) {
  std::vector<float> v(static_cast<size_t>(std::max<int64_t>(n, 8)));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i) * 0.37f - 5.0f;
  v[3] = std::numeric_limits<float>::quiet_NaN();
  v[4] = std::numeric_limits<float>::infinity();
  v[5] = -0.0f;
  v[6] = 1e-38f;  // subnormal-adjacent values must survive unchanged
  return v;
}

WriteOptions micronSpacing() {
  WriteOptions o;
  o.spacingKnown = true;
  o.spacing = {0.3, 0.1, 0.125};
  o.units = {"micron", "micron", "micron"};
  return o;
}

TEST(Writer, Float32RoundTripsExactlyThroughFitsAndTiff) {
  test::TempDir dir;
  const auto data = ramp(3 * 4 * 5);
  for (const char* name : {"a.fits", "a.tif", "a.tiff", "a.fit", "a.fts"}) {
    SCOPED_TRACE(name);
    writeStack(dir.file(name), data.data(), 3, 4, 5, micronSpacing());
    auto reader = openStack(dir.file(name));
    EXPECT_EQ(reader->info().dtype, DType::Float32);
    EXPECT_EQ(reader->info().z, 3);
    EXPECT_EQ(reader->info().y, 4);
    EXPECT_EQ(reader->info().x, 5);
    EXPECT_TRUE(test::sameValues(data, test::readAll(*reader)));
    ASSERT_TRUE(reader->info().spacingKnown);
    EXPECT_NEAR(reader->info().spacing[0], 0.3, 1e-9);
    EXPECT_NEAR(reader->info().spacing[1], 0.1, 1e-6);
    EXPECT_NEAR(reader->info().spacing[2], 0.125, 1e-6);
  }
}

TEST(Writer, SingleSliceIsWrittenAsATwoDimensionalImage) {
  test::TempDir dir;
  const auto data = ramp(4 * 5);
  writeStack(dir.file("one.fits"), data.data(), 1, 4, 5, {});
  auto reader = openStack(dir.file("one.fits"));
  EXPECT_EQ(reader->info().hdus[0].axes, (std::vector<int64_t>{5, 4}));
  EXPECT_TRUE(test::sameValues(data, test::readAll(*reader)));
  EXPECT_FALSE(reader->info().spacingKnown);
}

TEST(Writer, LabelsRoundTripAsInt32) {
  test::TempDir dir;
  std::vector<int32_t> labels(2 * 3 * 4);
  for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<int32_t>(i * 1000003 % 70001);
  labels[0] = std::numeric_limits<int32_t>::max() / 2;
  for (const char* name : {"l.fits", "l.tif"}) {
    SCOPED_TRACE(name);
    writeLabelStack(dir.file(name), labels.data(), 2, 3, 4, {});
    auto reader = openStack(dir.file(name));
    EXPECT_EQ(reader->info().dtype, DType::Int32);
    auto values = test::readAll(*reader);
    for (size_t i = 0; i < labels.size(); ++i)
      EXPECT_EQ(values[i], static_cast<float>(labels[i])) << i;
  }
}

TEST(Writer, Uint16TiffClampsAndRounds) {
  test::TempDir dir;
  std::vector<float> data = {
      -3.0f,  0.4f, 0.6f, 1.5f, 65534.6f, 70000.0f, std::numeric_limits<float>::quiet_NaN(),
      1234.0f};
  WriteOptions o;
  o.tiffUInt16 = true;
  writeStack(dir.file("u.tif"), data.data(), 1, 2, 4, o);
  auto reader = openStack(dir.file("u.tif"));
  EXPECT_EQ(reader->info().dtype, DType::UInt16);
  EXPECT_EQ(test::readAll(*reader), (std::vector<float>{0, 0, 1, 2, 65535, 65535, 0, 1234}));
}

TEST(Writer, FitsCarriesHeaderCardsButNotStructuralOnes) {
  test::TempDir dir;
  const auto data = ramp(2 * 3 * 4);
  WriteOptions o;
  o.header = {{"OBJECT", "'Horsehead'", "target"},
              {"NAXIS1", "999", ""},
              {"BITPIX", "16", ""},
              {"BZERO", "32768", ""},
              {"BLANK", "-1", ""},
              {"CHECKSUM", "'xxxx'", ""},
              {"tiff:ImageWidth", "4", ""},
              {"imagej:spacing", "0.3", ""},
              {"COMMENT", "", "kept comment"},
              {"HISTORY", "", "reduced at the telescope"},
              {"TELESCOP", "'UKST'", ""},
              {"EXPTIME", "3600.5", "seconds"}};
  o.history = {"stacklens-cli blur --sigma 2", "second line"};
  writeStack(dir.file("h.fits"), data.data(), 2, 3, 4, o);
  auto reader = openStack(dir.file("h.fits"));
  const StackInfo& info = reader->info();
  ASSERT_NE(test::findCard(info, "OBJECT"), nullptr);
  EXPECT_EQ(test::findCard(info, "OBJECT")->value, "'Horsehead'");
  EXPECT_EQ(test::findCard(info, "OBJECT")->comment, "target");
  EXPECT_EQ(test::findCard(info, "EXPTIME")->value, "3600.5");
  EXPECT_EQ(test::findCard(info, "NAXIS1")->value, "4");
  EXPECT_EQ(test::findCard(info, "BITPIX")->value, "-32");
  EXPECT_EQ(test::findCard(info, "BZERO"), nullptr);
  EXPECT_EQ(test::findCard(info, "BLANK"), nullptr);
  EXPECT_EQ(test::findCard(info, "CHECKSUM"), nullptr);
  EXPECT_EQ(test::findCard(info, "tiff:ImageWidth"), nullptr);
  // Provenance: the input's HISTORY, then the version that wrote the file and what it did.
  std::vector<std::string> history;
  bool comment = false;
  for (const auto& c : info.header) {
    if (c.key == "HISTORY") history.push_back(c.comment);
    if (c.key == "COMMENT" && c.comment == "kept comment") comment = true;
  }
  ASSERT_EQ(history.size(), 4u);
  EXPECT_EQ(history[0], "reduced at the telescope");
  EXPECT_EQ(history[1].rfind("StackLens ", 0), 0u) << history[1];
  EXPECT_EQ(history[2], "stacklens-cli blur --sigma 2");
  EXPECT_EQ(history[3], "second line");
  EXPECT_TRUE(comment);
  EXPECT_TRUE(test::sameValues(data, test::readAll(*reader)));
}

// A replaced file keeps its mode bits; a symbolic link is written through (its target gets the
// new data, the link stays); no temporary file or folder is left behind.
TEST(Writer, ReplacingKeepsTheModeAndWritesThroughSymbolicLinks) {
  test::TempDir dir;
  const auto data = ramp(2 * 3 * 4);
  const std::string target = dir.file("data.fits"), link = dir.file("link.fits");
  writeStack(target, data.data(), 2, 3, 4, {});
  ASSERT_EQ(::chmod(target.c_str(), 0640), 0);
  ASSERT_EQ(::symlink("data.fits", link.c_str()), 0);
  auto doubled = data;
  for (float& v : doubled) v *= 2;
  writeStack(link, doubled.data(), 2, 3, 4, {});
  struct stat st {};
  ASSERT_EQ(::lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  ASSERT_EQ(::stat(target.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_TRUE(test::sameValues(doubled, test::readAll(*openStack(target))));
  auto names = dir.entries();
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"data.fits", "link.fits"}));
  // Through the link onto the input itself: refused.
  WriteOptions self;
  self.sourcePath = target;
  EXPECT_THROW(writeStack(link, data.data(), 2, 3, 4, self), IoError);
}

TEST(Writer, SpacingIsNotWrittenOverAnExistingWcs) {
  test::TempDir dir;
  const auto data = ramp(2 * 3 * 4);
  WriteOptions o = micronSpacing();
  o.header = {{"CTYPE1", "'RA---TAN'", ""}, {"CTYPE2", "'DEC--TAN'", ""}, {"CDELT1", "-0.001", ""},
              {"CDELT2", "0.001", ""},      {"CRPIX1", "1", ""},          {"CRPIX2", "1", ""},
              {"CRVAL1", "85.0", ""},       {"CRVAL2", "-2.0", ""}};
  writeStack(dir.file("w.fits"), data.data(), 2, 3, 4, o);
  auto reader = openStack(dir.file("w.fits"));
  EXPECT_EQ(test::findCard(reader->info(), "CDELT1")->value, "-0.001");
  EXPECT_EQ(test::findCard(reader->info(), "CUNIT1"), nullptr);
  EXPECT_NE(reader->wcs(), nullptr);
}

TEST(Writer, TiffHasImagejMetadataAndResolution) {
  test::TempDir dir;
  const auto data = ramp(3 * 4 * 5);
  writeStack(dir.file("ij.tif"), data.data(), 3, 4, 5, micronSpacing());
  auto reader = openStack(dir.file("ij.tif"));
  const StackInfo& info = reader->info();
  ASSERT_NE(test::findCard(info, "imagej:spacing"), nullptr);
  EXPECT_EQ(test::findCard(info, "imagej:spacing")->value, "0.3");
  EXPECT_EQ(test::findCard(info, "imagej:unit")->value, "micron");
  EXPECT_EQ(test::findCard(info, "imagej:slices")->value, "3");
  EXPECT_EQ(test::findCard(info, "tiff:ResolutionUnit")->value, "none");
  EXPECT_EQ(info.units[0], "micron");
}

TEST(Writer, RefusesToOverwriteTheSourceFile) {
  test::TempDir dir;
  const auto data = ramp(2 * 4);
  writeStack(dir.file("in.fits"), data.data(), 1, 2, 4, {});
  const std::string before = test::readBytes(dir.file("in.fits"));
  WriteOptions o;
  o.sourcePath = dir.file("in.fits");
  std::vector<float> other(4, 1.0f);
  EXPECT_THROW(writeStack(dir.file("in.fits"), other.data(), 1, 2, 2, o), IoError);
  EXPECT_THROW(writeStack(dir.path().string() + "/./in.fits", other.data(), 1, 2, 2, o), IoError);
  // A hard link is the same file under another name.
  ASSERT_EQ(::link(dir.file("in.fits").c_str(), dir.file("link.fits").c_str()), 0);
  EXPECT_THROW(writeStack(dir.file("link.fits"), other.data(), 1, 2, 2, o), IoError);
  EXPECT_EQ(test::readBytes(dir.file("in.fits")), before);
  EXPECT_EQ(dir.entries().size(), 2u);  // no temporary file left behind
}

TEST(Writer, ReplacesAnExistingOutputAtomically) {
  test::TempDir dir;
  std::vector<float> a(4, 1.0f), b(4, 2.0f);
  writeStack(dir.file("o.tif"), a.data(), 1, 2, 2, {});
  writeStack(dir.file("o.tif"), b.data(), 1, 2, 2, {});
  EXPECT_EQ(test::readAll(*openStack(dir.file("o.tif"))), b);
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"o.tif"});
  struct stat st {};
  ASSERT_EQ(::stat(dir.file("o.tif").c_str(), &st), 0);
  EXPECT_NE(st.st_mode & S_IRUSR, 0u);
}

TEST(Writer, BadArgumentsAreErrorsAndLeaveNoFile) {
  test::TempDir dir;
  std::vector<float> a(4, 1.0f);
  EXPECT_THROW(writeStack(dir.file("x.png"), a.data(), 1, 2, 2, {}), IoError);
  EXPECT_THROW(writeStack(dir.file("x.fits"), a.data(), 0, 2, 2, {}), IoError);
  EXPECT_THROW(writeStack(dir.file("x.fits"), a.data(), 1, -2, 2, {}), IoError);
  EXPECT_THROW(writeStack(dir.file("x.fits"), nullptr, 1, 2, 2, {}), IoError);
  EXPECT_THROW(writeStack(dir.file("missing/x.fits"), a.data(), 1, 2, 2, {}), IoError);
  EXPECT_THROW(writeStack(dir.path().string(), a.data(), 1, 2, 2, {}), IoError);
  EXPECT_TRUE(dir.entries().empty());
  try {
    writeStack(dir.file("x.png"), a.data(), 1, 2, 2, {});
  } catch (const IoError& e) {
    EXPECT_EQ(e.path(), dir.file("x.png"));
    EXPECT_NE(e.reason().find(".png"), std::string::npos) << e.what();
  }
}

TEST(Writer, UnwritableFolderIsAnError) {
  if (::geteuid() == 0) GTEST_SKIP() << "root ignores folder permissions";
  test::TempDir dir;
  std::filesystem::permissions(
      dir.path(), std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
  std::vector<float> a(4, 1.0f);
  EXPECT_THROW(writeStack(dir.file("x.fits"), a.data(), 1, 2, 2, {}), IoError);
}

}  // namespace
}  // namespace stacklens::io
