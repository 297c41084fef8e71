// Edit ▸ Undo / Redo in the viewer: the display settings and the processing pipeline (with its
// PSF) followed by one SettingsHistory; tools with editable state (regions) follow theirs too.
#pragma once

#include "ui/state/settings_history.h"

namespace stacklens::ui {

class MainWindow;

// Makes the window's history (once; later calls return it), adds Undo (Ctrl+Z) and Redo
// (Ctrl+Shift+Z, Ctrl+Y) to the Edit menu, and starts it afresh when a new file opens.
SettingsHistory* installHistory(MainWindow* window);

class RegionsPanel;
// Region edits (import, add, delete, clear) become steps of the window's history.
void followRegions(SettingsHistory* history, RegionsPanel* regions);

}  // namespace stacklens::ui
