#pragma once
// test_controller_slow_disk's check that the UI holds what the database holds.
#include <QJsonDocument>
#include <QJsonObject>
#include <QString>
#include <QStringList>
#include <QtTest>
#include <algorithm>

#include "app/store/store_test_support.h"
#include "controller/app_controller.h"

namespace ember::test::fault {

// The UI against the file: the list (id, title, pinned), the shown branch (id, role, text), the
// shown chat's temperature and, right after a search, its results.
inline void expectUiAsStored(app::AppController& controller, const QString& path,
                             bool searched = false) {
  controller.store().flush();
  QTRY_VERIFY_WITH_TIMEOUT(!controller.property("messagesLoading").toBool() && !controller.property("searching").toBool() && !controller.generating(), 20000);
  controller.store().flush();  // reads queued by a failure's undo
  QTest::qWait(50);
  QVERIFY(!controller.property("messagesLoading").toBool());
  store::test::RawDb db(path);
  QStringList stored = db.column(
      "SELECT id || '|' || title || '|' || pinned FROM conversations WHERE deleted_at IS NULL "
      "ORDER BY id");
  QStringList shown;
  const auto* list = controller.conversations();
  for (int i = 0; i < list->rowCount(); ++i) {
    const QModelIndex at = list->index(i);
    shown << QStringLiteral("%1|%2|%3")
                 .arg(list->idAt(i))
                 .arg(list->data(at, app::ConversationListModel::TitleRole).toString())
                 .arg(list->data(at, app::ConversationListModel::PinnedRole).toBool() ? 1 : 0);
  }
  std::sort(shown.begin(), shown.end(), [](const QString& a, const QString& b) {
    return a.section('|', 0, 0).toLongLong() < b.section('|', 0, 0).toLongLong();
  });
  QCOMPARE(shown, stored);
  const QString id = QString::number(controller.currentConversationId());
  QStringList branch = db.column(
      "WITH RECURSIVE b(id, parent_id, role, content, depth) AS ("
      " SELECT id, parent_id, role, content, 0 FROM messages"
      "  WHERE id = (SELECT active_leaf_id FROM conversations WHERE id = ?1)"
      " UNION ALL SELECT m.id, m.parent_id, m.role, m.content, b.depth + 1"
      "  FROM messages m JOIN b ON m.id = b.parent_id)"
      "SELECT id || '|' || role || '|' || content FROM b ORDER BY depth DESC", {id});
  QStringList rows;
  for (int i = 0; i < controller.messages()->rowCount(); ++i) {
    const app::MessageRow* r = controller.messages()->row(i);
    rows << QStringLiteral("%1|%2|%3").arg(r->id).arg(r->role, r->text);
  }
  QCOMPARE(rows, controller.currentConversationId() == 0 ? QStringList() : branch);
  if (controller.currentConversationId() != 0) {
    // Every answer in this test is bounded (see initTestCase), whichever chat is shown.
    QCOMPARE(controller.settings().value("maxTokens").toInt(), 4);
    const QJsonObject own = QJsonDocument::fromJson(
        db.value("SELECT coalesce(settings, '{}') FROM conversations WHERE id = ?1", {id})
            .toUtf8()).object();
    if (own.contains("temperature"))
      QCOMPARE(controller.settings().value("temperature").toDouble(),
               own.value("temperature").toDouble());
  }
  if (searched) {
    QStringList hits;
    const auto* results = controller.searchResults();
    for (int i = 0; i < results->rowCount(); ++i)
      hits << results->data(results->index(i), app::SearchResultModel::MessageIdRole).toString();
    std::sort(hits.begin(), hits.end());
    QStringList matching = db.column(
        "SELECT m.id FROM messages m JOIN conversations c ON c.id = m.conversation_id "
        "WHERE c.deleted_at IS NULL AND m.content LIKE '%kestrel%' ORDER BY m.id");
    std::sort(matching.begin(), matching.end());
    QCOMPARE(hits, matching);
  }
}

}  // namespace ember::test::fault
