// Export and import of conversations (store/export, no Qt) against a database written by the
// app's own ChatStore: every branch, the settings, and each answer's stats and token timeline
// must come back field for field after export -> import -> export into another database (ids
// aside, which import remaps), an import must never touch what is there, and a bad file must
// leave the database unchanged. ember-cli export must print the same document. References: the
// values written through ChatStore below (by hand), and the first export itself for the round
// trip.
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include "common/test_paths.h"
#include "store/chat_store.h"
#include "store/export/chat_export.h"

using namespace ember::store;
namespace ce = ember::chatexport;

namespace {

// The document with ids replaced by each message's position in its conversation, so that two
// exports of the same content compare equal whatever ids the database gave.
ce::Json withoutIds(ce::Json doc) {
  for (ce::Json& c : doc["conversations"]) {
    std::map<int64_t, int64_t> position;
    for (ce::Json& m : c["messages"]) position[m["id"].get<int64_t>()] = int64_t(position.size());
    const auto remap = [&](ce::Json& v) {
      if (!v.is_null()) v = position.at(v.get<int64_t>());
    };
    c.erase("id");
    remap(c["activeLeafId"]);
    for (ce::Json& m : c["messages"]) {
      remap(m["id"]);
      remap(m["parentId"]);
    }
  }
  return doc;
}

}  // namespace

class ChatExportTest : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QString source_;
  Id conversation_ = 0;
  Id regenerated_ = 0;

 private slots:
  void initTestCase() {
    source_ = dir_.filePath("source.sqlite");
    ChatStore store;
    store.open(source_);
    conversation_ = store.createConversation(QStringLiteral("Trip to 부산"), "/models/m.gguf");
    store.setConversationSettings(conversation_,
                                  QJsonObject{{"temperature", 0.3}, {"systemPrompt", "Be brief."}});
    store.setPinned(conversation_, true);
    const Id q = store.addMessage(conversation_, 0, Role::User, "Where should I eat?");
    const Id a1 = store.beginAssistantMessage(q, "m.gguf");
    MessageStats stats;
    stats.ttftMs = 120.5;
    stats.decodeTokensPerSecond = 48.25;
    stats.promptTokens = 80;
    stats.cachedTokens = 32;
    stats.generatedTokens = 3;
    stats.finishReason = "eos";
    stats.sampling = QJsonObject{{"temperature", 0.3}, {"top_p", 0.9}};
    stats.seed = 18446744073709551615ULL;  // all 64 bits
    stats.model = "m.gguf";
    stats.backend = "cpu";
    stats.tokenTimesMs = {120.5, 141.0, 162.25};
    store.finishAssistantMessage(a1, "Try **Jagalchi** market.", MessageStatus::Complete, stats);
    regenerated_ = store.beginRegeneration(a1, "m.gguf");  // a second version, left stopped
    store.finishAssistantMessage(regenerated_, "Haeundae.", MessageStatus::Stopped);
    store.setReasoning(regenerated_, QStringLiteral("They want seafood; 부산 is by the sea."), 2300);
    store.editMessage(q, "Where should I eat fish?");  // a sibling question, no answer
    store.selectBranch(regenerated_);
    const Id other = store.createConversation("other");
    store.addMessage(other, 0, Role::User, "hi");
  }

  void exportHoldsEveryBranchAndStat() {
    const ce::Json doc = ce::exportJson(source_.toStdString(), conversation_);
    QCOMPARE(doc["format"].get<std::string>(), std::string("ember-chat-export"));
    const ce::Json& c = doc["conversations"][0];
    QCOMPARE(c["title"].get<std::string>(), std::string("Trip to 부산"));
    QCOMPARE(c["pinned"].get<bool>(), true);
    QCOMPARE(c["settings"]["systemPrompt"].get<std::string>(), std::string("Be brief."));
    QCOMPARE(c["messages"].size(), size_t(4));  // question, its edit, two answers
    QCOMPARE(c["activeLeafId"].get<int64_t>(), regenerated_);
    const ce::Json& first = c["messages"][1];
    QCOMPARE(first["content"].get<std::string>(), std::string("Try **Jagalchi** market."));
    QCOMPARE(first["stats"]["ttftMs"].get<double>(), 120.5);
    QCOMPARE(first["stats"]["seed"].get<uint64_t>(), 18446744073709551615ULL);
    QCOMPARE(first["stats"]["tokenTimesMs"], ce::Json::parse("[120.5, 141.0, 162.25]"));
    QCOMPARE(first["stats"]["sampling"]["top_p"].get<double>(), 0.9);
    QVERIFY(c["messages"][2]["stats"].is_null());  // the stopped one has none
    QCOMPARE(c["messages"][2]["reasoning"].get<std::string>(),
             std::string("They want seafood; 부산 is by the sea."));
    QCOMPARE(c["messages"][2]["reasoningMs"].get<double>(), 2300.0);

    const std::string md = ce::toMarkdown(doc);
    QVERIFY(md.find("# Trip to 부산") == 0);
    QVERIFY(md.find("Haeundae.") != std::string::npos);  // the branch shown
    QVERIFY(md.find("Jagalchi") == std::string::npos);   // the other version is only noted
    QVERIFY(md.find("1 other version(s)") != std::string::npos);
    QVERIFY(md.find("**System prompt**\n\nBe brief.") != std::string::npos);
    QVERIFY(md.find("<details><summary>Thought for 2 s</summary>") != std::string::npos);
  }

  void roundTripIntoAnotherDatabase() {
    const ce::Json all = ce::exportJson(source_.toStdString());
    QCOMPARE(all["conversations"].size(), size_t(2));
    const QString target = dir_.filePath("target.sqlite");
    {
      ChatStore store;  // the app creates the file at the current schema
      store.open(target);
    }
    const ce::ImportResult result = ce::importJson(target.toStdString(), all);
    QCOMPARE(result.conversations, 2);
    QCOMPARE(result.messages, 5);
    const ce::Json again = ce::exportJson(target.toStdString());
    QCOMPARE(withoutIds(again).dump(1), withoutIds(all).dump(1));
    // The imported text is searchable like any other.
    ChatStore store;
    store.open(target);
    QCOMPARE(store.search("Jagalchi").size(), 1);
  }

  void importIntoTheSameDatabaseAddsAndKeeps() {
    const ce::Json before = ce::exportJson(source_.toStdString());
    const ce::Json one = ce::exportJson(source_.toStdString(), conversation_);
    const ce::ImportResult result = ce::importJson(source_.toStdString(), one);
    QCOMPARE(result.conversations, 1);
    QVERIFY(result.newConversationIds.at(0) != conversation_);
    // What was there is unchanged, id for id.
    const ce::Json original = ce::exportJson(source_.toStdString(), conversation_);
    QCOMPARE(original.dump(), one.dump());
    const ce::Json after = ce::exportJson(source_.toStdString());
    QCOMPARE(after["conversations"].size(), before["conversations"].size() + 1);
  }

  void badFilesChangeNothing_data() {
    QTest::addColumn<QString>("json");
    QTest::addColumn<QString>("message");
    QTest::newRow("not an export") << R"({"hello": 1})" << "format";
    QTest::newRow("future version")
        << R"({"format":"ember-chat-export","version":2,"conversations":[]})" << "version 2";
    QTest::newRow("parent missing")
        << R"({"format":"ember-chat-export","version":1,"conversations":[{"title":"t",
              "createdAtMs":1,"updatedAtMs":1,"messages":[{"id":5,"parentId":4,"role":"user",
              "content":"x","createdAtMs":1,"status":"complete"}]}]})"
        << "parent 4 is not in the file";
    QTest::newRow("bad role after a good conversation")
        << R"({"format":"ember-chat-export","version":1,"conversations":[{"title":"ok",
              "createdAtMs":1,"updatedAtMs":1,"messages":[]},{"title":"t","createdAtMs":1,
              "updatedAtMs":1,"messages":[{"id":1,"parentId":null,"role":"robot","content":"x",
              "createdAtMs":1,"status":"complete"}]}]})"
        << "unknown role";
  }
  void badFilesChangeNothing() {
    QFETCH(QString, json);
    QFETCH(QString, message);
    const std::string before = ce::exportJson(source_.toStdString()).dump();
    try {
      ce::importJson(source_.toStdString(), ce::Json::parse(json.toStdString()));
      QFAIL("a bad file was imported");
    } catch (const ce::ExportError& e) {
      QVERIFY2(QString::fromUtf8(e.what()).contains(message), e.what());
    }
    QCOMPARE(ce::exportJson(source_.toStdString()).dump(), before);  // all or nothing
  }

  void cliPrintsTheSameDocument() {
    QByteArray out, err;
    const int rc = ember::test::runProcess(
        ember::test::builtProgram("ember-cli"),
        {"export", "--db", source_, "--conversation", QString::number(conversation_), "--format",
         "json"}, &out, &err);
    QVERIFY2(rc == 0, err.constData());
    QCOMPARE(ce::Json::parse(out.toStdString()),
             ce::exportJson(source_.toStdString(), conversation_));
    QCOMPARE(ember::test::runProcess(ember::test::builtProgram("ember-cli"),
                                     {"export", "--db", source_, "--format", "md"}, &out, &err),
             0);
    QVERIFY(out.startsWith("# "));
    QCOMPARE(ember::test::runProcess(ember::test::builtProgram("ember-cli"),
                                     {"export", "--db", dir_.filePath("missing.sqlite")}, &out,
                                     &err),
             1);
    QVERIFY2(err.contains("cannot open the chat database"), err.constData());
  }
};

QTEST_GUILESS_MAIN(ChatExportTest)
#include "test_chat_export.moc"
