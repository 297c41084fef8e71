// Tools ▸ Speedup lab…: opens the lab's window (one per viewer window), fed with the shown slice;
// Tools ▸ Presentation mode: large text and lines in the timing panel and the lab.
#pragma once

namespace stacklens::ui {

class MainWindow;

void installSpeedupLab(MainWindow* window);

}  // namespace stacklens::ui
