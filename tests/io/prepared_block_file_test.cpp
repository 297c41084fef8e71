// writeBoxIntoPreparedFile: boxes from child processes into the file a StackBlockWriter prepared
// give the same file, byte for byte, as the writer's own boxes (FITS, a single FITS image, TIFF;
// mapped and through pwrite), and an OME-Zarr output from whole chunks; once the writer gave up, a
// late box fails and leaves nothing.
#include "io/prepared_block_file.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "io/block_writer.h"
#include "io/io_error.h"
#include "io/stack.h"
#include "test_support.h"

namespace stacklens::io {
namespace {

using test::Box;

std::vector<float> cut(const std::vector<float>& stack, int64_t y, int64_t x, const Box& b) {
  std::vector<float> part;
  for (int64_t k = b.z0; k < b.z1; ++k)
    for (int64_t j = b.y0; j < b.y1; ++j)
      for (int64_t i = b.x0; i < b.x1; ++i) part.push_back(stack[size_t((k * y + j) * x + i)]);
  return part;
}

std::string contents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Each box from a process of its own, all at once (every other one straight from the whole
// stack, its rows and slices apart); true when every one wrote its box.
bool writeFromChildren(const PreparedBlockFile& file, const std::vector<Box>& boxes,
                       const std::vector<float>& stack) {
  std::vector<pid_t> children;
  for (size_t i = 0; i < boxes.size(); ++i) {
    const Box& b = boxes[i];
    const std::vector<float> part = cut(stack, file.y, file.x, b);
    const pid_t pid = ::fork();
    if (pid == 0) {
      try {
        if (i % 2)
          writeBoxIntoPreparedFile(file, b.z0, b.z1, b.y0, b.y1, b.x0, b.x1,
                                   stack.data() + (b.z0 * file.y + b.y0) * file.x + b.x0, file.x,
                                   file.y * file.x);
        else
          writeBoxIntoPreparedFile(file, b.z0, b.z1, b.y0, b.y1, b.x0, b.x1, part.data());
      } catch (...) {
        ::_exit(1);
      }
      ::_exit(0);
    }
    children.push_back(pid);
  }
  bool all = true;
  for (pid_t pid : children) {
    int status = 0;
    all = ::waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0 && all;
  }
  return all;
}

TEST(PreparedBlockFile, BoxesFromOtherProcessesGiveTheWritersOwnFile) {
  WriteOptions options;
  options.history.push_back("written by other processes");
  options.spacingKnown = true;
  options.spacing = {2.0, 0.5, 0.5};
  for (const char* mapping : {"0", "1"}) {
    setenv("STACKLENS_WRITE_WITHOUT_MAPPING", mapping, 1);
    for (const char* name : {"out.fits", "out.tif", "single.fits"}) {
      SCOPED_TRACE(std::string(name) + " STACKLENS_WRITE_WITHOUT_MAPPING=" + mapping);
      const bool single = std::string(name) == "single.fits";
      const int64_t z = single ? 1 : 7, y = 45, x = 1030;
      std::vector<float> want(size_t(z * y * x));
      for (size_t i = 0; i < want.size(); ++i) want[i] = float(i % 65521) * 0.25f - 3.f;
      // Boxes sharing rows and pages (columns split at 333 and 700).
      const std::vector<std::pair<int64_t, int64_t>> slices =
          single ? std::vector<std::pair<int64_t, int64_t>>{{0, 1}}
                 : std::vector<std::pair<int64_t, int64_t>>{{0, 3}, {3, z}};
      std::vector<Box> boxes;
      for (const auto& [z0, z1] : slices)
        for (int64_t j : {0, 20})
          for (int64_t i : {0, 333, 700})
            boxes.push_back({z0, z1, j, j == 0 ? 20 : y, i, i == 0 ? 333 : i == 333 ? 700 : x});
      test::TempDir dir;
      const std::string mine = dir.file("mine-" + std::string(name));
      {
        StackBlockWriter w(mine, z, y, x, options);
        for (const Box& b : boxes)
          w.writeBox(b.z0, b.z1, b.y0, b.y1, b.x0, b.x1, cut(want, y, x, b).data());
        w.commit();
      }
      const std::string theirs = dir.file(name);
      {
        StackBlockWriter w(theirs, z, y, x, options, BoxWriters::OtherProcesses);
        ASSERT_TRUE(writeFromChildren(w.prepared(), boxes, want));
        w.commit();
      }
      EXPECT_TRUE(test::sameValues(want, test::readAll(*openStack(theirs))));
      EXPECT_TRUE(contents(mine) == contents(theirs)) << "the two files differ";
    }
  }
  unsetenv("STACKLENS_WRITE_WITHOUT_MAPPING");
}

// An OME-Zarr output (both versions, with a second level): boxes of whole chunks from other
// processes give the stored values; a box off the chunk grid is refused, naming the chunks.
TEST(PreparedBlockFile, WholeChunksFromOtherProcessesMakeTheZarrOutput) {
  const int64_t z = 5, y = 40, x = 50;
  std::vector<float> want(size_t(z * y * x));
  for (size_t i = 0; i < want.size(); ++i) want[i] = float(i % 4093) * 0.5f - 7.f;
  // Chunks of 2 × 16 × 20: the boxes end on the grid or at the stack's end (5, 40, 50).
  std::vector<Box> boxes;
  for (const auto& [z0, z1] : {std::pair<int64_t, int64_t>{0, 2}, {2, 5}})
    for (const auto& [y0, y1] : {std::pair<int64_t, int64_t>{0, 32}, {32, 40}})
      for (const auto& [x0, x1] : {std::pair<int64_t, int64_t>{0, 20}, {20, 50}})
        boxes.push_back({z0, z1, y0, y1, x0, x1});
  for (const char* version : {"0.4", "0.5"}) {
    SCOPED_TRACE(version);
    WriteOptions options;
    options.zarr.omeVersion = version;
    options.zarr.chunks = {2, 16, 20};
    options.zarr.levels = 2;
    test::TempDir dir;
    const std::string out = dir.file("out.zarr");
    {
      StackBlockWriter w(out, z, y, x, options, BoxWriters::OtherProcesses);
      const PreparedBlockFile file = w.prepared();
      EXPECT_EQ(file.samples, BlockSamples::ZarrFloat32);
      ASSERT_TRUE(writeFromChildren(file, boxes, want));
      const std::vector<float> part(2 * 16 * 10, 1.f);
      try {
        writeBoxIntoPreparedFile(file, 0, 2, 0, 16, 10, 20, part.data());
        ADD_FAILURE() << "a box off the chunk grid was taken";
      } catch (const IoError& e) {
        EXPECT_NE(std::string(e.what()).find("whole chunks of 2 x 16 x 20"), std::string::npos)
            << e.what();
      }
      w.commit();
    }
    EXPECT_TRUE(test::sameValues(want, test::readAll(*openStack(out))));
    OpenOptions level1;
    level1.hdu = 1;
    EXPECT_EQ(openStack(out, level1)->info().x, 25);  // made at commit from the workers' chunks
    EXPECT_EQ(dir.entries().size(), 1u);              // the output alone
  }
}

TEST(PreparedBlockFile, ABoxAfterTheWriterGaveUpFailsAndLeavesNothing) {
  test::TempDir dir;
  PreparedBlockFile file;
  {
    StackBlockWriter w(dir.file("gone.fits"), 2, 3, 4, {}, BoxWriters::OtherProcesses);
    file = w.prepared();
    const std::vector<float> row(4, 1.f);
    writeBoxIntoPreparedFile(file, 0, 1, 0, 1, 0, 4, row.data());
    EXPECT_THROW(writeBoxIntoPreparedFile(file, 0, 1, 0, 1, 2, 6, row.data()), IoError);  // past x
  }
  const std::vector<float> row(4, 1.f);
  try {
    writeBoxIntoPreparedFile(file, 1, 2, 0, 1, 0, 4, row.data());
    ADD_FAILURE() << "a box went into a file that was given up";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("the run was stopped"), std::string::npos) << e.what();
  }
  EXPECT_EQ(dir.entries().size(), 0u);  // neither the file nor its temporary folder

  {
    WriteOptions options;
    options.zarr.chunks = {1, 1, 4};
    StackBlockWriter w(dir.file("gone.zarr"), 2, 3, 4, options, BoxWriters::OtherProcesses);
    file = w.prepared();
    writeBoxIntoPreparedFile(file, 0, 1, 0, 1, 0, 4, row.data());
  }
  try {
    writeBoxIntoPreparedFile(file, 1, 2, 0, 1, 0, 4, row.data());
    ADD_FAILURE() << "a box went into a Zarr folder that was given up";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("the run was stopped"), std::string::npos) << e.what();
  }
  EXPECT_EQ(dir.entries().size(), 0u);
}

}  // namespace
}  // namespace stacklens::io
