// Zarr and OME-Zarr over HTTP against a loopback server (zarr_http_server.py): the values equal
// the same folder read locally, v3 shards are read by range, a 404 chunk (and a 403 one, said
// once) is the fill value, a URL's query goes with every request, opens share connections, and a
// server that fails, stalls or lies about sizes ends in an IoError naming the URL and the reason
// rather than a hang or an allocation.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "../app/cli_runner.h"
#include "compute/log.h"
#include "io/http_store.h"
#include "io/read_stop.h"
#include "io/stack.h"
#include "io/zarr_metadata.h"
#include "io/zarr_reader.h"
#include "loopback_http_server.h"
#include "test_support.h"
#include "zarr_support.h"

namespace stacklens::io {
namespace {

const std::string kV3 = std::string(STACKLENS_TEST_DATA) + "/zarr/v3";

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

const test::LoopbackHttpServer& v3Server() {
  static const test::LoopbackHttpServer server(kV3);
  return server;
}

// Short limits: the failing cases end in well under a second each.
HttpLimits quickLimits() {
  HttpLimits l;
  l.connectTimeoutMs = 2000;
  l.stallTimeoutMs = 300;
  l.totalTimeoutMs = 5000;
  l.retries = 2;
  l.backoffMs = 10;
  return l;
}

std::unique_ptr<StackReader> openUrl(const std::string& url, const OpenOptions& o = {}) {
  return std::make_unique<ZarrReader>(makeHttpStore(quickLimits()), url, o);
}

// The message of what opening url and reading every slice throws ("" when nothing does).
std::string readFailure(const std::string& url, const HttpLimits& limits = quickLimits()) {
  try {
    const ZarrReader reader(makeHttpStore(limits), url, OpenOptions{});
    test::readAll(reader);
  } catch (const IoError& e) {
    return e.what();
  }
  return "";
}

void expectSameStack(const StackReader& local, const StackReader& remote) {
  const StackInfo &a = local.info(), &b = remote.info();
  ASSERT_EQ(a.z, b.z);
  ASSERT_EQ(a.y, b.y);
  ASSERT_EQ(a.x, b.x);
  EXPECT_EQ(a.planes, b.planes);
  EXPECT_EQ(a.dtype, b.dtype);
  EXPECT_EQ(a.spacing, b.spacing);
  EXPECT_EQ(a.units, b.units);
  EXPECT_EQ(a.hdus.size(), b.hdus.size());
  EXPECT_TRUE(test::sameValues(test::readAll(local), test::readAll(remote)));
}

TEST(ZarrHttp, ReadsEveryV3FixtureAsTheLocalFolderDoes) {
  const auto& server = v3Server();
  ASSERT_EQ(server.failure(), "");
  for (const test::ZarrCase& c : test::readZarrManifest(kV3)) {
    SCOPED_TRACE(c.name);
    int level = 0;
    const std::string folder = test::zarrFolderOf(kV3, c, level);
    const std::string name = std::filesystem::path(folder).filename().string();
    for (const int plane : {0, int(c.planes - 1)}) {
      const OpenOptions o{level, plane};
      // Through openStack, as the CLI, Python and the viewer open a URL.
      expectSameStack(*openStack(folder, o), *openStack(server.url("ok", name) + "/", o));
    }
  }
}

TEST(ZarrHttp, ReadsV2ArraysAndOme04AsTheLocalFolderDoes) {
  const auto& arrays = test::ZarrV2Arrays::get();
  ASSERT_EQ(arrays.failure(), "");
  static const test::LoopbackHttpServer server(arrays.folder());
  ASSERT_EQ(server.failure(), "");
  for (const auto& entry : std::filesystem::directory_iterator(arrays.folder())) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() != ".zarr") continue;
    SCOPED_TRACE(name);
    // A plain v2 array is found by a HEAD request for its .zarray; "nohead" refuses HEAD.
    for (const char* mode : {"ok", "nohead"}) {
      std::unique_ptr<StackReader> local;
      try {
        local = openStack(entry.path().string());
      } catch (const IoError& e) {  // a bad-input case: over HTTP it fails the same way
        EXPECT_THROW(openUrl(server.url(mode, name)), IoError) << e.what();
        continue;
      }
      expectSameStack(*local, *openUrl(server.url(mode, name)));
    }
  }
}

// A chunk the server answers 404 for was never written: the fill value, as locally.
TEST(ZarrHttp, AMissingChunkReadsAsTheFillValue) {
  test::TempDir dir;
  std::filesystem::copy(kV3 + "/zstd_f4.zarr", dir.file("a.zarr"),
                        std::filesystem::copy_options::recursive);
  ASSERT_TRUE(std::filesystem::remove(dir.file("a.zarr/c/0/0/0")));
  const test::LoopbackHttpServer server(dir.path().string());
  ASSERT_EQ(server.failure(), "");
  const auto local = openStack(dir.file("a.zarr"));
  expectSameStack(*local, *openUrl(server.url("ok", "a.zarr")));
  const std::vector<float> values = test::readAll(*local);
  EXPECT_TRUE(std::count_if(values.begin(), values.end(), [](float v) { return v != v; }) > 0)
      << "the fixture's fill value is NaN";
}

TEST(ZarrHttp, ShardsReadWhenTheServerIgnoresRanges) {
  const auto& server = v3Server();
  for (const char* name : {"sharded_u2.zarr", "shard_start_f8.zarr"}) {
    SCOPED_TRACE(name);
    expectSameStack(*openStack(kV3 + "/" + name), *openUrl(server.url("norange", name)));
  }
}

TEST(ZarrHttp, RetriesAServerErrorThenReads) {
  const auto& server = v3Server();
  expectSameStack(*openStack(kV3 + "/zstd_f4.zarr"), *openUrl(server.url("flaky", "zstd_f4.zarr")));
}

TEST(ZarrHttp, GivesUpOnServerErrorsNamingTheUrlAndStatus) {
  const std::string url = v3Server().url("down", "zstd_f4.zarr");
  const std::string message = readFailure(url);
  EXPECT_TRUE(has(message, url + "/zarr.json: HTTP status 503 (Service Unavailable) after 3 "
                                 "attempts"))
      << message;
}

// S3 and GCS answer 403 for an absent key where the bucket may not be listed: a chunk or shard
// answered 403 reads as the fill value (as a missing one does locally), and the reader says so
// once, naming the image.
TEST(ZarrHttp, AForbiddenChunkReadsAsTheFillValueAndIsReportedOnce) {
  for (const char* name : {"zstd_f4.zarr", "sharded_u2.zarr"}) {
    SCOPED_TRACE(name);
    std::vector<std::string> messages;
    std::mutex messagesMutex;
    const compute::LogSink before =
        compute::setLogSink([&](compute::LogLevel, const std::string& text) {
          const std::lock_guard lock(messagesMutex);
          messages.push_back(text);
        });
    const std::string url = v3Server().url("forbidden-chunks", name);
    const auto remote = openUrl(url);
    const std::vector<float> values = test::readAll(*remote);
    compute::setLogSink(before);
    const double fill = readZarrArrayMeta(*localZarrStore(), kV3 + "/" + name).fillValue;
    ASSERT_FALSE(values.empty());
    for (const float v : values) ASSERT_TRUE(v == float(fill) || (v != v && fill != fill)) << v;
    ASSERT_EQ(messages.size(), 1u);
    EXPECT_EQ(messages[0].rfind(url + ": ", 0), 0u) << messages[0];
    EXPECT_TRUE(has(messages[0],
                    " answered 403 Forbidden and read as the fill value (an object "
                    "store hides absent keys this way; if the data should be there, "
                    "check the URL's credentials)"))
        << messages[0];
  }
}

// Metadata answered 403 is no absent object: the image cannot be opened, and the error names the
// URL and the status.
TEST(ZarrHttp, ForbiddenMetadataIsAnErrorNamingTheUrlAndStatus) {
  const std::string url = v3Server().url("forbidden", "zstd_f4.zarr");
  const std::string message = readFailure(url);
  EXPECT_TRUE(has(message, url + "/zarr.json: HTTP status 403 (Forbidden)")) << message;
}

// A presigned or token URL: its query goes with every request (the server answers 403 without
// it, which would read as the fill value for chunks), each key joined to the path before it; the
// fragment is dropped, the path's escapes are sent as they are, and StackInfo::path keeps the
// query so that the stack opens again from it (the viewer's levels, Recent).
TEST(ZarrHttp, AUrlsQueryGoesWithEveryRequest) {
  test::TempDir dir;
  for (const char* name : {"zstd_f4.zarr", "sharded_u2.zarr", "ome05.zarr"})
    std::filesystem::copy(kV3 + "/" + name, dir.file(std::string("a b ") + name),
                          std::filesystem::copy_options::recursive);
  const test::LoopbackHttpServer server(dir.path().string());
  ASSERT_EQ(server.failure(), "");
  for (const char* name : {"zstd_f4.zarr", "sharded_u2.zarr", "ome05.zarr"}) {
    SCOPED_TRACE(name);
    const std::string url = server.url("token", std::string("a%20b%20") + name);
    // As given, the image's folder (a slash or metadata name after it dropped) with the query.
    const std::pair<std::string, std::string> cases[] = {
        {url + "?token=secret", url + "?token=secret"},
        {url + "/?x=1&token=secret#part", url + "?x=1&token=secret"},
        {url + "/zarr.json?token=secret", url + "?token=secret"}};
    for (const auto& [given, path] : cases) {
      SCOPED_TRACE(given);
      const auto remote = openStack(given);
      expectSameStack(*openStack(kV3 + "/" + name), *remote);
      EXPECT_EQ(remote->info().path, path);
      expectSameStack(*remote, *openStack(remote->info().path));
    }
    const std::string message = readFailure(url);
    EXPECT_TRUE(has(message, url + "/zarr.json: HTTP status 403 (Forbidden)")) << message;
  }
}

// Opens share the process's connections: two opens of one image, each reading every slice on up
// to parallelReads() threads, use no more connections than one reader's threads. (A reading
// thread holds one pooled connection cache at a time, the pool lends the caches given back last,
// and each keeps its connection to this server alive; a pool per open would use up to twice as
// many, since a slice of this array has 9 chunks, and no reuse at all 40.)
TEST(ZarrHttp, OpensOfOneServerShareTheirConnections) {
  const test::LoopbackHttpServer server(kV3);
  ASSERT_EQ(server.failure(), "");
  ASSERT_EQ(server.connectionsAccepted(), 0);
  const std::string url = server.url("ok", "zstd_f4.zarr");
  int threads = 0;
  for (int open = 0; open < 2; ++open) {
    const auto store = makeHttpStore(quickLimits());
    threads = store->parallelReads();
    const ZarrReader reader(store, url, OpenOptions{});
    ASSERT_EQ((reader.info().y + 3) / 4 * ((reader.info().x + 4) / 5), 9);
    test::readAll(reader);
  }
  const int accepted = server.connectionsAccepted();
  EXPECT_GE(accepted, 1);
  EXPECT_LE(accepted, threads);
}

TEST(ZarrHttp, AStalledServerEndsInAnErrorAfterItsRetries) {
  HttpLimits limits = quickLimits();
  limits.retries = 1;
  const auto start = std::chrono::steady_clock::now();
  const std::string message = readFailure(v3Server().url("stall-chunks", "zstd_f4.zarr"), limits);
  EXPECT_TRUE(has(message, "the server sent nothing for 0.3 s (2 attempts)")) << message;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(15));
}

// The process-wide flag (the CLI's Ctrl-C, the viewer closing) and a scope's flag (a Python
// call, a stale open in the viewer; carried to the threads that read the chunks) each end a read
// that waits on a stalled server.
TEST(ZarrHttp, TheStopFlagsEndAStalledRead) {
  HttpLimits patient = quickLimits();
  patient.stallTimeoutMs = patient.totalTimeoutMs = 60000;
  const std::string url = v3Server().url("stall-chunks", "zstd_f4.zarr");
  for (const bool global : {true, false}) {
    SCOPED_TRACE(global ? "process-wide" : "scope");
    std::atomic<bool> stop{false};
    if (global) stopReadsWhen(&stop);
    const ReadStopScope scope(global ? nullptr : &stop);
    std::thread stopper([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      stop = true;
    });
    const auto start = std::chrono::steady_clock::now();
    const std::string message = readFailure(url, patient);
    stopper.join();
    stopReadsWhen(nullptr);
    EXPECT_TRUE(has(message, ": stopped")) << message;
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  }
}

TEST(ZarrHttp, ABodyLongerThanAnyEncodingIsRefused) {
  struct Case {
    const char *mode, *name, *expected;
  };
  const Case cases[] = {
      // Announced: refused before any of it is read (the chunk named is whichever of the
      // parallel reads failed first).
      {"huge-chunks", "zstd_f4.zarr",
       ": 1099511627776 bytes stored, more than any encoding of its"},
      // Streamed without a length: cut off at the cap.
      {"endless-chunks", "zstd_f4.zarr", "more bytes sent than announced"},
      {"endless", "zstd_f4.zarr",
       "zarr.json: metadata of more bytes than announced, more than the 16 MiB any Zarr "
       "metadata needs"},
      {"overrange", "sharded_u2.zarr", "the server sent more than the"}};
  for (const Case& c : cases) {
    const std::string message = readFailure(v3Server().url(c.mode, c.name));
    EXPECT_TRUE(has(message, c.expected)) << c.mode << ": " << message;
  }
}

// libcurl 7.88 appends a folded first header line to the last header of the handle's previous
// answer, freed by then (found by http_fuzzer): each request has a handle of its own, so that
// such an answer after others is an error (and under ASan, no use after free).
TEST(ZarrHttp, AFoldedFirstHeaderLineIsAnError) {
  const std::string url = v3Server().url("folded-chunks", "zstd_f4.zarr");
  const std::string message = readFailure(url);
  EXPECT_TRUE(has(message, url + "/c/")) << message;
  EXPECT_TRUE(has(message, "a malformed answer (a header line folded onto no header)")) << message;
}

TEST(ZarrHttp, ABodyShorterThanAnnouncedIsAnError) {
  const std::string message = readFailure(v3Server().url("short", "zstd_f4.zarr"));
  EXPECT_TRUE(has(message, "the answer ended after")) << message;
  EXPECT_TRUE(has(message, "bytes it announced")) << message;
}

TEST(ZarrHttp, NothingListeningIsAnErrorNamingTheUrl) {
  // A port of our own server that nothing listens on once it is closed.
  std::string url;
  {
    const test::LoopbackHttpServer gone(kV3);
    url = gone.url("ok", "zstd_f4.zarr");
  }
  const std::string message = readFailure(url);
  EXPECT_TRUE(has(message, url + "/zarr.json: no answer")) << message;
}

TEST(ZarrHttp, TheCliReadsAUrlAsItReadsAFolder) {
  const auto& server = v3Server();
  test::TempDir dir;
  const std::string url = server.url("ok", "ome05.zarr");
  const CliResult info = runCliSeparately("info " + url + " --plane 2");
  EXPECT_EQ(info.code, 0) << info.err;
  EXPECT_TRUE(has(info.out, "zarr")) << info.out;
  ASSERT_EQ(runCliSeparately("convert " + url + " " + dir.file("remote.fits") + " --plane 2").code,
            0);
  ASSERT_EQ(
      runCliSeparately("convert " + kV3 + "/ome05.zarr " + dir.file("local.fits") + " --plane 2")
          .code,
      0);
  EXPECT_TRUE(test::sameValues(test::readAll(*openStack(dir.file("local.fits"))),
                               test::readAll(*openStack(dir.file("remote.fits")))));
  const CliResult bad = runCliSeparately("info " + server.url("forbidden", "ome05.zarr"));
  EXPECT_NE(bad.code, 0);
  EXPECT_TRUE(has(bad.err, "HTTP status 403")) << bad.err;
}

}  // namespace
}  // namespace stacklens::io
