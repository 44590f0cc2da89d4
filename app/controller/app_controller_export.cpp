// AppController: export a conversation (or all) to Markdown or JSON, and import a JSON export,
// through store/export (the same code as `ember-cli export`), reading the database file
// directly (WAL lets it read beside the store's own connection).
#include <QFile>
#include <QUrl>

#include "controller/app_controller.h"
#include "logging/app_log.h"
#include "store/export/chat_export.h"

namespace ember::app {

QString AppController::exportConversations(qint64 conversationId, const QUrl& file,
                                           const QString& format) {
  const QString path = file.isLocalFile() ? file.toLocalFile() : file.toString();
  try {
    // On the store thread, after the writes queued before it (an answer that just ended).
    const chatexport::Json doc = store_.call([&](store::ChatStore& s) {
      return chatexport::exportJson(
          s.path().toStdString(),
          conversationId > 0 ? std::optional<int64_t>(conversationId) : std::nullopt);
    });
    const std::string text =
        format == QLatin1String("json") ? doc.dump(2) + "\n" : chatexport::toMarkdown(doc);
    QFile out(path);
    if (!out.open(QIODevice::WriteOnly | QIODevice::Truncate) ||
        out.write(text.data(), qint64(text.size())) != qint64(text.size()))
      return tr("Could not write %1: %2").arg(path, out.errorString());
  } catch (const std::exception& e) {
    return QString::fromUtf8(e.what());
  }
  log::info(QStringLiteral("exported %1 to %2").arg(conversationId).arg(path));
  setNotice(tr("Saved to %1").arg(path));
  return {};
}

QString AppController::importConversations(const QUrl& file) {
  const QString path = file.isLocalFile() ? file.toLocalFile() : file.toString();
  QFile in(path);
  if (!in.open(QIODevice::ReadOnly)) return tr("Could not read %1: %2").arg(path, in.errorString());
  const QByteArray bytes = in.readAll();
  const chatexport::Json doc =
      chatexport::Json::parse(bytes.constData(), bytes.constData() + bytes.size(), nullptr, false);
  if (doc.is_discarded()) return tr("%1 is not a JSON file.").arg(path);
  chatexport::ImportResult result;
  try {
    const store::OpenReport report = store_.openReport();
    if (report.readOnly)
      return tr("The conversations were not imported: %1").arg(report.readOnlyReason);
    // On the store thread, in order with its other writes (over a connection of its own).
    result = store_.call([&](store::ChatStore& s) {
      return chatexport::importJson(s.path().toStdString(), doc,
                                    chatexport::WriterRole::CallerIsWriter);
    });
  } catch (const std::exception& e) {
    return QString::fromUtf8(e.what());
  }
  reloadConversations();
  if (!result.newConversationIds.empty()) openConversation(result.newConversationIds.front());
  setNotice(tr("Imported %n conversation(s).", "", result.conversations));
  return {};
}

}  // namespace ember::app
