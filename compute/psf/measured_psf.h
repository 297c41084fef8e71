// The PSF measured from the data (issue 20): stars in an image or beads in a volume cut out,
// background-subtracted, centred to a fraction of a pixel, normalised and median-combined, as
// photutils' EPSFBuilder or DAOPHOT's PSF task build an empirical PSF. The result is the
// effective PSF of the data (the optics convolved with the pixel's area), ready for
// deconvolution: sum 1, centred at index size / 2 on each axis, with the data's spacing.
#pragma once

#include <array>
#include <limits>
#include <string>
#include <vector>

#include "compute/image.h"
#include "compute/job.h"
#include "compute/params.h"

namespace stacklens::compute::psf {

// A rough 0-based position of a star or bead (z ignored in 2D).
struct PsfStar {
  double x = 0, y = 0, z = 0;
};

struct MeasuredPsfParams {
  bool threeD = false;  // beads in a volume (Image with shape.z > 1) instead of stars in a 2D image
  int size = 0;   // odd cut-out side (x and y) in pixels; 0: from the estimated FWHM (about 4.5
                  // FWHM, at least 9)
  int sizeZ = 0;  // odd cut-out depth (3D); 0: chosen likewise from the axial FWHM
  double clipSigma = 3.0;  // the background: sigma-clipped median of the cut-out's outer ring/shell
  int recentreIterations = 3;  // passes of centring and combining, each centring with the window
                               // matched to the previous pass's PSF
  // Values at or above this in a cut-out reject the star as saturated (the detector's level).
  double saturation = std::numeric_limits<double>::infinity();
  double searchRadius = 3;  // pixels (and planes) around a given position searched for its peak
  double minSnr = 5;        // a peak below minSnr · the background's clipped σ is "not a peak"
};

// reason when rejected: "outside the image", "too close to the edge", "overlaps a brighter
// source", "not a peak", "saturated/non-finite", "duplicate of star N" (0-based).
struct PsfStarReport {
  PsfStar refined;  // the centre found (sub-pixel), or the position given when none was
  bool used = false;
  std::string reason;
};

struct MeasuredPsf {
  Image psf;  // sum 1, centred at index size/2 on each axis, spacing of the data
  std::vector<PsfStarReport> stars;  // one per input position, same order
  int used = 0;
  double fwhmX = 0, fwhmY = 0, fwhmZ = 0;  // of the result, pixels (fwhmZ 0 in 2D)
};

// Throws InvalidArgument when no star can be used (the message gives each star's reason) or the
// parameters are invalid (even sizes, 3D on one image, 2D on a stack, ...). Cancellable through
// job between stars (throws Cancelled).
MeasuredPsf measurePsf(const Image& data, const std::vector<PsfStar>& stars,
                       const MeasuredPsfParams& p, const Job& job = {});

// FWHM along x, y, z (pixels; z 0 for a 2D image) of a PSF image: the half-maximum width of the
// profile through the brightest pixel along each axis, the crossings found to a small fraction of
// a pixel by cubic interpolation of the profile's logarithm (exact for a Gaussian). 0 for an axis
// whose profile does not fall to half its peak on both sides.
std::array<double, 3> psfFwhm(const Image& psf);

// Good PSF stars from a segmentation source table (a stack's sources, segmented slice by slice,
// are grouped into beads across slices): isolated (no other source within about 4 FWHM, the FWHM
// estimated from flux / peak), away from the edges (a bead not cut by the stack's ends), not
// saturated (peak below saturation), neither much sharper (hot pixels, cosmic rays) nor much
// broader (galaxies, blends) than the typical source, brightest (by flux) first, at most
// maxStars.
std::vector<PsfStar> pickPsfStars(const std::vector<Source>& sources, Shape shape, int maxStars,
                                  double saturation = std::numeric_limits<double>::infinity());

}  // namespace stacklens::compute::psf
