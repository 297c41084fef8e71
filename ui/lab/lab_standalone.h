// `stacklens --lab [SWEEP.csv]`: the speedup lab in a window of its own, without the viewer, for a
// lecture (a saved sweep shown on a laptop without a GPU) and, with --grab, for documentation.
#pragma once

class QApplication;
class QString;

namespace stacklens::ui {

// Shows the lab, with the sweep saved at sweepPath when it is not empty, and runs the event loop.
// With grabPath, the window is saved there as PNG once drawn and the program ends. Returns the
// exit code: 0, or 3 when the sweep or the PNG cannot be read or written.
int runLabWindow(QApplication& app, const QString& sweepPath, const QString& grabPath);

}  // namespace stacklens::ui
