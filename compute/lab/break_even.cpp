// Break-even on log–log axes (see break_even.h).
#include "compute/lab/break_even.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace stacklens::compute::lab {

std::vector<std::string> opsOf(const std::vector<Point>& points) {
  std::vector<std::string> ops;
  for (const auto& p : points)
    if (std::find(ops.begin(), ops.end(), p.op) == ops.end()) ops.push_back(p.op);
  return ops;
}

std::optional<BreakEven> breakEven(const std::vector<Point>& points, const std::string& op) {
  int cpuThreads = -1;
  for (const auto& p : points)
    if (p.op == op && p.variant == Variant::Cpu) cpuThreads = std::max(cpuThreads, p.threads);
  std::map<int64_t, double> cpu, gpu;  // elements → median seconds
  for (const auto& p : points) {
    if (p.op != op || !std::isfinite(p.medianS) || p.medianS <= 0) continue;
    if (p.variant == Variant::Cpu && p.threads == cpuThreads) cpu[p.elements()] = p.medianS;
    if (p.variant == Variant::GpuWithTransfers) gpu[p.elements()] = p.medianS;
  }
  // r = log(t_gpu / t_cpu) at each common size: > 0 while the CPU is faster.
  std::vector<std::pair<double, double>> r;  // (log elements, r)
  for (const auto& [n, t] : gpu)
    if (auto it = cpu.find(n); it != cpu.end())
      r.emplace_back(std::log(double(n)), std::log(t / it->second));
  // The GPU must be ahead at the largest size; the break-even is the last crossing before it.
  if (r.empty() || r.back().second >= 0) return std::nullopt;
  size_t i = r.size() - 1;
  while (i > 0 && r[i - 1].second < 0) --i;
  if (i == 0) return BreakEven{std::exp(r.front().first), true};
  const auto [x0, r0] = r[i - 1];
  const auto [x1, r1] = r[i];
  return BreakEven{std::exp(x0 + (0 - r0) * (x1 - x0) / (r1 - r0)), false};
}

}  // namespace stacklens::compute::lab
