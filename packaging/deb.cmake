# The Debian packages, made by CPack from this build (packaging/make-deb.sh runs it):
#   stacklens          the viewer, its menu entry, icon, file types, man stacklens
#   stacklens-cli      the command-line program, man stacklens-cli
#   python3-stacklens  the Python module (stacklens, stacklens.dask, python3 -m stacklens)
#   stacklens-data     the sample stacks (the same on every architecture)
# Split as Debian splits such software: the CLI and the Python module install on a headless
# machine without Qt or X, and architecture-independent data is not copied per architecture.
# Dependencies on shared libraries come from dpkg-shlibdeps; the rest are named here. The
# version is the project's.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME stacklens)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "${STACKLENS_MAINTAINER}")  # packaging/CMakeLists.txt
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL cli data)
if(STACKLENS_GUI)
  list(APPEND CPACK_COMPONENTS_ALL viewer)
endif()
if(TARGET _stacklens)
  list(APPEND CPACK_COMPONENTS_ALL python)
endif()
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
# A CUDA build loads cuFFT at run time (compute/cuda/host/cufft_loader.cpp) and links the CUDA
# runtime statically, which loads the driver only when one is present: neither is a dependency,
# so the packages install and compute on the CPU where NVIDIA's libraries are missing. cuFFT
# (no Debian package provides it) is suggested by the name of NVIDIA's own package, from
# NVIDIA's apt repository.
set(cufft_suggests "")
if(STACKLENS_HAVE_CUDA)
  set(cufft_suggests "libcufft-${CUDAToolkit_VERSION_MAJOR}-${CUDAToolkit_VERSION_MINOR}")
endif()
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_STRIP_FILES ON)  # with packaging/deb/strip.sh (make-deb.sh sets CMAKE_STRIP)
# Whatever the builder's umask: Debian wants 0755 directories and 0755 maintainer scripts.
set(CPACK_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ
    GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

# The descriptions: the synopsis, then lines of at most 80 characters, as Debian asks; CPack
# indents them and turns an empty line into " .". CPack would put the project's one summary
# before each of them unless the summary is CPack's own default, so it is set to that.
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${CMAKE_PROJECT_NAME} built using CMake")
set(backends "This build computes on the CPU (FFTW, all cores).")
if(STACKLENS_HAVE_CUDA)
  set(backends "This build computes on an NVIDIA GPU (CUDA, cuFFT) when one and
NVIDIA's cuFFT are found, else on the CPU (FFTW, all cores).")
endif()
set(common "StackLens reads FITS (tile-compressed and gzipped too), TIFF (BigTIFF,
ImageJ hyperstacks, OME-TIFF) and Zarr or OME-Zarr image stacks, and runs
Richardson-Lucy deconvolution, blur, kappa-sigma clipping, segmentation,
median and outlier filters, resampling, projections and moment maps on them.
${backends}")

set(CPACK_DEBIAN_VIEWER_PACKAGE_NAME stacklens)
# The viewer opens a sample when started without a file, and points to stacklens-cli for what
# is too large for it. Qt's platform plugins are no library that dpkg-shlibdeps can see.
set(CPACK_DEBIAN_VIEWER_PACKAGE_DEPENDS
    "stacklens-data (= ${PROJECT_VERSION}), qt6-qpa-plugins")
set(CPACK_DEBIAN_VIEWER_PACKAGE_RECOMMENDS "stacklens-cli")
set(CPACK_DEBIAN_VIEWER_PACKAGE_SUGGESTS "${cufft_suggests}")
set(CPACK_DEBIAN_VIEWER_DESCRIPTION "viewer for FITS, TIFF and Zarr image stacks
${common}

This package holds the viewer: the slices of a stack under a slider, processed
live as they are shown, with timings, 3D views, profiles, statistics, regions,
catalogs and movies.")

set(CPACK_DEBIAN_CLI_PACKAGE_NAME stacklens-cli)
set(CPACK_DEBIAN_CLI_PACKAGE_RECOMMENDS "stacklens-data")
set(CPACK_DEBIAN_CLI_PACKAGE_SUGGESTS "${cufft_suggests}")
set(CPACK_DEBIAN_CLI_DESCRIPTION "FITS, TIFF and Zarr image stack processing on the command line
${common}

This package holds stacklens-cli: StackLens's reading and processing without a
display (info, convert, deconvolve, segment, project, moments, movie, ...).")

# Where the module is built (not under the sanitizers, nor without pybind11).
if(TARGET _stacklens)
  set(CPACK_DEBIAN_PYTHON_PACKAGE_NAME python3-stacklens)
  set(CPACK_DEBIAN_PYTHON_PACKAGE_SECTION python)
  # The module is built for one Python version's ABI, as Debian's own extension modules are.
  set(python_this "${Python3_VERSION_MAJOR}.${Python3_VERSION_MINOR}")
  math(EXPR python_next_minor "${Python3_VERSION_MINOR} + 1")
  set(CPACK_DEBIAN_PYTHON_PACKAGE_DEPENDS "python3 (>= ${python_this}~), \
python3 (<< ${Python3_VERSION_MAJOR}.${python_next_minor}), python3-numpy")
  set(CPACK_DEBIAN_PYTHON_PACKAGE_RECOMMENDS "python3-dask")
  set(CPACK_DEBIAN_PYTHON_PACKAGE_SUGGESTS "python3-distributed, python3-zarr")
  if(cufft_suggests)
    string(APPEND CPACK_DEBIAN_PYTHON_PACKAGE_SUGGESTS ", ${cufft_suggests}")
  endif()
  # Byte-compiled at installation and cleaned at removal, as dh_python3 does for Debian's modules.
  set(CPACK_DEBIAN_PYTHON_PACKAGE_CONTROL_EXTRA
      ${CMAKE_CURRENT_LIST_DIR}/deb/python3-stacklens/postinst
      ${CMAKE_CURRENT_LIST_DIR}/deb/python3-stacklens/prerm)
  set(CPACK_DEBIAN_PYTHON_DESCRIPTION "FITS, TIFF and Zarr image stack processing in Python 3
${common}

This package holds the stacklens module for Python 3 (NumPy arrays in and out),
stacklens.dask for stacks larger than memory, and python3 -m stacklens, which
deconvolves with Dask on one machine or a cluster.")
endif()

set(CPACK_DEBIAN_DATA_PACKAGE_NAME stacklens-data)
set(CPACK_DEBIAN_DATA_PACKAGE_ARCHITECTURE all)
set(CPACK_DEBIAN_DATA_DESCRIPTION "sample image stacks for StackLens
${common}

This package holds the samples in /usr/share/stacklens/samples: a microscopy
z-stack of beads and filaments with its PSF, and a radio cube with its
sources as CSV and DS9 regions. The viewer opens the first when started
without a file.")

include(CPack)
