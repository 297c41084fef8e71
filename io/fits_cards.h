// FITS header cards as text (80-character records) parsed into HeaderCards (internal to io).
#pragma once

#include <string>
#include <vector>

#include "io/stack.h"

namespace stacklens::io {

// count cards of 80 characters; END is left out, values keep their quotes.
std::vector<HeaderCard> parseCards(const std::string& cards, int count);

}  // namespace stacklens::io
