// SoakSampler's per-minute figures (ui/bench/soak_sampler.h), on a clock the test moves.
#include <gtest/gtest.h>

#include <QJsonArray>
#include <QJsonObject>

#include "ui/bench/soak_sampler.h"

namespace stacklens::ui {
namespace {

TEST(SoakSampler, ClosesAMinuteAtATimeAndComparesLaterMinutesWithTheFirst) {
  double now = 0;  // minutes
  SoakSampler soak(3, -1, [&] { return now; });
  ASSERT_TRUE(soak.enabled());
  EXPECT_FALSE(soak.over());  // not started
  soak.start();
  // Minute 1: steps of 1 to 100 and a short one that closes it (its p99 is 99). Minutes 2 and 3:
  // a hundred steps of 50 and the one that closes each; one step in each is slower than the first
  // minute's p99.
  int closed = 0;
  for (int i = 1; i <= 100; ++i) {
    now = 0.0099 * i;
    closed += soak.add(i);
  }
  EXPECT_EQ(closed, 0);
  now = 1.0;
  EXPECT_TRUE(soak.add(1));  // the step that crosses the minute closes it
  for (int minute = 1; minute < 3; ++minute) {
    for (int i = 0; i < 100; ++i) {
      now = minute + 0.005 * (i + 1);
      EXPECT_FALSE(soak.add(i == 50 ? 150.0 : 50.0));
    }
    now = minute + 1.0;
    EXPECT_TRUE(soak.add(50));
  }
  EXPECT_TRUE(soak.over());
  const QJsonObject r = soak.report();
  const QJsonArray minutes = r["per_minute"].toArray();
  ASSERT_EQ(minutes.size(), 3);
  const QJsonObject first = minutes[0].toObject();
  EXPECT_EQ(first["steps"].toInt(), 101);
  EXPECT_NEAR(first["p50_ms"].toDouble(), 50, 1e-9);
  EXPECT_NEAR(first["max_ms"].toDouble(), 100, 1e-9);
  EXPECT_FALSE(first.contains("device_mb"));  // no device watched
  EXPECT_GT(first["rss_mb"].toDouble(), 0);
  EXPECT_NEAR(r["first_minute_p99_ms"].toDouble(), 99.0, 0.01);
  EXPECT_NEAR(r["later_max_ms"].toDouble(), 150, 1e-9);
  // Later steps: 101 in each later minute (100 and the one that closes it), two of them over the
  // first minute's p99.
  EXPECT_EQ(r["later_steps"].toDouble(), 202);
  EXPECT_EQ(r["later_steps_over_first_p99"].toDouble(), 2);
  EXPECT_TRUE(r.contains("rss_growth_percent"));
}

TEST(SoakSampler, OffWhenNoMinutesAreGiven) {
  SoakSampler soak(0, -1);
  EXPECT_FALSE(soak.enabled());
  soak.start();
  EXPECT_FALSE(soak.add(5));
  EXPECT_FALSE(soak.over());
}

}  // namespace
}  // namespace stacklens::ui
