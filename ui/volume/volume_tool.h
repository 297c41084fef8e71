// View ▸ 3D view: the dock with the volume of the open stack (ui/volume/volume_panel.h), made on
// first use as a floating dock, following the window's stack, display, pipeline and backend.
#pragma once

namespace stacklens::ui {

class MainWindow;
class VolumePanel;

// The window's 3D view, made on first use, shown and raised.
VolumePanel* showVolumeView(MainWindow* window);

}  // namespace stacklens::ui
