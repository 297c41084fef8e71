// The byte-budget LRU cache (io/byte_budget_lru.h) and the Zarr chunk cache made of it: eviction
// from the least recently used, the budget, oversize and pinned entries, each checked against the
// contents written out by hand.
#include "io/byte_budget_lru.h"

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "io/zarr_chunk_cache.h"

namespace {

using stacklens::io::ByteBudgetLru;

// A value whose bytes are what it says.
struct Sized {
  int64_t bytes = 0;
  int tag = 0;
};
struct SizedBytes {
  int64_t operator()(const Sized& v) const { return v.bytes; }
};
using Cache = ByteBudgetLru<int, Sized, SizedBytes>;

// The keys held, the most recently used first.
std::vector<int> keysOf(const Cache& c) {
  std::vector<int> keys;
  c.forEach([&keys](int k, const Sized&) { keys.push_back(k); });
  return keys;
}

TEST(ByteBudgetLru, EvictsTheLeastRecentlyUsedFirst) {
  Cache c(300);
  for (int k = 0; k < 3; ++k) EXPECT_TRUE(c.insertIfFits(k, {100, k}));
  EXPECT_EQ(keysOf(c), (std::vector<int>{2, 1, 0}));
  ASSERT_NE(c.find(0), nullptr);  // 0 used: 1 is now the least recent
  EXPECT_EQ(keysOf(c), (std::vector<int>{0, 2, 1}));
  EXPECT_TRUE(c.insertIfFits(3, {150, 3}));  // 250 over: 1 and then 2 go
  EXPECT_EQ(keysOf(c), (std::vector<int>{3, 0}));
  EXPECT_EQ(c.bytes(), 250);
  EXPECT_EQ(c.size(), 2u);
}

TEST(ByteBudgetLru, PeekLeavesTheOrderOfUse) {
  Cache c(200);
  c.insertIfFits(0, {100, 0});
  c.insertIfFits(1, {100, 1});
  ASSERT_NE(c.peek(0), nullptr);
  EXPECT_EQ(c.peek(0)->tag, 0);
  EXPECT_EQ(c.peek(7), nullptr);
  c.insertIfFits(2, {100, 2});  // 0 is still the least recent
  EXPECT_EQ(keysOf(c), (std::vector<int>{2, 1}));
}

TEST(ByteBudgetLru, InsertIfFitsRefusesOversizeAndHeldKeys) {
  Cache c(300);
  c.insertIfFits(0, {100, 0});
  c.insertIfFits(1, {100, 1});
  EXPECT_FALSE(c.insertIfFits(2, {301, 2}));  // would evict everything and still not fit
  EXPECT_EQ(keysOf(c), (std::vector<int>{1, 0}));
  EXPECT_FALSE(c.insertIfFits(0, {50, 9}));  // held: the first value stays, its place too
  EXPECT_EQ(c.find(0)->tag, 0);
  EXPECT_EQ(c.bytes(), 200);
  EXPECT_TRUE(c.insertIfFits(3, {300, 3}));  // exactly the budget: alone
  EXPECT_EQ(keysOf(c), (std::vector<int>{3}));
}

TEST(ByteBudgetLru, PutReplacesAndSparesPinnedKeysEvenOverBudget) {
  Cache c(200);
  c.put(0, {100, 0});
  c.put(0, {150, 1});  // replaced: its bytes counted once
  EXPECT_EQ(c.bytes(), 150);
  EXPECT_EQ(c.find(0)->tag, 1);
  c.put(1, {100, 2}, std::set<int>{0, 1});  // both pinned: over budget
  EXPECT_EQ(c.bytes(), 250);
  c.put(2, {100, 3}, std::set<int>{0, 2});  // 1 goes, the pinned stay
  EXPECT_EQ(keysOf(c), (std::vector<int>{2, 0}));
  c.put(3, {500, 4});  // oversize, unpinned: everything else goes first, then it
  EXPECT_TRUE(keysOf(c).empty());
  EXPECT_EQ(c.bytes(), 0);
  c.put(4, {500, 5}, std::set<int>{4});  // oversize and pinned: kept alone
  EXPECT_EQ(keysOf(c), (std::vector<int>{4}));
}

TEST(ByteBudgetLru, ReplaceKeepsThePlaceAndRecountsTheBytes) {
  Cache c(300);
  for (int k = 0; k < 3; ++k) c.insertIfFits(k, {100, k});
  EXPECT_TRUE(c.replace(0, {150, 9}));  // 350: the least recent (0 itself) goes
  EXPECT_EQ(keysOf(c), (std::vector<int>{2, 1}));
  EXPECT_EQ(c.bytes(), 200);
  EXPECT_TRUE(c.replace(1, {50, 8}));
  EXPECT_EQ(keysOf(c), (std::vector<int>{2, 1}));
  EXPECT_EQ(c.bytes(), 150);
  EXPECT_FALSE(c.replace(5, {1, 0}));
}

TEST(ByteBudgetLru, ANewBudgetEvictsAtOnceAndClearEmpties) {
  Cache c(300);
  for (int k = 0; k < 3; ++k) c.insertIfFits(k, {100, k});
  c.setBudget(150);
  EXPECT_EQ(c.budget(), 150);
  EXPECT_EQ(keysOf(c), (std::vector<int>{2}));
  c.erase(2);
  EXPECT_EQ(c.bytes(), 0);
  c.insertIfFits(1, {100, 1});
  c.clear();
  EXPECT_EQ(c.size(), 0u);
  EXPECT_EQ(c.bytes(), 0);
  EXPECT_FALSE(c.contains(1));
}

TEST(ByteBudgetLru, HashedKeysBehaveAsOrderedOnes) {
  ByteBudgetLru<std::string, Sized, SizedBytes, std::unordered_map> c(200);
  c.insertIfFits("a", {100, 0});
  c.insertIfFits("b", {100, 1});
  c.find("a");
  c.insertIfFits("c", {100, 2});
  EXPECT_TRUE(c.contains("a"));
  EXPECT_FALSE(c.contains("b"));
  EXPECT_TRUE(c.contains("c"));
}

// The Zarr chunk cache counts each value's elements plus 64 bytes of bookkeeping, refuses a chunk
// larger than its capacity and keeps the first of two decodings of one chunk.
TEST(ZarrChunkCache, KeepsTheFirstDecodingAndDropsTheLeastRecent) {
  using Chunk = std::vector<float>;
  stacklens::io::ZarrChunkCache<Chunk> cache(2 * (40 + 64));  // two chunks of ten floats
  auto chunk = [](float v) { return std::make_shared<const Chunk>(10, v); };
  cache.insert("0.0", chunk(1));
  cache.insert("0.1", chunk(2));
  EXPECT_EQ(cache.usedBytes(), 2 * (40 + 64));
  cache.insert("0.0", chunk(9));
  EXPECT_EQ((*cache.find("0.0"))[0], 1.f);  // and "0.0" is now the most recent
  cache.insert("0.2", chunk(3));
  EXPECT_EQ(cache.find("0.1"), nullptr);
  ASSERT_NE(cache.find("0.2"), nullptr);
  cache.insert("big", std::make_shared<const Chunk>(100, 0.f));
  EXPECT_EQ(cache.find("big"), nullptr);
  EXPECT_NE(cache.find("0.0"), nullptr);                   // nothing evicted for it
  cache.insert("empty", std::make_shared<const Chunk>());  // an absence counts 64 bytes
  EXPECT_EQ(cache.find("0.2"), nullptr);                   // the least recent went for it
  EXPECT_EQ(cache.usedBytes(), (40 + 64) + 64);
}

}  // namespace
