// PSF models made from parameters (issue 20; Fiji's PSF Generator, astropy's Moffat2D): a 2D
// Gaussian or Moffat star for astronomy, and 3D widefield PSFs of the scalar Born & Wolf and
// Gibson & Lanni models for microscopy (with confocal and two-photon variants). Every PSF is
// normalised to sum 1, centred at index size / 2 on each axis, and carries its spacing.
#pragma once

#include "compute/image.h"
#include "compute/job.h"

namespace stacklens::compute::psf {

// A star: I(r) = exp(−r² / 2σ²) (σ = FWHM / 2√(2 ln 2)) or (1 + r²/α²)^(−β) (α = FWHM /
// 2√(2^(1/β) − 1)), r measured along the major axis after turning by angle (degrees, counter-
// clockwise from +x) and stretching the minor axis by 1 / (1 − ellipticity).
struct StarPsf {
  enum class Profile { Gaussian, Moffat } profile = Profile::Gaussian;
  double fwhm = 3.0;         // pixels, along the major axis
  double beta = 2.5;         // Moffat only, > 1
  double ellipticity = 0.0;  // 1 − minor / major, in [0, 1)
  double angle = 0.0;
  int size = 0;          // odd pixels a side; 0: 4 FWHM and one (at least 9)
  int oversampling = 1;  // samples per pixel along each axis (the profile averaged over a pixel)
};

Image starPsf(const StarPsf& p);

// A widefield microscope's PSF: |∫₀¹ J0(k NA r ρ) e^{i k W(ρ, z)} ρ dρ|² with k = 2π / λ.
//  BornWolf: W = −z NA² ρ² / (2 n_i) (paraxial defocus in the immersion medium).
//  GibsonLanni: the optical path difference of a point source at depth zp in a specimen of index
//  n_s under a coverslip (t_g, n_g) and immersion (n_i), against the design conditions (starred):
//  W = (z + t_i*) √(n_i² − NA²ρ²) + zp √(n_s² − NA²ρ²) − t_i* √(n_i*² − NA²ρ²)
//      + t_g √(n_g² − NA²ρ²) − t_g* √(n_g*² − NA²ρ²), complex where NA ρ exceeds an index (the
//  evanescent part decays). z is the focus position relative to the source (slice index −
//  sizeZ / 2, times the axial step).
// Confocal (an infinitely small pinhole): the emission PSF times the excitation PSF (at the
// excitation wavelength); TwoPhoton: the excitation PSF squared.
struct MicroscopePsf {
  enum class Model { BornWolf, GibsonLanni } model = Model::GibsonLanni;
  enum class Mode { Widefield, Confocal, TwoPhoton } mode = Mode::Widefield;
  double na = 1.4;
  double wavelength = 0.53;             // emission, µm
  double excitation = 0.488;            // µm (confocal, two-photon)
  double ni = 1.518, niDesign = 1.518;  // immersion medium
  double ns = 1.33;                     // specimen
  double ng = 1.5, ngDesign = 1.5;      // coverslip
  double tg = 170, tgDesign = 170;      // coverslip thickness, µm
  double tiDesign = 150;                // working distance, µm
  double depth = 0;                     // of the source below the coverslip, µm
  double lateral = 0.1, axial = 0.2;    // voxel size, µm
  int sizeXY = 65, sizeZ = 33;          // voxels (odd: the centre is a voxel)
  int oversampling = 1;                 // lateral samples per pixel along x and y
};

// Throws InvalidArgument for parameters outside the model (NA above the immersion index, sizes
// below 1, non-positive lengths, ...). Cancellable between planes.
Image microscopePsf(const MicroscopePsf& p, const Job& job = {});

}  // namespace stacklens::compute::psf
