// Small text outputs (CSV tables) written like the stacks: under a temporary name, renamed into
// place, never over the input.
#pragma once

#include <string>

namespace stacklens::io {

// Writes text to path atomically; throws IoError naming path (or refusing sourcePath).
void writeTextFile(const std::string& path, const std::string& text,
                   const std::string& sourcePath = {});

}  // namespace stacklens::io
