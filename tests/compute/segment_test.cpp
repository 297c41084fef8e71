// Segmentation: labels against a flood fill written here and committed SciPy labels; measures.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "compute/backend.h"
#include "compute/cpu/operations.h"

namespace {

using namespace stacklens::compute;

const std::string kData = std::string(STACKLENS_TEST_DATA) + "/analysis/";

template <class T>
std::vector<T> readRaw(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << path;
  in.seekg(0, std::ios::end);
  std::vector<T> v(static_cast<size_t>(in.tellg()) / sizeof(T));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(T)));
  return v;
}

Image imageOf(const std::vector<float>& v, Shape s) {
  EXPECT_EQ(static_cast<int64_t>(v.size()), s.count());
  Image im = Image::host(s);
  std::copy(v.begin(), v.end(), im.data());
  return im;
}

// Image of a 0/1 mask drawn with '#' for foreground.
Image drawn(const std::vector<std::string>& rows) {
  Image im =
      Image::host({1, static_cast<int64_t>(rows.size()), static_cast<int64_t>(rows[0].size())});
  for (size_t y = 0; y < rows.size(); ++y)
    for (size_t x = 0; x < rows[y].size(); ++x) im.at(0, y, x) = rows[y][x] == '#' ? 1.f : 0.f;
  return im;
}

SegmentParams absolute(double threshold, int connectivity, int64_t minPixels = 1) {
  SegmentParams p;
  p.absoluteThreshold = threshold;
  p.connectivity = connectivity;
  p.minPixels = minPixels;
  return p;
}

// Independent reference: flood fill from each unvisited foreground pixel in raster order (which
// numbers components like scipy.ndimage.label), then drop small ones and renumber.
std::vector<int32_t> floodFill(const Image& im, double threshold, int connectivity,
                               int64_t minPixels) {
  const Shape s = im.shape();
  std::vector<int32_t> lab(static_cast<size_t>(s.count()), 0);
  std::vector<int64_t> sizes{0};
  int32_t next = 0;
  for (int64_t z = 0; z < s.z; ++z)
    for (int64_t y = 0; y < s.y; ++y)
      for (int64_t x = 0; x < s.x; ++x) {
        const int64_t i = (z * s.y + y) * s.x + x;
        if (lab[i] || !(im.data()[i] > threshold)) continue;
        lab[i] = ++next;
        sizes.push_back(0);
        std::vector<std::pair<int64_t, int64_t>> stack{{y, x}};
        while (!stack.empty()) {
          auto [cy, cx] = stack.back();
          stack.pop_back();
          ++sizes[next];
          for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx) {
              if ((dy == 0 && dx == 0) || (connectivity == 4 && dy != 0 && dx != 0)) continue;
              const int64_t ny = cy + dy, nx = cx + dx;
              if (ny < 0 || nx < 0 || ny >= s.y || nx >= s.x) continue;
              const int64_t j = (z * s.y + ny) * s.x + nx;
              if (lab[j] || !(im.data()[j] > threshold)) continue;
              lab[j] = next;
              stack.push_back({ny, nx});
            }
        }
      }
  std::vector<int32_t> renumber(sizes.size(), 0);
  int32_t kept = 0;
  for (size_t l = 1; l < sizes.size(); ++l)
    if (sizes[l] >= minPixels) renumber[l] = ++kept;
  for (auto& l : lab) l = renumber[l];
  return lab;
}

void expectLabels(const LabelImage& got, const std::vector<int32_t>& want,
                  const std::string& what) {
  ASSERT_EQ(static_cast<size_t>(got.shape().count()), want.size()) << what;
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < want.size(); ++i)
    if (got.data()[i] != want[i] && bad++ == 0) first = i;
  EXPECT_EQ(bad, 0u) << what << ": first difference at index " << first << " got "
                     << got.data()[first] << " want " << want[first];
}

TEST(Segment, MatchesScipyLabelsWith4And8Connectivity) {
  Image im = imageOf(readRaw<float>(kData + "segment_image.f32"), {1, 48, 64});
  cpu::ThreadPool pool(2);
  Segmentation s4 = cpu::segment(im, absolute(0.5, 4), {}, pool);
  Segmentation s8 = cpu::segment(im, absolute(0.5, 8), {}, pool);
  expectLabels(s4.labels, readRaw<int32_t>(kData + "segment_labels4.i32"), "4-connected");
  expectLabels(s8.labels, readRaw<int32_t>(kData + "segment_labels8.i32"), "8-connected");
  EXPECT_EQ(s4.sources.size(), 96u);
  EXPECT_EQ(s8.sources.size(), 76u);
}

TEST(Segment, MeasuresMatchScipy) {
  Image im = imageOf(readRaw<float>(kData + "segment_image.f32"), {1, 48, 64});
  cpu::ThreadPool pool(2);
  Segmentation s = cpu::segment(im, absolute(0.5, 8), {}, pool);
  std::ifstream ref(kData + "segment_sources8.txt");
  std::string line;
  size_t n = 0;
  while (std::getline(ref, line)) {
    if (line.rfind("# background median ", 0) == 0) {
      EXPECT_NEAR(s.background.clipped.median, std::stod(line.substr(20)), 1e-6);
      continue;
    }
    std::istringstream f(line);
    int label;
    int64_t npix, px, py, x0, x1, y0, y1;
    double flux, cx, cy, peak;
    f >> label >> npix >> flux >> cx >> cy >> peak >> px >> py >> x0 >> x1 >> y0 >> y1;
    ASSERT_TRUE(f) << line;
    ASSERT_LE(static_cast<size_t>(label), s.sources.size());
    const Source& src = s.sources[label - 1];
    EXPECT_EQ(src.label, label);
    EXPECT_EQ(src.npix, npix) << label;
    EXPECT_NEAR(src.flux, flux, 1e-5 * std::max(1.0, std::abs(flux))) << label;
    EXPECT_NEAR(src.centroidX, cx, 1e-5) << label;
    EXPECT_NEAR(src.centroidY, cy, 1e-5) << label;
    EXPECT_FLOAT_EQ(src.peak, static_cast<float>(peak)) << label;
    EXPECT_EQ(src.peakX, px) << label;
    EXPECT_EQ(src.peakY, py) << label;
    EXPECT_EQ(src.xMin, x0) << label;
    EXPECT_EQ(src.xMax, x1) << label;
    EXPECT_EQ(src.yMin, y0) << label;
    EXPECT_EQ(src.yMax, y1) << label;
    ++n;
  }
  EXPECT_EQ(n, s.sources.size());
}

TEST(Segment, StackIsLabelledPerSliceAndNumberedAcrossTheStack) {
  Image im = imageOf(readRaw<float>(kData + "segment_stack.f32"), {2, 32, 40});
  cpu::ThreadPool pool(2);
  Segmentation s = cpu::segment(im, absolute(0.5, 8), {}, pool);
  expectLabels(s.labels, readRaw<int32_t>(kData + "segment_stack_labels8.i32"), "stack");
  ASSERT_FALSE(s.sources.empty());
  EXPECT_EQ(s.sources.front().z, 0);
  EXPECT_EQ(s.sources.back().z, 1);
}

TEST(Segment, MatchesFloodFillOnRandomMasks) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(0, 1);
  for (int trial = 0; trial < 12; ++trial) {
    const int64_t h = 1 + trial * 7 % 41, w = 1 + trial * 13 % 53;
    Image im = Image::host({1 + trial % 2, h, w});
    const float density = 0.3f + 0.05f * trial;
    for (int64_t i = 0; i < im.shape().count(); ++i) im.data()[i] = u(rng) < density ? 1.f : 0.f;
    for (int connectivity : {4, 8})
      for (int64_t minPixels : {1, 3}) {
        for (int threads : {1, 3}) {
          cpu::ThreadPool pool(threads);
          Segmentation s = cpu::segment(im, absolute(0.5, connectivity, minPixels), {}, pool);
          const std::string what = "trial " + std::to_string(trial) + " conn " +
                                   std::to_string(connectivity) + " min " +
                                   std::to_string(minPixels);
          auto want = floodFill(im, 0.5, connectivity, minPixels);
          expectLabels(s.labels, want, what);
          int32_t maxLabel = 0;
          for (int32_t l : want) maxLabel = std::max(maxLabel, l);
          EXPECT_EQ(static_cast<int32_t>(s.sources.size()), maxLabel) << what;
        }
      }
  }
}

TEST(Segment, MatchesFloodFillOnSparseWideStacks) {
  // Sparse foreground on rows much wider than the 32-pixel blocks the row scan skips, with
  // runs placed across block edges and at row ends, NaN pixels, and slices whose label rows
  // must all be zeroed (labels are allocated without a fill; a previous result's freed memory
  // is likely reused, so leftovers would show).
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> u(0, 1);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int trial = 0; trial < 4; ++trial) {
    const Shape shape{3, 29 + trial, 203 + 31 * trial};
    Image im = Image::host(shape);
    const float density = 0.01f + 0.02f * trial;
    for (int64_t i = 0; i < shape.count(); ++i) {
      const float r = u(rng);
      im.data()[i] = r < density ? 2.f : r < density + 0.01f ? nan : u(rng);
    }
    for (int64_t y = 0; y < shape.y; y += 3)
      for (int64_t x : {int64_t{30}, int64_t{31}, int64_t{32}, int64_t{63}, int64_t{64},
                        shape.x - 2, shape.x - 1})
        im.at(trial % 3, y, x) = 3.f;
    for (int connectivity : {4, 8}) {
      cpu::ThreadPool pool(1 + trial % 2);
      for (int repeat = 0; repeat < 2; ++repeat) {
        Segmentation s = cpu::segment(im, absolute(1.0, connectivity), {}, pool);
        expectLabels(s.labels, floodFill(im, 1.0, connectivity, 1),
                     "trial " + std::to_string(trial) + " conn " + std::to_string(connectivity));
      }
    }
  }
}

TEST(Segment, HandMadePatterns) {
  cpu::ThreadPool pool(2);
  const std::vector<std::vector<std::string>> patterns = {
      // A U whose arms only meet at the bottom: two runs on top rows merge late.
      {"#...#.#", "#...#.#", "#...#.#", "#####.#", ".......", "#######"},
      // Diagonal-only contacts: one component for 8, four for 4.
      {"#...", ".#..", "..#.", "...#"},
      // A spiral.
      {"#######", "......#", "#####.#", "#...#.#", "#.###.#", "#.....#", "#######"},
      // Touching every edge.
      {"#.#.#", ".....", "#...#", ".....", "#.#.#"},
      // Anti-diagonal and a W that joins through corners.
      {"...#", "..#.", ".#..", "#..."},
      {"#...#...#", ".#.#.#.#.", "..#...#.."},
  };
  for (size_t k = 0; k < patterns.size(); ++k)
    for (int connectivity : {4, 8}) {
      Image im = drawn(patterns[k]);
      Segmentation s = cpu::segment(im, absolute(0.5, connectivity), {}, pool);
      expectLabels(s.labels, floodFill(im, 0.5, connectivity, 1),
                   "pattern " + std::to_string(k) + " conn " + std::to_string(connectivity));
    }
  // Spot checks that do not rely on the flood fill.
  Image diag = drawn(patterns[1]);
  EXPECT_EQ(cpu::segment(diag, absolute(0.5, 8), {}, pool).sources.size(), 1u);
  EXPECT_EQ(cpu::segment(diag, absolute(0.5, 4), {}, pool).sources.size(), 4u);
  Image u = drawn(patterns[0]);
  Segmentation su = cpu::segment(u, absolute(0.5, 4), {}, pool);
  ASSERT_EQ(su.sources.size(), 3u);
  EXPECT_EQ(su.labels.at(0, 0, 4), 1);  // the right arm belongs to the U begun at (0, 0)
  EXPECT_EQ(su.labels.at(0, 0, 6), 2);
  EXPECT_EQ(su.labels.at(0, 5, 0), 3);
  EXPECT_EQ(su.sources[0].npix, 11);
  EXPECT_EQ(su.sources[2].npix, 7);
}

TEST(Segment, NothingAboveTheThresholdGivesNoSources) {
  cpu::ThreadPool pool(2);
  Image im = drawn({"....", "#..."});
  Segmentation s = cpu::segment(im, absolute(1.0, 8), {}, pool);  // strictly above: 1 is not
  EXPECT_TRUE(s.sources.empty());
  for (int64_t i = 0; i < im.shape().count(); ++i) EXPECT_EQ(s.labels.data()[i], 0);
}

TEST(Segment, TinyImages) {
  cpu::ThreadPool pool(2);
  Segmentation one = cpu::segment(drawn({"#"}), absolute(0.5, 8), {}, pool);
  ASSERT_EQ(one.sources.size(), 1u);
  EXPECT_EQ(one.labels.at(0, 0, 0), 1);
  Segmentation row = cpu::segment(drawn({"##.#..###"}), absolute(0.5, 4), {}, pool);
  ASSERT_EQ(row.sources.size(), 3u);
  EXPECT_EQ(row.sources[2].xMin, 6);
  EXPECT_EQ(row.sources[2].xMax, 8);
  Segmentation column = cpu::segment(drawn({"#", "#", ".", "#"}), absolute(0.5, 8), {}, pool);
  EXPECT_EQ(column.sources.size(), 2u);
}

TEST(Segment, SigmaThresholdUsesClippedBackgroundAndWeightsByValueMinusMedian) {
  // Background alternating 0/2 → clipped median 1, std 1; nSigma 3 → threshold 4.
  Image im = Image::host({1, 20, 20});
  for (int64_t i = 0; i < im.shape().count(); ++i) im.data()[i] = (i % 2) ? 2.f : 0.f;
  im.at(0, 10, 10) = 11.f;  // weight 10
  im.at(0, 10, 11) = 6.f;   // weight 5
  im.at(0, 3, 3) = 4.f;     // exactly at the threshold: not a source
  cpu::ThreadPool pool(2);
  SegmentParams p;
  p.nSigma = 3;
  Segmentation s = cpu::segment(im, p, {}, pool);
  EXPECT_NEAR(s.background.clipped.median, 1.0, 1e-12);
  EXPECT_NEAR(s.threshold, 1.0 + 3 * s.background.clipped.std, 1e-12);
  ASSERT_EQ(s.sources.size(), 1u);
  const Source& src = s.sources[0];
  EXPECT_EQ(src.npix, 2);
  EXPECT_NEAR(src.flux, 15.0, 1e-9);
  EXPECT_NEAR(src.centroidX, (10 * 10 + 5 * 11) / 15.0, 1e-9);
  EXPECT_NEAR(src.centroidY, 10.0, 1e-9);
  EXPECT_EQ(src.peakX, 10);
  EXPECT_FLOAT_EQ(src.peak, 11.f);
}

TEST(Segment, UsesGivenBackgroundInsteadOfClippingAgain) {
  Image im = Image::host({1, 20, 20});
  for (int64_t i = 0; i < im.shape().count(); ++i) im.data()[i] = (i % 2) ? 2.f : 0.f;
  im.at(0, 10, 10) = 11.f;
  im.at(0, 5, 5) = 7.f;
  cpu::ThreadPool pool(2);
  SegmentParams p;
  p.nSigma = 3;
  const Segmentation clipped = cpu::segment(im, p, {}, pool);
  // Handing over the same statistics gives the same result…
  p.background = clipped.background;
  const Segmentation same = cpu::segment(im, p, {}, pool);
  EXPECT_EQ(same.threshold, clipped.threshold);
  ASSERT_EQ(same.sources.size(), clipped.sources.size());
  EXPECT_EQ(same.sources[0].flux, clipped.sources[0].flux);
  // …and other statistics are used as given: median 3, std 2 → threshold 9 keeps one pixel,
  // whose flux is 11 − 3.
  p.background->clipped.median = 3.0;
  p.background->clipped.std = 2.0;
  const Segmentation given = cpu::segment(im, p, {}, pool);
  EXPECT_DOUBLE_EQ(given.threshold, 9.0);
  EXPECT_EQ(given.background.clipped.median, 3.0);
  ASSERT_EQ(given.sources.size(), 1u);
  EXPECT_NEAR(given.sources[0].flux, 8.0, 1e-12);
}

TEST(Segment, FallsBackToTheUnweightedCentroidWhenWeightsSumToNothing) {
  cpu::ThreadPool pool(1);
  // Three equal values: median 1, every weight value − median = 0.
  Image low = Image::host({1, 1, 3});
  low.at(0, 0, 0) = 1.f;
  low.at(0, 0, 1) = 1.f;
  low.at(0, 0, 2) = 1.f;
  Segmentation s = cpu::segment(low, absolute(0.5, 8), {}, pool);
  ASSERT_EQ(s.sources.size(), 1u);
  EXPECT_DOUBLE_EQ(s.sources[0].centroidX, 1.0);
  EXPECT_DOUBLE_EQ(s.sources[0].flux, 0.0);
  EXPECT_EQ(s.sources[0].peakX, 0);  // ties: the first in raster order
}

TEST(Segment, RejectsBadParameters) {
  cpu::ThreadPool pool(1);
  Image im = drawn({"#."});
  EXPECT_THROW(cpu::segment(im, absolute(0.5, 6), {}, pool), InvalidArgument);
  EXPECT_THROW(cpu::segment(im, absolute(0.5, 8, 0), {}, pool), InvalidArgument);
  EXPECT_THROW(cpu::segment(im, absolute(std::nan(""), 8), {}, pool), InvalidArgument);
  EXPECT_THROW(cpu::segment(Image::host({1, 0, 3}), absolute(0.5, 8), {}, pool), InvalidArgument);
  Image nan = Image::host({1, 1, 2});
  nan.data()[0] = nan.data()[1] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_THROW(cpu::segment(nan, SegmentParams{}, {}, pool), InvalidArgument);
}

}  // namespace
