// The error every io function throws: which file, and why.
#pragma once

#include <stdexcept>
#include <string>

namespace stacklens::io {

class IoError : public std::runtime_error {
 public:
  IoError(std::string path, std::string reason)
      : std::runtime_error(path + ": " + reason),
        path_(std::move(path)),
        reason_(std::move(reason)) {}
  const std::string& path() const { return path_; }
  const std::string& reason() const { return reason_; }

 private:
  std::string path_, reason_;
};

}  // namespace stacklens::io
