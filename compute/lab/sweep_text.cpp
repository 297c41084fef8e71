// Parsing of sweep descriptions and the default sweep (see sweep_text.h).
#include "compute/lab/sweep_text.h"

#include <cmath>
#include <cstdlib>

#include "compute/lab/lab_ops.h"
#include "compute/params.h"

namespace stacklens::compute::lab {
namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out(1);
  for (char c : s) {
    if (c == sep)
      out.emplace_back();
    else if (c != ' ')
      out.back() += c;
  }
  return out;
}

double number(const std::string& s, const char* field, const std::string& whole) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || !std::isfinite(v))
    throw InvalidParameter(
        field, std::string("lab: --") + field + ": '" + whole + "' is not a number list");
  return v;
}

}  // namespace

std::vector<int64_t> parseSizes(const std::string& text) {
  std::vector<int64_t> sizes;
  if (text.find(':') != std::string::npos) {
    const auto parts = split(text, ':');
    if (parts.size() > 3) throw InvalidParameter("sizes", "lab: --sizes: expected A:B or A:B:F");
    const double a = number(parts[0], "sizes", text), b = number(parts[1], "sizes", text);
    const double f = parts.size() == 3 ? number(parts[2], "sizes", text) : 2.0;
    if (f <= 1 || a < 1 || b < a)
      throw InvalidParameter("sizes", "lab: --sizes '" + text + "': expected A ≤ B and F > 1");
    for (double n = a; n <= b * (1 + 1e-9) && sizes.size() < 64; n *= f)
      sizes.push_back(std::llround(n));
    if (sizes.back() != std::llround(b)) sizes.push_back(std::llround(b));
  } else {
    for (const auto& p : split(text, ',')) sizes.push_back(std::llround(number(p, "sizes", text)));
  }
  return sizes;
}

std::vector<int> parseThreads(const std::string& text) {
  std::vector<int> threads;
  for (const auto& p : split(text, ',')) {
    if (p == "all") {
      threads.push_back(0);
      continue;
    }
    const double v = number(p, "threads", text);
    if (v < 0 || v != std::floor(v) || v > 4096)
      throw InvalidParameter("threads", "lab: --threads: '" + p + "' is not a thread count");
    threads.push_back(int(v));
  }
  return threads;
}

std::vector<std::string> parseOps(const std::string& text) {
  if (text == "all") return labOpNames();
  return split(text, ',');
}

SweepSpec defaultSweepSpec() {
  SweepSpec s;
  s.ops = parseOps(kDefaultOps);
  s.sizes = parseSizes(kDefaultSizes);
  s.threads = {1, 0};
  s.repeats = 3;
  return s;
}

}  // namespace stacklens::compute::lab
