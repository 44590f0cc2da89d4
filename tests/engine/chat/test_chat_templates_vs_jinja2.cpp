// Every chat template in ../shared/testdata/chat-templates/ (tokenizer.chat_template sources of
// popular models, from llama.cpp's models/templates/) rendered over every conversation in
// data/conversations/, by Ember and by Python's Jinja2 at test time (tests/tools/
// render_jinja2.py, set up as Hugging Face transformers renders chat templates). The outputs
// must be byte-identical; where Jinja2 raises (a template that forbids a system message, for
// example), Ember must fail with the same message.
#include <QDir>
#include <QtTest>

#include "jinja2_reference.h"

using ember::test::Json;

class ChatTemplatesVsJinja2 : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase();
  void rendersLikeJinja2_data();
  void rendersLikeJinja2();

 private:
  QString templatesDir_;
  std::map<std::string, std::string> sources_;  // template file name -> source
  std::map<std::string, Json> variables_;       // case id -> variables
  std::map<std::string, ember::test::ReferenceResult> reference_;
};

void ChatTemplatesVsJinja2::initTestCase() {
  EMBER_REQUIRE_TESTDATA(dir, "chat-templates");
  templatesDir_ = dir;
  const Json tokens = ember::test::readJsonFile(ember::test::chatDataDir() + "/special_tokens.json");
  QVERIFY2(tokens.is_object(), "tests/engine/chat/data/special_tokens.json is missing");
  const QStringList templates = QDir(dir).entryList({"*.jinja"}, QDir::Files, QDir::Name);
  QVERIFY2(templates.size() >= 13, "expected the 13 chat templates of the testdata README");
  const QDir conversationsDir(ember::test::chatDataDir() + "/conversations");
  const QStringList conversations = conversationsDir.entryList({"*.json"}, QDir::Files, QDir::Name);
  QVERIFY2(conversations.size() >= 8, "expected at least 8 conversations");

  std::vector<ember::test::ReferenceCase> cases;
  for (const QString& t : templates) {
    QFile f(dir + "/" + t);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const std::string name = t.toStdString();
    sources_[name] = f.readAll().toStdString();
    QVERIFY2(tokens.contains(name), qPrintable("no bos/eos entry for " + t));
    for (const QString& c : conversations) {
      Json variables =
          ember::test::readJsonFile(conversationsDir.filePath(c)).at("variables");
      variables["bos_token"] = tokens[name]["bos"];
      variables["eos_token"] = tokens[name]["eos"];
      const std::string id = name + "/" + QFileInfo(c).baseName().toStdString();
      variables_[id] = variables;
      cases.push_back({id, sources_[name], variables});
    }
  }
  EMBER_REQUIRE_JINJA2(cases, &reference_);
}

void ChatTemplatesVsJinja2::rendersLikeJinja2_data() {
  QTest::addColumn<QString>("id");
  for (const auto& [id, variables] : variables_) QTest::newRow(id.c_str()) << QString::fromStdString(id);
}

void ChatTemplatesVsJinja2::rendersLikeJinja2() {
  QFETCH(QString, id);
  const std::string key = id.toStdString();
  const std::string templateName = key.substr(0, key.find('/'));
  QVERIFY(reference_.count(key));
  ember::test::compareWithReference(reference_[key], sources_[templateName], variables_[key]);
}

QTEST_GUILESS_MAIN(ChatTemplatesVsJinja2)
#include "test_chat_templates_vs_jinja2.moc"
