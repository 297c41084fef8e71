// stacklens-cli psf: a PSF made from a model (compute/psf/psf_models.h), as Fiji's PSF
// Generator makes one: a Gaussian or Moffat star for astronomy, a Born & Wolf or Gibson & Lanni
// widefield (or confocal, two-photon) PSF for microscopy. Written with its spacing and the
// parameters in HISTORY, normalised to sum 1, centred at index size / 2.
#include <cmath>
#include <cstdio>
#include <string>

#include "app/cli/command.h"
#include "app/cli/interrupt.h"
#include "app/cli/processing.h"
#include "compute/params.h"
#include "compute/psf/psf_models.h"
#include "io/stack_writer.h"

namespace stacklens::cli {
namespace {

compute::Image star(const Args& args, const std::string& model, std::string& history) {
  compute::psf::StarPsf p;
  p.profile = model == "moffat" ? compute::psf::StarPsf::Profile::Moffat
                                : compute::psf::StarPsf::Profile::Gaussian;
  p.fwhm = args.getDouble("fwhm", p.fwhm);
  p.beta = args.getDouble("beta", p.beta);
  p.ellipticity = args.getDouble("ellipticity", p.ellipticity);
  p.angle = args.getDouble("angle", p.angle);
  // StarPsf's size 0 stands for the default; a --size the user gave must be a real size.
  if (args.has("size")) {
    p.size = args.getInt32("size", 0);
    if (p.size < 1)
      throw UsageError("--size: expected an odd number of pixels, got " + *args.get("size"));
  }
  p.oversampling = args.getInt32("oversampling", 1);
  history = "stacklens psf " + model + ": FWHM " + std::to_string(p.fwhm) + " px" +
            (model == "moffat" ? ", beta " + std::to_string(p.beta) : "") + ", ellipticity " +
            std::to_string(p.ellipticity) + ", angle " + std::to_string(p.angle) + " deg";
  return compute::psf::starPsf(p);
}

compute::Image microscope(const Args& args, const std::string& model, std::string& history) {
  using M = compute::psf::MicroscopePsf;
  M p;
  p.model = model == "born-wolf" ? M::Model::BornWolf : M::Model::GibsonLanni;
  const std::string mode = args.get("mode", "widefield");
  if (mode == "confocal")
    p.mode = M::Mode::Confocal;
  else if (mode == "two-photon")
    p.mode = M::Mode::TwoPhoton;
  else if (mode != "widefield")
    throw UsageError("--mode: expected widefield, confocal or two-photon");
  p.na = args.getDouble("na", p.na);
  p.wavelength = args.getDouble("wavelength", p.wavelength);
  p.excitation = args.getDouble("excitation", p.excitation);
  p.ni = args.getDouble("ni", p.ni);
  p.niDesign = args.getDouble("ni-design", args.has("ni") ? p.ni : p.niDesign);
  p.ns = args.getDouble("ns", p.ns);
  p.ng = args.getDouble("ng", p.ng);
  p.ngDesign = args.getDouble("ng-design", args.has("ng") ? p.ng : p.ngDesign);
  p.tg = args.getDouble("tg", p.tg);
  p.tgDesign = args.getDouble("tg-design", args.has("tg") ? p.tg : p.tgDesign);
  p.tiDesign = args.getDouble("ti-design", p.tiDesign);
  p.depth = args.getDouble("depth", p.depth);
  p.lateral = args.getDouble("lateral", p.lateral);
  p.axial = args.getDouble("axial", p.axial);
  p.oversampling = args.getInt32("oversampling", 1);
  if (args.has("size")) {
    const std::vector<double> s = args.getDoubles("size");
    if (s.empty() || s.size() > 2) throw UsageError("--size: expected NXY or NXY,NZ");
    for (double n : s)
      if (n != std::floor(n) || n < 1 || n > 4097)
        throw UsageError("--size: expected whole numbers of voxels from 1 to 4097, got " +
                         *args.get("size"));
    p.sizeXY = int(s[0]), p.sizeZ = int(s.size() == 2 ? s[1] : s[0]);
  }
  char text[512];
  std::snprintf(text, sizeof text,
                "stacklens psf %s %s: NA %g, lambda %g um (excitation %g), ni %g (design %g), "
                "ns %g, ng %g (design %g), tg %g um (design %g), ti %g um, depth %g um",
                model.c_str(), mode.c_str(), p.na, p.wavelength, p.excitation, p.ni, p.niDesign,
                p.ns, p.ng, p.ngDesign, p.tg, p.tgDesign, p.tiDesign, p.depth);
  history = text;
  return compute::psf::microscopePsf(p, interruptible());
}

int runPsf(const Args& args) {
  const std::string out = args.positional(0);
  if (io::outputFormat(out) == io::OutputFormat::Unknown)
    throw UsageError("OUT: expected a .fits, .tif or .zarr name, got '" + out + "'");
  const std::string model = args.get("model", "gaussian");
  std::string history;
  compute::Image psf;
  try {
    if (model == "gaussian" || model == "moffat")
      psf = star(args, model, history);
    else if (model == "born-wolf" || model == "gibson-lanni")
      psf = microscope(args, model, history);
    else
      throw UsageError("--model: expected gaussian, moffat, born-wolf or gibson-lanni");
  } catch (const compute::InvalidArgument& e) {
    throw UsageError(e.what());
  }
  io::WriteOptions options;
  options.history.push_back(history);
  const compute::Spacing& s = psf.spacing;
  if (s.known) {
    options.spacing = {s.z, s.y, s.x};
    options.units = {s.unit, s.unit, s.unit};
    options.spacingKnown = true;
  }
  applyOutputOptions(args, out, options);
  const compute::Shape shape = psf.shape();
  io::writeStack(out, psf.data(), shape.z, shape.y, shape.x, options);
  std::fprintf(stderr, "%lld x %lld x %lld PSF written to %s\n", static_cast<long long>(shape.z),
               static_cast<long long>(shape.y), static_cast<long long>(shape.x), out.c_str());
  return kOk;
}

std::vector<OptionSpec> psfOptions() {
  std::vector<OptionSpec> o{
      {"model", "NAME",
       "gaussian (default), moffat (astronomy, 2D); born-wolf, gibson-lanni "
       "(microscopy, 3D)"},
      {"fwhm", "PX", "gaussian, moffat: FWHM along the major axis (default 3)"},
      {"beta", "B", "moffat: the power (default 2.5)"},
      {"ellipticity", "E", "gaussian, moffat: 1 - minor/major (default 0)"},
      {"angle", "DEG", "gaussian, moffat: the major axis from +x towards +y (default 0)"},
      {"size", "N|NXY,NZ", "pixels a side (odd; default 4 FWHM and one) or voxels (65,33)"},
      {"oversampling", "S", "samples per pixel along each axis (default 1)"},
      {"mode", "NAME", "microscopy: widefield (default), confocal, two-photon"},
      {"na", "NA", "numerical aperture (default 1.4)"},
      {"wavelength", "UM", "emission wavelength in µm (default 0.53)"},
      {"excitation", "UM", "confocal, two-photon: excitation wavelength in µm (default 0.488)"},
      {"ni", "N", "immersion index (default 1.518); --ni-design the design's (default --ni)"},
      {"ni-design", "N", "gibson-lanni: the immersion index the objective was designed for"},
      {"ns", "N", "gibson-lanni: specimen index (default 1.33)"},
      {"ng", "N", "gibson-lanni: coverslip index (default 1.5); --ng-design likewise"},
      {"ng-design", "N", "gibson-lanni: the design's coverslip index"},
      {"tg", "UM", "gibson-lanni: coverslip thickness (default 170); --tg-design likewise"},
      {"tg-design", "UM", "gibson-lanni: the design's coverslip thickness"},
      {"ti-design", "UM", "gibson-lanni: working distance (default 150)"},
      {"depth", "UM", "gibson-lanni: the source's depth below the coverslip (default 0)"},
      {"lateral", "UM", "microscopy: pixel size in µm (default 0.1)"},
      {"axial", "UM", "microscopy: plane spacing in µm (default 0.2)"}};
  for (auto& s : outputOptions()) o.push_back(s);
  return o;
}

const CommandRegistration reg{{"psf", "OUT",
                               "a PSF from a model: Gaussian or Moffat star, Born & Wolf or "
                               "Gibson & Lanni microscope (widefield, confocal, two-photon)",
                               psfOptions(), 1, 1, runPsf}};

}  // namespace
}  // namespace stacklens::cli
