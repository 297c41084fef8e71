#!/usr/bin/env bash
# Writes a man page for PROGRAM with help2man: its --help and --version, the sections of
# EXTRA.h2m, and, when the program lists commands (stacklens-cli), each command's --help.
# Usage: make-man-page.sh PROGRAM OUT.1 "DESCRIPTION" EXTRA.h2m
set -euo pipefail
program=$1 out=$2 description=$3 extra=$4
# The help texts are UTF-8 (Richardson–Lucy, K×K): the programs and help2man (--locale, whose
# default "C" turns each such character into "?") read and write them so.
export LC_ALL=C.UTF-8

include=$(mktemp)
trap 'rm -f "$include"' EXIT
cat "$extra" >"$include"

# The commands are the indented names under "commands:" in the program's --help.
commands=$("$program" --help | sed -n '/^commands:/,/^$/s/^  \([a-z][a-z0-9-]*\) .*/\1/p')
if [[ -n "$commands" ]]; then
  echo "[COMMANDS]" >>"$include"
  for command in $commands; do
    # Each command's help as written, in a no-fill block; roff's escape character doubled.
    printf '.SS %s\n.nf\n' "$command" >>"$include"
    "$program" "$command" --help | sed -e 's/\\/\\\\/g' -e 's/^[.'"'"']/\\\&&/' >>"$include"
    printf '.fi\n' >>"$include"
  done
fi

# The version is the last word of --version's first line; the lines after it (revision,
# backends) describe one build, not the program, and are left to --version itself. Given the
# version, help2man names the page after the executable (the viewer's first line says
# "StackLens").
version=$("$program" --version | sed -n '1s/.* //p')
help2man --locale=C.UTF-8 --no-info --no-discard-stderr --section=1 --name="$description" \
  --version-string="$version" --include="$include" --output="$out" "$program"
