// The pool of connection caches and the share object (DNS, TLS sessions) every transfer uses.
#include "io/http_connections.h"

#include <curl/curl.h>

#include <mutex>
#include <new>
#include <vector>

namespace stacklens::io {

namespace {

// More idle caches than this are closed: a few readers' threads at once need no more, and each
// idle cache may hold a few open connections.
constexpr size_t kMaxIdle = 64;

// One lock per kind of data, as libcurl asks; its callbacks take them.
struct ShareLocks {
  std::mutex dns, sslSession, other;
  std::mutex& of(curl_lock_data data) {
    return data == CURL_LOCK_DATA_DNS           ? dns
           : data == CURL_LOCK_DATA_SSL_SESSION ? sslSession
                                                : other;
  }
};

void lockShare(CURL*, curl_lock_data data, curl_lock_access, void* locks) {
  static_cast<ShareLocks*>(locks)->of(data).lock();
}
void unlockShare(CURL*, curl_lock_data data, void* locks) {
  static_cast<ShareLocks*>(locks)->of(data).unlock();
}

class ConnectionPool {
 public:
  ConnectionPool() {
    curl_global_init(CURL_GLOBAL_DEFAULT);
    share_ = curl_share_init();
    if (share_) {
      curl_share_setopt(share_, CURLSHOPT_LOCKFUNC, lockShare);
      curl_share_setopt(share_, CURLSHOPT_UNLOCKFUNC, unlockShare);
      curl_share_setopt(share_, CURLSHOPT_USERDATA, &locks_);
      curl_share_setopt(share_, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
      curl_share_setopt(share_, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    }
  }

  CURLM* take() {
    {
      std::lock_guard lock(mutex_);
      if (!idle_.empty()) {  // the last given back: the likeliest to hold a live connection
        CURLM* m = idle_.back();
        idle_.pop_back();
        return m;
      }
    }
    CURLM* m = curl_multi_init();
    if (!m) throw std::bad_alloc();
    return m;
  }

  void give(CURLM* m) {
    {
      std::lock_guard lock(mutex_);
      if (idle_.size() < kMaxIdle) {
        idle_.push_back(m);
        return;
      }
    }
    curl_multi_cleanup(m);
  }

  CURL* newEasy() {
    CURL* c = curl_easy_init();
    if (!c) throw std::bad_alloc();
    if (share_) curl_easy_setopt(c, CURLOPT_SHARE, share_);
    return c;
  }

 private:
  ShareLocks locks_;
  CURLSH* share_ = nullptr;
  std::mutex mutex_;
  std::vector<CURLM*> idle_;
};

// Never destroyed: threads may still give caches back while the program exits.
ConnectionPool& pool() {
  static ConnectionPool* const p = new ConnectionPool;
  return *p;
}

}  // namespace

PooledConnections::PooledConnections() : multi_(pool().take()) {}

PooledConnections::~PooledConnections() { pool().give(static_cast<CURLM*>(multi_)); }

void* newTransferHandle() { return pool().newEasy(); }

}  // namespace stacklens::io
