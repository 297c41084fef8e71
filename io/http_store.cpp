// The HTTP(S) Zarr store: what each answer means for a chunk, a shard range or metadata.
#include "io/http_store.h"

#include <curl/curl.h>
#include <strings.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <vector>

#include "io/io_error.h"
#include "io/read_stop.h"

namespace stacklens::io {

namespace {

// Characters a URL cannot hold as they are (keys come from metadata and may hold anything the
// checks on dataset paths let through); '%' is kept, the user's URL may be escaped already.
std::string escapedUrl(const std::string& url) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (const unsigned char c : url) {
    if (c <= 0x20 || c >= 0x7f || std::strchr("\"<>\\^`{|}#?", c)) {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += char(c);
    }
  }
  return out;
}

std::string statusText(const HttpResponse& r) {
  std::string text = "HTTP status " + std::to_string(r.status);
  if (!r.reason.empty()) text += " (" + r.reason + ")";
  if (r.attempts > 1) text += " after " + std::to_string(r.attempts) + " attempts";
  return text;
}

class HttpZarrStore : public ZarrStore {
 public:
  explicit HttpZarrStore(const HttpLimits& limits) : limits_(limits) {}
  ~HttpZarrStore() override {
    for (CURL* c : idle_) curl_easy_cleanup(c);
  }

  bool exists(const std::string& location) const override {
    HttpRequest r;
    r.url = escapedUrl(location);
    r.head = true;
    const HttpResponse answer = send(r, location, /*anyStatus=*/true);
    // Some servers refuse HEAD: one byte of the object answers as well.
    if (answer.status == 405 || answer.status == 501) return readRange(location, 0, 1).has_value();
    if (answer.status == 404) return false;
    if (answer.status / 100 != 2) throw IoError(location, statusText(answer));
    return true;
  }

  std::optional<StoreBytes> read(const std::string& location, int64_t maxBytes) const override {
    HttpRequest r;
    r.url = escapedUrl(location);
    r.maxBody = maxBytes;
    HttpResponse answer;
    try {
      answer = send(r, location);
    } catch (const StoreObjectTooLarge& e) {  // named by the location, as a file's would be
      throw StoreObjectTooLarge(location, e.size(), maxBytes);
    }
    if (answer.status == 404) return std::nullopt;
    return std::move(answer.body);
  }

  std::optional<StoreRange> readRange(const std::string& location, int64_t offset,
                                      int64_t n) const override {
    HttpRequest r;
    r.url = escapedUrl(location);
    r.rangeOffset = offset;
    r.rangeBytes = n;
    r.maxBody = kMaxUnrangedBytes;
    HttpResponse answer;
    try {
      answer = send(r, location);
    } catch (const StoreObjectTooLarge& e) {
      throw IoError(location,
                    e.maxBytes() != kMaxUnrangedBytes || e.size() < 0
                        ? "the server sent more than the " + std::to_string(n) + " bytes asked for"
                        : "the server ignores range requests, and the object is " +
                              std::to_string(e.size()) + " bytes, more than the " +
                              std::to_string(kMaxUnrangedBytes) + " read whole");
    }
    if (answer.status == 404) return std::nullopt;
    StoreRange out;
    if (answer.status == 206) {
      const int64_t wanted = offset < 0 ? answer.objectSize - int64_t(answer.body.size()) : offset;
      if (answer.objectSize < 0 || answer.rangeStart != wanted)
        throw IoError(location, "the server answered bytes " + std::to_string(answer.rangeStart) +
                                    " of " + std::to_string(answer.objectSize) +
                                    " to a request for " + std::to_string(n) + " bytes at " +
                                    std::to_string(offset) + " (Content-Range)");
      out.bytes = std::move(answer.body);
      out.objectSize = answer.objectSize;
      return out;
    }
    // 200: the whole object, the range taken out of it here.
    const int64_t size = int64_t(answer.body.size());
    const int64_t from = offset < 0 ? std::max<int64_t>(0, size - n) : std::min(offset, size);
    const int64_t count = std::min(n, size - from);
    out.bytes.assign(answer.body.begin() + from, answer.body.begin() + from + count);
    out.objectSize = size;
    return out;
  }

  // Requests wait on the network, not on the cores: more in flight than local reads use.
  int parallelReads() const override { return 8; }

 private:
  // One transfer on a pooled handle; any status but 2xx and 404 is an error naming the URL,
  // unless anyStatus.
  HttpResponse send(const HttpRequest& r, const std::string& location,
                    bool anyStatus = false) const {
    const std::unique_ptr<CURL, std::function<void(CURL*)>> curl(take(),
                                                                 [this](CURL* c) { give(c); });
    HttpResponse answer;
    try {
      answer = httpTransfer(curl.get(), r, limits_);
    } catch (const StoreObjectTooLarge&) {
      throw;
    } catch (const ReadsStopped&) {
      throw ReadsStopped(location);
    } catch (const IoError& e) {  // the URL as the reader wrote it, not as it was escaped
      throw IoError(location, e.reason());
    }
    if (!anyStatus && answer.status / 100 != 2 && answer.status != 404)
      throw IoError(location, statusText(answer));
    return answer;
  }

  CURL* take() const {
    {
      std::lock_guard lock(mutex_);
      if (!idle_.empty()) {
        CURL* c = idle_.back();
        idle_.pop_back();
        return c;
      }
    }
    CURL* c = curl_easy_init();
    if (!c) throw std::bad_alloc();
    return c;
  }
  void give(CURL* c) const {
    std::lock_guard lock(mutex_);
    idle_.push_back(c);
  }

  HttpLimits limits_;
  mutable std::mutex mutex_;
  mutable std::vector<CURL*> idle_;  // at most as many as threads that read at once
};

int environmentInt(const char* name, int fallback) {
  const char* text = std::getenv(name);
  if (!text || !*text) return fallback;
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  return *end == '\0' && v >= 0 && v <= 86400000 ? int(v) : fallback;
}

}  // namespace

HttpLimits httpLimitsFromEnvironment() {
  HttpLimits l;
  const int timeout = environmentInt("STACKLENS_HTTP_TIMEOUT_MS", -1);
  if (timeout > 0) {
    l.stallTimeoutMs = timeout;
    l.connectTimeoutMs = std::min(l.connectTimeoutMs, timeout);
  }
  l.retries = environmentInt("STACKLENS_HTTP_RETRIES", l.retries);
  return l;
}

std::shared_ptr<const ZarrStore> makeHttpStore(const HttpLimits& limits) {
  return std::make_shared<const HttpZarrStore>(limits);
}

bool isHttpUrl(const std::string& path) {
  const auto starts = [&](const char* scheme) {
    const size_t n = std::strlen(scheme);
    return path.size() > n && strncasecmp(path.c_str(), scheme, n) == 0;
  };
  return starts("http://") || starts("https://");
}

std::shared_ptr<const ZarrStore> zarrStoreFor(const std::string& location) {
  if (!isHttpUrl(location)) return localZarrStore();
  if (location.find_first_of("?#") != std::string::npos)
    throw IoError(location,
                  "a URL with a query or fragment cannot be read as Zarr: the keys of the "
                  "metadata and chunks are added to its path");
  return makeHttpStore(httpLimitsFromEnvironment());
}

}  // namespace stacklens::io
