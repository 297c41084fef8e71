// Argument parsing and the registry of stacklens-cli subcommands.
#include "app/cli/command.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>

namespace stacklens::cli {

static std::map<std::string, CommandSpec>& registry() {
  static std::map<std::string, CommandSpec> r;
  return r;
}

void registerCommand(CommandSpec spec) { registry()[spec.name] = std::move(spec); }
const std::map<std::string, CommandSpec>& commands() { return registry(); }

std::vector<OptionSpec> processingOptions() {
  return {{"backend", "cpu|cuda|auto", "where to compute (default auto: CUDA when usable)"},
          {"slice", "Z", "process only slice Z (0-based)"},
          {"timings", "", "print a JSON line with per-stage seconds on stderr"},
          {"hdu", "N", "FITS HDU to read (default: the first with an image)"},
          {"plane", "P",
           "index along a 4th axis (FITS), channel/frame (TIFF hyperstacks) or sample (RGB)"}};
}

std::vector<OptionSpec> outputOptions() {
  return {{"zarr-version", "0.4|0.5",
           "OUT.zarr: OME-Zarr 0.5 (Zarr v3, default) or 0.4 (Zarr v2, for older readers)"},
          {"zarr-chunks", "Z,Y,X",
           "OUT.zarr: the chunk shape (default 16,256,256; 1,512,512 for an image)"},
          {"zarr-shards", "Z,Y,X",
           "OUT.zarr with --zarr-version 0.5: one file per shard of this shape, each a multiple of "
           "the chunks (default: no shards, so that readers without Zarr v3 sharding can open "
           "the output; use shards when there would be very many chunk files)"},
          {"levels", "N",
           "OUT.zarr: N multiscale levels, each the 2x2 mean in y and x of the last (default 1)"}};
}

double parseNumber(const std::string& text, const std::string& what) {
  if (text.empty()) throw UsageError(what + ": expected a number, got nothing");
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(v))
    throw UsageError(what + ": '" + text + "' is not a finite number");
  return v;
}

std::optional<std::string> Args::get(const std::string& name) const {
  auto range = values_.equal_range(name);
  if (range.first == range.second) return std::nullopt;
  return std::prev(range.second)->second;  // the last one wins
}

std::vector<std::string> Args::getAll(const std::string& name) const {
  std::vector<std::string> all;
  auto range = values_.equal_range(name);
  for (auto it = range.first; it != range.second; ++it) all.push_back(it->second);
  return all;
}

std::string Args::get(const std::string& name, const std::string& fallback) const {
  return get(name).value_or(fallback);
}

double Args::getDouble(const std::string& name, double fallback) const {
  auto v = get(name);
  return v ? parseNumber(*v, "--" + name) : fallback;
}

long long Args::getInt(const std::string& name, long long fallback) const {
  auto v = get(name);
  if (!v) return fallback;
  double d = parseNumber(*v, "--" + name);
  if (d != std::floor(d) || std::fabs(d) > 9.0e15)
    throw UsageError("--" + name + ": '" + *v + "' is not an integer");
  return static_cast<long long>(d);
}

int Args::getInt32(const std::string& name, int fallback) const {
  const long long v = getInt(name, fallback);
  if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
    throw UsageError("--" + name + ": " + std::to_string(v) + " is out of range");
  return static_cast<int>(v);
}

std::vector<double> Args::getDoubles(const std::string& name) const {
  std::vector<double> out;
  auto v = get(name);
  if (!v) return out;
  std::stringstream ss(*v);
  std::string part;
  while (std::getline(ss, part, ',')) out.push_back(parseNumber(part, "--" + name));
  if (out.empty()) throw UsageError("--" + name + ": expected a number or a list");
  return out;
}

Args parseArgs(const CommandSpec& spec, const std::vector<std::string>& argv) {
  Args args;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a.size() > 2 && a.rfind("--", 0) == 0) {
      std::string name = a.substr(2), value;
      bool inlineValue = false;
      if (auto eq = name.find('='); eq != std::string::npos) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
        inlineValue = true;
      }
      const OptionSpec* opt = nullptr;
      for (const auto& o : spec.options)
        if (o.name == name) opt = &o;
      if (!opt) throw UsageError("unknown option --" + name + " for '" + spec.name + "'");
      if (opt->valueName.empty()) {
        if (inlineValue) throw UsageError("--" + name + " takes no value");
        value.assign(1, '1');
      } else if (!inlineValue) {
        if (i + 1 >= argv.size())
          throw UsageError("--" + name + " needs a value (" + opt->valueName + ")");
        value = argv[++i];
      }
      if (!opt->repeatable && args.values_.count(name))
        throw UsageError("--" + name + " given more than once");
      args.values_.emplace(name, value);
    } else {
      args.positional_.push_back(a);
    }
  }
  if (args.positional_.size() < spec.minPositional)
    throw UsageError("'" + spec.name + "' needs " + spec.arguments);
  if (args.positional_.size() > spec.maxPositional)
    throw UsageError("'" + spec.name + "': unexpected argument '" + args.positional_.back() + "'");
  return args;
}

}  // namespace stacklens::cli
