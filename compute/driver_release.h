// The NVIDIA driver's release ("580.159.04"), which device names carry so that reports say what
// ran them. Qt- and CUDA-free, so that its parsing is tested without a GPU.
#pragma once

#include <string>

namespace stacklens::compute {

// The release in the first line of /proc/driver/nvidia/version, or "" when the line has none:
// "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Sun ..." and the open module's
// "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build ...".
std::string driverReleaseFromProcLine(const std::string& line);

// The kernel module's release from /proc, else from NVML (loaded at run time, so the program
// needs no NVML to start; its start enumerates every GPU, which on a host of several takes a good
// part of a second), else "". Read once per process: every device's context asks.
std::string driverRelease();

}  // namespace stacklens::compute
