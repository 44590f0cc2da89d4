// Delete with Undo in the AppController (no model needed): a deleted chat leaves the sidebar at
// once, Undo brings it back whole, also after the app was closed (or killed) within the undo
// time, and once the time has passed it is purged, while running or at the next start.
// References: the messages written before the delete, read back from the store; the undo time
// given in the options (1.5 s here, 8 s in the app).
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "common/store_open_wait.h"
#include "controller/app_controller.h"

using namespace ember::app;
using ember::store::Role;

class UndoDeleteTest : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  static constexpr int kUndoMs = 1500;

  std::unique_ptr<AppController> start() {
    AppController::Options o;
    o.databasePath = dir_.filePath("ember.sqlite");
    o.undoDeleteMs = kUndoMs;
    auto c = std::make_unique<AppController>(o);
    (void)ember::test::waitForStoreOpen(*c);
    return c;
  }
  static qint64 chatWithMessages(AppController& c, const QString& title) {
    auto& store = c.store();
    const qint64 id = store.createConversation(title);
    const qint64 q = store.addMessage(id, 0, Role::User, title + " question");
    store.addMessage(id, q, Role::Assistant, title + " answer");
    return id;
  }
  static bool listed(AppController& c, qint64 id) { return c.conversations()->rowOf(id) >= 0; }

 private slots:
  void undoAfterRestartBringsItBack() {
    qint64 id = 0;
    {
      auto c = start();
      id = chatWithMessages(*c, "otter");
      c->deleteConversation(0);  // unknown: nothing happens
      c.reset();
      c = start();
      QVERIFY(listed(*c, id));
      c->deleteConversation(id);
      QVERIFY(!listed(*c, id));
      QCOMPARE(c->undoDeleteTitle(), QStringLiteral("otter"));
    }  // closed inside the undo time
    auto c = start();
    QVERIFY(!listed(*c, id));
    QTRY_COMPARE(c->undoDeleteTitle(), QStringLiteral("otter"));  // still offered (read at start)
    c->undoDelete();
    QVERIFY(listed(*c, id));
    QCOMPARE(c->currentConversationId(), id);
    QCOMPARE(c->undoDeleteTitle(), QString());
    const auto branch = c->store().activeBranch(id);
    QCOMPARE(branch.size(), 2);
    QCOMPARE(branch[1].content, QStringLiteral("otter answer"));
  }

  void expiredDeleteIsPurgedWhileRunning() {
    auto c = start();
    const qint64 id = chatWithMessages(*c, "heron");
    c->deleteConversation(id);  // made behind the controller's back: its title is read back
    QTRY_COMPARE(c->undoDeleteTitle(), QStringLiteral("heron"));
    QTRY_COMPARE_WITH_TIMEOUT(c->undoDeleteTitle(), QString(), kUndoMs + 2000);
    QVERIFY(!c->store().conversation(id).has_value());
  }

  void expiredDeleteIsPurgedAtTheNextStart() {
    qint64 id = 0;
    {
      auto c = start();
      id = chatWithMessages(*c, "crane");
      c->deleteConversation(id);
    }
    QTest::qWait(kUndoMs + 100);
    auto c = start();
    QVERIFY(!c->store().conversation(id).has_value());  // behind the start's purge and read
    QCoreApplication::sendPostedEvents(c.get(), QEvent::MetaCall);  // the read's result shown
    QCOMPARE(c->undoDeleteTitle(), QString());
  }

  void pinMovesToTheTop() {
    auto c = start();
    const qint64 older = chatWithMessages(*c, "older");
    const qint64 newer = chatWithMessages(*c, "newer");
    c.reset();
    c = start();
    QCOMPARE(c->conversations()->idAt(0), newer);
    c->setPinned(older, true);
    QCOMPARE(c->conversations()->idAt(0), older);
    QCOMPARE(c->conversations()->data(c->conversations()->index(0),
                                      ConversationListModel::PinnedRole).toBool(), true);
  }
};

QTEST_GUILESS_MAIN(UndoDeleteTest)
#include "test_undo_delete.moc"
