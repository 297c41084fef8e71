// compute::SliceStore: one byte budget over host slices and their uploads, least recently used
// first; one read per slice however many threads ask; held slices stay; uploads of a backend
// replaced; the live processor and a viewer sharing one store read each slice once.
#include "compute/slice_store.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <stdexcept>
#include <thread>

#include "compute/live_processor.h"
#include "tests/compute/counting_source.h"
#include "tests/compute/fake_backend.h"

using namespace stacklens;
using compute::Image;
using compute::SliceStore;
using stacklens::testing::CountingSource;
using stacklens::testing::FakeBackend;

namespace {

constexpr int64_t kY = 6, kX = 5;
constexpr size_t kSlice = kY * kX * sizeof(float);

SliceStore::Pixels slice(float value) {
  return std::make_shared<const std::vector<float>>(kY * kX, value);
}

}  // namespace

TEST(SliceStore, EvictsLeastRecentlyUsedBeyondTheBudget) {
  CountingSource src(10);
  SliceStore store(src.source(), 3 * kSlice);
  for (int z = 0; z < 3; ++z) store.insert(z, slice(float(z)));
  ASSERT_TRUE(store.find(0));   // 0 becomes the most recent
  store.insert(3, slice(3.f));  // evicts 1, the least recent
  EXPECT_TRUE(store.contains(0));
  EXPECT_FALSE(store.contains(1));
  EXPECT_TRUE(store.contains(2));
  EXPECT_TRUE(store.contains(3));
  EXPECT_EQ(store.count(), 3u);
  EXPECT_EQ(store.bytes(), 3 * kSlice);
  store.insert(9, std::make_shared<const std::vector<float>>(1000, 0.f));  // alone over budget
  EXPECT_EQ(store.count(), 1u);
  EXPECT_TRUE(store.contains(9));
  EXPECT_EQ(src.reads->load(), 0);
}

TEST(SliceStore, GetReadsOnceAndReturnsTheSlice) {
  CountingSource src(4);
  SliceStore store(src.source(), 10 * kSlice);
  const SliceStore::Pixels a = store.get(2);
  const SliceStore::Pixels b = store.get(2);
  EXPECT_EQ(a, b);
  EXPECT_EQ(src.reads->load(), 1);
  EXPECT_EQ(store.fileReads(), 1);
  for (int64_t y = 0; y < kY; ++y)
    for (int64_t x = 0; x < kX; ++x) EXPECT_EQ((*a)[size_t(y * kX + x)], src.at(2, y, x));
  EXPECT_THROW(store.get(4), compute::InvalidArgument);
  EXPECT_THROW(store.get(-1), compute::InvalidArgument);
}

TEST(SliceStore, ThreadsAskingForOneSliceShareOneRead) {
  CountingSource src(4);
  *src.delayMs = 50;
  SliceStore store(src.source(), 10 * kSlice);
  SliceStore::Pixels a, b, c;
  std::thread t1([&] { a = store.get(1); });
  std::thread t2([&] { b = store.get(1); });
  c = store.get(1);
  t1.join();
  t2.join();
  EXPECT_EQ(src.reads->load(), 1);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a, c);
}

TEST(SliceStore, AFailedReadIsThrownAndNotKept) {
  CountingSource src(4);
  SliceStore store(src.source(), 10 * kSlice);
  *src.fail = true;
  try {
    store.get(3);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "stack.fits: slice 3: bad");
  }
  EXPECT_FALSE(store.contains(3));
  *src.fail = false;
  EXPECT_EQ((*store.get(3))[0], src.at(3, 0, 0));  // read again
  EXPECT_EQ(src.reads->load(), 2);
}

TEST(SliceStore, OneBudgetCoversHostSlicesAndTheirUploads) {
  CountingSource src(6);
  auto gpu = std::make_shared<FakeBackend>(true);
  SliceStore store(src.source(), 4 * kSlice);
  for (int z : {0, 1, 2}) store.get(z);
  EXPECT_EQ(store.bytes(), 3 * kSlice);
  const Image d0 = store.onBackend(0, *gpu);
  EXPECT_EQ(d0.location(), compute::Location::Cuda);
  EXPECT_TRUE(store.uploaded(0));
  EXPECT_EQ(store.deviceBytes(), kSlice);
  EXPECT_EQ(store.bytes(), 4 * kSlice);
  // The kept upload is handed out again, not made again.
  EXPECT_EQ(store.onBackend(0, *gpu).data(), d0.data());
  // Five slices' bytes: an upload goes before any host slice, least recent first (0's).
  store.onBackend(2, *gpu);
  EXPECT_EQ(store.bytes(), 4 * kSlice);
  EXPECT_TRUE(store.contains(0));
  EXPECT_TRUE(store.contains(1));
  EXPECT_FALSE(store.uploaded(0));
  EXPECT_TRUE(store.uploaded(2));
  store.get(3);  // over again: 2's upload goes, the host slices stay
  EXPECT_EQ(store.deviceBytes(), 0u);
  EXPECT_EQ(store.count(), 4u);
  // Uploaded again; no upload is left to give up, so 1, the least recent slice, goes.
  const Image h2 = gpu->download(store.onBackend(2, *gpu));
  EXPECT_EQ(store.bytes(), 4 * kSlice);
  EXPECT_FALSE(store.contains(1));
  EXPECT_TRUE(store.contains(0));
  // The upload holds the slice's values.
  EXPECT_EQ(h2.at(0, 3, 4), src.at(2, 3, 4));
  EXPECT_EQ(src.reads->load(), 4);
}

TEST(SliceStore, HeldSlicesAreNotEvicted) {
  CountingSource src(8);
  SliceStore store(src.source(), 2 * kSlice);
  {
    const SliceStore::Hold hold(store, 0, 1);
    for (int z : {0, 1, 2, 3}) store.get(z);
    EXPECT_TRUE(store.contains(0));
    EXPECT_TRUE(store.contains(1));
    EXPECT_TRUE(store.contains(3));  // the newest
    EXPECT_FALSE(store.contains(2));
  }
  // Released: back within the budget, the oldest gone first.
  EXPECT_EQ(store.bytes(), 2 * kSlice);
  EXPECT_FALSE(store.contains(0));
  EXPECT_TRUE(store.contains(3));
}

TEST(SliceStore, UploadsOfAnotherBackendAreReplacedAndCanBeDropped) {
  CountingSource src(3);
  auto first = std::make_shared<FakeBackend>(true);
  auto second = std::make_shared<FakeBackend>(true);
  SliceStore store(src.source(), 10 * kSlice);
  const Image a = store.onBackend(1, *first);
  const Image b = store.onBackend(1, *second);
  EXPECT_NE(a.data(), b.data());
  EXPECT_EQ(store.deviceBytes(), kSlice);  // one upload kept, the second backend's
  store.dropUploads();
  EXPECT_EQ(store.deviceBytes(), 0u);
  EXPECT_FALSE(store.uploaded(1));
  EXPECT_TRUE(store.contains(1));
  EXPECT_EQ(src.reads->load(), 1);
}

TEST(SliceStore, AHostBackendsUploadIsTheHostSliceAndCostsNothing) {
  CountingSource src(3);
  auto cpu = std::make_shared<FakeBackend>(false);
  SliceStore store(src.source(), 10 * kSlice);
  const Image h = store.onBackend(2, *cpu);
  EXPECT_TRUE(h.onHost());
  EXPECT_EQ(h.data(), store.find(2)->data());  // shared, not copied
  EXPECT_EQ(store.bytes(), kSlice);
  EXPECT_EQ(store.deviceBytes(), 0u);
}

TEST(SliceStore, SlicesReadAfterPageLockForArePageLockedForThatBackend) {
  CountingSource src(4);
  auto gpu = std::make_shared<FakeBackend>(true);
  gpu->canPin = true;
  SliceStore store(src.source(), 10 * kSlice);
  const auto before = store.get(0);
  store.pageLockFor(gpu);
  const auto after = store.get(1);
  EXPECT_EQ(gpu->pinned.count(const_cast<float*>(before->data())), 0u);
  EXPECT_EQ(gpu->pinned.count(const_cast<float*>(after->data())), 1u);
}

// The viewer and the live processing share one store: a slice the viewer read is not read again
// for processing, and their bytes together stay within the one budget.
TEST(SliceStore, LiveProcessingTakesTheViewersSlicesUnderOneBudget) {
  CountingSource src(8);
  auto gpu = std::make_shared<FakeBackend>(true);
  auto store = std::make_shared<SliceStore>(src.source(), 6 * kSlice);
  compute::LiveProcessor live(gpu, store);
  for (int z : {0, 1, 2}) store->get(z);  // the viewer shows and reads ahead
  compute::Pipeline p;
  p.deconvolution.enabled = true;
  p.deconvolution.params.iterations = 2;
  for (int z : {1, 2, 0, 3, 4, 5, 6}) {
    const compute::LiveProcessor::Frame f = live.process(z, p);
    EXPECT_EQ(f.raw.data(), store->find(z)->data());  // the viewer's pixels, not a copy
    EXPECT_LE(store->bytes(), 6 * kSlice);
  }
  EXPECT_EQ(src.reads->load(), 7);  // 0..6, each once
  EXPECT_EQ(store->deviceBytes(), live.rawDeviceBytes());
  EXPECT_GT(store->deviceBytes(), 0u);
}

TEST(SliceStore, ReadsAheadOnItsOwnThread) {
  CountingSource src(6);
  std::atomic<bool> startedElsewhere{false};
  const auto caller = std::this_thread::get_id();
  auto store = std::make_shared<SliceStore>(
      src.source(), 10 * kSlice, [&] { startedElsewhere = std::this_thread::get_id() != caller; });
  store->get(2);
  store->readAhead({3, 1, 2, 6, -1});  // 2 is kept; 6 and -1 are outside the stack
  for (int i = 0; i < 60000 && !(store->contains(3) && store->contains(1)); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_TRUE(store->contains(3));
  EXPECT_TRUE(store->contains(1));
  EXPECT_TRUE(startedElsewhere.load());
  EXPECT_EQ(src.reads->load(), 3);
  EXPECT_FALSE(store->uploaded(3));  // read ahead only: nothing is uploaded
}

// Each read-ahead thread takes the next slice: with three threads, three reads are under way at
// once (held until the test lets them go, so no clock decides), and each slice is read once.
TEST(SliceStore, ReadAheadThreadsReadDifferentSlicesAtOnce) {
  CountingSource src(8);
  *src.hold = true;
  auto store = std::make_shared<SliceStore>(src.source(), 10 * kSlice, nullptr, 3);
  store->readAhead({1, 2, 3, 4, 5});
  for (int i = 0; i < 60000 && src.reads->load() < 3; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(src.reads->load(), 3);  // three held at once; the fourth waits for a thread
  *src.hold = false;
  for (int i = 0; i < 60000 && store->count() < 5; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  for (int z = 1; z <= 5; ++z) {
    ASSERT_TRUE(store->contains(z)) << z;
    EXPECT_EQ((*store->find(z))[0], src.at(z, 0, 0)) << z;
  }
  EXPECT_EQ(src.reads->load(), 5);  // each once
  EXPECT_EQ(store->fileReads(), 5);
}

TEST(SliceStore, TheLastOwnerDoesNotWaitForAReadAheadInProgress) {
  CountingSource src(6);
  *src.hold = true;  // the read goes on until the store has been let go
  auto store = std::make_shared<SliceStore>(src.source(), 10 * kSlice);
  std::weak_ptr<SliceStore> watch = store;
  store->readAhead({4});
  for (int i = 0; i < 60000 && src.reads->load() == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_EQ(src.reads->load(), 1);  // the read is under way
  // Letting go while the read is held: an owner that waited for it would never return (the
  // read ends only after), so no clock is needed; the generous wait only keeps a failure from
  // hanging the suite.
  auto released = std::async(std::launch::async, [&] { store.reset(); });
  const bool returned = released.wait_for(std::chrono::seconds(60)) == std::future_status::ready;
  *src.hold = false;
  released.wait();
  EXPECT_TRUE(returned);
  // The read finishes on the read-ahead thread, which frees the store and ends.
  for (int i = 0; i < 60000 && !watch.expired(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_TRUE(watch.expired());
}
