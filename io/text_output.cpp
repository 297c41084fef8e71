// writeTextFile through AtomicOutput.
#include "io/text_output.h"

#include <fstream>

#include "io/file_checks.h"
#include "io/io_error.h"

namespace stacklens::io {

void writeTextFile(const std::string& path, const std::string& text,
                   const std::string& sourcePath) {
  AtomicOutput output(path, sourcePath);
  {
    std::ofstream out(output.tempPath(), std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) throw IoError(path, "write failed");
  }
  output.commit();
}

}  // namespace stacklens::io
