// The compute library's messages (compute/log.h: a fall-back to the CPU, smaller pieces after
// running out of GPU memory) in the viewer: on the status bar, and on stderr for a terminal.
#pragma once

class QStatusBar;

namespace stacklens::ui {

// Installs the process's log sink; messages from any thread reach bar on the GUI thread (none
// once bar is gone).
void showLibraryMessages(QStatusBar* bar);

}  // namespace stacklens::ui
