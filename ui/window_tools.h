// The tools that add themselves to the main window (menus, docks, overlays): history, Copy as
// command, PSF measurement and generator, regions, catalogs, sessions, the
// speedup lab, the library's messages and the About box.
#pragma once

namespace stacklens::ui {

class MainWindow;

// Once, after the window's docks, menus and live processing exist.
void installWindowTools(MainWindow* window);

}  // namespace stacklens::ui
