// The sweep's SVG figure (see svg_plot.h).
#include "compute/lab/svg_plot.h"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace stacklens::compute::lab {
namespace {

constexpr double kHeader = 70;  // the machine line and the legend above the panels
constexpr double kMarginLeft = 78, kMarginRight = 16, kMarginTop = 44, kMarginBottom = 64;

std::string escaped(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else if (c == '"')
      out += "&quot;";
    else
      out += c;
  }
  return out;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

double logPos(double v, double lo, double hi) {
  return (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
}

void text(std::ostream& o, double x, double y, const std::string& s, double size,
          const char* anchor = "start", const char* extra = "") {
  o << "<text x=\"" << num(x) << "\" y=\"" << num(y) << "\" font-size=\"" << num(size)
    << "\" text-anchor=\"" << anchor << "\" " << extra << ">" << escaped(s) << "</text>\n";
}

void polyline(std::ostream& o, const std::string& id, const PanelFrame& f,
              const std::vector<double>& x, const std::vector<double>& y, const std::string& color,
              double width, const char* dash) {
  o << "<polyline id=\"" << escaped(id) << "\" fill=\"none\" stroke=\"" << color
    << "\" stroke-width=\"" << num(width) << "\"" << dash << " points=\"";
  for (size_t i = 0; i < x.size(); ++i)
    o << (i ? " " : "") << num(f.px(x[i])) << "," << num(f.py(y[i]));
  o << "\"/>\n";
}

void drawPanel(std::ostream& o, const PanelData& d, const PanelFrame& f, const SvgStyle& st) {
  const double fs = st.fontSize;
  o << "<rect x=\"" << num(f.left) << "\" y=\"" << num(f.top) << "\" width=\"" << num(f.width)
    << "\" height=\"" << num(f.height) << "\" fill=\"none\" stroke=\"#444\"/>\n";
  std::string title = d.op;
  if (const double s = speedupAtLargest(d, "gpu-with-transfers"); s > 0) {
    char buf[96];
    std::snprintf(buf, sizeof buf, " — at the largest size the GPU is ×%.3g (kernel ×%.3g)", s,
                  speedupAtLargest(d, "gpu-kernel"));
    title += buf;
  }
  text(o, f.left, f.top - 0.8 * fs, title, fs * 1.15, "start", "font-weight=\"bold\"");
  for (double t : decadeTicks(f.yMin, f.yMax)) {
    const double y = f.py(t);
    o << "<line x1=\"" << num(f.left) << "\" x2=\"" << num(f.left + f.width) << "\" y1=\"" << num(y)
      << "\" y2=\"" << num(y) << "\" stroke=\"#ddd\"/>\n";
    text(o, f.left - 6, y + fs * 0.35, secondsLabel(t), fs * 0.9, "end");
  }
  // x ticks at squares of powers of two: the sizes a sweep usually takes.
  for (double e = 16; e * e <= f.xMax; e *= 2) {
    if (e * e < f.xMin) continue;
    const double x = f.px(e * e);
    o << "<line x1=\"" << num(x) << "\" x2=\"" << num(x) << "\" y1=\"" << num(f.top) << "\" y2=\""
      << num(f.top + f.height) << "\" stroke=\"#eee\"/>\n";
    text(o, x, f.top + f.height + fs * 1.3, sizeLabel(e * e), fs * 0.9, "middle");
  }
  text(o, f.left + f.width / 2, f.top + f.height + fs * 2.8,
       "size (pixels, as N²; volumes: as many voxels)", fs * 0.9, "middle");
  text(o, f.left - kMarginLeft + fs, f.top + f.height / 2, "time (median)", fs * 0.9, "middle",
       ("transform=\"rotate(-90 " + num(f.left - kMarginLeft + fs) + " " +
        num(f.top + f.height / 2) + ")\"")
           .c_str());
  for (const auto& c : d.curves) {
    const std::string color = variantColor(c.variant);
    polyline(o, "floor-" + d.op + "-" + c.variant, f, c.elements, c.floor, color,
             st.lineWidth * 0.6, " stroke-dasharray=\"6,4\" opacity=\"0.7\"");
    polyline(o, "curve-" + d.op + "-" + c.variant, f, c.elements, c.median, color, st.lineWidth,
             "");
    for (size_t i = 0; i < c.elements.size(); ++i) {
      const double x = f.px(c.elements[i]);
      o << "<line x1=\"" << num(x) << "\" x2=\"" << num(x) << "\" y1=\"" << num(f.py(c.low[i]))
        << "\" y2=\"" << num(f.py(c.high[i])) << "\" stroke=\"" << color << "\" stroke-width=\""
        << num(st.lineWidth * 0.6) << "\"/>\n";
      o << "<circle cx=\"" << num(x) << "\" cy=\"" << num(f.py(c.median[i])) << "\" r=\""
        << num(st.lineWidth * 1.6) << "\" fill=\"" << color << "\"/>\n";
    }
  }
  if (d.breakEven) {
    const double x = f.px(d.breakEven->elements);
    o << "<line id=\"breakeven-" << escaped(d.op) << "\" x1=\"" << num(x) << "\" x2=\"" << num(x)
      << "\" y1=\"" << num(f.top) << "\" y2=\"" << num(f.top + f.height)
      << "\" stroke=\"#000\" stroke-width=\"" << num(st.lineWidth * 0.75)
      << "\" stroke-dasharray=\"2,3\"/>\n";
    text(o, x + 4, f.top + fs * 1.2,
         (d.breakEven->atSmallest ? "GPU wins from ≤ " : "break-even ≈ ") +
             sizeLabel(d.breakEven->elements),
         fs * 0.95);
  }
}

}  // namespace

double PanelFrame::px(double elements) const { return left + width * logPos(elements, xMin, xMax); }

double PanelFrame::py(double seconds) const {
  return top + height * (1 - logPos(seconds, yMin, yMax));
}

PanelFrame panelFrame(const PanelData& d, int index, const SvgStyle& st) {
  const int cols = std::max(1, st.columns);
  PanelFrame f;
  const double scale = st.fontSize / 13.0;  // bigger fonts need bigger margins
  f.left = (index % cols) * st.panelWidth + kMarginLeft * scale;
  f.top = kHeader * scale + (index / cols) * st.panelHeight + kMarginTop * scale;
  f.width = st.panelWidth - (kMarginLeft + kMarginRight) * scale;
  f.height = st.panelHeight - (kMarginTop + kMarginBottom) * scale;
  f.xMin = d.xMin, f.xMax = d.xMax, f.yMin = d.yMin, f.yMax = d.yMax;
  return f;
}

std::string sweepSvg(const Sweep& sweep, const SvgStyle& st) {
  const std::vector<std::string> ops = opsOf(sweep.points);
  const int cols = std::max(1, std::min<int>(st.columns, int(std::max<size_t>(ops.size(), 1))));
  SvgStyle style = st;
  style.columns = cols;
  const int rows = int((ops.size() + cols - 1) / cols);
  const double scale = st.fontSize / 13.0;
  const double width = cols * st.panelWidth, height = kHeader * scale + rows * st.panelHeight;
  std::ostringstream o;
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << num(width) << "\" height=\""
    << num(height) << "\" viewBox=\"0 0 " << num(width) << " " << num(height)
    << "\" font-family=\"sans-serif\">\n"
    << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  const double fs = st.fontSize;
  std::string machine =
      "CPU: " + sweep.machine.cpu + " (" + std::to_string(sweep.machine.cpuThreads) +
      " threads)   GPU: " + (sweep.machine.gpu.empty() ? "none" : sweep.machine.gpu);
  text(o, 10, fs * 1.4, machine, fs);
  if (!sweep.machine.note.empty()) text(o, 10, fs * 2.8, sweep.machine.note, fs * 0.9);
  double x = 10;
  for (const char* v : {"cpu-1-thread", "cpu-all-threads", "gpu-kernel", "gpu-with-transfers"}) {
    const double y = fs * 4.2;
    o << "<line x1=\"" << num(x) << "\" x2=\"" << num(x + 24) << "\" y1=\"" << num(y - fs * 0.35)
      << "\" y2=\"" << num(y - fs * 0.35) << "\" stroke=\"" << variantColor(v)
      << "\" stroke-width=\"" << num(st.lineWidth) << "\"/>\n";
    text(o, x + 30, y, v, fs);
    x += 30 + fs * 0.6 * double(std::string(v).size()) + 24;
  }
  text(o, x, fs * 4.2, "dashed: bandwidth floor   bars: min–max", fs);
  for (size_t i = 0; i < ops.size(); ++i) {
    const PanelData d = panelData(sweep, ops[i]);
    drawPanel(o, d, panelFrame(d, int(i), style), style);
  }
  o << "</svg>\n";
  return o.str();
}

}  // namespace stacklens::compute::lab
