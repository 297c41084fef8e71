// Segmentation on every backend against one reference (segment_reference.h) and committed SciPy
// labels and measures: connectivity, stacks, tiles, thresholds, background, bad input; CUDA
// against the CPU too.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "compute/backend.h"
#include "compute/device_control.h"
#include "tests/compute/filter_reference.h"
#include "tests/compute/gpu_test_backends.h"
#include "tests/compute/image_checks.h"
#include "tests/compute/invalid_argument_check.h"
#include "tests/compute/segment_reference.h"
#include "tests/compute/test_values.h"

namespace {

using stacklens::testing::kAnalysisData;
using namespace stacklens::compute;
using stacklens::testing::expectInvalidNaming;
using stacklens::testing::expectLabels;
using stacklens::testing::labelReference;
using stacklens::testing::randomImage;
using stacklens::testing::readReference;
using stacklens::testing::readReferenceImage;
using stacklens::testing::skyImage;

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

class Segment : public stacklens::testing::OnEachBackend {
 protected:
  // The segmentation with its labels on the host.
  Segmentation run(const Image& in, const SegmentParams& p) {
    Segmentation s = backend->segment(in, p);
    s.labels = onHost(s.labels);
    return s;
  }
};
STACKLENS_ON_EACH_BACKEND(Segment);

TEST_P(Segment, MatchesScipyLabelsWith4And8Connectivity) {
  // Prepare
  const Image im = imageOf(readRaw<float>(kAnalysisData + "segment_image.f32"), {1, 48, 64});
  const Shape t{1, 30, 41};
  const Image other = readReferenceImage("cuda_label_in.f32", t);

  // Run
  const Segmentation s4 = run(im, absolute(0.5, 4)), s8 = run(im, absolute(0.5, 8));
  const Segmentation o8 = run(other, absolute(0.6, 8)), o4 = run(other, absolute(0.6, 4));

  // Verify
  expectLabels(s4.labels, readRaw<int32_t>(kAnalysisData + "segment_labels4.i32"), "4-connected");
  expectLabels(s8.labels, readRaw<int32_t>(kAnalysisData + "segment_labels8.i32"), "8-connected");
  EXPECT_EQ(s4.sources.size(), 96u);
  EXPECT_EQ(s8.sources.size(), 76u);
  for (const auto& [conn, seg] : {std::pair{8, &o8}, std::pair{4, &o4}}) {
    const std::vector<int32_t> want =
        readReference<int32_t>("cuda_label" + std::to_string(conn) + ".i32", size_t(t.count()));
    expectLabels(seg->labels, want, "connectivity " + std::to_string(conn));
    EXPECT_EQ(static_cast<int32_t>(seg->sources.size()),
              *std::max_element(want.begin(), want.end()));
  }
}

TEST_P(Segment, MeasuresMatchScipy) {
  // Prepare
  const Image im = imageOf(readRaw<float>(kAnalysisData + "segment_image.f32"), {1, 48, 64});
  std::ifstream ref(kAnalysisData + "segment_sources8.txt");

  // Run
  const Segmentation s = run(im, absolute(0.5, 8));

  // Verify
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

TEST_P(Segment, StackIsLabelledPerSliceAndNumberedAcrossTheStack) {
  // Prepare
  const Image im = imageOf(readRaw<float>(kAnalysisData + "segment_stack.f32"), {2, 32, 40});

  // Run
  const Segmentation s = run(im, absolute(0.5, 8));

  // Verify
  expectLabels(s.labels, readRaw<int32_t>(kAnalysisData + "segment_stack_labels8.i32"), "stack");
  ASSERT_FALSE(s.sources.empty());
  EXPECT_EQ(s.sources.front().z, 0);
  EXPECT_EQ(s.sources.back().z, 1);
}

TEST_P(Segment, LabelsAndMeasuresLikeTheReferenceAcrossSlices) {
  // Prepare: blobs of known shape; one of 2 pixels is dropped by minPixels = 3.
  Image in = randomImage({2, 40, 45}, 8, 0.f, 0.2f);
  auto blob = [&](int64_t z, int64_t y0, int64_t x0, int64_t h, int64_t w, float v) {
    for (int64_t y = y0; y < y0 + h; ++y)
      for (int64_t x = x0; x < x0 + w; ++x) in.at(z, y, x) = v + 0.01f * float(x + y);
  };
  blob(0, 3, 4, 5, 6, 2.f);
  blob(0, 20, 30, 2, 1, 3.f);
  blob(0, 30, 2, 6, 3, 1.5f);
  blob(1, 0, 40, 4, 5, 4.f);
  blob(1, 10, 10, 8, 8, 2.5f);
  in.at(1, 18, 18) = 2.6f;  // diagonal neighbour: joins under 8-connectivity only

  for (int conn : {4, 8}) {
    // Run
    const Segmentation seg = run(in, absolute(1.0, conn, 3));

    // Verify
    const std::vector<int32_t> want = labelReference(in, 1.0, conn, 3);
    expectLabels(seg.labels, want, "connectivity " + std::to_string(conn));
    const int32_t n = *std::max_element(want.begin(), want.end());
    ASSERT_EQ(static_cast<int32_t>(seg.sources.size()), n);
    const double bg = seg.background.clipped.median;
    for (const Source& src : seg.sources) {
      int64_t npix = 0, xMin = 1 << 30, xMax = -1, yMin = 1 << 30, yMax = -1, peakAt = -1;
      double flux = 0, fx = 0, fy = 0;
      float peak = -INFINITY;
      for (int64_t i = 0; i < in.shape().count(); ++i) {
        if (want[i] != src.label) continue;
        const int64_t x = i % 45, y = (i / 45) % 40;
        const double f = in.data()[i] - bg;
        ++npix;
        flux += f;
        fx += f * x;
        fy += f * y;
        if (in.data()[i] > peak) peak = in.data()[i], peakAt = i;
        xMin = std::min(xMin, x), xMax = std::max(xMax, x);
        yMin = std::min(yMin, y), yMax = std::max(yMax, y);
      }
      EXPECT_EQ(src.npix, npix) << src.label;
      EXPECT_NEAR(src.flux, flux, 1e-9 * std::abs(flux) + 1e-9) << src.label;
      EXPECT_NEAR(src.centroidX, fx / flux, 1e-9 * 45) << src.label;
      EXPECT_NEAR(src.centroidY, fy / flux, 1e-9 * 40) << src.label;
      EXPECT_EQ(src.peak, peak) << src.label;
      EXPECT_EQ(src.peakX, peakAt % 45) << src.label;
      EXPECT_EQ(src.peakY, (peakAt / 45) % 40) << src.label;
      EXPECT_EQ(src.xMin, xMin);
      EXPECT_EQ(src.xMax, xMax);
      EXPECT_EQ(src.yMin, yMin);
      EXPECT_EQ(src.yMax, yMax);
      EXPECT_EQ(src.z, peakAt / (45 * 40));
    }
  }
}

TEST_P(Segment, MatchesTheReferenceOnRandomMasks) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(0, 1);
  for (int trial = 0; trial < 12; ++trial) {
    // Prepare
    const int64_t h = 1 + trial * 7 % 41, w = 1 + trial * 13 % 53;
    Image im = Image::host({1 + trial % 2, h, w});
    const float density = 0.3f + 0.05f * trial;
    for (int64_t i = 0; i < im.shape().count(); ++i) im.data()[i] = u(rng) < density ? 1.f : 0.f;

    for (int connectivity : {4, 8})
      for (int64_t minPixels : {1, 3}) {
        // Run
        const Segmentation s = run(im, absolute(0.5, connectivity, minPixels));

        // Verify
        const std::string what = "trial " + std::to_string(trial) + " conn " +
                                 std::to_string(connectivity) + " min " + std::to_string(minPixels);
        const auto want = labelReference(im, 0.5, connectivity, minPixels);
        expectLabels(s.labels, want, what);
        int32_t maxLabel = 0;
        for (int32_t l : want) maxLabel = std::max(maxLabel, l);
        EXPECT_EQ(static_cast<int32_t>(s.sources.size()), maxLabel) << what;
      }
  }
}

// Dense random masks: components that wind across many of CUDA's 32×64 labelling tiles (and the
// slices' edges), where the tile-border joins and the raster-order relabelling must agree with
// the flood fill.
TEST_P(Segment, WindingComponentsAcrossTilesMatchTheReference) {
  // Prepare
  const Image in = randomImage({2, 70, 101}, 21, 0.f, 1.f);

  for (int conn : {4, 8})
    for (double threshold : {0.45, 0.6}) {
      // Run
      const Segmentation seg = run(in, absolute(threshold, conn, 2));

      // Verify
      const std::vector<int32_t> want = labelReference(in, threshold, conn, 2);
      expectLabels(
          seg.labels, want,
          "connectivity " + std::to_string(conn) + " threshold " + std::to_string(threshold));
      const int32_t n = *std::max_element(want.begin(), want.end());
      ASSERT_EQ(static_cast<int32_t>(seg.sources.size()), n);
      std::vector<int64_t> npix(n + 1, 0);
      for (int32_t l : want) ++npix[l];
      for (const Source& src : seg.sources) EXPECT_EQ(src.npix, npix[src.label]) << src.label;
    }
}

// Tiles whose every row joins the row above at nearly every pixel (checkerboards: two diagonal
// joins a pixel under 8-connectivity; stripes: one straight join), some with random holes: more
// joins than CUDA's labelling lists at once for a warp, across several tiles and slices.
TEST_P(Segment, TilesFullOfJoinsMatchTheReference) {
  // Prepare
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(0, 1);
  for (int pattern = 0; pattern < 4; ++pattern) {
    Image im = Image::host({2, 131, 97});
    for (int64_t z = 0; z < 2; ++z)
      for (int64_t y = 0; y < 131; ++y)
        for (int64_t x = 0; x < 97; ++x) {
          const bool on = pattern % 2 == 0 ? (x + y) % 2 == 0 : x % 2 == 0;
          const bool hole = pattern >= 2 && u(rng) < 0.08f;
          im.at(z, y, x) = on && !hole ? 1.f : 0.f;
        }

    for (int connectivity : {4, 8}) {
      // Run
      const Segmentation s = run(im, absolute(0.5, connectivity));

      // Verify
      const std::string what =
          "pattern " + std::to_string(pattern) + " conn " + std::to_string(connectivity);
      const auto want = labelReference(im, 0.5, connectivity, 1);
      expectLabels(s.labels, want, what);
      EXPECT_EQ(static_cast<int32_t>(s.sources.size()), *std::max_element(want.begin(), want.end()))
          << what;
    }
  }
}

TEST_P(Segment, MatchesTheReferenceOnSparseWideStacks) {
  // Sparse foreground on rows much wider than the CPU's 32-pixel row-scan blocks, with runs
  // across block edges and at row ends, NaN pixels, and slices whose label rows must all be
  // zeroed (labels are allocated without a fill; a previous result's freed memory is likely
  // reused, so leftovers would show).
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> u(0, 1);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int trial = 0; trial < 4; ++trial) {
    // Prepare
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

    for (int connectivity : {4, 8})
      for (int repeat = 0; repeat < 2; ++repeat) {
        // Run
        const Segmentation s = run(im, absolute(1.0, connectivity));

        // Verify
        expectLabels(s.labels, labelReference(im, 1.0, connectivity, 1),
                     "trial " + std::to_string(trial) + " conn " + std::to_string(connectivity));
      }
  }
}

// Tens of thousands of sources in one image: more than CUDA sets sums aside for before it knows
// their number (it measures again), with pairs among single pixels so that minPixels drops some.
TEST_P(Segment, MeasuresEverySourceWhenThereAreTensOfThousands) {
  // Prepare: a lattice of pixels two apart (isolated under either connectivity), every fifth
  // grown into a horizontal pair; values vary so that each source's peak is its own.
  const Shape shape{2, 203, 334};
  Image im = Image::host(shape);
  std::fill(im.data(), im.data() + shape.count(), 0.f);
  for (int64_t z = 0; z < shape.z; ++z)
    for (int64_t y = 0; y < shape.y; y += 2)
      for (int64_t x = 0; x + 1 < shape.x; x += 3) {
        im.at(z, y, x) = 1.f + float((x + 7 * y + z) % 11);
        if ((x + y) % 5 == 0) im.at(z, y, x + 1) = 0.75f;
      }

  for (int connectivity : {4, 8})
    for (int64_t minPixels : {1, 2}) {
      // Run
      const Segmentation s = run(im, absolute(0.5, connectivity, minPixels));

      // Verify
      const std::string what =
          "conn " + std::to_string(connectivity) + " min " + std::to_string(minPixels);
      const std::vector<int32_t> want = labelReference(im, 0.5, connectivity, minPixels);
      expectLabels(s.labels, want, what);
      const int32_t n = *std::max_element(want.begin(), want.end());
      ASSERT_GT(n, minPixels == 1 ? 20000 : 4000) << what;  // 22644 and 4530
      ASSERT_EQ(static_cast<int32_t>(s.sources.size()), n) << what;
      std::vector<int64_t> npix(n + 1, 0), first(n + 1, -1);
      for (int64_t i = 0; i < shape.count(); ++i) {
        ++npix[want[i]];
        if (want[i] > 0 && first[want[i]] < 0) first[want[i]] = i;
      }
      for (const Source& src : s.sources) {
        const int64_t i = first[src.label];
        EXPECT_EQ(src.npix, npix[src.label]) << what << " source " << src.label;
        EXPECT_EQ(src.peak, im.data()[i]) << what << " source " << src.label;
        EXPECT_EQ(src.z * shape.y * shape.x + src.peakY * shape.x + src.peakX, i)
            << what << " source " << src.label;
      }
    }
}

TEST_P(Segment, HandMadePatterns) {
  // Prepare
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
      // Run
      const Image im = drawn(patterns[k]);
      const Segmentation s = run(im, absolute(0.5, connectivity));

      // Verify
      expectLabels(s.labels, labelReference(im, 0.5, connectivity, 1),
                   "pattern " + std::to_string(k) + " conn " + std::to_string(connectivity));
    }

  // Run, Verify: spot checks that do not rely on the flood fill.
  const Image diag = drawn(patterns[1]);
  EXPECT_EQ(run(diag, absolute(0.5, 8)).sources.size(), 1u);
  EXPECT_EQ(run(diag, absolute(0.5, 4)).sources.size(), 4u);
  const Segmentation su = run(drawn(patterns[0]), absolute(0.5, 4));
  ASSERT_EQ(su.sources.size(), 3u);
  EXPECT_EQ(su.labels.at(0, 0, 4), 1);  // the right arm belongs to the U begun at (0, 0)
  EXPECT_EQ(su.labels.at(0, 0, 6), 2);
  EXPECT_EQ(su.labels.at(0, 5, 0), 3);
  EXPECT_EQ(su.sources[0].npix, 11);
  EXPECT_EQ(su.sources[2].npix, 7);
}

TEST_P(Segment, NothingAboveTheThresholdGivesNoSources) {
  // Prepare
  const Image im = drawn({"....", "#..."});

  // Run
  const Segmentation s = run(im, absolute(1.0, 8));  // strictly above: 1 is not

  // Verify
  EXPECT_TRUE(s.sources.empty());
  for (int64_t i = 0; i < im.shape().count(); ++i) EXPECT_EQ(s.labels.data()[i], 0);
}

TEST_P(Segment, AThresholdBetweenTwoFloatsIsComparedAsADouble) {
  // Prepare: 0.98 lies between two floats; the float nearest it, 0.98f, is the one above, so a
  // pixel of 0.98f is above the threshold and the float below it is not.
  const float above = 0.98f, below = std::nextafter(0.98f, 0.f);
  ASSERT_GT(double(above), 0.98);
  ASSERT_LT(double(below), 0.98);
  Image im = Image::host({1, 1, 5});
  const float values[] = {above, below, above, below, below};
  std::copy(std::begin(values), std::end(values), im.data());

  // Run
  const Segmentation s = run(im, absolute(0.98, 8));

  // Verify
  ASSERT_EQ(s.sources.size(), 2u);
  const int32_t expected[] = {1, 0, 2, 0, 0};
  for (int x = 0; x < 5; ++x) EXPECT_EQ(s.labels.at(0, 0, x), expected[x]) << "x " << x;
}

TEST_P(Segment, TinyImages) {
  // Run
  const Segmentation one = run(drawn({"#"}), absolute(0.5, 8));
  const Segmentation row = run(drawn({"##.#..###"}), absolute(0.5, 4));
  const Segmentation column = run(drawn({"#", "#", ".", "#"}), absolute(0.5, 8));

  // Verify
  ASSERT_EQ(one.sources.size(), 1u);
  EXPECT_EQ(one.labels.at(0, 0, 0), 1);
  ASSERT_EQ(row.sources.size(), 3u);
  EXPECT_EQ(row.sources[2].xMin, 6);
  EXPECT_EQ(row.sources[2].xMax, 8);
  EXPECT_EQ(column.sources.size(), 2u);
}

TEST_P(Segment, SigmaThresholdUsesClippedBackgroundAndWeightsByValueMinusMedian) {
  // Prepare: background alternating 0/2 → clipped median 1, std 1; nSigma 3 → threshold 4.
  Image im = Image::host({1, 20, 20});
  for (int64_t i = 0; i < im.shape().count(); ++i) im.data()[i] = (i % 2) ? 2.f : 0.f;
  im.at(0, 10, 10) = 11.f;  // weight 10
  im.at(0, 10, 11) = 6.f;   // weight 5
  im.at(0, 3, 3) = 4.f;     // exactly at the threshold: not a source
  SegmentParams p;
  p.nSigma = 3;

  // Run
  const Segmentation s = run(im, p);

  // Verify
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

TEST_P(Segment, ThresholdComesFromTheClippedBackground) {
  // Prepare
  Image in = randomImage({1, 64, 64}, 9, 0.f, 1.f);
  for (int64_t y = 30; y < 34; ++y)
    for (int64_t x = 30; x < 34; ++x) in.at(0, y, x) = 50.f;
  SegmentParams p;
  p.nSigma = 4.0;

  // Run
  const Segmentation seg = run(in, p);
  const ClipStats clip = backend->sigmaClip(in, p.clip);

  // Verify
  EXPECT_DOUBLE_EQ(seg.threshold, clip.clipped.median + 4.0 * clip.clipped.std);
  ASSERT_EQ(seg.sources.size(), 1u);
  EXPECT_EQ(seg.sources[0].npix, 16);
  EXPECT_NEAR(seg.sources[0].centroidX, 31.5, 1e-9);
}

TEST_P(Segment, UsesGivenBackgroundInsteadOfClippingAgain) {
  // Prepare
  Image im = Image::host({1, 20, 20});
  for (int64_t i = 0; i < im.shape().count(); ++i) im.data()[i] = (i % 2) ? 2.f : 0.f;
  im.at(0, 10, 10) = 11.f;
  im.at(0, 5, 5) = 7.f;
  SegmentParams p;
  p.nSigma = 3;

  // Run
  const Segmentation clipped = run(im, p);
  p.background = clipped.background;
  const Segmentation same = run(im, p);
  // Other statistics are used as given: median 3, std 2 → threshold 9 keeps one pixel, whose
  // flux is 11 − 3.
  p.background->clipped.median = 3.0;
  p.background->clipped.std = 2.0;
  const Segmentation given = run(im, p);

  // Verify: handing over the same statistics gives the same result…
  EXPECT_EQ(same.threshold, clipped.threshold);
  ASSERT_EQ(same.sources.size(), clipped.sources.size());
  EXPECT_EQ(same.sources[0].flux, clipped.sources[0].flux);
  // …and other statistics are used as given.
  EXPECT_DOUBLE_EQ(given.threshold, 9.0);
  EXPECT_EQ(given.background.clipped.median, 3.0);
  ASSERT_EQ(given.sources.size(), 1u);
  EXPECT_NEAR(given.sources[0].flux, 8.0, 1e-12);
}

// Known background statistics are used as given: no clipping, the threshold and the fluxes from
// the given median and std, the given iteration count kept.
TEST_P(Segment, UsesAGivenBackgroundAsIs) {
  // Prepare
  Image in = randomImage({1, 40, 40}, 22, 0.f, 0.1f);
  for (int64_t y = 10; y < 13; ++y)
    for (int64_t x = 20; x < 23; ++x) in.at(0, y, x) = 3.f;
  ClipStats given;
  given.clipped.n = 7;
  given.clipped.median = 0.5;
  given.clipped.std = 0.25;
  given.iterations = 42;
  SegmentParams p;
  p.nSigma = 2.0;
  p.background = given;

  // Run
  const Segmentation seg = run(in, p);

  // Verify
  EXPECT_EQ(seg.background.iterations, 42);
  EXPECT_DOUBLE_EQ(seg.threshold, 1.0);
  ASSERT_EQ(seg.sources.size(), 1u);
  EXPECT_EQ(seg.sources[0].npix, 9);
  EXPECT_NEAR(seg.sources[0].flux, 9 * 2.5, 1e-9);
}

// Given statistics of no values (clipped.n = 0) have no median: fluxes are measured from 0, as
// when the clipping finds no finite values.
TEST_P(Segment, AGivenBackgroundOfNoValuesMeasuresFluxFromZero) {
  // Prepare
  Image in = Image::host({1, 20, 70});
  for (int64_t x = 40; x < 44; ++x) in.at(0, 5, x) = 3.f;
  ClipStats none;
  none.clipped.median = 0.5;  // what a caller's struct may hold, not a median of anything
  SegmentParams p = absolute(1.0, 8);
  p.background = none;

  // Run
  const Segmentation seg = run(in, p);

  // Verify
  ASSERT_EQ(seg.sources.size(), 1u);
  EXPECT_EQ(seg.sources[0].npix, 4);
  EXPECT_DOUBLE_EQ(seg.sources[0].flux, 12.0);
  EXPECT_DOUBLE_EQ(seg.sources[0].centroidX, 41.5);
}

TEST_P(Segment, FallsBackToTheUnweightedCentroidWhenWeightsSumToNothing) {
  // Prepare: three equal values, median 1, every weight value − median = 0.
  Image low = Image::host({1, 1, 3});
  low.at(0, 0, 0) = 1.f;
  low.at(0, 0, 1) = 1.f;
  low.at(0, 0, 2) = 1.f;

  // Run
  const Segmentation s = run(low, absolute(0.5, 8));

  // Verify
  ASSERT_EQ(s.sources.size(), 1u);
  EXPECT_DOUBLE_EQ(s.sources[0].centroidX, 1.0);
  EXPECT_DOUBLE_EQ(s.sources[0].flux, 0.0);
  EXPECT_EQ(s.sources[0].peakX, 0);  // ties: the first in raster order
}

TEST_P(Segment, RejectsBadParametersByName) {
  // Prepare
  const Image im = drawn({"#."});
  Image nan = Image::host({1, 1, 2});
  nan.data()[0] = nan.data()[1] = std::numeric_limits<float>::quiet_NaN();

  // Run, Verify
  expectInvalidNaming([&] { backend->segment(im, absolute(0.5, 6)); }, "connectivity");
  EXPECT_THROW(backend->segment(im, absolute(0.5, 8, 0)), InvalidArgument);
  EXPECT_THROW(backend->segment(im, absolute(std::nan(""), 8)), InvalidArgument);
  EXPECT_THROW(backend->segment(Image::host({1, 0, 3}), absolute(0.5, 8)), InvalidArgument);
  EXPECT_THROW(backend->segment(nan, SegmentParams{}), InvalidArgument);
}

// The CUDA backend against the CPU backend: labels exactly, measures alike.
class SegmentCudaAndCpu : public stacklens::testing::GpuTest {
 protected:
  void expectAlike(const Segmentation& got, const Segmentation& want, const std::string& what) {
    auto expectRelative = [](double g, double w, double tol, const std::string& name) {
      EXPECT_NEAR(g, w, tol * std::max(std::abs(w), 1e-30)) << name;
    };
    expectRelative(got.threshold, want.threshold, 1e-6, what + " threshold");
    const LabelImage gl = gpu->download(got.labels);
    ASSERT_EQ(gl.shape(), want.labels.shape()) << what;
    for (int64_t i = 0; i < gl.shape().count(); ++i)
      ASSERT_EQ(gl.data()[i], want.labels.data()[i]) << what << " index " << i;
    ASSERT_EQ(got.sources.size(), want.sources.size()) << what;
    for (size_t k = 0; k < got.sources.size(); ++k) {
      const Source &g = got.sources[k], &c = want.sources[k];
      const std::string source = what + " source " + std::to_string(k + 1);
      EXPECT_EQ(g.label, c.label) << source;
      EXPECT_EQ(g.npix, c.npix) << source;
      // Float sums in another order: a relative 1e-5 is hundreds of rounding steps of a sum of
      // tens of thousands of terms.
      expectRelative(g.flux, c.flux, 1e-5,
                     source + " flux, npix " + std::to_string(c.npix) + " peak " +
                         std::to_string(c.peak) + " at " + std::to_string(c.peakX) + "," +
                         std::to_string(c.peakY));
      expectRelative(g.centroidX, c.centroidX, 1e-5, source + " x");
      expectRelative(g.centroidY, c.centroidY, 1e-5, source + " y");
      EXPECT_EQ(g.peak, c.peak) << source;
      EXPECT_EQ(g.peakX, c.peakX) << source;
      EXPECT_EQ(g.peakY, c.peakY) << source;
      EXPECT_EQ(g.xMin, c.xMin) << source;
      EXPECT_EQ(g.xMax, c.xMax) << source;
      EXPECT_EQ(g.yMin, c.yMin) << source;
      EXPECT_EQ(g.yMax, c.yMax) << source;
      EXPECT_EQ(g.z, c.z) << source;
    }
  }
};

TEST_F(SegmentCudaAndCpu, LabelExactlyAndMeasureAlikeOnAFreshSky) {
  // Prepare
  const Image sky = skyImage(257, 7);

  for (int conn : {4, 8}) {
    SegmentParams p;
    p.connectivity = conn;
    p.minPixels = 3;
    p.clip.maxIterations = 0;

    // Run
    const Segmentation want = cpu->segment(sky, p);
    const Segmentation got = gpu->segment(sky, p);

    // Verify
    ASSERT_GT(got.sources.size(), 10u);
    expectAlike(got, want, "connectivity " + std::to_string(conn));
  }
}

// Winding bands of foreground across the whole image, with ragged edges: components that cross
// many tiles' borders, a few thousand of them on a large image, some of tens of thousands of
// pixels.
Image windingBands(Shape s, unsigned seed) {
  Image im = randomImage(s, seed, -0.03f, 0.03f);
  for (int64_t z = 0; z < s.z; ++z)
    for (int64_t y = 0; y < s.y; ++y)
      for (int64_t x = 0; x < s.x; ++x)
        im.at(z, y, x) += std::sin(float(x) / 61.f + 3.f * std::sin(float(y) / 97.f + float(z))) *
                          std::cos(float(y) / 43.f + 2.f * std::sin(float(x) / 71.f));
  return im;
}

// With the background given, a host image is labelled as its upload lands it, band after band
// of tile rows. Pieces that end inside a row, tile rows cut by the image's edge, slices that
// start inside a piece and the larger pieces of a large image must all label as the whole
// image does. Each run has an image of its own, so that a tile labelled before its rows landed
// would read the last run's pixels and fail.
TEST_F(SegmentCudaAndCpu, HostImagesLabelledAsTheyLandMatchTheCpu) {
  // Prepare
  const Shape shapes[] = {{1, 1500, 1000}, {3, 700, 900}, {1, 2048, 2048}, {1, 3001, 2900}};
  unsigned seed = 40;
  for (const Shape& s : shapes) {
    for (int conn : {4, 8}) {
      const Image in = windingBands(s, ++seed);
      ClipStats background;
      background.clipped.n = s.count() / 2;
      background.clipped.median = 0.05;
      background.clipped.std = 0.1;
      SegmentParams p;
      p.connectivity = conn;
      p.background = background;
      p.absoluteThreshold = conn == 4 ? 0.3 : 0.5;
      const std::string what = std::to_string(s.z) + "x" + std::to_string(s.y) + "x" +
                               std::to_string(s.x) + " connectivity " + std::to_string(conn);

      // Run
      const Segmentation want = cpu->segment(in, p);
      const Segmentation got = gpu->segment(in, p);
      const Segmentation whole = gpu->segment(gpu->upload(in), p);
      Segmentation pageLocked;
      {
        const PinnedWhileAlive pinned(gpu->device(), in);  // one DMA, then the labelling
        ASSERT_TRUE(pinned.pinned());
        pageLocked = gpu->segment(in, p);
      }

      // Verify: the sources fit the sums set aside for an image this size (1 per 256 pixels),
      // else the GPU measures again from the whole uploaded image and the landed labelling
      // goes untested.
      ASSERT_GT(want.sources.size(), 100u) << what;
      ASSERT_LT(int64_t(want.sources.size()), s.count() / 256) << what;
      expectAlike(got, want, what);
      expectAlike(whole, want, what + " (uploaded first)");
      expectAlike(pageLocked, want, what + " (page-locked)");
    }
  }
}

// An image of more tile rows (64 image rows each) than one launch's grid takes (65535): the
// labelling goes in several launches, whole, and as the image lands.
TEST_F(SegmentCudaAndCpu, TallImagesOfMoreTileRowsThanALaunchTakes) {
  // Prepare
  const Image in = randomImage({1, 65536 * 64 + 100, 2}, 81);
  ClipStats background;
  background.clipped.n = 1;
  background.clipped.median = 0.5;
  SegmentParams p = absolute(0.6, 8);
  p.background = background;
  const Segmentation want = cpu->segment(in, p);

  for (const bool uploadedFirst : {false, true}) {
    // Run
    const Segmentation got = gpu->segment(uploadedFirst ? gpu->upload(in) : in, p);

    // Verify
    const LabelImage labels = gpu->download(got.labels);
    for (int64_t i = 0; i < labels.shape().count(); ++i)
      ASSERT_EQ(labels.data()[i], want.labels.data()[i]) << "index " << i << uploadedFirst;
    ASSERT_EQ(got.sources.size(), want.sources.size());
    for (size_t k = 0; k < got.sources.size(); k += 997)
      EXPECT_EQ(got.sources[k].npix, want.sources[k].npix) << k;
  }
}

}  // namespace
