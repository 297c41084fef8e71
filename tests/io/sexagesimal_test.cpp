// io::parseSexagesimal, the one grammar of the catalog and DS9 region readers: every form either
// of their former parsers took (the catalog's cells and DS9's coordinates), with the values by
// hand, and what is not an angle.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "io/sexagesimal.h"

namespace {

using stacklens::io::parseSexagesimal;
using stacklens::io::SexagesimalAngle;

struct Form {
  const char* text;
  double value;
  bool hours;
};

void expectAngle(const Form& f) {
  const std::optional<SexagesimalAngle> a = parseSexagesimal(f.text);
  ASSERT_TRUE(a.has_value()) << f.text;
  // Tolerance: the sums below are written in decimal; the parser divides by 60 and 3600.
  EXPECT_NEAR(a->value, f.value, 1e-12) << f.text;
  EXPECT_EQ(a->hours, f.hours) << f.text;
}

const double k12_34_56_7 = 12.0 + 34.0 / 60.0 + 56.7 / 3600.0;

TEST(Sexagesimal, TakesTheColonFormsOfBothReaders) {
  for (const Form& f :
       {Form{"12:34:56.7", k12_34_56_7, false}, Form{"-12:34:56.7", -k12_34_56_7, false},
        Form{"+12:34:56.7", k12_34_56_7, false}, Form{"-00:30:00", -0.5, false},
        Form{"12:30", 12.5, false}, Form{"  12:34:56.7\t", k12_34_56_7, false},
        Form{"12:+30", 12.5, false}})
    expectAngle(f);
}

TEST(Sexagesimal, TakesTheCatalogsSpaceAndSymbolForms) {
  for (const Form& f :
       {Form{"12 34 56.7", k12_34_56_7, false}, Form{"12 30", 12.5, false},
        Form{"\xe2\x88\x92"
             "12 34 56.7",
             -k12_34_56_7, false},  // U+2212
        Form{"12\xc2\xb0"
             "34\xe2\x80\xb2"
             "56.7\xe2\x80\xb3",
             k12_34_56_7, false},
        Form{"12: 34", 12 + 34.0 / 60.0, false}, Form{"12h 34m 56.7s", k12_34_56_7, true}})
    expectAngle(f);
}

TEST(Sexagesimal, TakesTheLetterForms) {
  for (const Form& f :
       {Form{"12h34m56.7s", k12_34_56_7, true}, Form{"12H34m56.7s", k12_34_56_7, true},
        Form{"12h34m56.7", k12_34_56_7, true}, Form{"12h30m", 12.5, true},
        Form{"-12d34m56.7s", -k12_34_56_7, false}, Form{"12D34m56.7s", k12_34_56_7, false},
        Form{"12d34'56.7\"", k12_34_56_7, false}, Form{"12d30'", 12.5, false},
        Form{"12h30", 12.5, true},  // the catalog's grammar: markers are separators
        Form{"12d30", 12.5, false}})
    expectAngle(f);
}

TEST(Sexagesimal, TakesHoursAloneAsDs9Did) {
  for (const Form& f : {Form{"12.5h", 12.5, true}, Form{"12H", 12.0, true},
                        Form{"-1.5h", -1.5, true}, Form{"+0h", 0.0, true}})
    expectAngle(f);
}

TEST(Sexagesimal, RefusesWhatIsNotAnAngle) {
  for (const char* text :
       {"",       "   ",          "12",  "12.5",    "12.5d",   "-3",          "1.5r", "12d",
        "h12",    "12hs",         "30'", "12m",     "1:2:3:4", "12:",         ":12",  "12:-34",
        "12:abc", "12h34m56.7sX", "abc", "1 2 3 4", "-",       "\xe2\x88\x92"})
    EXPECT_FALSE(parseSexagesimal(text).has_value()) << "'" << text << "'";
}

}  // namespace
