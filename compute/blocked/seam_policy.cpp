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
  // The exact plans that fit: the unblocked run's one block, and blocks that keep their frames
  // on the device and exchange halos there; the one with the least expected compute.
  std::optional<BlockPlan> exact;
  PlannedRunRequest exactRequest;
  std::string refusals;
  for (bool resident : {false, true}) {
    PlannedRunRequest r = request;
    (resident ? r.resident : r.oneBlock) = true;
    try {
      BlockPlan plan = planRun(r, backend.name());
      if (!exact || plan.secondsPerIteration < exact->secondsPerIteration) {
        exact = std::move(plan);
        exactRequest = r;
      }
    } catch (const InvalidArgument& e) {
      refusals += std::string(refusals.empty() ? "" : "; ") + e.what();
    }
  }
  if (!exact) {
    c.summary += "\nthat is " + above + ", and no exact plan fits (" + refusals +
                 "): keeping the overlapping blocks";
    if (backend.name() != "cpu")
      c.summary +=
          " (on the CPU, blocks exchange halos and give the unblocked result where host "
          "memory holds the whole volume's arrays)";
    return c;
  }
  const double slower = exact->secondsPerIteration / c.plan.secondsPerIteration;
  const bool resident = exactRequest.resident;
  c.summary += "\nthat is " + above + ": " +
               (resident ? "blocks that keep their frames on the device and exchange halos "
                           "every iteration instead"
                         : std::string("deconvolving the volume as one block instead")) +
               ", the unblocked result (" + number("%.2f", slower) +
               " x the overlapping blocks' expected compute; --seams fast keeps them)";
  c.provenance = (resident ? exact->provenance() + " for exact seams"
                           : std::string("one block for exact seams")) +
                 " (overlapping blocks: " + c.estimate.provenance() + ")";
  c.plan = std::move(*exact);
  c.request = exactRequest;
  return c;
}

}  // namespace stacklens::compute
