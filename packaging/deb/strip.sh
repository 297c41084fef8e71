#!/bin/sh
# CPack's strip for the packages (CMAKE_STRIP in make-deb.sh): as dh_strip does, the compilers'
# .comment and .note sections go too (lintian's binary-has-unneeded-section).
set -eu
exec strip --remove-section=.comment --remove-section=.note "$@"
