// One HTTP(S) GET or HEAD through libcurl, with the limits a reader of untrusted
// servers needs: a cap on the body (announced or streamed), connect, total and stall timeouts,
// the process-wide stop flag (io/read_stop.h), and retries of 5xx answers and timeouts.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "io/zarr_store.h"

namespace stacklens::io {

struct HttpLimits {
  int connectTimeoutMs = 10000;  // a host that does not accept the connection
  int totalTimeoutMs = 300000;   // one attempt, whatever its pace (a shard may be large)
  int stallTimeoutMs = 30000;    // no byte for this long ends the attempt
  int retries = 3;               // further attempts after a 5xx answer or a timeout
  int backoffMs = 250;           // before the first retry, doubled before each next
  // Requests of one slice in flight at once: they wait on the network, not on the cores, so
  // more than local reads use.
  int parallelReads = 8;
  // Called with the CURL* after the options of each attempt are set: the HTTP fuzzer connects
  // the handle to its own socket here.
  std::function<void(void* curl)> adjustHandle;
};

struct HttpRequest {
  std::string url;
  bool head = false;        // HEAD: the status only
  int64_t rangeOffset = 0;  // with rangeBytes ≥ 0: ask for these bytes (offset < 0: the last ones)
  int64_t rangeBytes = -1;  // < 0: the whole object
  int64_t maxBody = 0;      // the most bytes a 200 answer's body may hold
};

struct HttpResponse {
  long status = 0;
  std::string reason;       // the status line's phrase, e.g. "Not Found"
  StoreBytes body;          // empty for answers other than 2xx
  int64_t rangeStart = -1;  // a 206 answer's Content-Range: "bytes start-end/total"
  int64_t objectSize = -1;  // its total (-1: "*" or not given)
  int attempts = 0;
};

// Sends request through connections (a CURLM* from io/http_connections.h, whose open
// connections it reuses), on a new easy handle per request, following up to 5 redirects and
// retrying as limits say. Returns the last answer whatever its status (the caller decides what a
// 404 means). Throws
// StoreObjectTooLarge for a body above the cap (announced or streamed), IoError(url, reason) when
// no complete answer came: the connection failed, timed out or stalled, the body ended before its
// announced length, or the reads were stopped.
HttpResponse httpTransfer(void* connections, const HttpRequest& request, const HttpLimits& limits);

}  // namespace stacklens::io
