// The undo steps: a kind's state before and after, put back through the kind's restore function.
#include "ui/state/settings_history.h"

#include <QUndoCommand>

namespace stacklens::ui {

class SettingsHistory::Step : public QUndoCommand {
 public:
  Step(SettingsHistory* history, int kind, std::any before, std::any after, const QString& text,
       qint64 atMs)
      : QUndoCommand(text),
        history_(history),
        kind_(kind),
        before_(std::move(before)),
        after_(std::move(after)),
        atMs_(atMs) {}

  int id() const override { return history_->kinds_[size_t(kind_)].merge ? kind_ : -1; }

  bool mergeWith(const QUndoCommand* other) override {
    const auto* next = static_cast<const Step*>(other);
    if (next->kind_ != kind_ || next->atMs_ - atMs_ > kMergeMs) return false;
    after_ = next->after_;
    atMs_ = next->atMs_;
    // A change that came back to where the step began is no step at all.
    if (history_->kinds_[size_t(kind_)].same(before_, after_)) setObsolete(true);
    return true;
  }

  void undo() override { history_->put(kind_, before_); }
  void redo() override {
    if (first_) {
      first_ = false;  // the change has already happened; push() only records it
      return;
    }
    history_->put(kind_, after_);
  }

 private:
  SettingsHistory* history_;
  int kind_;
  std::any before_, after_;
  qint64 atMs_;
  bool first_ = true;
};

SettingsHistory::SettingsHistory(QObject* parent) : QObject(parent) {
  clock_.start();
  stack_.setUndoLimit(200);
}

void SettingsHistory::changed(int id, const QString& what) {
  if (restoring_) return;
  Kind& kind = kinds_.at(size_t(id));
  std::any now = kind.capture();
  if (kind.same(kind.last, now)) return;
  std::any before = std::move(kind.last);
  kind.last = now;
  stack_.push(new Step(this, id, std::move(before), std::move(now),
                       what.isEmpty() ? kind.label : what, clock_.elapsed()));
}

void SettingsHistory::restart() {
  stack_.clear();
  for (Kind& kind : kinds_) kind.last = kind.capture();
}

void SettingsHistory::put(int id, const std::any& state) {
  Kind& kind = kinds_.at(size_t(id));
  restoring_ = true;
  kind.restore(state);
  restoring_ = false;
  // What the widgets hold now (a restore may round a value) is the state later steps start from.
  kind.last = kind.capture();
}

}  // namespace stacklens::ui
