// Placeholder until the readers land.
#include "io/stack.h"

namespace stacklens::io {

const char* dtypeName(DType t) {
  switch (t) {
    case DType::UInt8:
      return "uint8";
    case DType::Int8:
      return "int8";
    case DType::UInt16:
      return "uint16";
    case DType::Int16:
      return "int16";
    case DType::UInt32:
      return "uint32";
    case DType::Int32:
      return "int32";
    case DType::UInt64:
      return "uint64";
    case DType::Int64:
      return "int64";
    case DType::Float32:
      return "float32";
    case DType::Float64:
      return "float64";
  }
  return "unknown";
}

std::unique_ptr<StackReader> openStack(const std::string& path, const OpenOptions&) {
  throw IoError(path, "reading stacks is not implemented yet");
}

}  // namespace stacklens::io
