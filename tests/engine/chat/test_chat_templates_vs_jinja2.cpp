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
  void initTestCase() {
    EMBER_REQUIRE_TESTDATA(dir, "chat-templates");
    const Json tokens =
        ember::test::readJsonFile(ember::test::chatDataDir() + "/special_tokens.json");
    QVERIFY2(tokens.is_object(), "tests/engine/chat/data/special_tokens.json is missing");
    const QStringList templates = QDir(dir).entryList({"*.jinja"}, QDir::Files, QDir::Name);
    QVERIFY2(templates.size() >= 13, "expected the 13 chat templates of the testdata README");
    std::vector<ember::test::TemplateSource> sources;
    for (const QString& t : templates) {
      QFile f(dir + "/" + t);
      QVERIFY(f.open(QIODevice::ReadOnly));
      const std::string name = t.toStdString();
      QVERIFY2(tokens.contains(name), qPrintable("no bos/eos entry for " + t));
      sources.push_back({name, f.readAll().toStdString(), tokens[name]["bos"].get<std::string>(),
                         tokens[name]["eos"].get<std::string>()});
    }
    corpus_.prepare(sources);
  }
  void rendersLikeJinja2_data() { corpus_.addRows(); }
  void rendersLikeJinja2() {
    QFETCH(QString, id);
    corpus_.check(id);
  }

 private:
  ember::test::TemplateCorpus corpus_;
};

QTEST_GUILESS_MAIN(ChatTemplatesVsJinja2)
#include "test_chat_templates_vs_jinja2.moc"
