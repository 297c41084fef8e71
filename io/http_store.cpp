// The HTTP(S) Zarr store: what each answer means for a chunk, a shard range or metadata.
#include "io/http_store.h"

#include <strings.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>

#include "io/http_connections.h"
#include "io/io_error.h"
#include "io/read_stop.h"

namespace stacklens::io {

namespace {

// Characters a URL cannot hold as they are, plus those in alsoEscaped. '%' is kept: the user's
// URL may be escaped already, and is sent as given.
std::string escaped(const std::string& text, const char* alsoEscaped) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (const unsigned char c : text) {
    if (c <= 0x20 || c >= 0x7f || std::strchr(alsoEscaped, c)) {
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
  HttpZarrStore(const HttpLimits& limits, std::string query)
      : limits_(limits), query_(std::move(query)) {}

  bool exists(const std::string& location) const override {
    HttpRequest r;
    r.url = urlOf(location);
    r.head = true;
    const HttpResponse answer = send(r, location);
    // Some servers refuse HEAD: one byte of the object answers as well.
    if (answer.status == 405 || answer.status == 501)
      return fetchRange(location, 0, 1, StoreObject::Metadata).has_value();
    if (answer.status == 404) return false;
    if (answer.status / 100 != 2) throw IoError(location, statusText(answer));
    return true;
  }

  std::optional<StoreBytes> read(const std::string& location, int64_t maxBytes,
                                 StoreObject what) const override {
    HttpRequest r;
    r.url = urlOf(location);
    r.maxBody = maxBytes;
    HttpResponse answer;
    try {
      answer = send(r, location);
    } catch (const StoreObjectTooLarge& e) {  // named by the location, as a file's would be
      throw StoreObjectTooLarge(location, e.size(), maxBytes);
    }
    if (absent(answer, what, location)) return std::nullopt;
    return std::move(answer.body);
  }

  std::optional<StoreRange> readRange(const std::string& location, int64_t offset,
                                      int64_t n) const override {
    return fetchRange(location, offset, n, StoreObject::Chunk);
  }

  int parallelReads() const override { return std::max(1, limits_.parallelReads); }

  int64_t forbiddenAsAbsent() const override { return forbidden_.load(); }

  std::string reopenable(const std::string& location) const override {
    return query_.empty() ? location : location + "?" + query_;
  }

 private:
  std::string urlOf(const std::string& location) const {
    // Keys may hold anything the checks on dataset paths let through, '?' and '#' included.
    const std::string url = escaped(location, "\"<>\\^`{|}#?");
    return query_.empty() ? url : url + "?" + escaped(query_, "#");
  }

  // Whether answer says that nothing is stored at location: 404, or for a chunk or shard 403 (S3
  // and GCS answer so for an absent key where the bucket may not be listed; counted, for the
  // reader to say). Any other status but 2xx is an error naming the URL.
  bool absent(const HttpResponse& answer, StoreObject what, const std::string& location) const {
    if (answer.status == 404) return true;
    if (answer.status == 403 && what == StoreObject::Chunk) {
      ++forbidden_;
      return true;
    }
    if (answer.status / 100 != 2) throw IoError(location, statusText(answer));
    return false;
  }

  std::optional<StoreRange> fetchRange(const std::string& location, int64_t offset, int64_t n,
                                       StoreObject what) const {
    HttpRequest r;
    r.url = urlOf(location);
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
    if (absent(answer, what, location)) return std::nullopt;
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

  // One transfer through a pooled connection cache; the answer whatever its status.
  HttpResponse send(const HttpRequest& r, const std::string& location) const {
    const PooledConnections connections;
    HttpResponse answer;
    try {
      answer = httpTransfer(connections.get(), r, limits_);
    } catch (const StoreObjectTooLarge&) {
      throw;
    } catch (const ReadsStopped&) {
      throw ReadsStopped(location);
    } catch (const IoError& e) {  // the URL as the reader wrote it, not as it was escaped
      throw IoError(location, e.reason());
    }
    return answer;
  }

  HttpLimits limits_;
  std::string query_;  // sent with every request (a presigned URL's signature, a token)
  mutable std::atomic<int64_t> forbidden_{0};
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

std::shared_ptr<const ZarrStore> makeHttpStore(const HttpLimits& limits, const std::string& query) {
  return std::make_shared<const HttpZarrStore>(limits, query);
}

ZarrUrl splitZarrUrl(const std::string& url) {
  const std::string withoutFragment = url.substr(0, url.find('#'));
  const size_t question = withoutFragment.find('?');
  ZarrUrl parts;
  parts.folder = withoutFragment.substr(0, question);
  if (question != std::string::npos) parts.query = withoutFragment.substr(question + 1);
  return parts;
}

bool isHttpUrl(const std::string& path) {
  const auto starts = [&](const char* scheme) {
    const size_t n = std::strlen(scheme);
    return path.size() > n && strncasecmp(path.c_str(), scheme, n) == 0;
  };
  return starts("http://") || starts("https://");
}

}  // namespace stacklens::io
