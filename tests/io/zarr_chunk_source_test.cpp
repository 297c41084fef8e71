// ZarrChunkSource with a cache small enough to let chunks go: the buffers it gives back are
// decoded into again, and every chunk still holds what python3-zarr wrote.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "io/zarr_chunk_source.h"
#include "io/zarr_metadata.h"
#include "io/zarr_store.h"
#include "test_support.h"
#include "zarr_support.h"

namespace stacklens::io {
namespace {

TEST(ZarrChunkSource, RecycledBuffersHoldEachChunksOwnValues) {
  const auto& arrays = test::ZarrV2Arrays::get();
  ASSERT_EQ(arrays.failure(), "");
  // blosc_f4: 5 × 17 × 23 little-endian float32 in C order, chunks of 2 × 8 × 10 (640 bytes), a
  // grid of 3 × 3 × 3 with partial chunks at the far edges.
  const std::string folder = arrays.folder() + "/blosc_f4.zarr";
  const std::vector<float> expected = test::readF32(arrays.folder() + "/blosc_f4.f32");
  ASSERT_EQ(expected.size(), size_t(5 * 17 * 23));
  ZarrArrayMeta meta = readZarrArrayMeta(*localZarrStore(), folder);
  ASSERT_EQ(meta.coding.decodedBytes, 640);
  // Room for 16 chunks (each counted with 64 bytes of bookkeeping) and one spare buffer: reading
  // the 27 chunks in turn lets go of chunks that later reads decode into.
  const ZarrChunkSource source(localZarrStore(), meta, 16 * (640 + 64));
  for (int pass = 0; pass < 3; ++pass)
    for (int64_t gz = 0; gz < 3; ++gz)
      for (int64_t gy = 0; gy < 3; ++gy)
        for (int64_t gx = 0; gx < 3; ++gx) {
          SCOPED_TRACE("pass " + std::to_string(pass) + " chunk " + std::to_string(gz) + "." +
                       std::to_string(gy) + "." + std::to_string(gx));
          const auto bytes = source.chunk({gz, gy, gx});
          ASSERT_EQ(bytes->size(), 640u);
          int mismatches = 0;
          for (int64_t a = 0; a < 2; ++a)
            for (int64_t b = 0; b < 8; ++b)
              for (int64_t c = 0; c < 10; ++c) {
                const int64_t z = gz * 2 + a, y = gy * 8 + b, x = gx * 10 + c;
                if (z >= 5 || y >= 17 || x >= 23) continue;  // padding of an edge chunk
                float v = 0;
                std::memcpy(&v, bytes->data() + 4 * ((a * 8 + b) * 10 + c), 4);
                mismatches += v != expected[size_t((z * 17 + y) * 23 + x)];
              }
          EXPECT_EQ(mismatches, 0);
        }
}

}  // namespace
}  // namespace stacklens::io
