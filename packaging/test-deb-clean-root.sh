#!/usr/bin/env bash
# Checks the Debian packages where no developer tools are: makes a clean Debian 12 root from
# Debian's archive (mmdebstrap, essential packages and apt only), installs the packages there
# with apt (so the declared dependencies are all they get), uses them (the CLI, the Python
# module, the file types, the viewer on the host's Xvfb with a screenshot), purges them, and
# checks that the root's files are those it had with their dependencies alone (outside /tmp,
# the user's files, and apt's and dpkg's state and caches).
# Usage (as root): packaging/test-deb-clean-root.sh [DEB...]; default build/deb/packages/*.deb
# (packaging/make-deb.sh). Writes build/deb/clean-root/: test.log, apt-install.log and the
# screenshot viewer.png. KEEP_ROOT=1 keeps the root. Not in CI: it downloads a root and the
# packages' dependencies (several minutes).
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ $(id -u) != 0 ]]; then
  echo "test-deb-clean-root: run as root (it builds a root with chroot and mounts)" >&2
  exit 1
fi
# Its own mount namespace: the mounts into the root vanish with the script, however it ends.
if [[ -z "${STACKLENS_PRIVATE_MOUNTS:-}" ]]; then
  exec env STACKLENS_PRIVATE_MOUNTS=1 unshare --mount --propagation private "$0" "$@"
fi

# Host tools, not the packages': the root, the display and the screenshot.
declare -A tools=([mmdebstrap]=mmdebstrap [Xvfb]=xvfb [import]=imagemagick [convert]=imagemagick)
for tool in "${!tools[@]}"; do
  if ! command -v "$tool" >/dev/null; then
    echo "test-deb-clean-root: $tool missing: apt-get install ${tools[$tool]}" >&2
    exit 1
  fi
done

debs=("$@")
((${#debs[@]})) || debs=(build/deb/packages/*.deb)
for deb in "${debs[@]}"; do
  [[ -f "$deb" ]] || { echo "test-deb-clean-root: no package $deb (packaging/make-deb.sh)" >&2; exit 1; }
done

results=$PWD/build/deb/clean-root
rm -rf "$results"
mkdir -p "$results"
exec > >(tee "$results/test.log") 2>&1

work=$(mktemp -d /var/tmp/stacklens-clean-root.XXXXXX)
root=$work/root
display=""
cleanup() {
  [[ -n "$display" ]] && kill "$xvfb_pid" 2>/dev/null
  # Unmounted before anything is removed, so that removing the root cannot reach the host.
  for m in tmp/.X11-unix dev/pts dev proc; do
    mountpoint -q "$root/$m" 2>/dev/null && umount -l "$root/$m"
  done
  if [[ "${KEEP_ROOT:-0}" == 1 ]]; then
    echo "root kept in $root"
  else
    rm -rf --one-file-system "$work"
  fi
}
trap cleanup EXIT

step() { echo; echo "== $*"; }
# Output is cut with sed, and searched after it is captured, never by a reader that stops early
# (head, grep -q): under pipefail the writer's SIGPIPE would fail the script.
# in_root COMMAND...: runs in the root with a clean environment.
in_root() {
  chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp/home LANG=C.UTF-8 \
    DEBIAN_FRONTEND=noninteractive "$@"
}
# The root's files, by name, except where apt, dpkg and the tests keep their state.
list_files() {
  (cd "$root" && find . -xdev \( -path ./tmp -o -path ./var/cache -o -path ./var/log \
    -o -path ./var/lib/apt -o -path ./var/lib/dpkg -o -path ./proc -o -path ./dev \) -prune \
    -o -print | sort)
}

step "A clean Debian 12 root (mmdebstrap --variant=apt)"
archive=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
mmdebstrap --variant=apt bookworm "$root" "deb $archive bookworm main" \
  "deb $archive bookworm-updates main" \
  "deb ${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security} bookworm-security main"
cp /etc/resolv.conf "$root/etc/resolv.conf"
mount -t proc proc "$root/proc"
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"
mkdir -p "$root/tmp/home" "$root/tmp/.X11-unix" "$root/tmp/debs"
in_root apt-get update -qq
# What a desktop has and the file-type checks use: the MIME database, the desktop entries'
# cache and gio (which file managers' "open" follows). Part of the baseline, not of the test.
in_root apt-get install -y -qq --no-install-recommends shared-mime-info desktop-file-utils \
  libglib2.0-bin >/dev/null

step "Install ${debs[*]##*/} with apt"
cp "${debs[@]}" "$root/tmp/debs/"
ours=(stacklens stacklens-cli python3-stacklens stacklens-data)
# First what apt would install with them (dependencies and recommendations), then the packages:
# the root in between is the baseline that purging them must return to.
in_root sh -c 'apt-get install -s -q /tmp/debs/*.deb' >"$work/plan.txt"
grep -E "newly installed" "$work/plan.txt"
mapfile -t dependencies < <(sed -n 's/^Inst \([^ ]*\) .*/\1/p' "$work/plan.txt" |
  grep -vxF "$(printf '%s\n' "${ours[@]}")")
in_root apt-get install -y -q --no-install-recommends "${dependencies[@]}" \
  >"$results/apt-install.log"
grep -E "^Need to get|^After this operation" "$results/apt-install.log"
before=$(mktemp)
list_files >"$before"
in_root sh -c 'apt-get install -y -q /tmp/debs/*.deb' >>"$results/apt-install.log"
grep -E "newly installed" "$results/apt-install.log" | tail -n 1
in_root dpkg-query -W -f '${Package} ${Version} ${Installed-Size} KiB\n' \
  "${ours[@]}"

step "stacklens-cli --version, info, deconvolve on the bundled sample"
samples=/usr/share/stacklens/samples
in_root stacklens-cli --version | tee "$work/version.txt"
grep -q "^revision: " "$work/version.txt" && grep -q "^FFTW: [0-9]" "$work/version.txt"
in_root stacklens-cli info $samples/radio_cube.fits | sed -n 1,20p
in_root stacklens-cli deconvolve $samples/beads.tif /tmp/deconvolved.tif \
  --psf $samples/beads_psf.tif --iterations 5 --mode 3d
in_root stacklens-cli info /tmp/deconvolved.tif | sed -n 1,8p

step "import stacklens in /usr/bin/python3; python3 -m stacklens"
in_root /usr/bin/python3 - <<'PY'
import numpy as np
import stacklens
import stacklens.dask

stack = stacklens.open("/usr/share/stacklens/samples/beads.tif")
blurred = stacklens.blur(stack[stack.shape[0] // 2], sigma=2)
mean = float(stacklens.dask.from_stack(stack).mean().compute())
print("stacklens", stacklens.__file__, "shape", stack.shape, "blurred", blurred.shape,
      "mean %.4g" % mean)
assert blurred.shape == stack.shape[1:] and np.isfinite(mean)
PY
in_root /usr/bin/python3 -m stacklens --help | sed -n 1,3p

step "Man pages, desktop entry, icon and file types"
for page in stacklens stacklens-cli; do
  in_root sh -c "zcat /usr/share/man/man1/$page.1.gz | grep -q '^\.SH DESCRIPTION'"
  echo "man $page: $(in_root sh -c "zcat /usr/share/man/man1/$page.1.gz | wc -l") lines"
done
in_root ls /usr/share/icons/hicolor/48x48/apps/stacklens.png /usr/share/applications/stacklens.desktop
mkdir -p "$root/tmp/types"
cp "$root$samples/radio_cube.fits" "$root/tmp/types/cube.fits"
gzip -c "$root/tmp/types/cube.fits" >"$root/tmp/types/cube.fits.gz"
cp "$root/tmp/types/cube.fits" "$root/tmp/types/cube.fz"
in_root stacklens-cli convert $samples/beads_psf.tif /tmp/types/psf.ome.zarr >/dev/null
for f in cube.fits cube.fits.gz cube.fz psf.ome.zarr/zarr.json psf.ome.zarr; do
  type=$(in_root gio info -a standard::content-type "/tmp/types/$f" | sed -n 's/.*content-type: //p')
  echo "$f: $type"
done | tee "$work/types.txt"
grep -qx "cube.fits.gz: application/fits" "$work/types.txt"
grep -qx "cube.fz: application/fits" "$work/types.txt"
grep -qx "psf.ome.zarr/zarr.json: application/x-zarr-metadata" "$work/types.txt"
for type in application/fits image/tiff application/x-zarr-metadata; do
  handlers=$(in_root gio mime "$type")
  echo "$type: ${handlers%%$'\n'*}"
  grep -q "stacklens.desktop" <<<"$handlers"
done

step "The viewer under Xvfb, and a screenshot"
for n in $(seq 90 120); do
  [[ -e /tmp/.X11-unix/X$n || -e /tmp/.X$n-lock ]] || { display=:$n; break; }
done
Xvfb "$display" -screen 0 1280x1024x24 -nolisten tcp &
xvfb_pid=$!
for _ in $(seq 50); do [[ -e /tmp/.X11-unix/X${display#:} ]] && break; sleep 0.2; done
mount --bind /tmp/.X11-unix "$root/tmp/.X11-unix"
in_root stacklens --version
# Not through in_root: run in the background, a function would leave the viewer a grandchild.
# The user's files stay in /tmp/home: settings ($HOME), Mesa's shader cache (which otherwise
# follows the passwd entry to /root) and the runtime folder.
mkdir -p -m 0700 "$root/tmp/home/runtime"
chroot "$root" /usr/bin/env -i PATH=/usr/bin:/bin HOME=/tmp/home LANG=C.UTF-8 DISPLAY="$display" \
  XDG_CACHE_HOME=/tmp/home/.cache XDG_RUNTIME_DIR=/tmp/home/runtime \
  stacklens $samples/radio_cube.fits &
viewer_pid=$!
sleep "${VIEWER_WAIT:-15}"
kill -0 "$viewer_pid"  # still running: it started and did not crash
import -display "$display" -window root "$results/viewer.png"
kill "$viewer_pid"
wait "$viewer_pid" || true
colours=$(convert "$results/viewer.png" -format %k info:)
echo "screenshot $results/viewer.png: $colours colours"
((colours > 64))

step "Purge the packages"
in_root apt-get purge -y -q "${ours[@]}" | tail -n 1
in_root apt-get autoremove --purge -y -q | tail -n 1
after=$(mktemp)
list_files >"$after"
left=$(comm -13 "$before" "$after")
echo "files added since before the packages were installed: ${left:-none}"
named=$(cd "$root" && find . -xdev \( -path ./proc -o -path ./dev -o -path ./tmp \) -prune \
  -o -iname '*stacklens*' -print)
echo "files named *stacklens* outside /tmp: ${named:-none}"
registered=$(grep -rl -e stacklens -e x-zarr-metadata "$root/usr/share/mime" \
  "$root/usr/share/applications" 2>/dev/null || true)
echo "MIME and desktop caches naming StackLens: ${registered:-none}"
[[ -z "$left" && -z "$named" && -z "$registered" ]]
in_root dpkg -l | grep -i stacklens && exit 1

step "test-deb-clean-root: every check passed"
