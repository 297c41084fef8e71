// Tools ▸ Speedup lab…: opens the lab's window (one per viewer window), fed with the shown slice.
#pragma once

namespace stacklens::ui {

class MainWindow;

void installSpeedupLab(MainWindow* window);

}  // namespace stacklens::ui
