// Presets and what a new chat starts with, in the AppController (no model needed): a preset
// keeps the system prompt and the next-message settings (not context/threads/device), applies
// to the shown chat, and as the default it is what every new chat starts with; without one, the
// saved default system prompt reaches new chats (and only new ones). References: the values set
// below, read back through the controller's effective settings.
#include <QTemporaryDir>
#include <QtTest>

#include "common/store_open_wait.h"
#include "controller/app_controller.h"

using namespace ember::app;

class PresetsTest : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  std::unique_ptr<AppController> c_;

  // A new chat that is really new (an untouched one would be reused).
  qint64 newChat() {
    if (c_->currentConversationId() != 0) {
      c_->store().addMessage(c_->currentConversationId(), 0, ember::store::Role::User, "used");
      c_->openConversation(c_->currentConversationId());
      QTest::qWaitFor([&] { return !c_->messagesLoading(); });  // rows from the store thread
    }
    c_->newConversation();
    return c_->currentConversationId();
  }
  QString setting(const char* key) const { return c_->settings().value(key).toString(); }

 private slots:
  void initTestCase() {
    AppController::Options o;
    o.databasePath = dir_.filePath("ember.sqlite");
    c_ = std::make_unique<AppController>(o);
    QVERIFY(ember::test::waitForStoreOpen(*c_));
  }

  void savedPresetAppliesAndStartsNewChats() {
    const qint64 first = newChat();
    QVERIFY(c_->setSetting("systemPrompt", "Speak like a pirate."));
    QVERIFY(c_->setSetting("temperature", "0.2"));
    QVERIFY(c_->setSetting("threads", "3"));
    QVERIFY(c_->savePreset(QStringLiteral("  Pirate ")));
    QVERIFY(!c_->savePreset(QStringLiteral("   ")));
    QCOMPARE(c_->presetNames(), QStringList{"Pirate"});

    newChat();
    QCOMPARE(setting("systemPrompt"), QString());  // no default yet
    c_->applyPreset("Pirate");
    QCOMPARE(setting("systemPrompt"), QStringLiteral("Speak like a pirate."));
    QCOMPARE(c_->settings().value("temperature").toDouble(), 0.2);
    QVERIFY(c_->settings().value("threads").toInt() != 3);  // reload settings stay out

    c_->setDefaultPreset("Pirate");
    QCOMPARE(c_->defaultPreset(), QStringLiteral("Pirate"));
    newChat();
    QCOMPARE(setting("systemPrompt"), QStringLiteral("Speak like a pirate."));
    QCOMPARE(c_->settings().value("temperature").toDouble(), 0.2);
    c_->openConversation(first);
    QTRY_VERIFY(!c_->messagesLoading());  // the rows come from the store thread
    QCOMPARE(setting("systemPrompt"), QStringLiteral("Speak like a pirate."));  // its own
    c_->deletePreset("Pirate");
    QCOMPARE(c_->presetNames(), QStringList{});
    QCOMPARE(c_->defaultPreset(), QString());
  }

  void defaultSystemPromptReachesOnlyNewChats() {
    const qint64 older = newChat();
    QCOMPARE(setting("systemPrompt"), QString());
    newChat();
    QVERIFY(c_->setSetting("systemPrompt", "Be kind."));
    c_->saveSettingsAsDefaults();
    newChat();
    QCOMPARE(setting("systemPrompt"), QStringLiteral("Be kind."));
    c_->openConversation(older);
    QTRY_VERIFY(!c_->messagesLoading());  // the rows come from the store thread
    QCOMPARE(setting("systemPrompt"), QString());  // an older chat keeps having none
  }
};

QTEST_GUILESS_MAIN(PresetsTest)
#include "test_presets.moc"
