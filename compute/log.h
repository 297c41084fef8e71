// Messages of the library (a fallback to the CPU, smaller pieces after running out of GPU memory,
// an unavailable feature): the library never prints. The program that uses it installs a sink —
// the CLI prints to stderr, the viewer shows them in its status bar, Python writes to stderr.
#pragma once

#include <functional>
#include <string>

namespace stacklens::compute {

enum class LogLevel { Info, Warning };

// Called from whichever thread logs; the sink must be safe for that.
using LogSink = std::function<void(LogLevel level, const std::string& text)>;

// Installs the process-wide sink (an empty one drops messages, the default) and returns the one
// it replaces.
LogSink setLogSink(LogSink sink);

// Hands text (one line, no trailing newline) to the sink; safe from any thread.
void logMessage(LogLevel level, const std::string& text);

}  // namespace stacklens::compute
