// How a 3D run weighs seams against speed. Overlapping blocks (compute/blocked/block_plan.h)
// iterate on their own, so near their seams the result may differ from the unblocked run's; one
// block, and the CPU's blocks that exchange halos, give the unblocked run's result. Under
// SeamRule::Exact, the default of every front end, the fastest plan is kept only where a synthetic
// trial (seam_estimate.h) expects its seams within kSeamTolerance of the unblocked run; otherwise
// the unblocked run's one block is taken when the budget holds it, and when it does not, the
// blocks are kept and the expected error is said. SeamRule::Fast keeps the fastest plan and says
// what its seams are expected to leave.
#pragma once

#include <optional>
#include <string>

#include "compute/blocked/planned_run.h"
#include "compute/blocked/seam_estimate.h"

namespace stacklens::compute {

enum class SeamRule { Exact, Fast };

// Relative L2 within a halo of the seams, against the unblocked run.
inline constexpr double kSeamTolerance = 1e-4;

// "exact" or "fast"; nothing for other words.
std::optional<SeamRule> seamRuleNamed(const std::string& word);

struct SeamChoice {
  BlockPlan plan;             // what runs; planAndDeconvolve makes it again from request
  PlannedRunRequest request;  // the request with oneBlock set when one block was chosen
  SeamEstimate estimate;      // the fastest plan's, when it overlaps
  // For the terminal: the estimate and, when the rule changed the plan or could not, why (empty
  // for a plan with no seams to weigh).
  std::string summary;
  // For HISTORY: how the volume was cut and what its seams are expected to leave ("" for the
  // fastest plan of one block).
  std::string provenance;
};

// The plan for request on backend under rule. The trial is skipped, with the reason, when it
// would cost more than maxTrialSeconds; the fastest plan is then kept. psf: the run's (host).
SeamChoice chooseForSeams(Backend& backend, const PlannedRunRequest& request, const Image& psf,
                          SeamRule rule, double maxTrialSeconds, const Job& job = {});

}  // namespace stacklens::compute
