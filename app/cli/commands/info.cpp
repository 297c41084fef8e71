// stacklens-cli info: describe a FITS or TIFF stack as JSON.
#include <iostream>

#include "app/cli/command.h"
#include "io/stack.h"

namespace stacklens::cli {
namespace {

int runInfo(const Args& args) {
  io::OpenOptions options;
  options.hdu = static_cast<int>(args.getInt("hdu", -1));
  auto reader = io::openStack(args.positional(0), options);
  const io::StackInfo& info = reader->info();
  std::cout << "{\"format\": \"" << info.format << "\", \"shape\": [" << info.z << ", " << info.y
            << ", " << info.x << "], \"dtype\": \"" << io::dtypeName(info.dtype) << "\"}\n";
  return kOk;
}

const CommandRegistration reg{{"info", "FILE", "print a stack's shape, type, spacing and WCS as JSON",
                               {{"hdu", "N", "FITS HDU to describe (0 = primary)"}},
                               1, 1, runInfo}};

}  // namespace
}  // namespace stacklens::cli
