#include "ui/display/channels_panel.h"

#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QFuture>
#include <QHBoxLayout>
#include <QPushButton>
#include <QToolButton>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <cmath>

#include "io/movie_frame.h"
#include "render/colormap.h"

namespace stacklens::ui {
namespace {

const char* const kChannelMaps[] = {"red", "green", "blue", "cyan", "magenta", "yellow"};

struct Source {
  QString label, path;
  int hdu = -1, plane = 0;
};

// What the open stack offers as channels: its planes, or else its other images of the same size.
std::vector<Source> sourcesOf(const io::StackInfo& info) {
  std::vector<Source> out;
  const QString path = QString::fromStdString(info.path);
  if (info.planes > 1) {
    for (int k = 0; k < int(info.planes); ++k)
      out.push_back({QObject::tr("plane %1").arg(k), path, info.hdu, k});
    return out;
  }
  for (const io::HduInfo& h : info.hdus) {
    if (h.type.find("image") == std::string::npos || h.axes.size() < 2) continue;
    if (h.axes[0] != info.x || h.axes[1] != info.y) continue;
    const QString name = QString::fromStdString(h.name);
    out.push_back({name.isEmpty() ? QObject::tr("HDU %1").arg(h.index)
                                  : QObject::tr("HDU %1 (%2)").arg(h.index).arg(name),
                   path, h.index, 0});
  }
  return out;
}

}  // namespace

ChannelsPanel::ChannelsPanel(render::SliceView* view, QWidget* parent)
    : QWidget(parent), view_(view) {
  pool_.setMaxThreadCount(1);
  on_ = new QCheckBox(tr("Blend the channels in the view"));
  offer_ = new QComboBox;
  auto* add = new QPushButton(tr("Add"));
  auto* addFile = new QPushButton(tr("Add file…"));
  rowsHolder_ = new QWidget;
  rows_ = new QGridLayout(rowsHolder_);
  rows_->setContentsMargins(0, 0, 0, 0);
  status_ = new QLabel;
  status_->setWordWrap(true);
  auto* adding = new QHBoxLayout;
  adding->addWidget(offer_, 1);
  adding->addWidget(add);
  adding->addWidget(addFile);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(on_);
  layout->addWidget(rowsHolder_);
  layout->addLayout(adding);
  layout->addWidget(status_);
  layout->addStretch(1);
  connect(on_, &QCheckBox::toggled, this, [this](bool on) {
    if (on) showSlice(z_);
    apply();
  });
  connect(add, &QPushButton::clicked, this, [this] {
    const QVariantList v = offer_->currentData().toList();
    if (v.size() == 3) addChannel(v[0].toString(), v[1].toInt(), v[2].toInt());
  });
  connect(addFile, &QPushButton::clicked, this, &ChannelsPanel::addFileRequested);
}

ChannelsPanel::~ChannelsPanel() {
  ++generation_, ++stackGeneration_;  // no result lands after this
  pool_.waitForDone();
}

void ChannelsPanel::setStack(std::shared_ptr<const io::StackReader> reader) {
  stack_ = std::move(reader);
  channels_.clear();
  shown_.clear();
  ++generation_, ++stackGeneration_;
  offer_->clear();
  if (stack_)
    for (const Source& s : sourcesOf(stack_->info()))
      offer_->addItem(s.label, QVariantList{s.path, s.hdu, s.plane});
  rebuildRows();
  apply();
  if (!stack_) return;
  for (int i = 0; i < offer_->count() && i < render::kMaxChannels; ++i) {
    const QVariantList v = offer_->itemData(i).toList();
    addChannel(v[0].toString(), v[1].toInt(), v[2].toInt());
  }
}

void ChannelsPanel::addChannel(const QString& path, int hdu, int plane) {
  if (!stack_) return;
  if (channels_.size() >= size_t(render::kMaxChannels)) {
    status_->setText(tr("At most %1 channels.").arg(render::kMaxChannels));
    return;
  }
  const quint64 generation = stackGeneration_;
  const int64_t width = stack_->info().x, height = stack_->info().y;
  QFuture<std::shared_ptr<const io::StackReader>> opened =
      QtConcurrent::run(&pool_, [path, hdu, plane]() -> std::shared_ptr<const io::StackReader> {
        io::OpenOptions options;
        options.hdu = hdu, options.plane = plane;
        return io::openStack(path.toStdString(), options);
      });
  opened
      .then(this,
            [this, generation, path, hdu, plane, width,
             height](std::shared_ptr<const io::StackReader> reader) {
              if (generation != stackGeneration_) return;
              const io::StackInfo& info = reader->info();
              if (info.x != width || info.y != height) {
                status_->setText(tr("%1: its slices are %2 × %3, the stack's %4 × %5")
                                     .arg(path)
                                     .arg(info.x)
                                     .arg(info.y)
                                     .arg(width)
                                     .arg(height));
                return;
              }
              if (channels_.size() >= size_t(render::kMaxChannels)) return;
              Channel c;
              c.reader = reader;
              c.look.colormap = kChannelMaps[channels_.size()];
              const QString file = QFileInfo(path).fileName();
              c.look.name = info.planes > 1 ? tr("%1 plane %2").arg(file).arg(plane)
                            : hdu > 0       ? tr("%1 HDU %2").arg(file).arg(hdu)
                                            : file;
              channels_.push_back(std::move(c));
              status_->clear();
              rebuildRows();
              showSlice(z_);
            })
      .onFailed(this, [this, path](const std::exception& e) {
        status_->setText(tr("%1: %2").arg(path, QString::fromUtf8(e.what())));
      });
}

void ChannelsPanel::removeChannel(int index) {
  if (index < 0 || index >= int(channels_.size())) return;
  channels_.erase(channels_.begin() + index);
  rebuildRows();
  apply();
}

void ChannelsPanel::setBlending(bool on) { on_->setChecked(on); }

void ChannelsPanel::setChannel(int index, const QString& colormap, float low, float high,
                               bool visible) {
  if (index < 0 || index >= int(channels_.size())) return;
  render::CompositeChannel& look = channels_[size_t(index)].look;
  look.colormap = colormap, look.low = low, look.high = high, look.visible = visible;
  channels_[size_t(index)].limitsSet = true;
  rebuildRows();
  apply();
}

void ChannelsPanel::showSlice(int z) {
  z_ = z;
  if (!on_->isChecked() || channels_.empty()) return;
  const quint64 generation = ++generation_;
  std::vector<std::shared_ptr<const io::StackReader>> readers;
  for (const Channel& c : channels_) readers.push_back(c.reader);
  QtConcurrent::run(&pool_,
                    [readers, z] {
                      std::vector<render::ChannelData> slices;
                      for (const auto& r : readers) {
                        const io::StackInfo& info = r->info();
                        auto data = std::make_shared<std::vector<float>>(size_t(info.x * info.y));
                        r->readSlice(std::min<int64_t>(z, info.z - 1), data->data());
                        slices.push_back(std::move(data));
                      }
                      return slices;
                    })
      .then(this,
            [this, generation, z](std::vector<render::ChannelData> slices) {
              if (generation != generation_ || slices.size() != channels_.size()) return;
              for (size_t i = 0; i < slices.size(); ++i) {
                Channel& c = channels_[i];
                c.look.data = slices[i];
                if (!c.limitsSet) {
                  const auto [low, high] =
                      io::percentileRange(slices[i]->data(), int64_t(slices[i]->size()), 99.5);
                  c.look.low = low, c.look.high = high > low ? high : low + 1;
                  c.limitsSet = true;
                }
              }
              rebuildRows();
              apply();
              emit compositeShown(z);
            })
      .onFailed(this, [this](const std::exception& e) {
        status_->setText(tr("Reading a channel failed: %1").arg(QString::fromUtf8(e.what())));
      });
}

void ChannelsPanel::apply() {
  shown_.clear();
  for (const Channel& c : channels_)
    if (c.look.data) shown_.push_back(c.look);
  view_->setComposite(on_->isChecked() ? shown_ : std::vector<render::CompositeChannel>{});
}

QString ChannelsPanel::readout(QPointF imagePos) const {
  if (!on_->isChecked() || !stack_) return {};
  const int x = int(std::lround(imagePos.x())), y = int(std::lround(imagePos.y()));
  const io::StackInfo& info = stack_->info();
  if (x < 0 || y < 0 || x >= info.x || y >= info.y) return {};
  QStringList parts;
  for (const Channel& c : channels_) {
    if (!c.look.data) continue;
    const float v = (*c.look.data)[size_t(y) * size_t(info.x) + size_t(x)];
    parts << QString("%1 %2").arg(c.look.name,
                                  std::isnan(v) ? QString("NaN") : QString::number(v, 'g', 7));
  }
  return parts.join("   ");
}

// One row per channel: shown, name, colormap, low, high, remove.
void ChannelsPanel::rebuildRows() {
  // Later, not now: this may run inside a signal of one of these widgets (the remove button).
  while (QLayoutItem* item = rows_->takeAt(0)) {
    if (QWidget* w = item->widget()) w->hide(), w->deleteLater();
    delete item;
  }
  for (int i = 0; i < int(channels_.size()); ++i) {
    const render::CompositeChannel& look = channels_[size_t(i)].look;
    auto* shown = new QCheckBox;
    shown->setChecked(look.visible);
    auto* map = new QComboBox;
    map->addItems(render::colormapNames());
    map->setCurrentText(look.colormap);
    auto* low = new QDoubleSpinBox;
    auto* high = new QDoubleSpinBox;
    for (QDoubleSpinBox* b : {low, high}) {
      b->setRange(-1e30, 1e30);
      b->setDecimals(4);
    }
    low->setValue(look.low);
    high->setValue(look.high);
    auto* remove = new QToolButton;
    remove->setText(QStringLiteral("✕"));
    remove->setToolTip(tr("Remove this channel"));
    rows_->addWidget(shown, i, 0);
    rows_->addWidget(new QLabel(look.name), i, 1);
    rows_->addWidget(map, i, 2);
    rows_->addWidget(low, i, 3);
    rows_->addWidget(high, i, 4);
    rows_->addWidget(remove, i, 5);
    auto update = [this, i, shown, map, low, high] {
      if (i >= int(channels_.size())) return;
      render::CompositeChannel& c = channels_[size_t(i)].look;
      c.visible = shown->isChecked();
      c.colormap = map->currentText();
      c.low = float(low->value()), c.high = float(high->value());
      apply();
    };
    connect(shown, &QCheckBox::toggled, this, update);
    connect(map, &QComboBox::currentTextChanged, this, update);
    connect(low, &QDoubleSpinBox::valueChanged, this, update);
    connect(high, &QDoubleSpinBox::valueChanged, this, update);
    connect(remove, &QToolButton::clicked, this, [this, i] { removeChannel(i); });
  }
}

}  // namespace stacklens::ui
