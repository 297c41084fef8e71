// Zarr over HTTP(S): metadata, chunks and shard ranges read with libcurl (io/http_transfer.h).
// A 404 is an object never written (a missing chunk reads as the fill value). So is a 403 for a
// chunk or shard, since S3 and GCS answer 403 for an absent key where the bucket may not be
// listed; the store counts those (ZarrStore::forbiddenAsAbsent) and the reader says so once. A
// 403 for metadata and any other failure is an IoError naming the URL and the HTTP status. The
// connection caches come from a process-wide pool (io/http_connections.h), one per reading
// thread, so that the chunks of a slice are fetched in parallel and later opens reuse the
// connections.
//
// A URL's query (a presigned URL's signature, a token) is kept on every request, each key being
// joined to the path before it; a fragment is dropped. The path's escapes are sent as given.
//
// libcurl does the transfers (TLS, redirects, keep-alive); what a Zarr store needs on top of them
// (what each status means, ranges taken out of servers that ignore them, the caps) is written
// here by hand: Debian packages no C or C++ Zarr library, local or remote.
#pragma once

#include <memory>
#include <string>

#include "io/http_transfer.h"
#include "io/zarr_store.h"

namespace stacklens::io {

// A store reading URLs with these limits, adding query (without its '?'; "" for none) to each.
std::shared_ptr<const ZarrStore> makeHttpStore(const HttpLimits& limits,
                                               const std::string& query = "");

// A Zarr URL's path, which keys are joined to, and its query; the fragment is dropped.
struct ZarrUrl {
  std::string folder;
  std::string query;
};
ZarrUrl splitZarrUrl(const std::string& url);

// The default limits, or STACKLENS_HTTP_TIMEOUT_MS (the stall and connect timeouts) and
// STACKLENS_HTTP_RETRIES from the environment: what openStack gives a URL.
HttpLimits httpLimitsFromEnvironment();

// The most bytes of a whole object read from a server that ignores range requests, to take
// a shard's index or inner chunk out of it.
constexpr int64_t kMaxUnrangedBytes = int64_t(256) << 20;

}  // namespace stacklens::io
