// AppController: export a conversation (or all) to Markdown or JSON, and import a JSON export,
// through store/export (the same code as `ember-cli export`), reading the database file
// directly (WAL lets it read beside the store's own connection).
//
// Both run on the store thread, after every write queued before them (an answer that just
// ended is in the export; an import lands in order with the app's own writes), and the GUI
// thread never waits for them: `exporting` / `importing` say one is running, exportFinished /
// importFinished bring the outcome. One runs at a time; a second is refused with the reason.
// A quit while one runs finishes it: the store's destructor runs its queue. The export file is
// written through QSaveFile (a temporary file renamed at the end), so a killed process leaves
// the old file or none, never half of one; the import is one transaction (all or nothing).
#include <QFile>
#include <QSaveFile>
#include <QUrl>

#include "controller/app_controller.h"
#include "logging/app_log.h"
#include "store/export/chat_export.h"

namespace ember::app {

namespace {
QString localPath(const QUrl& file) {
  return file.isLocalFile() ? file.toLocalFile() : file.toString();
}
}  // namespace

QString AppController::transferText() const {
  switch (transfer_.kind) {
    case Transfer::Export: return tr("Exporting to %1…").arg(transfer_.path);
    case Transfer::Import: return tr("Importing %1…").arg(transfer_.path);
    case Transfer::None: break;
  }
  return {};
}

QString AppController::refuseSecondTransfer() const {
  if (transfer_.kind == Transfer::None) return {};
  return tr("%1 Try again when it has finished.").arg(transferText());
}

void AppController::setTransfer(Transfer::Kind kind, const QString& path) {
  transfer_ = {kind, path};
  emit transferChanged();
}

QString AppController::exportConversations(qint64 conversationId, const QUrl& file,
                                           const QString& format) {
  if (const QString refused = refuseSecondTransfer(); !refused.isEmpty()) return refused;
  const QString path = localPath(file);
  const bool json = format == QLatin1String("json");
  setTransfer(Transfer::Export, path);
  store_.read([this, conversationId, path, json](store::ChatStore& s) {
    QString error;
    try {
      const chatexport::Json doc = chatexport::exportJson(
          s.path().toStdString(),
          conversationId > 0 ? std::optional<int64_t>(conversationId) : std::nullopt);
      const std::string text = json ? doc.dump(2) + "\n" : chatexport::toMarkdown(doc);
      QSaveFile out(path);
      if (!out.open(QIODevice::WriteOnly) ||
          out.write(text.data(), qint64(text.size())) != qint64(text.size()) || !out.commit())
        error = tr("Could not write %1: %2").arg(path, out.errorString());
    } catch (const std::exception& e) {
      error = QString::fromUtf8(e.what());
    }
    QMetaObject::invokeMethod(
        this, [this, conversationId, path, error] {
          setTransfer(Transfer::None, {});
          if (error.isEmpty()) {
            log::info(QStringLiteral("exported %1 to %2").arg(conversationId).arg(path));
            setNotice(tr("Saved to %1").arg(path));
          } else {
            log::error(QStringLiteral("export to %1: %2").arg(path, error));
          }
          emit exportFinished(path, error);
        },
        Qt::QueuedConnection);
  });
  return {};
}

QString AppController::importConversations(const QUrl& file) {
  if (const QString refused = refuseSecondTransfer(); !refused.isEmpty()) return refused;
  const QString path = localPath(file);
  setTransfer(Transfer::Import, path);
  store_.read([this, path](store::ChatStore& s) {
    QString error;
    chatexport::ImportResult result;
    try {
      QFile in(path);
      if (!in.open(QIODevice::ReadOnly))
        throw std::runtime_error(tr("Could not read %1: %2").arg(path, in.errorString()).toStdString());
      const QByteArray bytes = in.readAll();
      const chatexport::Json doc = chatexport::Json::parse(
          bytes.constData(), bytes.constData() + bytes.size(), nullptr, false);
      if (doc.is_discarded())
        throw std::runtime_error(tr("%1 is not a JSON file.").arg(path).toStdString());
      const store::OpenReport report = s.openReport();
      if (report.readOnly)
        throw std::runtime_error(
            tr("The conversations were not imported: %1").arg(report.readOnlyReason).toStdString());
      // Ids the GUI handed out for writes queued behind this one are not in the file yet:
      // SQLite would pick them for the imported rows. The import takes a block of its own.
      const auto [conversations, messages] = chatexport::importCounts(doc);
      chatexport::FirstIds first;
      if (conversations > 0) first.conversation = store_.reserveConversationIds(conversations);
      if (messages > 0) first.message = store_.reserveMessageIds(messages);
      result = chatexport::importJson(s.path().toStdString(), doc,
                                      chatexport::WriterRole::CallerIsWriter, first);
    } catch (const std::exception& e) {
      error = QString::fromUtf8(e.what());
    }
    QMetaObject::invokeMethod(
        this, [this, path, error, result] {
          setTransfer(Transfer::None, {});
          if (!error.isEmpty()) {
            log::error(QStringLiteral("import of %1: %2").arg(path, error));
            emit importFinished(0, error);
            return;
          }
          log::info(QStringLiteral("imported %1 conversation(s) from %2")
                        .arg(result.conversations).arg(path));
          reloadConversations();
          if (!result.newConversationIds.empty())
            openConversation(result.newConversationIds.front());
          setNotice(tr("Imported %n conversation(s).", "", result.conversations));
          emit importFinished(result.conversations, {});
        },
        Qt::QueuedConnection);
  });
  return {};
}

}  // namespace ember::app
