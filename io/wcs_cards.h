// Header text made safe for wcslib's parser (internal to io, io/wcs.cpp).
#pragma once

#include <string>

namespace stacklens::io {

// The first count 80-character cards with bytes outside printable ASCII turned into spaces,
// cards with an unterminated string and WCS cards naming an axis beyond 9 blanked: wcspih
// overflows buffers on the former and sizes arrays by the latter.
std::string wellFormedWcsCards(const std::string& cards, int count);

// DPja, DQia, CPDISja, CQDISia (ja: axis number and an optional alternate letter), 8 characters
// padded or trimmed.
bool isDistortionKey(const std::string& key);

}  // namespace stacklens::io
