// The temporary folders outputs are written in before they are renamed into place, and the ones
// left by runs that died (SIGKILL, the OOM killer, a power cut).
//
// A folder is named ".NAME.tmp-PID@HOST-XXXXXX" beside the output NAME, so that a later run on
// the same output can tell whose it is: a folder of this host whose process is gone holds nothing
// anyone will finish, and is removed. Anything else is left where it is and named in a notice:
// folders of another host (a shared file system) or of a process still running (a run writing the
// same output), folders of the old ".NAME.tmp-XXXXXX" form, and folders holding anything but the
// one temporary file (or, for a folder output such as a Zarr store, the folders NAME,
// NAME.partial and replaced that io/atomic_folder.h makes). Other files are never looked at.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace stacklens::io {

// The mkdtemp(3) pattern of a temporary folder for the output file name in folder.
std::string temporaryFolderPattern(const std::string& folder, const std::string& name);

// What a sweep did: the folders it removed and the ones it left, each with the reason.
struct TemporarySweep {
  std::vector<std::string> removed;
  std::vector<std::string> left;  // "PATH (why)"
};

// Removes the temporary folders of dead processes of this host for the output name in folder.
TemporarySweep sweepTemporaryFolders(const std::string& folder, const std::string& name);

// Where the sweep's notices go (the CLI prints them on stderr); none by default.
using TemporaryNotice = std::function<void(const std::string& text)>;
void setTemporaryNotice(TemporaryNotice notice);
void noticeTemporaries(const TemporarySweep& sweep);

}  // namespace stacklens::io
