// A sweep as CSV: the machine in '#' lines, then one row per point with the units in the column
// names (seconds, bytes, bytes per second), so a spreadsheet or pandas reads it as it is.
#pragma once

#include <iosfwd>
#include <string>

#include "compute/lab/sweep.h"

namespace stacklens::compute::lab {

// The header row, without a newline.
const std::string& csvHeader();

void writeCsv(std::ostream& out, const Sweep& sweep);
// The whole CSV as text, for io::writeWholeFile (written under a temporary name, renamed into
// place).
std::string csvText(const Sweep& sweep);

// Reads what writeCsv wrote (columns found by name, so a reordered or extended file reads too).
// Throws InvalidArgument naming the line for a malformed file.
Sweep readCsv(std::istream& in);
Sweep readCsvFile(const std::string& path);

}  // namespace stacklens::compute::lab
