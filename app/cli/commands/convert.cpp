// stacklens-cli convert: FITS ↔ TIFF (and FITS→FITS, TIFF→TIFF) as float32, values as scaled on
// reading, NaN kept, header cards and spacing carried over.
#include <vector>

#include "app/cli/command.h"
#include "io/stack.h"
#include "io/stack_writer.h"

namespace stacklens::cli {
namespace {

int runConvert(const Args& args) {
  const std::string& in = args.positional(0);
  const std::string& out = args.positional(1);
  io::OpenOptions options;
  options.hdu = static_cast<int>(args.getInt("hdu", -1));
  options.plane = static_cast<int>(args.getInt("plane", 0));
  auto reader = io::openStack(in, options);
  const io::StackInfo& info = reader->info();
  const int64_t sliceCount = info.y * info.x;
  std::vector<float> data(static_cast<size_t>(info.z * sliceCount));
  for (int64_t k = 0; k < info.z; ++k) reader->readSlice(k, data.data() + k * sliceCount);
  io::WriteOptions write;
  write.header = info.header;
  write.history.push_back("stacklens-cli convert from " + in +
                          (info.format == "fits" ? " (HDU " + std::to_string(info.hdu) + ")" : ""));
  write.spacing = info.spacing;
  write.units = info.units;
  write.spacingKnown = info.spacingKnown;
  write.sourcePath = in;
  io::writeStack(out, data.data(), info.z, info.y, info.x, write);
  return kOk;
}

const CommandRegistration reg{
    {"convert",
     "IN OUT",
     "convert a stack to float32 FITS or TIFF (chosen by OUT's extension), NaN and scaling kept",
     {{"hdu", "N", "FITS HDU to convert (0 = primary; default: the first with image data)"},
      {"plane", "P",
       "index along a 4th axis (FITS), channel/frame (TIFF hyperstacks) or sample (RGB)"}},
     2,
     2,
     runConvert}};

}  // namespace
}  // namespace stacklens::cli
