// Zarr over HTTP(S): metadata, chunks and shard ranges read with libcurl (io/http_transfer.h).
// A 404 is an object never written (a missing chunk reads as the fill value); any other failure
// is an IoError naming the URL and the HTTP status. Connections are kept in a small pool of easy
// handles, one per reading thread, so that the chunks of a slice are fetched in parallel.
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

// A store reading URLs with these limits.
std::shared_ptr<const ZarrStore> makeHttpStore(const HttpLimits& limits);
// The default limits, or STACKLENS_HTTP_TIMEOUT_MS (the stall and connect timeouts) and
// STACKLENS_HTTP_RETRIES from the environment: what zarrStoreFor gives a URL.
HttpLimits httpLimitsFromEnvironment();

// The most bytes of a whole object read from a server that ignores range requests, to take
// a shard's index or inner chunk out of it.
constexpr int64_t kMaxUnrangedBytes = int64_t(256) << 20;

}  // namespace stacklens::io
