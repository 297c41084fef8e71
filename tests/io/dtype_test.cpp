// dtypeName gives the NumPy-style names that `stacklens-cli info` prints.
#include <gtest/gtest.h>

#include <string>

#include "io/stack.h"

using stacklens::io::DType;
using stacklens::io::dtypeName;

TEST(DType, NamesMatchNumpy) {
  EXPECT_EQ(std::string(dtypeName(DType::UInt8)), "uint8");
  EXPECT_EQ(std::string(dtypeName(DType::Int16)), "int16");
  EXPECT_EQ(std::string(dtypeName(DType::UInt32)), "uint32");
  EXPECT_EQ(std::string(dtypeName(DType::Int64)), "int64");
  EXPECT_EQ(std::string(dtypeName(DType::Float32)), "float32");
  EXPECT_EQ(std::string(dtypeName(DType::Float64)), "float64");
}
