// Edit ▸ Undo / Redo: the viewer's settings (display, processing, regions) as steps of one
// QUndoStack. Each kind of state is followed through three functions — capture, restore, compare —
// so the history knows nothing of the widgets that hold it.
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <QUndoStack>
#include <any>
#include <functional>
#include <vector>

namespace stacklens::ui {

class SettingsHistory : public QObject {
  Q_OBJECT
 public:
  // Changes of one kind closer together than this become one step (a spin box's arrows held
  // down, limits dragged on the histogram).
  static constexpr qint64 kMergeMs = 600;

  explicit SettingsHistory(QObject* parent = nullptr);

  QUndoStack* undoStack() { return &stack_; }

  // Follows a kind of state: label names it in the Undo action's text ("Undo display settings").
  // merge: whether quick successive changes of this kind are one step. Returns its id.
  template <class State>
  int follow(const QString& label, std::function<State()> capture,
             std::function<void(const State&)> restore,
             std::function<bool(const State&, const State&)> same, bool merge = true) {
    Kind kind;
    kind.label = label;
    kind.merge = merge;
    kind.capture = [capture] { return std::any(capture()); };
    kind.restore = [restore](const std::any& s) { restore(std::any_cast<const State&>(s)); };
    kind.same = [same](const std::any& a, const std::any& b) {
      return same(std::any_cast<const State&>(a), std::any_cast<const State&>(b));
    };
    kind.last = kind.capture();
    kinds_.push_back(std::move(kind));
    return int(kinds_.size()) - 1;
  }

  // The state of kind id may have changed (call it from the change signal): a step from the
  // state last seen to the current one, unless they are the same or the history is restoring.
  // what: the step's text, e.g. "Import regions" ("": the kind's label).
  void changed(int id, const QString& what = QString());

  // A new file: the current states become the starting point and earlier steps are dropped
  // (they would restore settings of another image).
  void restart();

  bool restoring() const { return restoring_; }

 private:
  struct Kind {
    QString label;
    bool merge = true;
    std::function<std::any()> capture;
    std::function<void(const std::any&)> restore;
    std::function<bool(const std::any&, const std::any&)> same;
    std::any last;  // the state after the newest step (what an unchanged widget holds)
  };
  class Step;
  void put(int id, const std::any& state);

  std::vector<Kind> kinds_;
  QUndoStack stack_;
  bool restoring_ = false;
  QElapsedTimer clock_;
};

}  // namespace stacklens::ui
