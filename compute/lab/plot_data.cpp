// Plot data of a sweep (see plot_data.h).
#include "compute/lab/plot_data.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace stacklens::compute::lab {
namespace {

int variantOrder(const Point& p) {
  if (p.variant == Variant::GpuKernel) return 1 << 20;
  if (p.variant == Variant::GpuWithTransfers) return (1 << 20) + 1;
  return p.threads;
}

}  // namespace

PanelData panelData(const Sweep& sweep, const std::string& op) {
  PanelData d;
  d.op = op;
  std::map<int, std::vector<const Point*>> byVariant;
  for (const auto& p : sweep.points)
    if (p.op == op && std::isfinite(p.medianS) && p.medianS > 0)
      byVariant[variantOrder(p)].push_back(&p);
  double x0 = 1e300, x1 = 0, y0 = 1e300, y1 = 0;
  for (auto& [order, pts] : byVariant) {
    std::sort(pts.begin(), pts.end(),
              [](const Point* a, const Point* b) { return a->elements() < b->elements(); });
    Curve c;
    c.variant = pts.front()->variantName;
    for (const Point* p : pts) {
      const double x = double(p->elements());
      c.elements.push_back(x);
      c.median.push_back(p->medianS);
      c.low.push_back(std::isfinite(p->minS) && p->minS > 0 ? p->minS : p->medianS);
      c.high.push_back(std::isfinite(p->maxS) ? p->maxS : p->medianS);
      c.floor.push_back(p->floorS);
      x0 = std::min(x0, x), x1 = std::max(x1, x);
      y0 = std::min({y0, c.low.back(), p->floorS > 0 ? p->floorS : 1e300});
      y1 = std::max(y1, c.high.back());
    }
    d.curves.push_back(std::move(c));
  }
  d.breakEven = breakEven(sweep.points, op);
  if (x1 > 0) {
    d.xMin = x0 / 1.5, d.xMax = x1 * 1.5;
    d.yMin = std::pow(10.0, std::floor(std::log10(y0)));
    d.yMax = std::pow(10.0, std::ceil(std::log10(y1)));
    if (d.yMax <= d.yMin) d.yMax = d.yMin * 10;
  }
  return d;
}

std::string variantColor(const std::string& v) {
  if (v == "cpu-1-thread") return "#7f7f7f";
  if (v == "cpu-all-threads") return "#1f77b4";
  if (v == "gpu-kernel") return "#2ca02c";
  if (v == "gpu-with-transfers") return "#d62728";
  return "#9467bd";  // other CPU thread counts
}

std::string sizeLabel(double elements) {
  const double edge = std::sqrt(elements);
  const double rounded = std::round(edge);
  char buf[32];
  if (std::abs(edge - rounded) < 1e-6 * edge && rounded >= 1) {
    std::snprintf(buf, sizeof buf, "%.0f²", rounded);
    return buf;
  }
  // Three significant digits, written out: "1880²", never "1.88e+03²" on a slide.
  const double unit = std::pow(10.0, std::floor(std::log10(edge)) - 2);
  const double three = std::round(edge / unit) * unit;
  if (three >= 100)
    std::snprintf(buf, sizeof buf, "%.0f²", three);
  else
    std::snprintf(buf, sizeof buf, "%.3g²", edge);
  return buf;
}

std::string secondsLabel(double s) {
  char buf[32];
  if (s < 1e-3)
    std::snprintf(buf, sizeof buf, "%.3g µs", s * 1e6);
  else if (s < 1)
    std::snprintf(buf, sizeof buf, "%.3g ms", s * 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.3g s", s);
  return buf;
}

std::vector<double> decadeTicks(double lo, double hi) {
  std::vector<double> t;
  for (int e = int(std::ceil(std::log10(lo) - 1e-9)); e <= int(std::floor(std::log10(hi) + 1e-9));
       ++e)
    t.push_back(std::pow(10.0, e));
  return t;
}

std::vector<Curve> speedupCurves(const PanelData& d) {
  // The CPU curve with the most threads: the last CPU curve (they are ordered by threads).
  const Curve* base = nullptr;
  for (const auto& c : d.curves)
    if (c.variant.rfind("cpu-", 0) == 0) base = &c;
  std::vector<Curve> out;
  if (!base) return out;
  for (const auto& c : d.curves) {
    if (&c == base) continue;
    Curve s;
    s.variant = c.variant;
    for (size_t i = 0; i < c.elements.size(); ++i)
      for (size_t j = 0; j < base->elements.size(); ++j)
        if (base->elements[j] == c.elements[i]) {
          s.elements.push_back(c.elements[i]);
          s.median.push_back(base->median[j] / c.median[i]);
          s.low.push_back(base->median[j] / c.high[i]);
          s.high.push_back(base->median[j] / c.low[i]);
        }
    if (!s.elements.empty()) out.push_back(std::move(s));
  }
  return out;
}

double transferShare(const Sweep& sweep, const std::string& op) {
  const Point* best = nullptr;
  for (const auto& p : sweep.points)
    if (p.op == op && p.variant == Variant::GpuWithTransfers && std::isfinite(p.medianS) &&
        p.medianS > 0 && (!best || p.elements() > best->elements()))
      best = &p;
  return best ? std::min(1.0, best->transferS / best->medianS) : -1;
}

double speedupAtLargest(const PanelData& d, const std::string& gpuVariant) {
  const Curve *cpu = nullptr, *gpu = nullptr;
  for (const auto& c : d.curves) {
    if (c.variant == "cpu-all-threads") cpu = &c;
    if (c.variant == gpuVariant) gpu = &c;
  }
  if (!cpu || !gpu) return 0;
  for (size_t i = gpu->elements.size(); i-- > 0;)
    for (size_t j = 0; j < cpu->elements.size(); ++j)
      if (cpu->elements[j] == gpu->elements[i]) return cpu->median[j] / gpu->median[i];
  return 0;
}

}  // namespace stacklens::compute::lab
