// JSON text for the commands that print JSON (info, regions, crossmatch): strings and numbers
// written so that the output is always valid JSON.
#pragma once

#include <string>

namespace stacklens::cli {

// Valid UTF-8 passes through; invalid bytes (a corrupt EXTNAME, say) become U+FFFD.
std::string jsonString(const std::string& s);
// The shortest form that reads back the same (0.1, not 0.10000000000000001); null for NaN and
// infinities, which JSON has no words for.
std::string jsonNumber(double v);

}  // namespace stacklens::cli
