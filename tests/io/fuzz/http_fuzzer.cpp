// libFuzzer target: the fuzzer's bytes are what an HTTP server answers to the Zarr store. The
// input is split at each "\n#next\n" into raw answers (status line, headers, body), the k-th
// answering the k-th connection the store opens; a Zarr v2 or v3 array (sharded or not) at
// http://fuzz.invalid/a.zarr is opened and read through the real store, libcurl included, so that
// statuses, ranges, lying lengths, chunked bodies and shard indexes are all exercised. Nothing
// goes to the network: libcurl connects to an abstract Unix socket of this process
// (CURLOPT_ABSTRACT_UNIX_SOCKET), where a thread gives each connection its answer and shuts it
// for writing (the answer ends there). Any outcome but success or IoError (a crash, a sanitizer
// report, a hang) is a bug.
#include <curl/curl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "io/http_store.h"
#include "io/zarr_reader.h"

namespace {

const std::string kSeparator = "\n#next\n";

// The answers of the input being run, and the harness's ends of the connections made so far.
struct Script {
  std::mutex mutex;
  std::vector<std::string> answers;
  size_t next = 0;
  std::vector<int> serverEnds;
};
Script script;

// The abstract Unix socket (no file, nothing on the network) the store's handles connect to.
std::string socketName() { return "stacklens-http-fuzzer-" + std::to_string(::getpid()); }

// Accepts each connection the store opens, in the order it opens them (one at a time: the
// harness reads on one thread), writes it the next answer and shuts it for writing, so that the
// answer ends there while the request can still be sent.
void serve(int listener) {
  for (;;) {
    const int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    const std::lock_guard lock(script.mutex);
    if (script.next < script.answers.size()) {
      const std::string& answer = script.answers[script.next++];
      // Inputs are at most -max_len (64 KiB), less than the socket holds: the writes never wait.
      const int size = 1 << 20;
      ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
      for (size_t done = 0; done < answer.size();) {
        const ssize_t n = ::write(fd, answer.data() + done, answer.size() - done);
        if (n <= 0) break;
        done += size_t(n);
      }
    }
    ::shutdown(fd, SHUT_WR);
    script.serverEnds.push_back(fd);
  }
}

void startServer() {
  const int listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const std::string name = socketName();
  std::memcpy(address.sun_path + 1, name.data(), name.size());  // sun_path[0] = 0: abstract
  const socklen_t length = socklen_t(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  if (listener < 0 || ::bind(listener, reinterpret_cast<sockaddr*>(&address), length) != 0 ||
      ::listen(listener, 64) != 0) {
    std::perror("http_fuzzer: the answering socket");
    std::abort();
  }
  std::thread(serve, listener).detach();
}

void connectToScript(void* handle) {
  CURL* curl = static_cast<CURL*>(handle);
  static const std::string name = socketName();
  curl_easy_setopt(curl, CURLOPT_ABSTRACT_UNIX_SOCKET, name.c_str());
  curl_easy_setopt(curl, CURLOPT_PROXY, "");  // whatever the environment says
  if (std::getenv("HTTP_FUZZER_CURL_VERBOSE")) curl_easy_setopt(curl, CURLOPT_VERBOSE, 1L);
}

stacklens::io::HttpLimits scriptLimits() {
  stacklens::io::HttpLimits l;
  // Every answer ends (the connection is shut), so no limit is reached by waiting; these only
  // bound a harness bug.
  l.connectTimeoutMs = 1000;
  l.stallTimeoutMs = 2000;
  l.totalTimeoutMs = 4000;
  l.retries = 0;
  l.backoffMs = 0;
  l.parallelReads = 1;  // the answers go to the requests in a reproducible order
  l.adjustHandle = connectToScript;
  return l;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // The fuzzers run within -rss_limit_mb=2048: what an answer may make the reader allocate stays
  // well below (its allocation cap, io/file_checks.h).
  ::setenv("STACKLENS_ALLOCATION_CAP_MB", "512", 0);
  startServer();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  {
    const std::lock_guard lock(script.mutex);
    script.answers.clear();
    script.next = 0;
    for (size_t from = 0;;) {
      const size_t at = input.find(kSeparator, from);
      script.answers.push_back(input.substr(from, at - from));
      if (at == std::string::npos) break;
      from = at + kSeparator.size();
    }
  }
  try {
    const stacklens::io::ZarrReader reader(stacklens::io::makeHttpStore(scriptLimits()),
                                           "http://fuzz.invalid/a.zarr", {});
    const stacklens::io::StackInfo& info = reader.info();
    if (info.y * info.x <= (int64_t{1} << 22)) {  // the fuzzer's memory is limited
      std::vector<float> slice(size_t(info.y * info.x));
      for (int64_t z = 0; z < info.z && z < 16; ++z) reader.readSlice(z, slice.data());
    }
  } catch (const stacklens::io::IoError& e) {
    // HTTP_FUZZER_VERBOSE=1: why an input (a new seed, say) stops where it does.
    static const bool verbose = std::getenv("HTTP_FUZZER_VERBOSE");
    if (verbose) std::fprintf(stderr, "http_fuzzer: %s\n", e.what());
  }
  const std::lock_guard lock(script.mutex);
  for (const int fd : script.serverEnds) ::close(fd);
  script.serverEnds.clear();
  return 0;
}
