// PixelPool: vectors come back and are handed out again; the ones acquired for a backend are
// page-locked by it once and unpinned before they are freed.
#include "compute/pixel_pool.h"

#include <gtest/gtest.h>

#include "tests/compute/fake_backend.h"

using stacklens::compute::PixelPool;
using stacklens::testing::FakeBackend;

TEST(PixelPool, RecyclesVectorsOfTheSameSize) {
  auto pool = std::make_shared<PixelPool>();
  const float* first = nullptr;
  {
    auto a = pool->acquire(1000);
    first = a->data();
    (*a)[7] = 3.f;
  }
  EXPECT_EQ(pool->kept(), 1u);
  auto again = pool->acquire(1000);
  EXPECT_EQ(again->data(), first);  // the same storage, not a new allocation
  EXPECT_EQ(pool->kept(), 0u);
  auto other = pool->acquire(10);  // another size: a new vector
  EXPECT_NE(other->data(), first);
  EXPECT_EQ(other->size(), 10u);
}

TEST(PixelPool, PinsOnceForTheBackendAndUnpinsBeforeFreeing) {
  auto gpu = std::make_shared<FakeBackend>(true);
  gpu->canPin = true;
  {
    auto pool = std::make_shared<PixelPool>();
    float* p = nullptr;
    {
      auto [pixels, image] = pool->image({1, 4, 8}, gpu);
      p = pixels->data();
      EXPECT_EQ(image.data(), p);
      EXPECT_EQ(image.shape().count(), 32);
      EXPECT_EQ(gpu->pinned.count(p), 1u);
    }
    auto again = pool->acquire(32, gpu);
    EXPECT_EQ(again->data(), p);
    EXPECT_EQ(gpu->pins, 1);  // reused, not pinned again
    // A pageable request does not get the pinned vector.
    auto pageable = pool->acquire(32);
    EXPECT_NE(pageable->data(), p);
    EXPECT_EQ(gpu->pins, 1);
    // More than kKept returned at once: all are taken back (whoever drops a vector never waits
    // for an unpin); the next acquire unpins and frees the surplus.
    std::vector<std::shared_ptr<std::vector<float>>> many;
    for (size_t i = 0; i < PixelPool::kKept + 3; ++i) many.push_back(pool->acquire(32, gpu));
    EXPECT_EQ(gpu->pinned.size(), PixelPool::kKept + 4);
    many.clear();
    EXPECT_EQ(pool->kept(), PixelPool::kKept + 3);
    EXPECT_EQ(gpu->unpins, 0);
    auto one = pool->acquire(32, gpu);
    EXPECT_EQ(pool->kept(), PixelPool::kKept);
    EXPECT_EQ(gpu->pinned.size(), PixelPool::kKept + 2);  // the kept ones, `again` and `one`
  }
  // The pool and every vector gone: nothing stays page-locked.
  EXPECT_TRUE(gpu->pinned.empty());
  EXPECT_EQ(gpu->pins, gpu->unpins);
}

TEST(PixelPool, AVectorOutlivingThePoolIsStillUnpinned) {
  auto gpu = std::make_shared<FakeBackend>(true);
  gpu->canPin = true;
  auto pool = std::make_shared<PixelPool>();
  auto pixels = pool->acquire(16, gpu);
  pool.reset();
  EXPECT_EQ(gpu->pinned.size(), 1u);
  pixels.reset();
  EXPECT_TRUE(gpu->pinned.empty());
}

TEST(PixelPool, ABackendThatCannotPinGivesPageableVectors) {
  auto cpu = std::make_shared<FakeBackend>();
  auto pool = std::make_shared<PixelPool>();
  auto pixels = pool->acquire(16, cpu);
  EXPECT_EQ(pixels->size(), 16u);
  EXPECT_EQ(cpu->pins, 0);
}
