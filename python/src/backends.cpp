#include "python/src/backends.h"

#include <map>
#include <memory>

#include "compute/params.h"

namespace stacklens::python {
namespace {

struct Kept {
  std::unique_ptr<compute::Backend> backend;
  std::mutex calls;
};

}  // namespace

BackendUse useBackend(const std::string& name) {
  if (name != "cpu" && name != "cuda" && name != "auto")
    throw compute::InvalidArgument("backend: expected 'cpu', 'cuda' or 'auto', got '" + name + "'");
  static std::mutex made;
  static std::map<std::string, std::shared_ptr<Kept>> backends;
  std::shared_ptr<Kept> kept;
  {
    std::lock_guard lock(made);
    std::shared_ptr<Kept>& slot = backends[name];
    if (!slot) {
      if (name == "auto") {
        // The same backend as asking for it by its name.
        std::string note;
        auto made = compute::makeBackend("auto", &note);
        const std::string actual = made->name();
        std::shared_ptr<Kept>& named = backends[actual];
        if (!named) {
          named = std::make_shared<Kept>();
          named->backend = std::move(made);
        }
        slot = named;
      } else {
        slot = std::make_shared<Kept>();
        slot->backend = compute::makeBackend(name);
      }
    }
    kept = slot;
  }
  // Kept for the process's life in the map: the reference stays valid.
  return BackendUse{*kept->backend, std::unique_lock(kept->calls)};
}

}  // namespace stacklens::python
