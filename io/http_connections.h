// The process-wide pool of libcurl connection caches that every HTTP(S) store borrows from, so
// that opening the same server again (the viewer's levels, Recent, the CLI's input and its PSF)
// reuses the connections, DNS answers and TLS sessions of the opens before it.
#pragma once

namespace stacklens::io {

// A connection cache (a CURLM*, libcurl's multi handle, which owns the connections of the
// transfers run through it) lent to one thread; given back to the pool, with its open
// connections, when destroyed. The caches stay apart: libcurl does not support one connection
// cache shared by threads that transfer at once, and a cache taken last-in first-out holds a
// connection to the server it talked to last. What can be shared is: one DNS cache and one TLS
// session cache for the whole process (libcurl's share interface, with locks).
class PooledConnections {
 public:
  PooledConnections();  // throws std::bad_alloc when libcurl cannot make a multi handle
  ~PooledConnections();
  PooledConnections(const PooledConnections&) = delete;
  PooledConnections& operator=(const PooledConnections&) = delete;
  void* get() const { return multi_; }

 private:
  void* multi_;
};

// A new easy handle (a CURL*) for one transfer, using the process's DNS and TLS session caches;
// the caller cleans it up. Each request gets a fresh one: libcurl 7.88 (Debian 12) keeps a
// pointer to the last header of a handle's previous answer, and a folded first header line in
// the next answer appends to that freed header (found by tests/io/fuzz/http_fuzzer.cpp).
void* newTransferHandle();

}  // namespace stacklens::io
