// readSlice from several threads at once gives the same values as reading one slice at a time.
#include <gtest/gtest.h>

#include <thread>

#include "io/stack.h"
#include "io/stack_writer.h"
#include "test_support.h"

namespace stacklens::io {
namespace {

void expectConcurrentReadsMatch(const std::string& path) {
  auto reader = openStack(path);
  const StackInfo& info = reader->info();
  const std::vector<float> serial = test::readAll(*reader);
  const int64_t sliceCount = info.y * info.x;
  constexpr int kThreads = 8;
  std::vector<std::vector<float>> results(kThreads, std::vector<float>(serial.size()));
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      try {
        // Each thread walks the slices in its own order so that reads interleave.
        for (int64_t i = 0; i < info.z; ++i) {
          const int64_t shifted = (i + t) % info.z;
          const int64_t k = t % 2 ? info.z - 1 - shifted : shifted;
          reader->readSlice(k, results[static_cast<size_t>(t)].data() + k * sliceCount);
        }
      } catch (const std::exception& e) {
        errors[static_cast<size_t>(t)] = e.what();
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(errors[static_cast<size_t>(t)], "");
    EXPECT_TRUE(test::sameValues(serial, results[static_cast<size_t>(t)])) << "thread " << t;
  }
}

TEST(ConcurrentRead, FitsAndTiffSlicesReadFromManyThreadsMatchSerialReads) {
  test::TempDir dir;
  const int64_t z = 37, y = 48, x = 40;
  std::vector<float> data(static_cast<size_t>(z * y * x));
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>((i * 7919) % 10007);
  writeStack(dir.file("s.fits"), data.data(), z, y, x, {});
  writeStack(dir.file("s.tif"), data.data(), z, y, x, {});
  for (const char* name : {"s.fits", "s.tif"}) {
    SCOPED_TRACE(name);
    EXPECT_TRUE(test::sameValues(data, test::readAll(*openStack(dir.file(name)))));
    expectConcurrentReadsMatch(dir.file(name));
  }
  const std::string fixtures = std::string(STACKLENS_TEST_DATA) + "/fixtures/";
  for (const char* name : {"rice.fits.fz", "plain.fits.gz", "lzw_uint16.tif", "tiled_uint16.tif"}) {
    SCOPED_TRACE(name);
    expectConcurrentReadsMatch(fixtures + name);
  }
}

}  // namespace
}  // namespace stacklens::io
