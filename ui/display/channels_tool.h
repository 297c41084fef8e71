// View ▸ Channels: the dock that blends channels of the open stack (ui/display/channels_panel.h),
// made on first use beside the display dock; its channels' values join the window's readout.
#pragma once

namespace stacklens::ui {

class MainWindow;
class ChannelsPanel;

// The window's channels panel, made on first use, shown, raised and blending.
ChannelsPanel* showChannels(MainWindow* window);

}  // namespace stacklens::ui
