#include "ui/bench/soak_sampler.h"

#include <QJsonArray>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include <unistd.h>

#include "compute/backend.h"

namespace stacklens::ui {
namespace {

double percentileOfSorted(const std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  const double index = q * double(v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(index));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (index - lo);
}

double round3(double v) { return std::round(v * 1000.0) / 1000.0; }

}  // namespace

void startMinuteOf(std::vector<double>& steps) {
  steps.clear();
  steps.reserve(size_t(1) << 16);
}

double residentMb() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  long pages = 0, resident = 0;
  const int read = std::fscanf(f, "%ld %ld", &pages, &resident);
  std::fclose(f);
  return read == 2 ? double(resident) * double(sysconf(_SC_PAGESIZE)) / (1 << 20) : 0;
}

double peakResidentMb() {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return 0;
  char line[256];
  long kb = 0;
  while (std::fgets(line, sizeof line, f))
    if (std::sscanf(line, "VmHWM: %ld kB", &kb) == 1) break;
  std::fclose(f);
  return double(kb) / 1024.0;
}

SoakSampler::SoakSampler(double minutes, int device, std::function<double()> clock)
    : minutes_(minutes), device_(device), clock_(std::move(clock)) {
  // Reserved once: a minute holds some tens of thousands of steps at the live path's rate, and a
  // vector that grew during the run would count as the viewer's own growth.
  if (enabled()) window_.reserve(1 << 17);
}

void SoakSampler::start() {
  if (!enabled()) return;
  wall_.start();
  started_ = true;
}

bool SoakSampler::add(double ms) {
  if (!enabled()) return false;
  if (window_.size() < window_.capacity()) window_.push_back(ms);
  if (!closed_.empty()) {
    ++laterSteps_;
    if (ms > closed_.front().p99) ++laterStepsOverFirstP99_;
  }
  if (minutesDone() < double(closed_.size() + 1)) return false;
  closeMinute();
  return true;
}

void SoakSampler::closeMinute() {
  std::sort(window_.begin(), window_.end());
  const int64_t device = device_ >= 0 ? compute::cudaDeviceBytesInUse(device_) : -1;
  closed_.push_back({static_cast<int>(window_.size()), percentileOfSorted(window_, 0.5),
                     percentileOfSorted(window_, 0.99), window_.empty() ? 0.0 : window_.back(),
                     residentMb(), device >= 0 ? double(device) / (1 << 20) : -1.0});
  window_.clear();
}

QJsonObject SoakSampler::report() const {
  QJsonObject o;
  o["minutes"] = minutes_;
  QJsonArray rows;
  for (const Minute& m : closed_) {
    QJsonObject r;
    r["steps"] = m.steps;
    r["p50_ms"] = round3(m.p50);
    r["p99_ms"] = round3(m.p99);
    r["max_ms"] = round3(m.max);
    r["rss_mb"] = round3(m.rssMb);
    if (m.deviceMb >= 0) r["device_mb"] = round3(m.deviceMb);
    rows.append(r);
  }
  o["per_minute"] = rows;
  if (closed_.size() >= 2) {
    const Minute& first = closed_.front();
    double rssPeak = 0, devicePeak = 0, p99Worst = 0, maxWorst = 0;
    for (size_t i = 1; i < closed_.size(); ++i) {
      rssPeak = std::max(rssPeak, closed_[i].rssMb);
      devicePeak = std::max(devicePeak, closed_[i].deviceMb);
      p99Worst = std::max(p99Worst, closed_[i].p99);
      maxWorst = std::max(maxWorst, closed_[i].max);
    }
    auto growth = [](double peak, double base) {
      return base > 0 ? round3(100.0 * (peak - base) / base) : 0.0;
    };
    o["rss_growth_percent"] = growth(rssPeak, first.rssMb);
    if (first.deviceMb >= 0) o["device_growth_percent"] = growth(devicePeak, first.deviceMb);
    o["first_minute_p99_ms"] = round3(first.p99);
    o["later_p99_worst_ms"] = round3(p99Worst);
    o["later_max_ms"] = round3(maxWorst);
    // p99 means one step in a hundred: later minutes as steady as the first have about as many.
    o["later_steps"] = static_cast<double>(laterSteps_);
    o["later_steps_over_first_p99"] = static_cast<double>(laterStepsOverFirstP99_);
  }
  return o;
}

}  // namespace stacklens::ui
