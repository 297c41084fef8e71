// The bundled colormaps load from the resource with 256 entries and the expected end colours.
#include "render/colormap.h"

#include <gtest/gtest.h>

using namespace stacklens::render;

TEST(Colormap, AllBundledMapsLoad) {
  const QStringList names = colormapNames();
  EXPECT_EQ(names.size(), 20);
  for (const QString& name : names) {
    const Colormap map = loadColormap(name);
    EXPECT_EQ(map.name, name);
    for (uint32_t v : map.rgba) EXPECT_EQ(v >> 24, 0xffu) << name.toStdString();
  }
}

TEST(Colormap, EndColoursMatchTheirDefinitions) {
  const Colormap gray = loadColormap("gray");
  EXPECT_EQ(gray.at(0), QColor(0, 0, 0));
  EXPECT_EQ(gray.at(255), QColor(255, 255, 255));
  EXPECT_EQ(gray.at(100), QColor(100, 100, 100));
  EXPECT_EQ(loadColormap("viridis").at(0), QColor(68, 1, 84));  // matplotlib's _viridis_data[0]
  EXPECT_EQ(loadColormap("viridis").at(255), QColor(253, 231, 37));
  EXPECT_EQ(loadColormap("bb").at(255), QColor(255, 255, 255));   // DS9 bb: all channels reach 1
  EXPECT_EQ(loadColormap("rainbow").at(0), QColor(255, 0, 255));  // DS9 rainbow starts magenta
  EXPECT_EQ(loadColormap("heat").at(0), QColor(0, 0, 0));
  EXPECT_EQ(loadColormap("magenta").at(255), QColor(255, 0, 255));  // a composite's channel
  EXPECT_EQ(loadColormap("green").at(128), QColor(0, 128, 0));
}

TEST(Colormap, UnknownNameIsRefused) {
  EXPECT_THROW(loadColormap("jet"), std::invalid_argument);
  EXPECT_THROW(loadColormap("../gray"), std::invalid_argument);
}
