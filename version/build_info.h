// What this build of StackLens is: its version, git revision and the backends built in.
#pragma once

#include <string>
#include <vector>

namespace stacklens::build_info {

// A library the build was made with; version is empty when it was left out of the build.
struct Component {
  std::string name;
  std::string version;
  std::string note;  // what it means here, e.g. "processing runs on the CPU"
};

std::string version();   // the project's version, e.g. "0.1.0"
std::string revision();  // the git commit, e.g. "84babd8d1e2f" or "84babd8d1e2f-modified"

// The CUDA toolkit, cuFFT, FFTW and Qt, in that order.
std::vector<Component> components();

// The --version text (and the About box's): "PROGRAM VERSION", then one line for the revision
// and one per component.
std::string describe(const std::string& program);

}  // namespace stacklens::build_info
