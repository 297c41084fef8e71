// FITS header cards as text (80-character records) parsed into HeaderCards, and the values of
// parsed cards (internal to io).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/stack.h"

namespace stacklens::io {

// Without leading and trailing blanks (FITS pads with blanks, never other white space).
std::string trimBlanks(const std::string& s);

// count cards of 80 characters; END is left out, values keep their quotes.
std::vector<HeaderCard> parseCards(const std::string& cards, int count);

// The first card named key, or nullptr.
const HeaderCard* findCard(const std::vector<HeaderCard>& header, const std::string& key);

// A quoted string value without its quotes ('' → ') and outer blanks; other values as they are.
std::string unquote(const std::string& value);

// A finite number (Fortran 'D' exponents allowed); false when absent or not a number.
bool cardNumber(const std::vector<HeaderCard>& header, const std::string& key, double& out);

// An integer card read exactly (BLANK of a 64-bit image does not survive a double); false when
// absent or not an integer (e.g. 1.5 or 1E3).
bool cardInteger(const std::vector<HeaderCard>& header, const std::string& key, int64_t& out);

}  // namespace stacklens::io
