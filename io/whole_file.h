// Small outputs held whole in memory (CSV tables, PNG images) written like the stacks: under a
// temporary name, renamed into place, never over the input (io::AtomicOutput).
#pragma once

#include <string>

namespace stacklens::io {

// Writes bytes to path atomically; throws IoError naming path (or refusing sourcePath).
void writeWholeFile(const std::string& path, const std::string& bytes,
                    const std::string& sourcePath = {});

}  // namespace stacklens::io
