// Routes libtiff's messages into TiffMessages so nothing is printed on stderr.
#include "io/tiff_support.h"

#include <cstdarg>
#include <cstdio>
#include <memory>
#include <mutex>

namespace stacklens::io {
namespace {

std::string format(const char* module, const char* fmt, va_list ap) {
  char text[1024];
  std::vsnprintf(text, sizeof text, fmt, ap);
  std::string out = text;
  if (module && *module && out.find(module) == std::string::npos)
    out = std::string(module) + ": " + out;
  return out;
}

int captureError(TIFF*, void* userData, const char* module, const char* fmt, va_list ap) {
  auto* messages = static_cast<TiffMessages*>(userData);
  if (messages) {
    // The first error is usually the cause; later ones are consequences.
    if (messages->errors.empty()) messages->errors = format(module, fmt, ap);
  }
  return 1;  // handled: libtiff must not call the global (stderr) handler
}

int captureWarning(TIFF*, void* userData, const char* module, const char* fmt, va_list ap) {
  auto* messages = static_cast<TiffMessages*>(userData);
  if (messages && messages->warnings.size() < 4096) {
    if (!messages->warnings.empty()) messages->warnings += "; ";
    messages->warnings += format(module, fmt, ap);
  }
  return 1;
}

// Messages that reach the global handlers (libtiff paths without a handle) are dropped.
void silenceGlobalHandlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    TIFFSetErrorHandler(nullptr);
    TIFFSetWarningHandler(nullptr);
  });
}

struct OpenOptionsFree {
  void operator()(TIFFOpenOptions* opts) const noexcept { TIFFOpenOptionsFree(opts); }
};
using TiffOpenOptionsPtr = std::unique_ptr<TIFFOpenOptions, OpenOptionsFree>;

// Options that route the handle's messages into messages.
TiffOpenOptionsPtr capturingOptions(TiffMessages& messages) {
  TiffOpenOptionsPtr opts(TIFFOpenOptionsAlloc());
  TIFFOpenOptionsSetErrorHandlerExtR(opts.get(), captureError, &messages);
  TIFFOpenOptionsSetWarningHandlerExtR(opts.get(), captureWarning, &messages);
  // No single allocation larger than 1 GiB, whatever a (corrupt) file claims.
  TIFFOpenOptionsSetMaxSingleMemAlloc(opts.get(), tmsize_t{1} << 30);
  return opts;
}

}  // namespace

TIFF* openTiff(const std::string& path, const char* mode, TiffMessages& messages) {
  silenceGlobalHandlers();
  const TiffOpenOptionsPtr options = capturingOptions(messages);
  TIFF* t = TIFFOpenExt(path.c_str(), mode, options.get());
  if (!t && messages.errors.empty())
    messages.errors = messages.warnings.empty() ? "libtiff cannot open it" : messages.warnings;
  return t;
}

std::string tiffReason(const std::string& what, const TiffMessages& messages) {
  return messages.errors.empty() ? what : what + ": " + messages.errors;
}

void throwTiffError(const std::string& path, const std::string& what,
                    const TiffMessages& messages) {
  throw IoError(path, tiffReason(what, messages));
}

}  // namespace stacklens::io
