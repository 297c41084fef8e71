// main() for the QTest programs that draw with OpenGL: a 3.3 core default format (as the viewer
// asks for) set before the QApplication exists, then the test object's slots.
#pragma once

#include <QApplication>
#include <QSurfaceFormat>
#include <QtTest>

#define STACKLENS_GL_QTEST_MAIN(TestClass)          \
  int main(int argc, char** argv) {                 \
    QSurfaceFormat format;                          \
    format.setVersion(3, 3);                        \
    format.setProfile(QSurfaceFormat::CoreProfile); \
    QSurfaceFormat::setDefaultFormat(format);       \
    QApplication app(argc, argv);                   \
    TestClass test;                                 \
    return QTest::qExec(&test, argc, argv);         \
  }
