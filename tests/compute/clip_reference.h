// Sigma clipping written out directly, the reference for every backend: the finite values, then
// per iteration the kept values' summary and the values within [median − κl·σ, median + κu·σ],
// until nothing changes or the iteration limit is reached (astropy's sigma_clip).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "compute/image.h"
#include "compute/params.h"

namespace stacklens::testing {

// Count, mean, median (the mean of the middle pair for an even count), population σ, min, max.
inline compute::SummaryStats summaryOf(std::vector<double> v) {
  compute::SummaryStats s;
  s.n = static_cast<int64_t>(v.size());
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / double(v.size());
  double ss = 0;
  for (double x : v) ss += (x - s.mean) * (x - s.mean);
  s.std = std::sqrt(ss / double(v.size()));
  const size_t n = v.size();
  s.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  s.min = v.front();
  s.max = v.back();
  return s;
}

inline compute::ClipStats clipReference(const std::vector<float>& values,
                                        const compute::ClipParams& p) {
  std::vector<double> kept;
  for (float v : values)
    if (std::isfinite(v)) kept.push_back(v);
  compute::ClipStats out;
  out.all = summaryOf(kept);
  compute::SummaryStats current = out.all;
  while (p.maxIterations <= 0 || out.iterations < p.maxIterations) {
    ++out.iterations;
    const double lo = current.median - p.kappaLower * current.std,
                 hi = current.median + p.kappaUpper * current.std;
    std::vector<double> next;
    for (double x : kept)
      if (x >= lo && x <= hi) next.push_back(x);
    const bool changed = next.size() != kept.size();
    kept = std::move(next);
    current = summaryOf(kept);
    if (!changed) break;
  }
  out.clipped = current;
  return out;
}

inline compute::ClipStats clipReference(const compute::Image& in, const compute::ClipParams& p) {
  return clipReference(std::vector<float>(in.data(), in.data() + in.shape().count()), p);
}

// 421 × 397 values around −3 (several of the CPU's parallel blocks of 65536), every 97th raised
// by up to 160, NaN every 1013th from the 4th, one +Inf.
inline std::vector<float> clipSampleWithOutliersAndGaps() {
  std::mt19937 rng(7);
  std::normal_distribution<float> noise(-3.0f, 0.5f);
  std::vector<float> v(421 * 397);
  for (float& x : v) x = noise(rng);
  for (size_t i = 0; i < v.size(); i += 97) v[i] += 40.0f * float(i % 5);
  for (size_t i = 3; i < v.size(); i += 1013) v[i] = std::numeric_limits<float>::quiet_NaN();
  v[11] = std::numeric_limits<float>::infinity();
  return v;
}

// Counts exactly; mean, median, σ within tol·max(1, |want|); min and max exactly.
inline void expectStatsNear(const compute::SummaryStats& got, const compute::SummaryStats& want,
                            double tol, const std::string& what) {
  EXPECT_EQ(got.n, want.n) << what;
  auto near = [&](double x) { return tol * std::max(1.0, std::abs(x)); };
  EXPECT_NEAR(got.mean, want.mean, near(want.mean)) << what;
  EXPECT_NEAR(got.median, want.median, near(want.median)) << what;
  EXPECT_NEAR(got.std, want.std, near(want.std)) << what;
  EXPECT_EQ(got.min, want.min) << what;
  EXPECT_EQ(got.max, want.max) << what;
}

// Counts and iterations exactly; every statistic within tol of the data's scale (the larger of
// |min| and |max|); an empty set has NaN median and σ.
inline void expectClipOnScale(const compute::ClipStats& got, const compute::ClipStats& want,
                              double tol, const std::string& what) {
  auto same = [&](const compute::SummaryStats& g, const compute::SummaryStats& w,
                  const std::string& set) {
    EXPECT_EQ(g.n, w.n) << what << " " << set << " n";
    if (w.n == 0) {
      EXPECT_TRUE(std::isnan(g.median) && std::isnan(g.std)) << what << " " << set;
      return;
    }
    const double scale = std::max({std::abs(w.min), std::abs(w.max), 1e-300});
    auto near = [&](double a, double b, const char* field) {
      EXPECT_NEAR(a, b, tol * scale) << what << " " << set << " " << field;
    };
    near(g.mean, w.mean, "mean");
    near(g.median, w.median, "median");
    near(g.std, w.std, "std");
    near(g.min, w.min, "min");
    near(g.max, w.max, "max");
  };
  same(got.all, want.all, "all");
  same(got.clipped, want.clipped, "clipped");
  EXPECT_EQ(got.iterations, want.iterations) << what;
}

}  // namespace stacklens::testing
