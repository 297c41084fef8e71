// The check the compute tests make of a refusal: InvalidArgument, with a message that names what
// was wrong.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "compute/params.h"

namespace stacklens::testing {

// Expects call() to throw compute::InvalidArgument whose message contains `word`.
template <class Call>
void expectInvalidNaming(Call&& call, const std::string& word) {
  try {
    call();
    ADD_FAILURE() << "accepted; expected an error naming \"" << word << "\"";
  } catch (const compute::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << e.what();
  }
}

}  // namespace stacklens::testing
