// Measures panning a plane like a mouse drag: frames per second, frame times, placeholder frames.
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QPointF>
#include <QTimer>
#include <vector>

namespace stacklens::ui {

class MainWindow;

// After the stack is open, sets the zoom (screen pixels per full-resolution pixel) with the view
// at the plane's left edge and mid height, waits until the view is drawn from the level that
// zoom asks for (settle_ms), then drags the view like the mouse: one press, then `frames` moves
// of stepPixels screen pixels to the left (the view travels right, over new tiles and chunks,
// never back), each waiting for its frame to be presented, then the release. A plane too narrow
// for that many steps gets fewer. Emits finished(json) with frames, zoom, level (the display
// level the zoom asks for), levels, pan_px_per_frame, distance_px (full-resolution pixels
// travelled), fps_median and fps_p5 (from the intervals between consecutive presented frames),
// frame_p50_ms/frame_p95_ms/frame_max_ms (from a move to its frame's swap), placeholder_frames
// (frames whose visible part was not all drawn from that level: a coarser level stood in),
// move_refined_p50_ms/_p95_ms/_max_ms (from each move to the first frame after it drawn wholly
// from that level, the release's wait included), moves_never_refined, tiles_read,
// tiles_cancelled (queued, then scrolled away unread) and tiles_read_stale (read after they
// scrolled away; ui/display/level_view.h),
// refine_after_pan_ms (from the release to the first frame drawn wholly from that level; −1: not
// within 30 s), gui_stall_max_ms (the GUI thread's longest gap between event-loop turns while
// panning), peak_rss_mb, dropped (moves whose frame did not come within 2 s), view_size and the
// GL renderer.
class PanBenchmark : public QObject {
  Q_OBJECT
 public:
  PanBenchmark(MainWindow* window, int frames, double zoom, int stepPixels,
               QObject* parent = nullptr);
  void start();  // call once the stack is open

 signals:
  // The frame of pan step `step` (0: the settled view before the first move) was presented.
  void stepPresented(int step);
  void finished(const QString& json);

 private:
  enum class Phase { Idle, Settling, Panning, Refining, Done };
  void frameArrived();
  void step();
  void release();
  void finish(const QString& error = {});
  // The moves since the last frame drawn wholly from the zoom's level are refined at now.
  void movesRefined(qint64 now);
  void sendMouse(int type, QPointF pos);

  MainWindow* window_;
  int frames_, stepPixels_;
  double zoom_;
  Phase phase_ = Phase::Idle;
  int done_ = 0, dropped_ = 0, placeholders_ = 0;
  QPointF mouse_;
  QElapsedTimer clock_;
  qint64 phaseStartNs_ = 0, stepStartNs_ = 0, lastFrameNs_ = -1, lastBeatNs_ = 0;
  double settleMs_ = -1, refineMs_ = -1, stallMaxMs_ = 0, distance_ = 0;
  std::vector<double> frameMs_, intervalMs_, moveRefinedMs_;
  std::vector<qint64> unrefinedMoveNs_;  // moves not yet shown wholly from the zoom's level
  QTimer heartbeat_, timeout_;
};

}  // namespace stacklens::ui
