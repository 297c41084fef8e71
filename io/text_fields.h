// Small text helpers of the text formats io reads (DS9 regions, CSV/IPAC/VOTable catalogs).
#pragma once

#include <string>
#include <string_view>

namespace stacklens::io {

std::string lowerCase(std::string s);     // ASCII letters only
std::string trimmed(std::string_view s);  // without leading and trailing white space
// A whole token as a number (a leading '+' allowed), whatever the C locale: Qt sets it from the
// environment, and strtod would then want a decimal comma in some.
bool parseNumber(std::string_view s, double& v);

}  // namespace stacklens::io
