// writeWholeFile through AtomicOutput.
#include "io/whole_file.h"

#include <fstream>

#include "io/file_checks.h"
#include "io/io_error.h"

namespace stacklens::io {

void writeWholeFile(const std::string& path, const std::string& bytes,
                    const std::string& sourcePath) {
  AtomicOutput output(path, sourcePath);
  {
    std::ofstream out(output.tempPath(), std::ios::binary | std::ios::trunc);
    out << bytes;
    out.flush();
    if (!out) throw IoError(path, "write failed");
  }
  output.commit();
}

}  // namespace stacklens::io
