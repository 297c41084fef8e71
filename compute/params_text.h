// The operations' parameters as text, one function per parameter struct: the same words in
// HISTORY cards, dialogs and the pipeline's cache keys.
#pragma once

#include <optional>
#include <string>

#include "compute/params.h"

namespace stacklens::compute {

// Readable: six significant digits, for people. Exact: the shortest text that reads back as the
// same number, so that two texts are equal exactly when the parameters are (cache keys).
enum class Digits { Readable, Exact };

// "size=3"
std::string describeMedianSize(int size);
// "size=3 threshold=5 mode=both"
std::string describe(const OutlierParams& p, Digits digits = Digits::Readable);
// "sigma=0,1,1 truncate=4", then " nan-aware" when set
std::string describe(const BlurParams& p, Digits digits = Digits::Readable);
// "2d iterations=20 boundary=reflect", then " tv=…", " accelerated" and " epsilon=…" where they
// differ from the defaults
std::string describe(const DeconvolveParams& p, Digits digits = Digits::Readable);
// "kappa=3,3 max-iterations=10"
std::string describe(const ClipParams& p, Digits digits = Digits::Readable);
// "nsigma=5 connectivity=8 min-pixels=1 kappa=3,3 max-iterations=10" ("threshold=V" in place of
// nsigma with an absolute threshold); given background statistics are not described
std::string describe(const SegmentParams& p, Digits digits = Digits::Readable);
// "zoom=1,2,2 order=3"
std::string describe(const ResampleParams& p, Digits digits = Digits::Readable);
// "op=max first=0 last=9"
std::string describe(const ProjectParams& p);
// "order=1 first=0 last=9", then " clip=…" when set; the coordinates are not described
std::string describe(const MomentParams& p, Digits digits = Digits::Readable);

// The words of the options and of the texts: "bright", "dark", "both"; "reflect", "periodic",
// "zero", "reflect-exact".
const char* outlierModeName(OutlierMode mode);
const char* boundaryName(Boundary boundary);
// The boundary boundaryName calls `word`, or nothing; kBoundaryWords lists them for messages.
std::optional<Boundary> boundaryNamed(const std::string& word);
inline constexpr const char* kBoundaryWords = "reflect, periodic, zero or reflect-exact";

// A number as Digits says.
std::string describeNumber(double v, Digits digits);

}  // namespace stacklens::compute
