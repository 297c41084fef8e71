// The viewer's main window: a slice view and a z-slider; slices are read off the GUI thread.
#pragma once

#include <QLabel>
#include <QMainWindow>
#include <QSlider>
#include <QSpinBox>
#include <memory>

#include "io/stack.h"
#include "render/slice_view.h"

namespace stacklens::ui {

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  // Opens a stack; on failure shows an error dialog (unless quiet) and returns false.
  bool openFile(const QString& path, bool quiet = false);
  render::SliceView* sliceView() const { return view_; }
  QSlider* slider() const { return slider_; }
  const io::StackReader* stack() const { return reader_.get(); }

 signals:
  void sliceShown(int z);

 private:
  void requestSlice(int z);
  void showSlice(quint64 generation, int z, std::shared_ptr<std::vector<float>> pixels);

  std::shared_ptr<io::StackReader> reader_;
  render::SliceView* view_;
  QSlider* slider_;
  QSpinBox* spin_;
  QLabel* sliceLabel_;
  quint64 generation_ = 0;
  bool limitsSet_ = false;
};

}  // namespace stacklens::ui
