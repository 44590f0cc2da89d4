// What the user is told, through the AppController (the object the QML binds to), when the app
// had to do something other than asked: the model's chat template failed for one conversation
// and a built-in one was used; older messages were left out to fit the context window; the chat
// database was damaged and set aside. Each note must be under the answer when it ends, in the
// answer's stats details, and still there when the chat is opened again later.
// References: the engine's own fallback message (it names the failing limit, MAX_RANGE, and the
// built-in template used, 'chatml', as test_prompt_fitting checks at the prompt builder); for the
// left-out count, the context meter (contextUsage, the same count before sending) and the sizes
// fixed by construction below; for the damaged file, ChatStore's documented recovery (the file
// moved to <path>.corrupt-<yyyyMMdd-hhmmss>, byte for byte, and a new one started).
#include <QCoreApplication>
#include <cstring>
#include <QFile>
#include <QGuiApplication>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "common/store_open_wait.h"
#include "common/test_paths.h"
#include "controller/app_controller.h"
#include "store/chat_store.h"

using namespace ember::app;

namespace {
constexpr auto kModel = "SmolLM2-135M-Instruct.Q4_1.gguf";

// A ChatML template that works for every conversation except one holding a message "odd", where
// it runs past the renderer's loop limit: the per-conversation failure the engine must survive.
constexpr auto kOddTemplate =
    "{% for m in messages %}{% if m.content == 'odd' %}{% for i in range(2000000) %}{% endfor %}"
    "{% endif %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";

// Copies the GGUF at `from` to `to` with tokenizer.chat_template replaced by `source`, padded
// with a template comment to the original length so that no offset in the file moves. GGUF v3:
// key as u64 length + bytes, u32 value type (8 = string), u64 length, the string's bytes.
QString copyWithTemplate(const QString& from, const QString& to, const QByteArray& source) {
  QFile in(from);
  if (!in.open(QIODevice::ReadOnly)) return QStringLiteral("cannot read ") + from;
  QByteArray bytes = in.readAll();
  const QByteArray key("tokenizer.chat_template");
  const qsizetype at = bytes.indexOf(key);
  if (at < 8) return QStringLiteral("no chat template in ") + from;
  const qsizetype typeAt = at + key.size();
  quint32 type = 0;
  quint64 length = 0;
  std::memcpy(&type, bytes.constData() + typeAt, 4);
  std::memcpy(&length, bytes.constData() + typeAt + 4, 8);
  if (type != 8) return QStringLiteral("chat template is not a string");
  const qsizetype textAt = typeAt + 12;
  const QByteArray pad = QByteArray("{#") +
                         QByteArray(qsizetype(length) - source.size() - 4, '-') + "#}";
  if (source.size() + 4 > qsizetype(length)) return QStringLiteral("template too long");
  bytes.replace(textAt, qsizetype(length), source + pad);
  QFile out(to);
  if (!out.open(QIODevice::WriteOnly) || out.write(bytes) != bytes.size())
    return QStringLiteral("cannot write ") + to;
  return {};
}

QString detailsText(const QVariantMap& details) {
  QStringList lines;
  for (const QVariant& row : details.value("rows").toList())
    lines << row.toList().value(0).toString() + " = " + row.toList().value(1).toString();
  return lines.join('\n');
}

}  // namespace

class AnswerNoticesTest : public QObject {
  Q_OBJECT

  // In the build folder: the copied model (~100 MB) and the databases.
  QTemporaryDir dir_{QCoreApplication::applicationDirPath() + "/answer-notices-XXXXXX"};
  std::unique_ptr<AppController> controller_;

  const MessageRow& lastRow() const {
    return *controller_->messages()->row(controller_->messages()->rowCount() - 1);
  }
  bool sendAndWait(const QString& text) {
    QSignalSpy finished(controller_.get(), &AppController::answerFinished);
    if (!controller_->send(text)) return false;
    return QTest::qWaitFor([&] { return finished.count() >= 1; }, 120000);
  }
  // Opens another chat and this one again: its rows are then read back from the store.
  bool reopen(qint64 conversationId, qint64 other) {
    controller_->openConversation(other);
    if (!QTest::qWaitFor([&] { return !controller_->messagesLoading(); }, 30000)) return false;
    controller_->openConversation(conversationId);
    return QTest::qWaitFor([&] { return !controller_->messagesLoading(); }, 30000) &&
           controller_->currentConversationId() == conversationId;
  }

 private slots:
  void damagedDatabaseIsSetAsideAndTheUserTold() {
    const QString path = dir_.filePath("damaged.sqlite");
    {
      ember::store::ChatStore store;
      store.open(path);
      for (int c = 0; c < 40; ++c) {
        const auto id = store.createConversation(QStringLiteral("chat %1").arg(c));
        store.addMessage(id, 0, ember::store::Role::User, QString(2000, QChar('a' + c % 26)));
      }
      store.close();
    }
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadWrite));
    QByteArray bytes = file.readAll();
    QVERIFY(bytes.size() > 20 * 4096);
    bytes.replace(9 * 4096, 4096, QByteArray(4096, '\xA5'));  // one page overwritten
    QVERIFY(file.seek(0) && file.write(bytes) == bytes.size());
    file.close();

    AppController::Options options;
    options.databasePath = path;
    AppController app(options);
    QVERIFY(ember::test::waitForStoreOpen(app));
    const QString notice = app.notice();
    QVERIFY2(notice.contains(QStringLiteral("damaged")), qPrintable(notice));
    static const QRegularExpression backupName(QRegularExpression::escape(path) +
                                               QStringLiteral("\\.corrupt-\\d{8}-\\d{6}"));
    const QRegularExpressionMatch named = backupName.match(notice);
    QVERIFY2(named.hasMatch(), qPrintable(notice));
    QFile backup(named.captured(0));
    QVERIFY2(backup.open(QIODevice::ReadOnly), qPrintable(named.captured(0)));
    QVERIFY(backup.readAll() == bytes);  // kept as it was, nothing overwritten
    // A new, empty database is in use, and it takes new chats.
    QCOMPARE(app.conversations()->rowCount(), 0);
    app.newConversation();
    app.store().flush();
    QCOMPARE(app.store().listConversations().size(), 1);
  }

  void initTestCase() {
    EMBER_REQUIRE_MODEL(model, kModel);
    QVERIFY(dir_.isValid());
    const QString copy = dir_.filePath("odd-template.gguf");
    const QString error = copyWithTemplate(model, copy, kOddTemplate);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    AppController::Options options;
    options.databasePath = dir_.filePath("ember.sqlite");
    options.modelFolders = {dir_.path()};
    controller_ = std::make_unique<AppController>(options);
    QVERIFY(ember::test::waitForStoreOpen(*controller_));
    QVERIFY(controller_->setSetting("maxTokens", "4"));
    QVERIFY(controller_->setSetting("temperature", "0"));
    QVERIFY(controller_->setSetting("contextLength", "256"));
    controller_->saveSettingsAsDefaults();  // every chat below: 4 greedy tokens, 256 context
    controller_->loadModel(copy);
    QVERIFY(QTest::qWaitFor([&] { return !controller_->modelLoading(); }, 60000));
    QVERIFY2(controller_->modelLoaded(), qPrintable(controller_->modelError()));
    // The template itself is fine: no warning at load.
    QVERIFY2(controller_->notice().isEmpty(), qPrintable(controller_->notice()));
  }

  void templateFallbackIsShownWithTheAnswer() {
    controller_->newConversation();
    const qint64 plain = controller_->currentConversationId();
    QVERIFY(sendAndWait(QStringLiteral("fine")));
    QCOMPARE(lastRow().status, QStringLiteral("complete"));
    QVERIFY2(lastRow().error.isEmpty(), qPrintable(lastRow().error));  // the model's template

    controller_->newConversation();
    const qint64 odd = controller_->currentConversationId();
    QVERIFY(sendAndWait(QStringLiteral("odd")));
    const qint64 answerId = lastRow().id;
    QCOMPARE(lastRow().status, QStringLiteral("complete"));  // answered, with the built-in one
    const auto shows = [](const QString& text) {
      return text.contains(QStringLiteral("chat template")) && text.contains("MAX_RANGE") &&
             text.contains(QStringLiteral("'chatml'"));
    };
    QVERIFY2(shows(lastRow().error), qPrintable(lastRow().error));  // the note under the answer
    const QString details = detailsText(controller_->statsDetails(answerId));
    QVERIFY2(shows(details), qPrintable(details));
    const auto stored = controller_->store().stats(answerId);
    QVERIFY(stored.has_value());
    QVERIFY2(shows(stored->sampling.value("template_warning").toString()),
             qPrintable(stored->sampling.value("template_warning").toString()));

    // Opened again later (rows from the store): still said.
    QVERIFY(reopen(odd, plain));
    QCOMPARE(lastRow().id, answerId);
    QVERIFY2(shows(lastRow().error), qPrintable(lastRow().error));
    QVERIFY2(shows(detailsText(controller_->statsDetails(answerId))),
             qPrintable(detailsText(controller_->statsDetails(answerId))));
  }

  // Context 256, 4 answer tokens: the prompt may take 252. Each question below is ~160 tokens
  // (checked on the first answer's prompt), so a question fits alone but never beside another:
  // the second question must leave out the first exchange (2 messages), the third two (4).
  void olderMessagesLeftOutAreShown() {
    controller_->newConversation();
    const qint64 chat = controller_->currentConversationId();
    const auto question = [](const char* topic) {
      return QStringLiteral("%1: ").arg(QLatin1String(topic)) +
             QStringLiteral("one two three four five six seven eight ").repeated(20);
    };
    QVERIFY(sendAndWait(question("first")));
    const auto first = controller_->store().stats(lastRow().id);
    QVERIFY(first.has_value());
    QVERIFY2(first->promptTokens > 140 && first->promptTokens <= 252,
             qPrintable(QString::number(first->promptTokens)));
    QVERIFY(lastRow().error.isEmpty());
    QVERIFY(!first->sampling.contains("dropped_turns"));

    for (int expected : {2, 4}) {
      const QString text = question(expected == 2 ? "second" : "third");
      controller_->setDraft(text);
      QVERIFY(QTest::qWaitFor([&] {
        const QVariantMap u = controller_->contextUsage();
        return u.value("known").toBool() && u.value("draft").toString() == text;
      }, 30000));
      QCOMPARE(controller_->contextUsage().value("droppedTurns").toInt(), expected);  // the meter
      QVERIFY(sendAndWait(text));
      controller_->setDraft({});
      const qint64 answerId = lastRow().id;
      QCOMPARE(lastRow().status, QStringLiteral("complete"));
      const QString note = QStringLiteral("%1 older message(s) were left out").arg(expected);
      QVERIFY2(lastRow().error.contains(note), qPrintable(lastRow().error));
      const QString details = detailsText(controller_->statsDetails(answerId));
      QVERIFY2(details.contains(QStringLiteral("Older messages left out = %1").arg(expected)),
               qPrintable(details));
      const auto stats = controller_->store().stats(answerId);
      QVERIFY(stats.has_value());
      QCOMPARE(stats->sampling.value("dropped_turns").toInt(), expected);
      QVERIFY(stats->promptTokens <= 252);
    }
    // Nothing was deleted: every message is still in the chat, and the note stays on reopening.
    QCOMPARE(controller_->messages()->rowCount(), 6);
    const qint64 answerId = lastRow().id;
    controller_->newConversation();
    const qint64 other = controller_->currentConversationId();
    QVERIFY(reopen(chat, other));
    QCOMPARE(controller_->messages()->rowCount(), 6);
    QCOMPARE(lastRow().id, answerId);
    QVERIFY2(lastRow().error.contains(QStringLiteral("4 older message(s) were left out")),
             qPrintable(lastRow().error));
  }
};

// The controller needs a GUI application; offscreen, so the test runs without a display.
int main(int argc, char* argv[]) {
  qputenv("QT_QPA_PLATFORM", "offscreen");
  QGuiApplication app(argc, argv);
  AnswerNoticesTest test;
  QTEST_SET_MAIN_SOURCE_PATH
  return QTest::qExec(&test, argc, argv);
}
#include "test_answer_notices.moc"
