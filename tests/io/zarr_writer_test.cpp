// OME-Zarr output (io/zarr_stack_writer.h): round trips through our reader for 0.4 and 0.5, with
// and without levels, shapes that are not multiples of the chunks, NaN; boxes from several
// threads and partial chunks set aside on disk; the atomic rename; the OME metadata's required
// fields; and Debian's python3-zarr (v2) reading the 0.4 output.
//
// The metadata is checked by hand against the NGFF 0.4 and 0.5 specifications' required fields
// and to the 0.4 JSON schema's constraints (required members, axis and transformation forms):
// the schemas themselves are not kept here, since validating with them needs a JSON Schema
// validator that Debian's Python here lacks (python3-jsonschema is not a test dependency).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "io/block_writer.h"
#include "io/io_error.h"
#include "io/stack.h"
#include "io/stack_writer.h"
#include "io/zarr_stack_writer.h"
#include "test_support.h"

namespace stacklens::io {
namespace {

using Json = nlohmann::json;
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// Values that differ everywhere (so a misplaced sample shows), negative and fractional ones,
// and NaN at a few places, including a whole row.
std::vector<float> testValues(int64_t z, int64_t y, int64_t x) {
  std::vector<float> v(size_t(z * y * x));
  for (size_t i = 0; i < v.size(); ++i) v[i] = float(int64_t(i % 9973) - 4000) * 0.37f;
  v[3] = kNaN;
  v[v.size() / 2] = kNaN;
  for (int64_t c = 0; c < x; ++c) v[size_t((z - 1) * y * x + 2 * x + c)] = kNaN;
  return v;
}

// The 2 × 2 mean of a level in y and x, NaN left out (the writer's rule, io/zarr_pyramid.h).
std::vector<float> halved(const std::vector<float>& in, int64_t z, int64_t y, int64_t x) {
  const int64_t oy = (y + 1) / 2, ox = (x + 1) / 2;
  std::vector<float> out(size_t(z * oy * ox));
  for (int64_t k = 0; k < z; ++k)
    for (int64_t r = 0; r < oy; ++r)
      for (int64_t c = 0; c < ox; ++c) {
        double sum = 0;
        int n = 0;
        for (int64_t yy = 2 * r; yy < std::min(y, 2 * r + 2); ++yy)
          for (int64_t xx = 2 * c; xx < std::min(x, 2 * c + 2); ++xx) {
            const float v = in[size_t((k * y + yy) * x + xx)];
            if (!std::isnan(v)) sum += v, ++n;
          }
        out[size_t((k * oy + r) * ox + c)] = n ? float(sum / n) : kNaN;
      }
  return out;
}

WriteOptions optionsFor(const std::string& version, int levels) {
  WriteOptions o;
  o.zarr.omeVersion = version;
  o.zarr.levels = levels;
  o.zarr.chunks = {2, 16, 16};
  o.spacing = {2.0, 0.25, 0.5};
  o.units = {"micron", "micron", "micron"};
  o.spacingKnown = true;
  o.history = {"zarr writer test", "second line"};
  return o;
}

struct Case {
  std::string version;
  int levels;
};

class ZarrWriterRoundTrip : public ::testing::TestWithParam<Case> {};

// Every level reads back as written (level 0 bit for bit through a lossless codec in this
// process; each further level as the 2 × 2 mean), with its spacing and units.
TEST_P(ZarrWriterRoundTrip, ReadsBackEveryLevel) {
  const Case c = GetParam();
  test::TempDir dir;
  const std::string path = dir.file("out.ome.zarr");
  const int64_t z = 5, y = 37, x = 53;  // no axis a multiple of the chunks (2, 16, 16)
  const std::vector<float> values = testValues(z, y, x);
  writeStack(path, values.data(), z, y, x, optionsFor(c.version, c.levels));
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"out.ome.zarr"});  // no temporary folder

  std::vector<float> expected = values;
  int64_t ly = y, lx = x;
  for (int level = 0; level < c.levels; ++level) {
    SCOPED_TRACE("level " + std::to_string(level));
    OpenOptions open;
    open.hdu = level;
    const auto reader = openStack(path, open);
    const StackInfo& info = reader->info();
    EXPECT_EQ(info.format, "zarr");
    ASSERT_EQ(info.z, z);
    ASSERT_EQ(info.y, ly);
    ASSERT_EQ(info.x, lx);
    EXPECT_EQ(info.hdus.size(), size_t(c.levels));
    EXPECT_TRUE(info.spacingKnown);
    EXPECT_DOUBLE_EQ(info.spacing[0], 2.0);
    EXPECT_DOUBLE_EQ(info.spacing[1], 0.25 * std::ldexp(1.0, level));
    EXPECT_DOUBLE_EQ(info.spacing[2], 0.5 * std::ldexp(1.0, level));
    EXPECT_EQ(info.units[2], "micron");
    EXPECT_TRUE(test::sameValues(expected, test::readAll(*reader)));
    expected = halved(expected, z, ly, lx);
    ly = (ly + 1) / 2, lx = (lx + 1) / 2;
  }
  // HISTORY comes back as cards (a FITS written from the image carries it on).
  const auto reader = openStack(path);
  std::vector<std::string> history;
  for (const HeaderCard& card : reader->info().header)
    if (card.key == "HISTORY") history.push_back(card.comment);
  ASSERT_EQ(history.size(), 3u);
  EXPECT_EQ(history[0].rfind("StackLens ", 0), 0u) << history[0];  // the writing version
  EXPECT_EQ(history[1], "zarr writer test");
  EXPECT_EQ(history[2], "second line");
}

INSTANTIATE_TEST_SUITE_P(Versions, ZarrWriterRoundTrip,
                         ::testing::Values(Case{"0.4", 1}, Case{"0.4", 3}, Case{"0.5", 1},
                                           Case{"0.5", 3}),
                         [](const auto& info) {
                           return "v" + std::string(info.param.version == "0.4" ? "04" : "05") +
                                  "_levels" + std::to_string(info.param.levels);
                         });

// The OME metadata's required fields (NGFF 0.4: .zattrs multiscales with version; 0.5:
// zarr.json attributes.ome with version, arrays with dimension_names matching the axes).
void checkMultiscale(const Json& m, int levels, const std::string& file) {
  SCOPED_TRACE(file);
  ASSERT_TRUE(m.is_object());
  // 0.5's strict schema also asks for name, type and metadata (type and metadata describe the
  // downscaling, so there are none without levels).
  EXPECT_TRUE(m.contains("name") && m["name"].is_string());
  EXPECT_EQ(m.contains("type") && m.contains("metadata"), levels > 1);
  ASSERT_TRUE(m.contains("axes") && m["axes"].is_array());
  ASSERT_EQ(m["axes"].size(), 3u);  // 2 to 5 axes, 2 or 3 of them space
  const char* names[3] = {"z", "y", "x"};
  for (size_t a = 0; a < 3; ++a) {
    EXPECT_EQ(m["axes"][a]["name"], names[a]);
    EXPECT_EQ(m["axes"][a]["type"], "space");
    EXPECT_EQ(m["axes"][a]["unit"], "micrometer");  // one of the spec's space units
  }
  ASSERT_TRUE(m.contains("datasets") && m["datasets"].is_array());
  ASSERT_EQ(m["datasets"].size(), size_t(levels));
  for (int level = 0; level < levels; ++level) {
    const Json& d = m["datasets"][size_t(level)];
    EXPECT_EQ(d["path"], std::to_string(level));
    const Json& t = d["coordinateTransformations"];
    ASSERT_TRUE(t.is_array());
    // Exactly one scale, first; at most one translation, after it; one value per axis.
    ASSERT_EQ(t.size(), level == 0 ? 1u : 2u);
    EXPECT_EQ(t[0]["type"], "scale");
    const double factor = std::ldexp(1.0, level);
    EXPECT_EQ(t[0]["scale"], Json::array({2.0, 0.25 * factor, 0.5 * factor}));
    if (level > 0) {
      EXPECT_EQ(t[1]["type"], "translation");
      EXPECT_EQ(t[1]["translation"],
                Json::array({0.0, 0.25 * (factor - 1) / 2, 0.5 * (factor - 1) / 2}));
    }
  }
}

Json readJson(const std::string& path) {
  const std::string text = test::readBytes(path);
  EXPECT_FALSE(text.empty()) << path;
  return Json::parse(text);
}

TEST(ZarrWriterMetadata, Version04HasTheRequiredFields) {
  test::TempDir dir;
  const std::string path = dir.file("a.zarr");
  const std::vector<float> values = testValues(3, 20, 21);
  writeStack(path, values.data(), 3, 20, 21, optionsFor("0.4", 2));
  EXPECT_EQ(readJson(path + "/.zgroup"), Json({{"zarr_format", 2}}));
  const Json attrs = readJson(path + "/.zattrs");
  ASSERT_TRUE(attrs.contains("multiscales") && attrs["multiscales"].is_array());
  ASSERT_EQ(attrs["multiscales"].size(), 1u);
  EXPECT_EQ(attrs["multiscales"][0]["version"], "0.4");
  checkMultiscale(attrs["multiscales"][0], 2, ".zattrs");
  EXPECT_EQ(attrs["stacklens"]["history"].back(), "second line");
  for (int level = 0; level < 2; ++level) {
    const Json a = readJson(path + "/" + std::to_string(level) + "/.zarray");
    EXPECT_EQ(a["zarr_format"], 2);
    EXPECT_EQ(a["dtype"], "<f4");
    EXPECT_EQ(a["order"], "C");
    EXPECT_EQ(a["fill_value"], "NaN");
    EXPECT_EQ(a["compressor"]["id"], "blosc");
    EXPECT_EQ(a["shape"], Json::array({3, level == 0 ? 20 : 10, level == 0 ? 21 : 11}));
  }
}

TEST(ZarrWriterMetadata, Version05HasTheRequiredFields) {
  test::TempDir dir;
  const std::string path = dir.file("a.zarr");
  const std::vector<float> values = testValues(3, 20, 21);
  writeStack(path, values.data(), 3, 20, 21, optionsFor("0.5", 2));
  EXPECT_FALSE(std::filesystem::exists(path + "/.zattrs"));
  const Json group = readJson(path + "/zarr.json");
  EXPECT_EQ(group["zarr_format"], 3);
  EXPECT_EQ(group["node_type"], "group");
  const Json& ome = group["attributes"]["ome"];
  EXPECT_EQ(ome["version"], "0.5");
  ASSERT_TRUE(ome.contains("multiscales") && ome["multiscales"].is_array());
  EXPECT_FALSE(ome["multiscales"][0].contains("version"));  // 0.5 keeps it in "ome" only
  checkMultiscale(ome["multiscales"][0], 2, "zarr.json");
  for (int level = 0; level < 2; ++level) {
    const Json a = readJson(path + "/" + std::to_string(level) + "/zarr.json");
    EXPECT_EQ(a["zarr_format"], 3);
    EXPECT_EQ(a["node_type"], "array");
    EXPECT_EQ(a["data_type"], "float32");
    EXPECT_EQ(a["fill_value"], "NaN");
    EXPECT_EQ(a["dimension_names"], Json::array({"z", "y", "x"}));
    EXPECT_EQ(a["chunk_grid"]["configuration"]["chunk_shape"],
              level == 0 ? Json::array({2, 16, 16})
                         : Json::array({2, 10, 11}));  // clipped to the level's 10 × 11
    EXPECT_EQ(a["chunk_key_encoding"]["name"], "default");
  }
  EXPECT_TRUE(std::filesystem::exists(path + "/0/c/1/1/1"));  // v3 chunk keys
}

// Boxes that straddle chunks, from several threads, with a pending limit so small that every
// incomplete chunk goes to a scratch file and comes back: the result is the same.
TEST(ZarrWriterStreaming, BoxesFromThreadsWithPartialChunksSetAside) {
  test::TempDir dir;
  const std::string path = dir.file("s.zarr");
  const int64_t z = 7, y = 45, x = 38;
  const std::vector<float> values = testValues(z, y, x);
  WriteOptions o = optionsFor("0.5", 2);
  o.zarr.chunks = {3, 16, 16};
  o.zarr.pendingBytes = 1;
  ZarrStackWriter writer(path, z, y, x, false, o);
  // Boxes of 2 × 11 × 13 (the last ones smaller) cut across every chunk boundary.
  std::vector<std::array<int64_t, 6>> boxes;
  for (int64_t z0 = 0; z0 < z; z0 += 2)
    for (int64_t y0 = 0; y0 < y; y0 += 11)
      for (int64_t x0 = 0; x0 < x; x0 += 13)
        boxes.push_back(
            {z0, std::min(z, z0 + 2), y0, std::min(y, y0 + 11), x0, std::min(x, x0 + 13)});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (size_t b = size_t(t); b < boxes.size(); b += 4) {
        const auto [z0, z1, y0, y1, x0, x1] = boxes[b];
        std::vector<float> box;
        for (int64_t k = z0; k < z1; ++k)
          for (int64_t r = y0; r < y1; ++r)
            for (int64_t c = x0; c < x1; ++c) box.push_back(values[size_t((k * y + r) * x + c)]);
        writer.writeBox(z0, z1, y0, y1, x0, x1, box.data());
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_GT(writer.spills(), 0);
  EXPECT_FALSE(std::filesystem::exists(path));  // only at commit
  writer.commit();
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"s.zarr"});
  EXPECT_TRUE(test::sameValues(values, test::readAll(*openStack(path))));
  OpenOptions level1;
  level1.hdu = 1;
  EXPECT_TRUE(test::sameValues(halved(values, z, y, x), test::readAll(*openStack(path, level1))));
}

// StackBlockWriter takes a .zarr path: slabs of slices as the streaming commands write them;
// samples no box covered read as NaN (the fill value).
TEST(ZarrWriterStreaming, StackBlockWriterWritesZarr) {
  test::TempDir dir;
  const std::string path = dir.file("b.zarr/");  // a trailing '/' names the same folder
  const int64_t z = 9, y = 30, x = 31;
  const std::vector<float> values = testValues(z, y, x);
  WriteOptions o = optionsFor("0.4", 1);
  StackBlockWriter writer(path, z, y, x, o);
  // Other processes write whole chunks into the temporary folder (prepared_block_file_test.cpp).
  EXPECT_EQ(writer.prepared().samples, BlockSamples::ZarrFloat32);
  for (int64_t z0 = 0; z0 < z - 1; z0 += 3)  // the last slice is never written
    writer.writeBox(z0, std::min(z - 1, z0 + 3), 0, y, 0, x, values.data() + z0 * y * x);
  writer.commit();
  std::vector<float> expected = values;
  std::fill(expected.begin() + (z - 1) * y * x, expected.end(), kNaN);
  EXPECT_TRUE(test::sameValues(expected, test::readAll(*openStack(dir.file("b.zarr")))));
}

// Nothing is left of a writer that never commits; an existing output stays as it was until the
// new one commits, and is then replaced whole.
TEST(ZarrWriterAtomic, UncommittedLeavesNothingAndReplacesOnlyAtCommit) {
  test::TempDir dir;
  const std::string path = dir.file("r.zarr");
  {
    ZarrStackWriter writer(path, 2, 8, 8, false, optionsFor("0.5", 1));
    const std::vector<float> values(2 * 8 * 8, 1.0f);
    writer.writeBox(0, 2, 0, 8, 0, 8, values.data());
  }
  EXPECT_TRUE(dir.entries().empty());

  const std::vector<float> first(2 * 8 * 8, 1.0f), second(3 * 5 * 5, 2.0f);
  writeStack(path, first.data(), 2, 8, 8, optionsFor("0.5", 2));
  ZarrStackWriter writer(path, 3, 5, 5, false, optionsFor("0.4", 1));
  writer.writeBox(0, 3, 0, 5, 0, 5, second.data());
  EXPECT_TRUE(test::sameValues(first, test::readAll(*openStack(path))));
  writer.commit();
  EXPECT_TRUE(test::sameValues(second, test::readAll(*openStack(path))));
  EXPECT_FALSE(std::filesystem::exists(path + "/zarr.json"));  // the 0.5 tree is gone whole
  EXPECT_FALSE(std::filesystem::exists(path + "/1"));
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"r.zarr"});
}

TEST(ZarrWriterAtomic, RefusesToReplaceWhatIsNotAZarrFolder) {
  test::TempDir dir;
  const std::vector<float> values(8, 1.0f);
  std::filesystem::create_directories(dir.file("mine.zarr"));
  test::writeBytes(dir.file("mine.zarr/notes.txt"), "keep me");
  try {
    writeStack(dir.file("mine.zarr"), values.data(), 1, 2, 4, {});
    FAIL() << "replaced a folder that holds no Zarr metadata";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("mine.zarr"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("no Zarr metadata"), std::string::npos) << e.what();
  }
  EXPECT_EQ(test::readBytes(dir.file("mine.zarr/notes.txt")), "keep me");
}

TEST(ZarrWriterOptions, BadOptionsNameTheOutputAndTheReason) {
  test::TempDir dir;
  const std::vector<float> values(4 * 4, 1.0f);
  auto message = [&](WriteOptions o, bool labels = false) -> std::string {
    try {
      if (labels) {
        const std::vector<int32_t> ints(16, 1);
        writeLabelStack(dir.file("x.zarr"), ints.data(), 1, 4, 4, o);
      } else {
        writeStack(dir.file("x.zarr"), values.data(), 1, 4, 4, o);
      }
    } catch (const IoError& e) {
      return e.what();
    }
    return "";
  };
  WriteOptions o;
  o.zarr.omeVersion = "0.3";
  EXPECT_NE(message(o).find("x.zarr: OME-Zarr version \"0.3\""), std::string::npos) << message(o);
  o = {};
  o.zarr.levels = 5;  // 4 × 4 is one pixel at level 2
  EXPECT_NE(message(o).find("is already one pixel"), std::string::npos) << message(o);
  o = {};
  o.zarr.levels = 2;
  EXPECT_NE(message(o, true).find("labels are written with one level"), std::string::npos);
  EXPECT_TRUE(dir.entries().empty());
}

// Labels are int32 with fill value 0.
TEST(ZarrWriterLabels, LabelsRoundTrip) {
  test::TempDir dir;
  std::vector<int32_t> labels(3 * 17 * 19);
  for (size_t i = 0; i < labels.size(); ++i) labels[i] = int32_t(i % 7 == 0 ? 0 : i);
  writeLabelStack(dir.file("l.zarr"), labels.data(), 3, 17, 19, {});
  const auto reader = openStack(dir.file("l.zarr"));
  EXPECT_EQ(reader->info().dtype, DType::Int32);
  const std::vector<float> read = test::readAll(*reader);
  ASSERT_EQ(read.size(), labels.size());
  for (size_t i = 0; i < labels.size(); ++i) ASSERT_EQ(read[i], float(labels[i])) << i;
  EXPECT_EQ(readJson(dir.file("l.zarr/0/zarr.json"))["fill_value"], 0);
}

// Debian's python3-zarr (the v2 API, zarr-python 2.x) opens the 0.4 output: its values equal
// ours, every level. The comparison is exact on purpose: no arithmetic happens on either side
// (level 0 is the bytes written, through a lossless codec; the other levels are compared with
// what our reader reads from the same chunks), so a difference can only be a layout error.
TEST(ZarrWriterPython, ZarrPythonReadsTheVersion04Output) {
  test::TempDir dir;
  const std::string path = dir.file("py.zarr");
  const int64_t z = 4, y = 33, x = 35;
  const std::vector<float> values = testValues(z, y, x);
  writeStack(path, values.data(), z, y, x, optionsFor("0.4", 2));
  for (int level = 0; level < 2; ++level) {
    SCOPED_TRACE(level);
    OpenOptions open;
    open.hdu = level;
    const std::vector<float> ours = test::readAll(*openStack(path, open));
    const std::string raw = dir.file("level" + std::to_string(level) + ".f32");
    const std::string command =
        "/usr/bin/python3 -c \"import sys, zarr, numpy as np; "
        "g = zarr.open_group(sys.argv[1], mode='r'); "
        "m = g.attrs['multiscales'][0]; "
        "a = g[m['datasets'][int(sys.argv[2])]['path']]; "
        "assert [x['name'] for x in m['axes']] == ['z', 'y', 'x']; "
        "np.ascontiguousarray(a[...], dtype='<f4').tofile(sys.argv[3])\" '" +
        path + "' " + std::to_string(level) + " '" + raw + "' 2>&1";
    FILE* pipe = ::popen(command.c_str(), "r");
    std::string output;
    char buffer[512];
    while (pipe && std::fgets(buffer, sizeof buffer, pipe)) output += buffer;
    ASSERT_EQ(pipe ? ::pclose(pipe) : -1, 0) << output;
    const std::string bytes = test::readBytes(raw);
    ASSERT_EQ(bytes.size(), ours.size() * sizeof(float));
    std::vector<float> theirs(ours.size());
    std::memcpy(theirs.data(), bytes.data(), bytes.size());
    EXPECT_TRUE(test::sameValues(ours, theirs));
    if (level == 0) {
      EXPECT_TRUE(test::sameValues(values, theirs));
    }
  }
}

}  // namespace
}  // namespace stacklens::io
