// The library's parameter errors turned into usage errors that name the command's option.
#include "app/cli/parameter_options.h"

#include "app/cli/command.h"
#include "compute/params.h"

namespace stacklens::cli {

void checkParameters(const std::function<void()>& check, const OptionOfParameter& options) {
  try {
    check();
  } catch (const compute::InvalidParameter& e) {
    const auto option = options.find(e.parameter());
    if (option == options.end()) throw UsageError(e.what());
    throw UsageError("--" + option->second + ": " + e.what());
  } catch (const compute::InvalidArgument& e) {
    throw UsageError(e.what());
  }
}

}  // namespace stacklens::cli
