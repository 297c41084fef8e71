// StackBlockWriter: boxes written in any order read back as the whole stack (FITS; TIFF has
// tiff_layout_test.cpp too), with the header and HISTORY (FITS) and spacing; nothing appears at
// the path (no temporary file stays) until commit().
#include "io/block_writer.h"

#include <gtest/gtest.h>
#include <sys/statvfs.h>
#include <sys/vfs.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <thread>

#include "io/stack.h"
#include "test_support.h"

namespace stacklens::io {
namespace {

// count values in ±1e6, the same for a seed.
std::vector<float> randomValues(size_t count, unsigned seed) {
  std::vector<float> values(count);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1e6f, 1e6f);
  for (float& v : values) v = u(rng);
  return values;
}

// The box [z0, z1) × [y0, y1) × [x0, x1) of a stack of y × x slices.
std::vector<float> cutBox(const std::vector<float>& stack, int64_t y, int64_t x, int64_t z0,
                          int64_t z1, int64_t y0, int64_t y1, int64_t x0, int64_t x1) {
  std::vector<float> part;
  for (int64_t k = z0; k < z1; ++k)
    for (int64_t j = y0; j < y1; ++j)
      for (int64_t i = x0; i < x1; ++i) part.push_back(stack[size_t((k * y + j) * x + i)]);
  return part;
}

// Boxes from several threads at once (a whole-stack run on several GPUs), sharing bands of rows
// and pages, into the mapped file and through pwrite: the stack reads back exactly.
TEST(BlockWriter, BoxesFromSeveralThreadsAtOnce) {
  const int64_t z = 12, y = 90, x = 1030;
  std::vector<float> want(size_t(z * y * x));
  for (size_t i = 0; i < want.size(); ++i) want[i] = float(i % 65521) * 0.25f - 3.f;
  struct Box {
    int64_t z0, z1, y0, y1, x0, x1;
  };
  std::vector<Box> boxes;
  for (int64_t k : {0, 5})
    for (int64_t j : {0, 40})
      for (int64_t i : {0, 333, 700})
        boxes.push_back({k, k == 0 ? 5 : z, j, j == 0 ? 40 : y, i,
                         i == 0     ? 333
                         : i == 333 ? 700
                                    : x});
  for (const char* mapping : {"0", "1"}) {
    SCOPED_TRACE(std::string("STACKLENS_WRITE_WITHOUT_MAPPING=") + mapping);
    setenv("STACKLENS_WRITE_WITHOUT_MAPPING", mapping, 1);
    test::TempDir dir;
    const std::string path = dir.file("threads.fits");
    {
      StackBlockWriter w(path, z, y, x, {});
      std::vector<std::thread> threads;
      for (const Box& b : boxes)
        threads.emplace_back([&w, &want, b] {
          std::vector<float> part;
          for (int64_t k = b.z0; k < b.z1; ++k)
            for (int64_t j = b.y0; j < b.y1; ++j)
              for (int64_t i = b.x0; i < b.x1; ++i)
                part.push_back(want[size_t((k * y + j) * x + i)]);
          w.writeBox(b.z0, b.z1, b.y0, b.y1, b.x0, b.x1, part.data());
        });
      for (std::thread& t : threads) t.join();
      w.commit();
    }
    EXPECT_TRUE(test::sameValues(want, test::readAll(*openStack(path))));
  }
  unsetenv("STACKLENS_WRITE_WITHOUT_MAPPING");
}

// Large boxes go out on several threads, in whole-row runs and in part rows; the data unit is
// whole 2880-byte records; a single image goes through cfitsio.
TEST(BlockWriter, LargeFitsBoxesAndSingleImages) {
  test::TempDir dir;
  const int64_t z = 16, y = 256, x = 300;
  const std::vector<float> want = randomValues(size_t(z * y * x), 5);
  auto box = [&](int64_t z0, int64_t z1, int64_t y0, int64_t y1, int64_t x0, int64_t x1) {
    return cutBox(want, y, x, z0, z1, y0, y1, x0, x1);
  };
  const std::string path = dir.file("large.fits");
  {
    StackBlockWriter w(path, z, y, x, {});
    w.writeBox(0, 16, 0, 256, 0, 120, box(0, 16, 0, 256, 0, 120).data());      // part rows
    w.writeBox(0, 16, 0, 256, 120, 300, box(0, 16, 0, 256, 120, 300).data());  // part rows
    w.commit();
  }
  auto reader = openStack(path);
  EXPECT_EQ(reader->info().z, z);
  EXPECT_TRUE(test::sameValues(want, test::readAll(*reader)));
  EXPECT_EQ(std::filesystem::file_size(path) % 2880, 0u);
  const std::string whole = dir.file("whole.fits");
  {
    StackBlockWriter w(whole, z, y, x, {});
    w.writeBox(0, z, 0, y, 0, x, want.data());  // whole rows
    w.commit();
  }
  EXPECT_TRUE(test::sameValues(want, test::readAll(*openStack(whole))));
  const std::string single = dir.file("single.fits");
  {
    StackBlockWriter w(single, 1, y, x, {});
    w.writeBox(0, 1, 0, y, 0, x, want.data());
    w.commit();
  }
  auto one = openStack(single);
  EXPECT_EQ(one->info().z, 1);
  EXPECT_TRUE(test::sameValues(std::vector<float>(want.begin(), want.begin() + y * x),
                               test::readAll(*one)));
}

// A large box of a few slices is shared among the threads by bands of rows, in part rows too.
TEST(BlockWriter, LargeBoxesOfFewSlicesGoOutInRowBands) {
  test::TempDir dir;
  const int64_t z = 3, y = 1400, x = 512;
  const std::vector<float> want = randomValues(size_t(z * y * x), 6);
  const std::string path = dir.file("bands.fits");
  {
    StackBlockWriter w(path, z, y, x, {});
    w.writeBox(0, z, 0, y, 256, x, cutBox(want, y, x, 0, z, 0, y, 256, x).data());
    w.writeBox(0, z, 0, y, 0, 256, cutBox(want, y, x, 0, z, 0, y, 0, 256).data());
    w.commit();
  }
  EXPECT_TRUE(test::sameValues(want, test::readAll(*openStack(path))));
}

TEST(BlockWriter, BoxesInAnyOrderReadBackAsTheStack) {
  test::TempDir dir;
  const int64_t z = 5, y = 7, x = 9;
  std::vector<float> want(size_t(z * y * x));
  for (size_t i = 0; i < want.size(); ++i) want[i] = float(i) * 0.5f - 3.f;
  WriteOptions options;
  options.history.push_back("written in blocks");
  options.header.push_back({"OBSERVER", "'Hubble'", "who"});
  options.spacingKnown = true;
  options.spacing = {2.0, 0.5, 0.5};
  options.units = {"micron", "micron", "micron"};
  for (const char* name : {"blocks.fits", "blocks.tif"}) {
    SCOPED_TRACE(name);
    const std::string path = dir.file(name);
    {
      StackBlockWriter w(path, z, y, x, options);
      // Boxes that do not divide the stack, written in a shuffled order.
      struct B {
        int64_t z0, z1, y0, y1, x0, x1;
      };
      std::vector<B> boxes;
      for (int64_t a : {0, 2})
        for (int64_t b : {0, 3})
          for (int64_t c : {0, 4})
            boxes.push_back({a, a == 0 ? 2 : z, b, b == 0 ? 3 : y, c, c == 0 ? 4 : x});
      std::shuffle(boxes.begin(), boxes.end(), std::mt19937(3));
      for (const B& b : boxes) {
        std::vector<float> part;
        for (int64_t k = b.z0; k < b.z1; ++k)
          for (int64_t j = b.y0; j < b.y1; ++j)
            for (int64_t i = b.x0; i < b.x1; ++i) part.push_back(want[size_t((k * y + j) * x + i)]);
        w.writeBox(b.z0, b.z1, b.y0, b.y1, b.x0, b.x1, part.data());
      }
      EXPECT_EQ(access(path.c_str(), F_OK), -1);  // not there before commit
      w.commit();
    }
    auto reader = openStack(path);
    EXPECT_EQ(reader->info().z, z);
    EXPECT_TRUE(test::sameValues(want, test::readAll(*reader)));
    ASSERT_TRUE(reader->info().spacingKnown);
    EXPECT_NEAR(reader->info().spacing[0], 2.0, 1e-6);
    if (std::string(name) != "blocks.fits") continue;
    bool history = false, observer = false;
    for (const auto& card : reader->info().header) {
      history =
          history || (card.key == "HISTORY" &&
                      (card.value + card.comment).find("written in blocks") != std::string::npos);
      observer = observer || card.key == "OBSERVER";
    }
    EXPECT_TRUE(history);
    EXPECT_TRUE(observer);
  }
  EXPECT_EQ(dir.entries().size(), 2u);  // the two files, no temporary one
}

// A large stack whose rows are whole pages: the header is padded with blank records so that
// the data unit starts on a page (boxes split at page columns then own their pages); the cards
// and the pixels read back, through cfitsio, in both write paths.
TEST(BlockWriter, PageRowsStartTheDataUnitOnAPage) {
  const int64_t z = 4, y = 1024, x = 2048;  // 32 MiB, rows of 8 KiB
  std::vector<float> want(size_t(z * y * x));
  for (size_t i = 0; i < want.size(); ++i) want[i] = float(i % 8191) - 17.f;
  WriteOptions options;
  options.history.push_back("aligned for write-back");
  for (const char* mapping : {"0", "1"}) {
    SCOPED_TRACE(std::string("STACKLENS_WRITE_WITHOUT_MAPPING=") + mapping);
    setenv("STACKLENS_WRITE_WITHOUT_MAPPING", mapping, 1);
    test::TempDir dir;
    const std::string path = dir.file("pages.fits");
    {
      StackBlockWriter w(path, z, y, x, options);
      for (int64_t x0 : {1024, 0}) {  // two halves of 4 KiB per row, the right one first
        std::vector<float> part;
        for (int64_t k = 0; k < z; ++k)
          for (int64_t j = 0; j < y; ++j)
            for (int64_t i = x0; i < x0 + 1024; ++i)
              part.push_back(want[size_t((k * y + j) * x + i)]);
        w.writeBox(0, z, 0, y, x0, x0 + 1024, part.data());
      }
      w.commit();
    }
    const int64_t dataBytes = (z * y * x * 4 + 2879) / 2880 * 2880;
    const int64_t dataStart = int64_t(std::filesystem::file_size(path)) - dataBytes;
    EXPECT_EQ(dataStart % 4096, 0);
    EXPECT_EQ(dataStart % 2880, 0);
    EXPECT_GT(dataStart, 2880);
    auto reader = openStack(path);
    EXPECT_EQ(reader->info().z, z);
    bool history = false;
    for (const auto& card : reader->info().header)
      history = history ||
                (card.key == "HISTORY" &&
                 (card.value + card.comment).find("aligned for write-back") != std::string::npos);
    EXPECT_TRUE(history);
    EXPECT_TRUE(test::sameValues(want, test::readAll(*reader)));
  }
  unsetenv("STACKLENS_WRITE_WITHOUT_MAPPING");
}

// In tmpfs the space is reserved in the background while boxes are computed; the boxes wait for
// it and read back, and a stack larger than the free space is refused at once.
TEST(BlockWriter, InMemoryFileSystemReservesInTheBackground) {
  struct statfs fs {};
  if (::statfs("/dev/shm", &fs) != 0 || static_cast<unsigned long>(fs.f_type) != 0x01021994)
    GTEST_SKIP() << "no tmpfs at /dev/shm";
  const char* old = std::getenv("TMPDIR");
  const std::string saved = old ? old : "";
  setenv("TMPDIR", "/dev/shm", 1);
  {
    test::TempDir dir;
    const int64_t z = 3, y = 512, x = 1024;
    std::vector<float> want(size_t(z * y * x));
    for (size_t i = 0; i < want.size(); ++i) want[i] = float(i % 977) * 0.5f;
    const std::string path = dir.file("memory.fits");
    {
      StackBlockWriter w(path, z, y, x, {});
      w.writeBox(0, z, 0, y, 0, x, want.data());
      w.commit();
    }
    EXPECT_TRUE(test::sameValues(want, test::readAll(*openStack(path))));
    struct statvfs space {};
    ASSERT_EQ(::statvfs("/dev/shm", &space), 0);
    const auto tooMany = int64_t(space.f_bavail) * int64_t(space.f_frsize) / (y * x * 4) + 8;
    try {
      StackBlockWriter w(dir.file("huge.fits"), tooMany, y, x, {});
      ADD_FAILURE() << "a stack larger than the free space was accepted";
    } catch (const IoError& e) {
      EXPECT_NE(std::string(e.what()).find("not enough free space"), std::string::npos) << e.what();
    }
    EXPECT_EQ(dir.entries().size(), 1u);  // no temporary file left
  }
  if (old)
    setenv("TMPDIR", saved.c_str(), 1);
  else
    unsetenv("TMPDIR");
}

TEST(BlockWriter, UncommittedLeavesNothingAndBadArgumentsAreErrors) {
  test::TempDir dir;
  {
    StackBlockWriter w(dir.file("gone.fits"), 2, 3, 4, {});
    const std::vector<float> row(4, 1.f);
    w.writeBox(0, 1, 0, 1, 0, 4, row.data());
    EXPECT_THROW(w.writeBox(0, 1, 0, 1, 2, 6, row.data()), IoError);  // past x
  }
  EXPECT_EQ(dir.entries().size(), 0u);  // neither the file nor its temporary
  EXPECT_THROW(StackBlockWriter(dir.file("a.png"), 2, 3, 4, {}), IoError);
  EXPECT_TRUE(StackBlockWriter::supports("x.FITS"));
  EXPECT_TRUE(StackBlockWriter::supports("x.tiff"));
  EXPECT_FALSE(StackBlockWriter::supports("x.png"));
  {
    // TIFF as FITS: boxes outside the stack are refused; nothing stays uncommitted.
    StackBlockWriter w(dir.file("part.tif"), 2, 3, 4, {});
    const std::vector<float> slice(12, 2.f);
    w.writeBox(0, 1, 0, 3, 0, 4, slice.data());
    EXPECT_THROW(w.writeBox(1, 3, 0, 3, 0, 4, slice.data()), IoError);  // past z
  }
  EXPECT_EQ(dir.entries().size(), 0u);
  // The input is never overwritten.
  WriteOptions options;
  options.sourcePath = dir.file("in.fits");
  EXPECT_THROW(StackBlockWriter(dir.file("in.fits"), 2, 3, 4, options), IoError);
}

}  // namespace
}  // namespace stacklens::io
