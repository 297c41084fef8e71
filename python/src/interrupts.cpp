// InterruptibleCall: a stop flag per call in flight, set by a SIGINT hook.
#include "python/src/interrupts.h"

#include <pythread.h>

#include <csignal>
#include <memory>
#include <mutex>

namespace stacklens::python {
namespace {

// One stop flag per call in flight, in fixed slots that the hook (a signal handler, on any
// thread) can walk without a lock. A slot is reused by a later call; more calls at once than
// slots run without a flag (not interruptible).
constexpr int kSlots = 1024;
std::atomic<bool> slotUsed[kSlots];
std::atomic<bool> slotStop[kSlots];
static_assert(std::atomic<bool>::is_always_lock_free, "the handler stores into it");

void stopAll() {
  for (int i = 0; i < kSlots; ++i)
    if (slotUsed[i].load()) slotStop[i].store(true);
}

// Set for good by stopCallsAfterInterrupt(); then the hook also marks the process interrupted,
// and every call that starts afterwards begins stopped.
std::atomic<bool> stopLaterCalls{false};
std::atomic<bool> interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free, "the handler stores into it");

std::mutex hookLock;
int inFlight = 0;              // under hookLock
bool hooked = false;           // under hookLock
bool pinned = false;           // under hookLock: the hook stays while no call is in flight
struct sigaction previous {};  // Python's handler, which the hook chains to; under hookLock

extern "C" void onInterrupt(int signal, siginfo_t* info, void* context) {
  // Marked before the walk: a call that takes a slot after the walk sees the mark.
  if (stopLaterCalls.load()) interrupted.store(true);
  stopAll();
  if (previous.sa_flags & SA_SIGINFO)
    previous.sa_sigaction(signal, info, context);
  else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN)
    previous.sa_handler(signal);
}

bool isHook(const struct sigaction& a) {
  return (a.sa_flags & SA_SIGINFO) && a.sa_sigaction == onInterrupt;
}

// Hooks SIGINT where Python handles it (a default or ignored SIGINT is left alone).
void hook() {
  struct sigaction current {};
  if (::sigaction(SIGINT, nullptr, &current) != 0 || isHook(current)) return;
  if (!(current.sa_flags & SA_SIGINFO) &&
      (current.sa_handler == SIG_DFL || current.sa_handler == SIG_IGN))
    return;
  previous = current;
  struct sigaction h {};
  h.sa_sigaction = onInterrupt;
  h.sa_flags = SA_SIGINFO | (current.sa_flags & (SA_ONSTACK | SA_RESTART));
  sigemptyset(&h.sa_mask);
  hooked = ::sigaction(SIGINT, &h, nullptr) == 0;
}

void unhook() {
  struct sigaction current {};
  // Python code may have set another handler meanwhile: that one stays.
  if (::sigaction(SIGINT, nullptr, &current) == 0 && isHook(current))
    ::sigaction(SIGINT, &previous, nullptr);
  hooked = false;
}

bool onMainThread() {
  static const unsigned long main = pybind11::module_::import("threading")
                                        .attr("main_thread")()
                                        .attr("ident")
                                        .cast<unsigned long>();
  return PyThread_get_thread_ident() == main;
}

// The slot of the innermost Scope on this thread, or -1.
thread_local int scopeSlot = -1;

}  // namespace

InterruptibleCall::InterruptibleCall() {
  if (scopeSlot >= 0) {
    slot_ = scopeSlot;
    shared_ = true;
  }
  for (int i = 0; i < kSlots && slot_ < 0; ++i) {
    bool expected = false;
    if (slotUsed[i].compare_exchange_strong(expected, true)) {
      slotStop[i].store(false);
      slot_ = i;
    }
  }
  if (slot_ >= 0 && interrupted.load()) slotStop[slot_].store(true);
  std::lock_guard lock(hookLock);
  if (inFlight++ == 0) hook();
}

InterruptibleCall::~InterruptibleCall() {
  if (slot_ >= 0 && !shared_) slotUsed[slot_].store(false);
  std::lock_guard lock(hookLock);
  if (--inFlight == 0 && hooked && !pinned) unhook();
}

compute::Job InterruptibleCall::job() const {
  return slot_ >= 0 ? compute::Job(&slotStop[slot_]) : compute::Job();
}

InterruptibleCall::Scope::Scope() : outer_(scopeSlot) {
  if (call_.slot_ >= 0) scopeSlot = call_.slot_;
}

InterruptibleCall::Scope::~Scope() { scopeSlot = outer_; }

void InterruptibleCall::raiseWhatPythonRaises() const {
  if (onMainThread() && PyErr_CheckSignals() != 0) throw pybind11::error_already_set();
}

namespace {

class PythonScope {
 public:
  void enter() {
    if (!scope_) scope_ = std::make_unique<InterruptibleCall::Scope>();
  }
  void exit() { scope_.reset(); }

 private:
  std::unique_ptr<InterruptibleCall::Scope> scope_;
};

}  // namespace

void stopCallsAfterInterrupt() {
  std::lock_guard lock(hookLock);
  stopLaterCalls.store(true);
  pinned = true;
  if (!hooked) hook();
}

void addInterruptScope(pybind11::module_& m) {
  pybind11::class_<PythonScope>(m, "_InterruptScope")
      .def(pybind11::init<>())
      .def("__enter__", [](PythonScope& s) { s.enter(); })
      .def("__exit__", [](PythonScope& s, const pybind11::args&) { s.exit(); });
  m.def("_stop_calls_after_interrupt", &stopCallsAfterInterrupt,
        "From now on SIGINT also stops every call that starts after it (for a program that "
        "ends on Ctrl-C: a thread pool's next chunk does no work).");
}

}  // namespace stacklens::python
