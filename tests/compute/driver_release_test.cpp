#include "compute/driver_release.h"

#include <gtest/gtest.h>

namespace stacklens::compute {
namespace {

TEST(DriverRelease, ReadFromTheProprietaryModulesProcLine) {
  EXPECT_EQ(driverReleaseFromProcLine("NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  "
                                      "Sun Sep 14 05:31:11 UTC 2025"),
            "580.159.04");
}

TEST(DriverRelease, ReadFromTheOpenModulesProcLine) {
  EXPECT_EQ(driverReleaseFromProcLine("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  "
                                      "570.86.15  Release Build  (dvs-builder@U16-I3-B03-4-3)"),
            "570.86.15");
  EXPECT_EQ(driverReleaseFromProcLine("NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  "
                                      "550.54.14  Release Build"),
            "550.54.14");
}

TEST(DriverRelease, ALineWithoutAReleaseGivesNothing) {
  EXPECT_EQ(driverReleaseFromProcLine(""), "");
  EXPECT_EQ(driverReleaseFromProcLine("NVRM version: NVIDIA UNIX x86_64 Kernel Module"), "");
  // A number before the module's name is not its release.
  EXPECT_EQ(driverReleaseFromProcLine("GCC version: gcc 12.2.0 (Debian 12.2.0-14)"), "");
}

}  // namespace
}  // namespace stacklens::compute
