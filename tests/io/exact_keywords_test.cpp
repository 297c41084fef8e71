// Keywords read exactly: a 64-bit image's BLANK above 2^53 marks only its own pixels (read through
// a double, 2^53 + 1 became 2^53 and the wrong pixel turned NaN).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "io/stack.h"
#include "test_support.h"

namespace stacklens::io {
namespace {

std::string card(const std::string& text) {
  std::string c = text;
  c.resize(80, ' ');
  return c;
}

std::string bigEndian64(int64_t v) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[size_t(i)] = char((uint64_t(v) >> (56 - 8 * i)) & 0xff);
  return out;
}

TEST(ExactKeywords, Int64BlankAboveTwoToThe53) {
  test::TempDir dir;
  std::string h = card("SIMPLE  =                    T") + card("BITPIX  =                   64") +
                  card("NAXIS   =                    2") + card("NAXIS1  =                    2") +
                  card("NAXIS2  =                    1") + card("BLANK   =     9007199254740993") +
                  card("END");
  h.resize(2880, ' ');
  std::string data = bigEndian64(9007199254740993LL) + bigEndian64(9007199254740992LL);
  data.resize(2880, '\0');
  const std::string path = dir.file("blank64.fits");
  test::writeBytes(path, h + data);
  auto reader = openStack(path);
  ASSERT_TRUE(reader->info().blank.has_value());
  EXPECT_EQ(*reader->info().blank, 9007199254740993LL);
  float out[2] = {0, 0};
  reader->readSlice(0, out);
  EXPECT_TRUE(std::isnan(out[0]));
  EXPECT_EQ(out[1], 9007199254740992.0f);
}

}  // namespace
}  // namespace stacklens::io
