// The movie dialog: frames made and encoded on a pool thread, progress queued back.
#include "ui/jobs/movie_dialog.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QVBoxLayout>

#include "compute/backend.h"
#include "compute/job.h"
#include "compute/volume_render.h"
#include "io/movie_frame.h"
#include "io/movie_writer.h"
#include "render/colormap.h"
#include "ui/display/display_panel.h"
#include "ui/frame/main_window.h"
#include "ui/jobs/dialog_job.h"
#include "ui/volume/volume_panel.h"

namespace stacklens::ui {

MovieDialog::MovieDialog(MovieRequest request, QWidget* parent)
    : JobDialog(tr("Export"), parent), request_(std::move(request)) {
  setWindowTitle(tr("Export movie"));
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
  kind_ = new QComboBox;
  kind_->addItems({tr("Slices (one frame each)"), tr("3D rotation (as the 3D view shows it)")});
  if (!request_.volume) {
    kind_->setItemData(1, 0, Qt::UserRole - 1);  // disabled: no 3D view open
    kind_->setToolTip(tr("Open View ▸ 3D view for a rotation movie"));
  }
  form->addRow(tr("Movie of:"), kind_);
  form->addRow(tr("Slices:"), range);
  turnFrames_ = new QSpinBox;
  turnFrames_->setRange(2, 3600);
  turnFrames_->setValue(72);
  turnFrames_->setSuffix(tr(" frames a turn"));
  turnFrames_->setEnabled(false);
  form->addRow(tr("Rotation:"), turnFrames_);
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
  status_->setText(
      tr("MP4 (H.264), GIF, or PNG frames (name_0000.png, ...) by the name's extension."));
  status_->setWordWrap(true);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(form);
  addJobRows(layout);
  connect(browse, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export the movie to"), output_->text(), tr("Movies (*.mp4 *.gif *.png)"));
    if (!path.isEmpty()) output_->setText(path);
  });
  connect(kind_, &QComboBox::currentIndexChanged, this, [this](int kind) {
    const bool turn = kind == 1;
    first_->setEnabled(!turn), last_->setEnabled(!turn), turnFrames_->setEnabled(turn);
    const io::StackInfo& info = request_.reader->info();
    width_->setValue(turn ? request_.view.width : int(info.x));
    height_->setValue(turn ? request_.view.height : int(info.y));
  });
}

void MovieDialog::setInputsEnabled(bool enabled) {
  const bool turn = kind_->currentIndex() == 1;
  for (QWidget* w : std::initializer_list<QWidget*>{fps_, width_, height_, output_, kind_})
    w->setEnabled(enabled);
  for (QWidget* w : std::initializer_list<QWidget*>{first_, last_}) w->setEnabled(enabled && !turn);
  turnFrames_->setEnabled(enabled && turn);
}

void MovieDialog::start() {
  if (running()) return;
  const std::string out = output_->text().toStdString();
  if (!io::MovieWriter::available()) {
    status_->setText(tr("This build of StackLens writes no movies (built without FFmpeg)."));
    return;
  }
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
  const bool turn = kind_->currentIndex() == 1 && request_.volume;
  const io::FrameLayout layout =
      turn ? io::FrameLayout{width_->value(), height_->value(), width_->value(), height_->value(),
                             request_.viewOriginBottom}
           : io::FrameLayout{info.x, info.y, width_->value(), height_->value(),
                             info.format == "fits"};
  const int frames = turn ? turnFrames_->value() : last - first + 1;
  begin(tr("Exporting…"));
  future_ = runForDialog<MovieDialog>(
      pool_, this,
      [this, out, first, last, options, layout, turn, frames,
       request = request_](const PostToDialog<MovieDialog>& post) {
        const io::StackInfo& info = request.reader->info();
        const std::vector<float>* cdf = request.cdf.empty() ? nullptr : &request.cdf;
        auto index = [&](float v) {
          const int i = render::colourIndex(request.display, v, cdf);
          return uint8_t(i < 0 ? 0 : i);
        };
        std::vector<float> slice(size_t(info.y * info.x));
        io::MovieWriter movie(out, layout.outWidth, layout.outHeight, options);
        std::unique_ptr<compute::Backend> backend;
        if (turn) backend = compute::makeBackend("auto");
        for (int k = 0; k < frames; ++k) {
          if (stop_) throw compute::Cancelled();
          if (turn) {
            compute::VolumeRenderParams p = request.view;
            p.width = layout.outWidth, p.height = layout.outHeight;
            compute::turnView(request.view.rotation, 0, 360.0 * k / frames, p.rotation);
            const compute::Image frame =
                backend->download(backend->renderVolume(request.volume->volume, p));
            movie.addFrame(io::movieFrame(frame.data(), layout, index).data());
          } else {
            request.reader->readSlice(first + k, slice.data());
            movie.addFrame(io::movieFrame(slice.data(), layout, index).data());
          }
          const double f = double(k + 1) / double(frames);
          post([f](MovieDialog* d) { d->progress_->setValue(int(f * 1000)); });
        }
        movie.finish();
        const QString path = QString::fromStdString(out);
        post([path, frames](MovieDialog* d) {
          d->jobEnded(1000, tr("Written: %1 (%2 frames)").arg(path).arg(frames));
          emit d->finished(path);
        });
      });
}

}  // namespace stacklens::ui

namespace stacklens::ui {

// The movie takes the view's display settings and, when the 3D view shows a volume, its camera.
MovieDialog* openMovieExport(MainWindow* window) {
  if (!window->stack()) return nullptr;
  MovieRequest request;
  request.reader = window->sharedStack();
  request.display = window->displayPanel()->settings();
  request.colormapName = request.display.colormap;
  if (request.display.scale == render::Scale::HistEq) request.cdf = window->sliceView()->cdf();
  auto* volume = window->findChild<VolumePanel*>();
  if (volume && volume->isVisible() && volume->volume()) {
    request.volume = volume->sharedVolume();
    request.view = volume->params();
    request.viewOriginBottom = volume->view()->originBottom();
  }
  auto* dialog = new MovieDialog(request, window);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  dialog->show();
  return dialog;
}

}  // namespace stacklens::ui
