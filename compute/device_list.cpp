#include "compute/device_list.h"

#include <algorithm>
#include <cctype>
#include <exception>
#include <future>
#include <sstream>

namespace stacklens::compute {
namespace {

// A non-negative whole number, or -1.
int wholeNumber(const std::string& text) {
  if (text.empty() || text.size() > 6 ||
      !std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); }))
    return -1;
  return std::stoi(text);
}

}  // namespace

std::vector<int> parseDeviceList(const std::string& text, int visible) {
  const std::string seen = " (" + std::to_string(visible) + " visible)";
  std::vector<int> devices;
  if (text == "all") {
    for (int d = 0; d < visible; ++d) devices.push_back(d);
    if (devices.empty()) throw InvalidArgument("devices: no CUDA device is visible");
    return devices;
  }
  if (text.find(',') == std::string::npos) {
    const int n = wholeNumber(text);
    if (n < 1)
      throw InvalidArgument("devices: expected all, a count N or a list I,J (got '" + text + "')");
    if (n > visible) throw InvalidArgument("devices: " + text + " devices asked for" + seen);
    for (int d = 0; d < n; ++d) devices.push_back(d);
    return devices;
  }
  std::istringstream items(text);
  for (std::string item; std::getline(items, item, ',');) {
    if (item.empty()) continue;  // "2," names device 2 alone
    const int d = wholeNumber(item);
    if (d < 0) throw InvalidArgument("devices: '" + item + "' is not a device index");
    if (d >= visible) throw InvalidArgument("devices: there is no device " + item + seen);
    if (std::find(devices.begin(), devices.end(), d) != devices.end())
      throw InvalidArgument("devices: device " + item + " is listed twice");
    devices.push_back(d);
  }
  if (devices.empty()) throw InvalidArgument("devices: the list is empty");
  return devices;
}

std::vector<std::unique_ptr<Backend>> makeCudaBackends(const std::vector<int>& devices) {
  // Each device's start (its context, memory pool and streams) takes a good part of a second and
  // waits mostly on that device: they start at once, one thread each.
  std::vector<std::future<std::unique_ptr<Backend>>> starting;
  for (int d : devices) starting.push_back(std::async(std::launch::async, makeCudaBackend, d));
  std::vector<std::unique_ptr<Backend>> backends;
  std::exception_ptr failure;
  for (auto& s : starting) try {
      backends.push_back(s.get());
    } catch (...) {
      if (!failure) failure = std::current_exception();
    }
  if (failure) std::rethrow_exception(failure);
  // As if made here: the calling thread works on the first device, as after makeCudaBackend.
  if (!backends.empty()) backends.front()->device().bindToThisThread();
  return backends;
}

void releaseBackends(std::vector<std::unique_ptr<Backend>>& backends) {
  std::vector<std::future<void>> releasing;
  for (auto& b : backends)
    releasing.push_back(
        std::async(std::launch::async, [owned = std::move(b)]() mutable { owned.reset(); }));
  backends.clear();
  for (auto& r : releasing) r.get();
}

std::vector<Backend*> pointersTo(const std::vector<std::unique_ptr<Backend>>& backends) {
  std::vector<Backend*> out;
  for (const auto& b : backends) out.push_back(b.get());
  return out;
}

}  // namespace stacklens::compute
