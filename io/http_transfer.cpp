// libcurl transfers with a body cap, stall detection, the stop flag and bounded retries.
#include "io/http_transfer.h"

#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>

#include "io/http_connections.h"
#include "io/io_error.h"
#include "io/read_stop.h"

namespace stacklens::io {

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kMaxRedirects = 5;

// What the callbacks of one attempt see and leave behind.
struct Attempt {
  const HttpRequest* request = nullptr;
  CURL* curl = nullptr;
  HttpResponse response;
  int64_t cap = 0;  // set at the first body byte, from the status
  bool capKnown = false;
  bool tooLarge = false;   // the body passed the cap: abort
  int64_t announced = -1;  // Content-Length, where the server gave it
  Clock::time_point lastByte;
  curl_off_t received = 0;
  curl_off_t downloaded = 0;  // the body's bytes, when the transfer ended
  std::string redirect;       // a 3xx answer's Location, resolved
  int stallMs = 0;
  bool stalled = false, stopped = false;
};

bool startsWithNoCase(const char* text, size_t n, const char* prefix) {
  const size_t k = std::strlen(prefix);
  return n >= k && strncasecmp(text, prefix, k) == 0;
}

// "bytes 10-19/1234" (or "bytes 10-19/*") into start and total.
void parseContentRange(const std::string& value, HttpResponse& r) {
  long long start = -1, end = -1, total = -1;
  if (std::sscanf(value.c_str(), " bytes %lld-%lld/%lld", &start, &end, &total) >= 2) {
    r.rangeStart = start;
    r.objectSize = total;
  }
}

size_t onHeader(char* text, size_t size, size_t count, void* user) {
  auto& a = *static_cast<Attempt*>(user);
  const size_t n = size * count;
  if (startsWithNoCase(text, n, "HTTP/")) {  // a new answer (after a redirect or 100 Continue)
    a.response.rangeStart = a.response.objectSize = -1;
    const char* space = static_cast<const char*>(std::memchr(text, ' ', n));
    const char* phrase =
        space ? static_cast<const char*>(std::memchr(space + 1, ' ', size_t(text + n - space - 1)))
              : nullptr;
    a.response.reason.clear();
    if (phrase) {
      std::string p(phrase + 1, size_t(text + n - phrase - 1));
      while (!p.empty() && (p.back() == '\r' || p.back() == '\n')) p.pop_back();
      a.response.reason = p.substr(0, 80);
    }
  } else if (startsWithNoCase(text, n, "content-range:")) {
    parseContentRange(std::string(text + 14, n - 14), a.response);
  }
  return n;
}

size_t onBody(char* data, size_t size, size_t count, void* user) {
  auto& a = *static_cast<Attempt*>(user);
  const size_t n = size * count;
  if (!a.capKnown) {
    a.capKnown = true;
    curl_easy_getinfo(a.curl, CURLINFO_RESPONSE_CODE, &a.response.status);
    const HttpRequest& r = *a.request;
    // A range answer holds what was asked for and no more; an error page is not kept.
    a.cap = a.response.status == 206       ? std::max<int64_t>(r.rangeBytes, 0)
            : a.response.status / 100 == 2 ? r.maxBody
                                           : 0;
    curl_off_t length = -1;
    curl_easy_getinfo(a.curl, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
    a.announced = length;
    if (a.response.status / 100 == 2 && length > a.cap) {
      a.tooLarge = true;  // refused before a byte of it is kept
      return 0;
    }
    if (length > 0) a.response.body.reserve(size_t(length));
  }
  if (a.response.status / 100 != 2) return n;  // an error page: read and dropped
  if (int64_t(a.response.body.size() + n) > a.cap) {
    a.tooLarge = true;
    return 0;
  }
  a.response.body.insert(a.response.body.end(), data, data + n);
  return n;
}

int onProgress(void* user, curl_off_t, curl_off_t now, curl_off_t, curl_off_t) {
  auto& a = *static_cast<Attempt*>(user);
  if (readsStopped()) {
    a.stopped = true;
    return 1;
  }
  const Clock::time_point t = Clock::now();
  if (now > a.received) {
    a.received = now;
    a.lastByte = t;
  } else if (t - a.lastByte > std::chrono::milliseconds(a.stallMs)) {
    a.stalled = true;
    return 1;
  }
  return 0;
}

void initialiseCurl() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

void configure(CURL* curl, const std::string& url, const HttpRequest& r, const HttpLimits& limits,
               Attempt& a, char* errors) {
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);  // several threads transfer at once
  // Redirects are followed by httpTransfer, each on a new easy handle (io/http_connections.h).
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, long(limits.connectTimeoutMs));
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, long(limits.totalTimeoutMs));
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errors);
  curl_easy_setopt(curl, CURLOPT_USERAGENT, "StackLens");
  // No Accept-Encoding: chunks are compressed already, and a server's gzip of them could only
  // hide their size from the cap.
  if (r.head) curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
  if (r.rangeBytes >= 0) {
    const std::string range =
        r.rangeOffset < 0
            ? "-" + std::to_string(r.rangeBytes)
            : std::to_string(r.rangeOffset) + "-" +
                  std::to_string(r.rangeOffset + std::max<int64_t>(r.rangeBytes, 1) - 1);
    curl_easy_setopt(curl, CURLOPT_RANGE, range.c_str());  // copied by libcurl
  }
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, onHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &a);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, onBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &a);
  curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, onProgress);
  curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &a);
  curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
  if (limits.adjustHandle) limits.adjustHandle(curl);
}

std::string seconds(int ms) {
  char text[32];
  std::snprintf(text, sizeof text, "%g s", ms / 1000.0);
  return text;
}

// Waits before a retry, in short steps so that the stop flag is seen.
void backOff(int ms) {
  const Clock::time_point end = Clock::now() + std::chrono::milliseconds(ms);
  while (Clock::now() < end && !readsStopped())
    std::this_thread::sleep_for(
        std::min<Clock::duration>(end - Clock::now(), std::chrono::milliseconds(20)));
}

// Runs one request for url on a new easy handle through connections (a CURLM*), leaving in a
// what the callbacks saw, the status, the bytes received and where a redirect points.
CURLcode performOnce(CURLM* connections, const std::string& url, const HttpRequest& request,
                     const HttpLimits& limits, Attempt& a, char* errors) {
  const std::unique_ptr<CURL, void (*)(CURL*)> curl(static_cast<CURL*>(newTransferHandle()),
                                                    curl_easy_cleanup);
  a.curl = curl.get();
  configure(curl.get(), url, request, limits, a, errors);
  if (curl_multi_add_handle(connections, curl.get()) != CURLM_OK) return CURLE_OUT_OF_MEMORY;
  CURLcode code = CURLE_OK;
  int running = 1;
  while (running) {
    // The progress callback sees the stop flag and stalls at least this often.
    CURLMcode m = curl_multi_perform(connections, &running);
    if (m == CURLM_OK && running) m = curl_multi_poll(connections, nullptr, 0, 100, nullptr);
    if (m != CURLM_OK) {
      code = CURLE_RECV_ERROR;
      std::snprintf(errors, CURL_ERROR_SIZE, "%s", curl_multi_strerror(m));
      break;
    }
  }
  int left = 0;
  while (CURLMsg* message = curl_multi_info_read(connections, &left))
    if (message->msg == CURLMSG_DONE && message->easy_handle == curl.get())
      code = message->data.result;
  curl_easy_getinfo(curl.get(), CURLINFO_RESPONSE_CODE, &a.response.status);
  curl_easy_getinfo(curl.get(), CURLINFO_SIZE_DOWNLOAD_T, &a.downloaded);
  const char* next = nullptr;
  if (curl_easy_getinfo(curl.get(), CURLINFO_REDIRECT_URL, &next) == CURLE_OK && next)
    a.redirect = next;
  curl_multi_remove_handle(connections, curl.get());  // its connection stays in the cache
  return code;
}

}  // namespace

HttpResponse httpTransfer(void* connections, const HttpRequest& request, const HttpLimits& limits) {
  initialiseCurl();
  CURLM* multi = static_cast<CURLM*>(connections);
  const int attempts = 1 + std::max(0, limits.retries);
  std::string lastFailure;
  for (int i = 0; i < attempts; ++i) {
    if (i > 0) backOff(limits.backoffMs << std::min(i - 1, 10));
    std::string url = request.url;
    for (int redirects = 0;; ++redirects) {
      if (readsStopped()) throw ReadsStopped(request.url);
      Attempt a;
      a.request = &request;
      a.stallMs = limits.stallTimeoutMs;
      a.lastByte = Clock::now();
      char errors[CURL_ERROR_SIZE] = {};
      const CURLcode code = performOnce(multi, url, request, limits, a, errors);
      a.response.attempts = i + 1;
      if (a.stopped) throw ReadsStopped(request.url);
      if (a.tooLarge)
        throw StoreObjectTooLarge(request.url, a.announced > a.cap ? int64_t(a.announced) : -1,
                                  a.cap);
      if (a.stalled || code == CURLE_OPERATION_TIMEDOUT) {
        lastFailure = a.stalled ? "the server sent nothing for " + seconds(limits.stallTimeoutMs)
                                : std::string("no complete answer in time (") + errors + ")";
        break;  // to the next attempt
      }
      if (code == CURLE_PARTIAL_FILE)
        throw IoError(request.url, "the answer ended after " + std::to_string(a.downloaded) +
                                       " of the " + std::to_string(a.announced) +
                                       " bytes it announced");
      if (code == CURLE_BAD_FUNCTION_ARGUMENT)  // what libcurl says of a header it cannot store
        throw IoError(request.url, "a malformed answer (a header line folded onto no header)");
      if (code != CURLE_OK)
        throw IoError(request.url, std::string("no answer: ") + curl_easy_strerror(code) +
                                       (errors[0] ? std::string(" (") + errors + ")" : ""));
      if (a.response.status / 100 == 3 && !a.redirect.empty()) {
        if (redirects == kMaxRedirects)
          throw IoError(request.url, "more than " + std::to_string(kMaxRedirects) +
                                         " redirects (the last to " + a.redirect + ")");
        url = a.redirect;
        continue;
      }
      if (a.response.status / 100 == 5 && i + 1 < attempts) break;
      return std::move(a.response);
    }
  }
  throw IoError(request.url, lastFailure + " (" + std::to_string(attempts) +
                                 (attempts == 1 ? " attempt)" : " attempts)"));
}

}  // namespace stacklens::io
