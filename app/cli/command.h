// How a stacklens-cli subcommand declares itself: its name, arguments and options, and what it
// runs. Each subcommand is one file under app/cli/commands/ that registers itself; --help text is
// generated from the declarations.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace stacklens::cli {

enum ExitCode { kOk = 0, kUsage = 2, kIoError = 3, kBackendUnavailable = 4, kInterrupted = 130 };

// A usage error: a missing argument, an unknown option, a malformed value.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct OptionSpec {
  std::string name;       // without the leading "--"
  std::string valueName;  // empty for a flag
  std::string help;
  bool repeatable = false;
};

class Args {
 public:
  const std::vector<std::string>& positional() const { return positional_; }
  const std::string& positional(size_t i) const { return positional_.at(i); }
  bool has(const std::string& name) const { return values_.count(name) > 0; }
  std::optional<std::string> get(const std::string& name) const;
  std::vector<std::string> getAll(const std::string& name) const;
  std::string get(const std::string& name, const std::string& fallback) const;
  double getDouble(const std::string& name, double fallback) const;
  long long getInt(const std::string& name, long long fallback) const;
  // The same for an int parameter: a value past int's range is a UsageError.
  int getInt32(const std::string& name, int fallback) const;
  // A comma-separated list of numbers, e.g. "1.5" or "1,2,2".
  std::vector<double> getDoubles(const std::string& name) const;

 private:
  friend Args parseArgs(const struct CommandSpec&, const std::vector<std::string>&);
  std::vector<std::string> positional_;
  std::multimap<std::string, std::string> values_;
};

struct CommandSpec {
  std::string name;
  std::string arguments;  // e.g. "IN OUT"
  std::string summary;
  std::vector<OptionSpec> options;
  size_t minPositional = 0, maxPositional = 0;
  std::function<int(const Args&)> run;
};

// Options shared by the processing commands: --backend, --slice, --timings, --hdu, --plane.
std::vector<OptionSpec> processingOptions();

// Options of the commands that write a stack, for a .zarr OUT: --zarr-version, --zarr-chunks,
// --zarr-shards, --levels (app/cli/processing.h applies them).
std::vector<OptionSpec> outputOptions();

// Parses argv for one command; throws UsageError.
Args parseArgs(const CommandSpec& spec, const std::vector<std::string>& argv);

// Called by each command file through a static CommandRegistration.
void registerCommand(CommandSpec spec);
const std::map<std::string, CommandSpec>& commands();

struct CommandRegistration {
  explicit CommandRegistration(CommandSpec spec) { registerCommand(std::move(spec)); }
};

// Numbers parsed strictly: the whole string must be a number, or UsageError names the option.
double parseNumber(const std::string& text, const std::string& what);

}  // namespace stacklens::cli
