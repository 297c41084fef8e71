// Session files whose numbers lie outside the range of the field they set (1e300 for an HDU or a
// minimum pixel count) are refused naming the field, not converted (undefined behaviour that
// gave a garbage value, found with the session fuzzer's harness).
#include <gtest/gtest.h>

#include <QJsonDocument>
#include <QJsonObject>
#include <stdexcept>
#include <string>

#include "ui/state/session.h"

namespace {

// The reason sessionFromJson gives for json, "" when it reads.
std::string refusal(const char* json) {
  const QJsonObject o = QJsonDocument::fromJson(json).object();
  try {
    stacklens::ui::sessionFromJson(o, "/nonexistent-session-folder");
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(SessionNumbers, WholeNumbersOutsideIntAreRefused) {
  for (const char* hdu : {"1e300", "-1e300", "2147483648", "-2147483649"}) {
    const std::string json = std::string(R"({"format": "stacklens-session", "version": 1,
        "file": {"path": "/x.fits", "hdu": )") +
                             hdu + "}}";
    EXPECT_EQ(refusal(json.c_str()), "hdu is out of range") << hdu;
  }
  EXPECT_EQ(refusal(R"({"format": "stacklens-session", "version": 1,
      "file": {"path": "/x.fits", "hdu": 2147483647}})"),
            "");
  EXPECT_EQ(refusal(R"({"format": "stacklens-session", "version": 1,
      "file": {"path": "/x.fits", "hdu": 1.5}})"),
            "hdu is not a whole number");
}

TEST(SessionNumbers, MinimumPixelsOutsideInt64AreRefused) {
  EXPECT_EQ(refusal(R"({"format": "stacklens-session", "version": 1, "file": {"path": "/x.fits"},
      "pipeline": {"segmentation": {"min_pixels": 1e300}}})"),
            "min_pixels is out of range");
}
