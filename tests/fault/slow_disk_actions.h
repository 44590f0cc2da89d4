#pragma once
// The user's actions of test_controller_slow_disk, each started through the AppController as the
// window starts it, with the condition under which the UI shows its result; and what the
// synchronous export writes, the reference for an export.
#include <QFile>
#include <QSignalSpy>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>
#include <QUrl>
#include <functional>
#include <optional>

#include "app/store/store_test_support.h"
#include "controller/app_controller.h"
#include "fault/controller_fault_support.h"
#include "store/export/chat_export.h"

namespace ember::test::fault {

// What the synchronous export wrote for these chats (see the top).
QByteArray referenceExport(const QString& db, const QString& format, qint64 conversationId = 0) {
  const auto doc = ember::chatexport::exportJson(
      db.toStdString(), conversationId > 0 ? std::optional<int64_t>(conversationId) : std::nullopt);
  const std::string text =
      format == "json" ? doc.dump(2) + "\n" : ember::chatexport::toMarkdown(doc);
  return QByteArray(text.data(), qsizetype(text.size()));
}
QByteArray readAll(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}
// Every message of a chat as role|content, in id order (imported ids keep the file's order).
QStringList chatRows(const QString& db, qint64 conversationId) {
  return store::test::RawDb(db).column(
      "SELECT role || '|' || content FROM messages WHERE conversation_id = ?1 ORDER BY id",
      {QString::number(conversationId)});
}

class UserActions {
 public:
  UserActions(app::AppController& controller, const QTemporaryDir& dir)
      : c_(controller), dir_(dir) {}

  bool loading() const { return c_.property("messagesLoading").toBool(); }
  bool searching() const { return c_.property("searching").toBool(); }
  qint64 current() const { return c_.currentConversationId(); }

  // Another conversation than the shown one with messages in it (made when there is none).
  qint64 otherChat() {
    auto* list = c_.conversations();
    for (int i = 0; i < list->rowCount(); ++i)
      if (list->idAt(i) != current()) return list->idAt(i);
    const qint64 shown = current();
    c_.newConversation();
    sendAndFinish(c_, QStringLiteral("another chat"));
    const qint64 other = current();
    c_.openConversation(shown);
    (void)QTest::qWaitFor([&] { return !loading(); }, 10000);
    return other;
  }

  // Starts the action; returns the condition under which the UI shows its result.
  std::function<bool()> start(const QString& action, QSignalSpy& finished) {
    auto answered = [&finished] { return finished.count() >= 1; };
    if (action == "new chat") {
      const qint64 before = current();
      c_.newConversation();
      return [this, before] { return current() != before && current() != 0; };
    }
    if (action == "send") {
      // Refused at once (a write that failed while the GUI waited for it): nothing to wait for.
      if (!c_.send(QStringLiteral("kestrel %1 question").arg(++sent)))
        return [] { return true; };
      return answered;
    }
    if (action == "rename") {
      c_.renameConversation(current(), QStringLiteral("renamed %1").arg(++sent));
      return [] { return true; };
    }
    if (action == "pin") {
      const auto* list = c_.conversations();
      const bool pinned = list->data(list->index(list->rowOf(current())),
                                     app::ConversationListModel::PinnedRole).toBool();
      c_.setPinned(current(), !pinned);
      return [] { return true; };
    }
    if (action == "setting") {
      const double t = c_.settings().value("temperature").toDouble() == 0 ? 0.5 : 0;
      c_.setSetting("temperature", QString::number(t));
      return [] { return true; };
    }
    if (action == "trash") {
      c_.deleteConversation(current());
      return [this] { return !loading(); };
    }
    if (action == "restore") {
      c_.undoDelete();
      return [this] { return !loading(); };
    }
    if (action == "open chat") {
      const qint64 other = otherChat();
      // A write on the disk ahead of the read: the read's answer needs it to finish first.
      c_.renameConversation(current(), QStringLiteral("left %1").arg(++sent));
      c_.openConversation(other);
      return [this] { return !loading() && c_.messages()->rowCount() > 0; };
    }
    if (action == "search") {
      c_.renameConversation(current(), QStringLiteral("searched %1").arg(++sent));
      c_.search(QStringLiteral("kestrel"));
      return [this] { return !searching() && c_.searchResults()->rowCount() > 0; };
    }
    if (action == "edit") {
      const auto* rows = c_.messages();
      c_.editMessage(rows->row(rows->rowCount() - 2)->id,
                               QStringLiteral("kestrel %1 edited").arg(++sent));
      return answered;
    }
    if (action == "regenerate") {
      c_.regenerate();
      return answered;
    }
    if (action.startsWith("export")) {
      const QString format = action.section(' ', 1);
      exportFile = dir_.filePath("export-%1.%2").arg(++sent).arg(format);
      // A write on the disk ahead of it: the export must include it, so it waits for it.
      c_.renameConversation(current(), QStringLiteral("exported %1").arg(sent));
      const QString refused = c_.exportConversations(0, QUrl::fromLocalFile(exportFile), format);
      if (!refused.isEmpty()) qFatal("export refused: %s", qPrintable(refused));
      const QString saved = QStringLiteral("Saved to %1").arg(exportFile);
      return [this, saved] { return c_.notice() == saved; };
    }
    if (action == "import") {
      const QString refused = c_.importConversations(QUrl::fromLocalFile(importFile));
      if (!refused.isEmpty()) qFatal("import refused: %s", qPrintable(refused));
      return [this] {
        return c_.notice().startsWith("Imported 1 conversation") && !loading() &&
               c_.messages()->rowCount() > 0;
      };
    }
    qFatal("unknown action");
  }

  int sent = 0;        // numbers the texts the actions write
  QString exportFile;  // the export action's file
  QString importFile;  // the import action's file (written by the test)

 private:
  app::AppController& c_;
  const QTemporaryDir& dir_;
};

}  // namespace ember::test::fault
