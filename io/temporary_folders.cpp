// Naming temporary folders after their process and host, and removing those of dead processes.
#include "io/temporary_folders.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <mutex>

#include "io/unique_fd.h"

namespace stacklens::io {
namespace {

// Room for the pid, the host and mkdtemp's six characters within a file name's 255 bytes.
constexpr size_t kNameBytes = 160, kHostBytes = 64;

// The host's name as it goes into a folder name: no '/', no '@' (the separator), bounded.
const std::string& hostName() {
  static const std::string host = [] {
    char buf[256] = {};
    if (::gethostname(buf, sizeof buf - 1) != 0 || !buf[0]) return std::string("unknown");
    std::string h(buf, std::min(std::strlen(buf), kHostBytes));
    for (char& c : h)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_'))
        c = '_';
    return h;
  }();
  return host;
}

std::string prefixFor(const std::string& name) {
  return "." + name.substr(0, kNameBytes) + ".tmp-";
}

bool isDigits(const std::string& s) {
  return !s.empty() && s.size() <= 10 &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

bool isRandomPart(const std::string& s) {
  return s.size() == 6 &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isalnum(c); });
}

// Removes folder/entry if it is a folder of ours holding nothing but the temporary file name,
// or, for a folder output (io/atomic_folder.h), the folders name, name.partial and replaced;
// else says why not.
std::string removeIfOnlyTemporary(int parent, const std::string& base, const std::string& entry,
                                  const std::string& name) {
  struct stat st {};
  if (::fstatat(parent, entry.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return "";  // gone
  if (!S_ISDIR(st.st_mode)) return "not a folder";
  if (st.st_uid != ::geteuid()) return "another user's";
  const UniqueFd fd(
      ::openat(parent, entry.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (fd.get() < 0) return std::strerror(errno);
  bool holdsOther = false, holdsTemporary = false;
  std::vector<std::string> trees;
  {
    DIR* dir = ::fdopendir(::dup(fd.get()));
    if (!dir) return std::strerror(errno);
    while (const dirent* e = ::readdir(dir)) {
      const std::string n = e->d_name;
      if (n == "." || n == "..") continue;
      struct stat inner {};
      const bool known = ::fstatat(fd.get(), n.c_str(), &inner, AT_SYMLINK_NOFOLLOW) == 0;
      if (n == name && known && S_ISREG(inner.st_mode))
        holdsTemporary = true;
      else if ((n == name || n == name + ".partial" || n == "replaced") && known &&
               S_ISDIR(inner.st_mode))
        trees.push_back(n);
      else
        holdsOther = true;
    }
    ::closedir(dir);
  }
  if (holdsOther) return "it holds other files";
  if (holdsTemporary && ::unlinkat(fd.get(), name.c_str(), 0) != 0 && errno != ENOENT)
    return std::strerror(errno);
  for (const std::string& tree : trees) {
    std::error_code error;
    std::filesystem::remove_all(base + "/" + entry + "/" + tree, error);
    if (error) return error.message();
  }
  if (::unlinkat(parent, entry.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT)
    return std::strerror(errno);
  return "";
}

std::mutex noticeLock;
TemporaryNotice& noticeSink() {
  static TemporaryNotice sink;
  return sink;
}

}  // namespace

std::string temporaryFolderPattern(const std::string& folder, const std::string& name) {
  const std::string base = folder.empty() ? "." : folder;
  return base + "/" + prefixFor(name) + std::to_string(::getpid()) + "@" + hostName() + "-XXXXXX";
}

TemporarySweep sweepTemporaryFolders(const std::string& folder, const std::string& name) {
  TemporarySweep sweep;
  const std::string base = folder.empty() ? "." : folder;
  const UniqueFd parent(::open(base.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (parent.get() < 0) return sweep;  // creating the new folder reports the reason
  std::vector<std::string> candidates;
  const std::string prefix = prefixFor(name);
  if (DIR* dir = ::fdopendir(::dup(parent.get()))) {
    while (const dirent* e = ::readdir(dir)) {
      const std::string n = e->d_name;
      if (n.size() > prefix.size() && n.compare(0, prefix.size(), prefix) == 0)
        candidates.push_back(n);
    }
    ::closedir(dir);
  }
  std::sort(candidates.begin(), candidates.end());
  for (const std::string& entry : candidates) {
    const std::string path = base + "/" + entry, rest = entry.substr(prefix.size());
    if (isRandomPart(rest)) {
      sweep.left.push_back(path + " (left by an older StackLens; remove it if no run is writing " +
                           name + ")");
      continue;
    }
    const size_t at = rest.find('@');
    if (rest.size() < 8 || at == std::string::npos || rest[rest.size() - 7] != '-' ||
        !isRandomPart(rest.substr(rest.size() - 6)) || !isDigits(rest.substr(0, at)))
      continue;  // not a name this scheme makes
    const std::string host = rest.substr(at + 1, rest.size() - 7 - at - 1);
    const long pid = std::stol(rest.substr(0, at));
    if (host != hostName()) {
      sweep.left.push_back(path + " (a run on " + host + " writes " + name + ", or left it)");
      continue;
    }
    if (pid == ::getpid()) continue;  // this process writes the same output twice at once
    if (pid > 0 && (::kill(pid_t(pid), 0) == 0 || errno != ESRCH)) {
      sweep.left.push_back(path + " (process " + std::to_string(pid) + " is running)");
      continue;
    }
    const std::string why = removeIfOnlyTemporary(parent.get(), base, entry, name);
    if (why.empty())
      sweep.removed.push_back(path);
    else
      sweep.left.push_back(path + " (" + why + ")");
  }
  return sweep;
}

void setTemporaryNotice(TemporaryNotice notice) {
  std::lock_guard lock(noticeLock);
  noticeSink() = std::move(notice);
}

void noticeTemporaries(const TemporarySweep& sweep) {
  std::lock_guard lock(noticeLock);
  if (!noticeSink()) return;
  for (const std::string& path : sweep.removed)
    noticeSink()("removed the temporary folder of a run that died: " + path);
  for (const std::string& path : sweep.left) noticeSink()("left a temporary folder: " + path);
}

}  // namespace stacklens::io
