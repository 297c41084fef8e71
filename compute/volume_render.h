// What both backends' volume renderers share (semantics in compute/params.h, the ray itself in
// compute/volume_ray.h): the checked geometry of a frame, the modes' names, and rotations for
// the mouse and for movies.
#pragma once

#include <string>

#include "compute/image.h"
#include "compute/params.h"
#include "compute/volume_ray.h"

namespace stacklens::compute {

// "mip", "attenuated-mip", "average", "iso"; parseVolumeMode throws InvalidArgument.
const char* volumeModeName(VolumeMode mode);
VolumeMode parseVolumeMode(const std::string& name);

// The frame's geometry for a volume of this shape and spacing (the voxel's true aspect; a
// spacing that is not a positive number counts as 1). Throws InvalidArgument for an empty
// volume, an output size outside 1..16384, a zoom or step scale that is not positive.
VolumeGeometry volumeGeometry(const Shape& shape, const Spacing& spacing,
                              const VolumeRenderParams& p);

// The view turned about its own horizontal (x, tilting) and vertical (y, turning) axes by the
// given angles in degrees, as a mouse drag turns it: out = Rx(tilt) · Ry(turn) · rotation.
void turnView(const double* rotation, double tiltDegrees, double turnDegrees, double* out);
// The view after turning the volume by azimuth about its y axis, then tilting by elevation.
void orbitRotation(double azimuthDegrees, double elevationDegrees, double* out);

}  // namespace stacklens::compute
