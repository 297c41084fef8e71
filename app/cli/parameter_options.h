// The compute library's parameter rules (compute/params.h) as the CLI's usage errors: commands
// parse their options and forward them; the library checks them and the command names its option.
#pragma once

#include <functional>
#include <map>
#include <string>

namespace stacklens::cli {

// The option (without "--") that set each parameter, by the parameter's name as
// compute::InvalidParameter::parameter() gives it ("size", "sigmaY", "clip.kappaLower").
using OptionOfParameter = std::map<std::string, std::string>;

// Runs check (e.g. `compute::validate(params)`); the library's InvalidParameter becomes a
// UsageError that starts with the option ("--size: median size must be odd, ..., got 4"), any
// other InvalidArgument a UsageError with the library's words.
void checkParameters(const std::function<void()>& check, const OptionOfParameter& options);

}  // namespace stacklens::cli
