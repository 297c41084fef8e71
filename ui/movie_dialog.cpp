// The movie dialog: frames made and encoded on a pool thread, progress queued back.
#include "ui/movie_dialog.h"

#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QVBoxLayout>

#include "compute/job.h"
#include "io/movie_frame.h"
#include "io/movie_writer.h"
#include "render/colormap.h"
#include "ui/dialog_job.h"

namespace stacklens::ui {

MovieDialog::MovieDialog(MovieRequest request, QWidget* parent)
    : QDialog(parent), request_(std::move(request)) {
  setWindowTitle(tr("Export movie"));
  pool_.setMaxThreadCount(1);
  const io::StackInfo& info = request_.reader->info();
  auto* form = new QFormLayout;
  first_ = new QSpinBox;
  last_ = new QSpinBox;
  for (QSpinBox* b : {first_, last_}) b->setRange(0, int(info.z - 1));
  first_->setValue(request_.first);
  last_->setValue(request_.last < 0 ? int(info.z - 1) : request_.last);
  auto* range = new QHBoxLayout;
  range->addWidget(first_);
  range->addWidget(new QLabel(tr("to")));
  range->addWidget(last_);
  form->addRow(tr("Slices:"), range);
  fps_ = new QDoubleSpinBox;
  fps_->setRange(0.1, 120);
  fps_->setValue(10);
  form->addRow(tr("Frames per second:"), fps_);
  width_ = new QSpinBox;
  height_ = new QSpinBox;
  for (QSpinBox* b : {width_, height_}) b->setRange(1, 16384);
  width_->setValue(int(info.x));
  height_->setValue(int(info.y));
  auto* size = new QHBoxLayout;
  size->addWidget(width_);
  size->addWidget(new QLabel(QStringLiteral("×")));
  size->addWidget(height_);
  form->addRow(tr("Size:"), size);
  form->addRow(tr("Display:"), new QLabel(tr("%1, limits %2 … %3 for every frame (the view's)")
                                              .arg(request_.colormapName)
                                              .arg(double(request_.display.limits.low))
                                              .arg(double(request_.display.limits.high))));
  const QFileInfo input(QString::fromStdString(info.path));
  output_ = new QLineEdit(input.dir().filePath(input.completeBaseName() + ".mp4"));
  auto* browse = new QPushButton(tr("Browse…"));
  auto* row = new QHBoxLayout;
  row->addWidget(output_);
  row->addWidget(browse);
  form->addRow(tr("Output:"), row);
  progress_ = new QProgressBar;
  progress_->setRange(0, 1000);
  status_ =
      new QLabel(tr("MP4 (H.264), GIF, or PNG frames (name_0000.png, ...) by the name's "
                    "extension."));
  status_->setWordWrap(true);
  start_ = new QPushButton(tr("Export"));
  close_ = new QPushButton(tr("Close"));
  auto* buttons = new QDialogButtonBox;
  buttons->addButton(start_, QDialogButtonBox::AcceptRole);
  buttons->addButton(close_, QDialogButtonBox::RejectRole);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(form);
  layout->addWidget(progress_);
  layout->addWidget(status_);
  layout->addWidget(buttons);
  connect(browse, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export the movie to"), output_->text(), tr("Movies (*.mp4 *.gif *.png)"));
    if (!path.isEmpty()) output_->setText(path);
  });
  connect(start_, &QPushButton::clicked, this, &MovieDialog::start);
  connect(close_, &QPushButton::clicked, this, [this] {
    if (running_)
      cancel();
    else
      close();
  });
}

MovieDialog::~MovieDialog() {
  stop_ = true;
  future_.waitForFinished();
}

void MovieDialog::setRunning(bool on) {
  running_ = on;
  for (QWidget* w :
       std::initializer_list<QWidget*>{start_, first_, last_, fps_, width_, height_, output_})
    w->setEnabled(!on);
  close_->setText(on ? tr("Cancel") : tr("Close"));
}

void MovieDialog::jobEnded(int progress, const QString& status) {
  setRunning(false);
  if (progress >= 0) progress_->setValue(progress);
  status_->setText(status);
}

void MovieDialog::cancel() {
  if (!running_) return;
  stop_ = true;
  status_->setText(tr("Cancelling…"));
}

void MovieDialog::start() {
  if (running_) return;
  const std::string out = output_->text().toStdString();
  if (!io::MovieWriter::supports(out)) {
    status_->setText(tr("The name must end in .mp4, .gif or .png."));
    return;
  }
  const int first = std::min(first_->value(), last_->value());
  const int last = std::max(first_->value(), last_->value());
  io::MovieOptions options;
  options.fps = fps_->value();
  options.sourcePath = request_.reader->info().path;
  const render::Colormap map = render::loadColormap(request_.colormapName);
  for (size_t i = 0; i < 256; ++i)
    options.palette[i] = {uint8_t(map.rgba[i] & 0xff), uint8_t((map.rgba[i] >> 8) & 0xff),
                          uint8_t((map.rgba[i] >> 16) & 0xff)};
  const io::StackInfo& info = request_.reader->info();
  const io::FrameLayout layout{info.x, info.y, width_->value(), height_->value(),
                               info.format == "fits"};
  stop_ = false;
  setRunning(true);
  progress_->setValue(0);
  status_->setText(tr("Exporting…"));
  future_ = runForDialog<MovieDialog>(
      pool_, this,
      [this, out, first, last, options, layout,
       request = request_](const PostToDialog<MovieDialog>& post) {
        const io::StackInfo& info = request.reader->info();
        const std::vector<float>* cdf = request.cdf.empty() ? nullptr : &request.cdf;
        auto index = [&](float v) {
          const int i = render::colourIndex(request.display, v, cdf);
          return uint8_t(i < 0 ? 0 : i);
        };
        std::vector<float> slice(size_t(info.y * info.x));
        io::MovieWriter movie(out, layout.outWidth, layout.outHeight, options);
        for (int z = first; z <= last; ++z) {
          if (stop_) throw compute::Cancelled();
          request.reader->readSlice(z, slice.data());
          movie.addFrame(io::movieFrame(slice.data(), layout, index).data());
          const double f = double(z - first + 1) / double(last - first + 1);
          post([f](MovieDialog* d) { d->progress_->setValue(int(f * 1000)); });
        }
        movie.finish();
        const QString path = QString::fromStdString(out);
        const int frames = last - first + 1;
        post([path, frames](MovieDialog* d) {
          d->jobEnded(1000, tr("Written: %1 (%2 frames)").arg(path).arg(frames));
          emit d->finished(path);
        });
      });
}

}  // namespace stacklens::ui
