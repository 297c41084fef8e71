// chooseForSeams: the fastest plan, its seams weighed by the trial, and one block instead when
// they would exceed the tolerance and the budget holds it.
#include "compute/blocked/seam_policy.h"

#include <cstdio>

namespace stacklens::compute {
namespace {

std::string number(const char* format, double value) {
  char text[48];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

}  // namespace

std::optional<SeamRule> seamRuleNamed(const std::string& word) {
  if (word == "exact") return SeamRule::Exact;
  if (word == "fast") return SeamRule::Fast;
  return std::nullopt;
}

SeamChoice chooseForSeams(Backend& backend, const PlannedRunRequest& request, const Image& psf,
                          SeamRule rule, double maxTrialSeconds, const Job& job) {
  SeamChoice c;
  c.request = request;
  c.plan = planRun(request, backend.name());
  c.provenance = c.plan.provenance();
  if (c.plan.scheme != BlockScheme::Overlap || c.plan.count() <= 1) return c;
  c.estimate = estimateSeamError(backend, c.plan, psf, request.params, maxTrialSeconds, job);
  c.summary = c.estimate.describe();
  c.provenance += " " + c.estimate.provenance();
  const bool visible = c.estimate.estimated && c.estimate.relativeL2 > kSeamTolerance;
  if (rule != SeamRule::Exact || !visible) return c;
  const std::string above = number("above the exactness bound of %.0e", kSeamTolerance);
  PlannedRunRequest one = request;
  one.oneBlock = true;
  try {
    BlockPlan whole = planRun(one, backend.name());
    const double slower = whole.secondsPerIteration / c.plan.secondsPerIteration;
    c.summary += "\nthat is " + above +
                 ": deconvolving the volume as one block instead, the unblocked result (" +
                 number("%.2f", slower) +
                 " x the blocks' expected compute; --seams fast keeps the blocks)";
    c.provenance =
        "one block for exact seams (overlapping blocks: " + c.estimate.provenance() + ")";
    c.plan = std::move(whole);
    c.request = one;
  } catch (const InvalidArgument& e) {
    c.summary += "\nthat is " + above + ", and one block does not fit (" + e.what() +
                 "): keeping the overlapping blocks";
    if (backend.name() != "cpu")
      c.summary +=
          " (on the CPU, blocks exchange halos and give the unblocked result where host "
          "memory holds the whole volume's arrays)";
  }
  return c;
}

}  // namespace stacklens::compute
