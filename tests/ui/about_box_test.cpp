// Help ▸ About StackLens says what --version prints: the version, the revision and every
// backend the build has or lacks.
#include "ui/frame/about_box.h"

#include <gtest/gtest.h>

#include <QString>

#include "version/build_info.h"

using namespace stacklens;

TEST(AboutBox, NamesTheVersionRevisionAndEachBackend) {
  const QString text = ui::aboutText();
  EXPECT_TRUE(text.contains(QString::fromStdString(build_info::version()))) << text.toStdString();
  EXPECT_TRUE(text.contains(QString::fromStdString(build_info::revision()))) << text.toStdString();
  for (const build_info::Component& c : build_info::components()) {
    EXPECT_TRUE(text.contains(QString::fromStdString(c.name) + ":")) << c.name;
    if (!c.version.empty()) {
      EXPECT_TRUE(text.contains(QString::fromStdString(c.version))) << c.name;
    }
  }
}
