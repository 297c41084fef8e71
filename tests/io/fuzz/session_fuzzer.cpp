// libFuzzer target: viewer session files (JSON) through sessionFromJson and back through
// sessionToJson, as File ▸ Open session… reads them. A session that reads or a
// std::exception naming what is wrong are the only outcomes allowed.
#include <QJsonDocument>
#include <QJsonObject>
#include <cstdint>
#include <exception>

#include "ui/state/session.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const QJsonDocument doc = QJsonDocument::fromJson(
      QByteArray::fromRawData(reinterpret_cast<const char*>(data), static_cast<qsizetype>(size)));
  if (!doc.isObject()) return 0;
  try {
    const stacklens::ui::Session session =
        stacklens::ui::sessionFromJson(doc.object(), "/nonexistent-session-folder");
    QStringList warnings;
    stacklens::ui::sessionToJson(session, "/nonexistent-session-folder", &warnings);
  } catch (const std::exception&) {
  }
  return 0;
}
