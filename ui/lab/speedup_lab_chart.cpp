// The speedup lab's figure with Qt Charts (see speedup_lab_chart.h). Both axes are log10 of the
// data on value axes with category labels: Qt's log axis cannot label sizes as "2048²".
#include "ui/lab/speedup_lab_chart.h"

#include <QCategoryAxis>
#include <QChart>
#include <QChartView>
#include <QLabel>
#include <QLegendMarker>
#include <QLineSeries>
#include <QScatterSeries>
#include <QVBoxLayout>
#include <cmath>

#include "compute/lab/lab_ops.h"
#include "compute/lab/plot_data.h"

namespace stacklens::ui {
namespace {

namespace lab = compute::lab;

struct Style {
  double font;  // points
  double line;  // pixels
};

Style styleFor(bool presentation) { return presentation ? Style{16, 4} : Style{9, 2}; }

// The legend's words for a variant: short, so that five entries fit under the chart unelided.
QString legendName(const std::string& variant) {
  if (variant == "cpu-1-thread") return QObject::tr("CPU 1 thread");
  if (variant == "cpu-all-threads") return QObject::tr("CPU all threads");
  if (variant == "gpu-kernel") return QObject::tr("GPU kernel");
  if (variant == "gpu-with-transfers") return QObject::tr("GPU + transfers");
  return QString::fromStdString(variant);
}

// Every k-th tick so that at most `most` remain: Qt elides a category label taller or wider
// than its category, which a short chart with a tick per decade makes unreadable.
std::vector<double> thinned(const std::vector<double>& ticks, size_t most) {
  const size_t k = (ticks.size() + most - 1) / std::max<size_t>(most, 1);
  std::vector<double> out;
  for (size_t i = 0; i < ticks.size(); i += std::max<size_t>(k, 1)) out.push_back(ticks[i]);
  return out;
}

QColor colorOf(const std::string& variant) {
  return QColor(QString::fromStdString(lab::variantColor(variant)));
}

void hideFromLegend(QChart* chart, QAbstractSeries* s) {
  for (QLegendMarker* m : chart->legend()->markers(s)) m->setVisible(false);
}

QCategoryAxis* logAxis(double lo, double hi, const std::vector<double>& ticks,
                       const std::function<QString(double)>& label, const Style& st) {
  auto* axis = new QCategoryAxis;
  axis->setRange(std::log10(lo), std::log10(hi));
  axis->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
  for (double t : thinned(ticks, 5)) axis->append(label(t), std::log10(t));
  QFont f = axis->labelsFont();
  f.setPointSizeF(st.font);
  axis->setLabelsFont(f);
  QFont tf = axis->titleFont();
  tf.setPointSizeF(st.font);
  axis->setTitleFont(tf);
  return axis;
}

QCategoryAxis* sizeAxis(double lo, double hi, const Style& st) {
  std::vector<double> ticks;
  for (double e = 16; e * e <= hi; e *= 2)
    if (e * e >= lo) ticks.push_back(e * e);
  auto* axis = logAxis(
      lo, hi, ticks, [](double v) { return QString::fromStdString(lab::sizeLabel(v)); }, st);
  axis->setTitleText(QObject::tr("size (pixels as N²; volumes: as many voxels)"));
  return axis;
}

QChart* newChart(const QString& title, const Style& st) {
  auto* chart = new QChart;
  // The theme's drop shadow is a blur redrawn with every repaint: a pause of the window each time
  // a point arrives.
  chart->setDropShadowEnabled(false);
  chart->setTitle(title);
  QFont f = chart->titleFont();
  f.setPointSizeF(st.font * 1.3);
  f.setBold(true);
  chart->setTitleFont(f);
  QFont lf = chart->legend()->font();
  lf.setPointSizeF(st.font);
  chart->legend()->setFont(lf);
  chart->legend()->setAlignment(Qt::AlignBottom);
  return chart;
}

// Adds s to chart on axes x and y.
void attach(QChart* chart, QAbstractSeries* s, QAbstractAxis* x, QAbstractAxis* y) {
  chart->addSeries(s);
  s->attachAxis(x);
  s->attachAxis(y);
}

QLineSeries* line(const QString& name, const QColor& color, double width, Qt::PenStyle style) {
  auto* s = new QLineSeries;
  s->setName(name);
  QPen pen(color, width, style);
  pen.setCapStyle(Qt::FlatCap);
  s->setPen(pen);
  return s;
}

// The curves with their bars and markers; floors dashed when given.
void addCurves(QChart* chart, const std::vector<lab::Curve>& curves, QAbstractAxis* x,
               QAbstractAxis* y, const Style& st, bool floors) {
  for (const auto& c : curves) {
    const QColor color = colorOf(c.variant);
    if (floors) {
      auto* f = line({}, color, std::max(1.0, st.line * 0.5), Qt::DashLine);
      for (size_t i = 0; i < c.elements.size(); ++i)
        if (c.floor[i] > 0) f->append(std::log10(c.elements[i]), std::log10(c.floor[i]));
      attach(chart, f, x, y);
      hideFromLegend(chart, f);
    }
    for (size_t i = 0; i < c.elements.size(); ++i) {
      auto* bar = line({}, color, std::max(1.0, st.line * 0.5), Qt::SolidLine);
      bar->append(std::log10(c.elements[i]), std::log10(c.low[i]));
      bar->append(std::log10(c.elements[i]), std::log10(c.high[i]));
      attach(chart, bar, x, y);
      hideFromLegend(chart, bar);
    }
    auto* curve = line(legendName(c.variant), color, st.line, Qt::SolidLine);
    curve->setObjectName(QString::fromStdString(c.variant));
    auto* dots = new QScatterSeries;
    dots->setColor(color);
    dots->setBorderColor(color);
    dots->setMarkerSize(st.line * 3.5);
    for (size_t i = 0; i < c.elements.size(); ++i) {
      curve->append(std::log10(c.elements[i]), std::log10(c.median[i]));
      dots->append(std::log10(c.elements[i]), std::log10(c.median[i]));
    }
    attach(chart, curve, x, y);
    attach(chart, dots, x, y);
    hideFromLegend(chart, dots);
  }
}

void replaceChart(QChartView* view, QChart* chart) {
  QChart* old = view->chart();
  view->setChart(chart);
  delete old;
}

QString explanationText(const lab::Sweep& sweep, const lab::PanelData& d) {
  QString text = QString::fromStdString(lab::explainOp(d.op));
  if (sweep.machine.gpu.empty()) {
    text += QObject::tr(
        " No GPU on this machine: CPU curves only (Open sweep… shows one "
        "measured on a GPU machine).");
    return text;
  }
  if (d.breakEven)
    text += d.breakEven->atSmallest
                ? QObject::tr(" The GPU wins, transfers included, from the smallest size.")
                : QObject::tr(" Break-even, transfers included: %1.")
                      .arg(QString::fromStdString(lab::sizeLabel(d.breakEven->elements)));
  else
    text += QObject::tr(" With transfers the GPU does not beat the CPU in this range.");
  const double share = lab::transferShare(sweep, d.op);
  if (share >= 0)
    text += QObject::tr(" Transfers take %1 % of the GPU's host-to-host time at the largest size.")
                .arg(std::lround(share * 100));
  double diff = -1;
  for (const auto& p : sweep.points)
    if (p.op == d.op && std::isfinite(p.maxRelDiff)) diff = std::max(diff, p.maxRelDiff);
  if (diff >= 0)
    text +=
        QObject::tr(" CPU and GPU results differ by at most %1 (relative).").arg(diff, 0, 'g', 2);
  return text;
}

}  // namespace

SpeedupLabChart::SpeedupLabChart(QWidget* parent) : QWidget(parent) {
  timeView_ = new QChartView(newChart({}, styleFor(false)), this);
  speedupView_ = new QChartView(newChart({}, styleFor(false)), this);
  for (QChartView* v : {timeView_, speedupView_}) v->setRenderHint(QPainter::Antialiasing);
  explanation_ = new QLabel(this);
  explanation_->setWordWrap(true);
  explanation_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(timeView_, 3);
  layout->addWidget(speedupView_, 2);
  layout->addWidget(explanation_);
}

void SpeedupLabChart::clear() {
  const Style st = styleFor(presentation_);
  replaceChart(timeView_, newChart({}, st));
  replaceChart(speedupView_, newChart({}, st));
  explanation_->clear();
}

void SpeedupLabChart::showOp(const lab::Sweep& sweep, const QString& opName) {
  const Style st = styleFor(presentation_);
  const lab::PanelData d = lab::panelData(sweep, opName.toStdString());
  if (d.curves.empty()) {
    clear();
    return;
  }
  auto* chart = newChart(tr("%1: time against size (dashed: bandwidth floor)").arg(opName), st);
  auto* x = sizeAxis(d.xMin, d.xMax, st);
  auto* y = logAxis(
      d.yMin, d.yMax, lab::decadeTicks(d.yMin, d.yMax),
      [](double v) { return QString::fromStdString(lab::secondsLabel(v)); }, st);
  y->setTitleText(tr("time (median)"));
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  addCurves(chart, d.curves, x, y, st, true);
  if (d.breakEven) {
    auto* be = line(
        tr("break-even ≈ %1").arg(QString::fromStdString(lab::sizeLabel(d.breakEven->elements))),
        Qt::black, st.line * 0.75, Qt::DotLine);
    be->append(std::log10(d.breakEven->elements), std::log10(d.yMin));
    be->append(std::log10(d.breakEven->elements), std::log10(d.yMax));
    attach(chart, be, x, y);
  }
  replaceChart(timeView_, chart);

  const std::vector<lab::Curve> speedups = lab::speedupCurves(d);
  auto* sChart = newChart(tr("%1: speedup over the CPU with all threads").arg(opName), st);
  double lo = 1, hi = 1;
  for (const auto& c : speedups)
    for (size_t i = 0; i < c.elements.size(); ++i)
      lo = std::min(lo, c.low[i]), hi = std::max(hi, c.high[i]);
  lo = std::pow(10.0, std::floor(std::log10(lo)));
  hi = std::pow(10.0, std::ceil(std::log10(hi)));
  if (hi <= lo) hi = lo * 10;
  auto* sx = sizeAxis(d.xMin, d.xMax, st);
  auto* sy = logAxis(
      lo, hi, lab::decadeTicks(lo, hi),
      [](double v) {
        // ×0.1, ×1, ×10, ×1000: never 1e+03 on a projector.
        return QStringLiteral("×%1").arg(v >= 1 ? QString::number(v, 'f', 0)
                                                : QString::number(v, 'g', 3));
      },
      st);
  sChart->addAxis(sx, Qt::AlignBottom);
  sChart->addAxis(sy, Qt::AlignLeft);
  addCurves(sChart, speedups, sx, sy, st, false);
  auto* one = line(tr("×1: as fast as the CPU"), Qt::black, st.line * 0.5, Qt::DashLine);
  one->append(std::log10(d.xMin), 0);
  one->append(std::log10(d.xMax), 0);
  attach(sChart, one, sx, sy);
  replaceChart(speedupView_, sChart);

  QFont f = explanation_->font();
  f.setPointSizeF(st.font);
  explanation_->setFont(f);
  explanation_->setText(explanationText(sweep, d));
}

void SpeedupLabChart::setPresentation(bool on) { presentation_ = on; }

QLineSeries* SpeedupLabChart::timeCurve(const QString& variant) const {
  for (QAbstractSeries* s : timeView_->chart()->series())
    if (s->objectName() == variant) return qobject_cast<QLineSeries*>(s);
  return nullptr;
}

QPointF SpeedupLabChart::timePosition(double elements, double seconds) const {
  const auto series = timeView_->chart()->series();
  if (series.isEmpty()) return {};
  const QPointF scene = timeView_->chart()->mapToPosition(
      QPointF(std::log10(elements), std::log10(seconds)), series.front());
  return timeView_->mapTo(this, timeView_->mapFromScene(scene));
}

double SpeedupLabChart::titlePointSize() const {
  return timeView_->chart()->titleFont().pointSizeF();
}

double SpeedupLabChart::curveWidth() const {
  for (QAbstractSeries* s : timeView_->chart()->series())
    if (auto* l = qobject_cast<QLineSeries*>(s); l && !l->objectName().isEmpty())
      return l->pen().widthF();
  return 0;
}

}  // namespace stacklens::ui
