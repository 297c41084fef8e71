// Sweep CSV writing and reading (see sweep_csv.h).
#include "compute/lab/sweep_csv.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <istream>
#include <map>
#include <ostream>
#include <sstream>
#include <vector>

#include "compute/params.h"

namespace stacklens::compute::lab {
namespace {

const std::vector<std::string>& columns() {
  static const std::vector<std::string> c = {
      "op",      "size",          "nz",       "ny",         "nx",           "elements", "variant",
      "threads", "repeats",       "median_s", "min_s",      "max_s",        "q1_s",     "q3_s",
      "bytes",   "bandwidth_Bps", "floor_s",  "transfer_s", "max_rel_diff", "error"};
  return c;
}

std::string quoted(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '\n') c = ' ';
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string number(double v) {
  if (std::isnan(v)) return "nan";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);  // round-trips a float and timings to 1 ns in 1 s
  return buf;
}

std::vector<std::string> splitCsv(const std::string& line) {
  std::vector<std::string> out(1);
  bool inQuotes = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (inQuotes) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else if (c == '"') {
        inQuotes = false;
      } else {
        out.back() += c;
      }
    } else if (c == '"') {
      inQuotes = true;
    } else if (c == ',') {
      out.emplace_back();
    } else if (c != '\r') {
      out.back() += c;
    }
  }
  return out;
}

double parseDouble(const std::string& s, int line) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0')
    throw InvalidArgument("sweep CSV line " + std::to_string(line) + ": '" + s +
                          "' is not a number");
  return v;
}

Variant parseVariant(const std::string& name) {
  if (name == "gpu-kernel") return Variant::GpuKernel;
  if (name == "gpu-with-transfers") return Variant::GpuWithTransfers;
  return Variant::Cpu;
}

}  // namespace

const std::string& csvHeader() {
  static const std::string h = [] {
    std::string s;
    for (const auto& c : columns()) s += (s.empty() ? "" : ",") + c;
    return s;
  }();
  return h;
}

void writeCsv(std::ostream& out, const Sweep& s) {
  out << "# StackLens speedup lab sweep\n";
  out << "# cpu: " << s.machine.cpu << "\n";
  out << "# cpu_threads: " << s.machine.cpuThreads << "\n";
  out << "# gpu: " << s.machine.gpu << "\n";
  out << "# note: " << s.machine.note << "\n";
  out << "# cancelled: " << (s.cancelled ? 1 : 0) << "\n";
  out << csvHeader() << "\n";
  for (const auto& p : s.points) {
    out << quoted(p.op) << ',' << p.size << ',' << p.nz << ',' << p.ny << ',' << p.nx << ','
        << p.elements() << ',' << p.variantName << ',' << p.threads << ',' << p.repeats << ','
        << number(p.medianS) << ',' << number(p.minS) << ',' << number(p.maxS) << ','
        << number(p.q1S) << ',' << number(p.q3S) << ',' << number(p.bytes) << ','
        << number(p.bandwidth) << ',' << number(p.floorS) << ',' << number(p.transferS) << ','
        << number(p.maxRelDiff) << ',' << quoted(p.error) << '\n';
  }
}

std::string csvText(const Sweep& sweep) {
  std::ostringstream out;
  writeCsv(out, sweep);
  return out.str();
}

Sweep readCsv(std::istream& in) {
  Sweep s;
  std::map<std::string, size_t> col;
  std::string line;
  int lineNo = 0;
  while (std::getline(in, line)) {
    ++lineNo;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    if (line[0] == '#') {
      const auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      const std::string key = line.substr(2, colon - 2);
      const std::string value = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
      if (key == "cpu") s.machine.cpu = value;
      if (key == "cpu_threads") s.machine.cpuThreads = int(parseDouble(value, lineNo));
      if (key == "gpu") s.machine.gpu = value;
      if (key == "note") s.machine.note = value;
      if (key == "cancelled") s.cancelled = value == "1";
      continue;
    }
    const auto fields = splitCsv(line);
    if (col.empty()) {
      for (size_t i = 0; i < fields.size(); ++i) col[fields[i]] = i;
      for (const auto& c : columns())
        if (c != "error" && !col.count(c))
          throw InvalidArgument("sweep CSV line " + std::to_string(lineNo) + ": no column '" + c +
                                "'");
      continue;
    }
    auto field = [&](const std::string& name) -> std::string {
      auto it = col.find(name);
      if (it == col.end() || it->second >= fields.size()) return "";
      return fields[it->second];
    };
    auto num = [&](const std::string& name) { return parseDouble(field(name), lineNo); };
    if (fields.size() < col.size() - (col.count("error") ? 1 : 0))
      throw InvalidArgument("sweep CSV line " + std::to_string(lineNo) + ": " +
                            std::to_string(fields.size()) + " fields, expected " +
                            std::to_string(col.size()));
    Point p;
    p.op = field("op");
    p.size = int64_t(num("size"));
    p.nz = int64_t(num("nz")), p.ny = int64_t(num("ny")), p.nx = int64_t(num("nx"));
    p.variantName = field("variant");
    p.variant = parseVariant(p.variantName);
    p.threads = int(num("threads"));
    p.repeats = int(num("repeats"));
    p.medianS = num("median_s"), p.minS = num("min_s"), p.maxS = num("max_s");
    p.q1S = num("q1_s"), p.q3S = num("q3_s");
    p.bytes = num("bytes"), p.bandwidth = num("bandwidth_Bps"), p.floorS = num("floor_s");
    p.transferS = num("transfer_s"), p.maxRelDiff = num("max_rel_diff");
    p.error = field("error");
    s.points.push_back(p);
  }
  if (col.empty()) throw InvalidArgument("sweep CSV: no header row");
  return s;
}

Sweep readCsvFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open");
  try {
    return readCsv(in);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(path + ": " + e.what());
  }
}

}  // namespace stacklens::compute::lab
