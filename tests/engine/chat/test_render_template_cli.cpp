// `ember-cli render-template` seen from outside: its stdout must be exactly what Python's
// Jinja2 renders (tests/tools/render_jinja2.py in its CLI-mirroring mode, same arguments), for
// .jinja files from the testdata folder and for the real models' own or fallback templates.
#include <QDir>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QtTest>

#include "chat/builtin_templates.h"
#include "common/test_paths.h"
#include "gguf/gguf_file.h"
#include "jinja2_reference.h"

using ember::test::Json;

namespace {

struct Run {
  int exitCode = -1;
  QByteArray out, err;
};

Run runEmber(const QStringList& args) {
  Run r;
  r.exitCode = ember::test::runProcess(ember::test::builtProgram("ember-cli"),
                                       QStringList{"render-template"} + args, &r.out, &r.err);
  return r;
}

Run runJinja2(const QStringList& args) {
  Run r;
  const QString script = ember::test::sourceDir() + "/tests/tools/render_jinja2.py";
  r.exitCode = ember::test::runProcess(QStringLiteral(EMBER_PYTHON), QStringList{script} + args,
                                       &r.out, &r.err);
  return r;
}

QString writeFile(const QTemporaryDir& dir, const QString& name, const QByteArray& bytes) {
  const QString path = dir.filePath(name);
  QFile f(path);
  if (f.open(QIODevice::WriteOnly)) f.write(bytes);
  return path;
}

QByteArray conversationFile(const QString& name, bool asArray) {
  const Json variables =
      ember::test::readJsonFile(ember::test::chatDataDir() + "/conversations/" + name + ".json")
          .at("variables");
  return QByteArray::fromStdString((asArray ? variables.at("messages") : variables).dump(2));
}

}  // namespace

class RenderTemplateCli : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase();
  void templateFileLikeJinja2_data();
  void templateFileLikeJinja2();
  void modelTemplateLikeJinja2();
  void modelFallbackWarnsOnStderr();
  void usageErrors();

 private:
  QTemporaryDir dir_;
};

void RenderTemplateCli::initTestCase() {
  QVERIFY(dir_.isValid());
  QVERIFY2(QFileInfo::exists(ember::test::builtProgram("ember-cli")), "build ember-cli first");
  const Run version = runJinja2({"--version"});
  if (version.exitCode != 0) {
    const QString why = "the Jinja2 reference renderer cannot run: " + QString::fromUtf8(version.err);
    if (ember::test::underCi()) QFAIL(qPrintable(why));
    QSKIP(qPrintable(why));
  }
}

void RenderTemplateCli::templateFileLikeJinja2_data() {
  QTest::addColumn<QString>("templateName");
  QTest::addColumn<QString>("conversation");
  QTest::addColumn<bool>("asArray");
  QTest::addColumn<QStringList>("extraArgs");
  QTest::addColumn<bool>("succeeds");
  QTest::newRow("qwen2.5 tools, variables object")
      << "Qwen-Qwen2.5-7B-Instruct.jinja" << "07_tool_call_round_trip" << false << QStringList{} << true;
  QTest::newRow("llama3.2 dated, messages array, generation prompt")
      << "meta-llama-Llama-3.2-3B-Instruct.jinja" << "05_non_ascii" << true
      << QStringList{"--add-generation-prompt", "--bos", "<|begin_of_text|>", "--now", ember::test::kFixedNow}
      << true;
  QTest::newRow("granite dated, no generation prompt")
      << "ibm-granite-granite-3.3-2B-Instruct.jinja" << "03_multi_turn" << true
      << QStringList{"--now", ember::test::kFixedNow} << true;
  QTest::newRow("phi3.5 eos flag") << "microsoft-Phi-3.5-mini-instruct.jinja" << "11_ends_with_assistant"
                                   << false << QStringList{"--eos", "<|endoftext|>"} << true;
  QTest::newRow("gemma2 refuses a system message")
      << "google-gemma-2-2b-it.jinja" << "02_system_user" << true << QStringList{"--bos", "<bos>"} << false;
}

void RenderTemplateCli::templateFileLikeJinja2() {
  QFETCH(QString, templateName);
  QFETCH(QString, conversation);
  QFETCH(bool, asArray);
  QFETCH(QStringList, extraArgs);
  QFETCH(bool, succeeds);
  EMBER_REQUIRE_TESTDATA(templatePath, "chat-templates/" + templateName);
  const QString messages =
      writeFile(dir_, conversation + (asArray ? "-array.json" : ".json"), conversationFile(conversation, asArray));
  const QStringList args = QStringList{"--template", templatePath, "--messages", messages} + extraArgs;
  const Run reference = runJinja2(args);
  const Run ember = runEmber(args);
  QCOMPARE(reference.exitCode == 0, succeeds);
  QCOMPARE(ember.exitCode == 0, succeeds);
  if (succeeds) {
    QVERIFY(!ember.out.isEmpty());
    QCOMPARE(ember.out, reference.out);
  } else {
    // Jinja2's TemplateError text is the template's own message; Ember prints it in its error line.
    const QByteArray message = reference.err.mid(reference.err.indexOf(": ") + 2).trimmed();
    QVERIFY2(ember.err.contains(message), ember.err.constData());
    QVERIFY(ember.out.isEmpty());
  }
}

// --model: the template and the BOS/EOS texts come from the GGUF. The reference renders the
// same template text (read from the file) with those token texts passed explicitly.
void RenderTemplateCli::modelTemplateLikeJinja2() {
  EMBER_REQUIRE_MODEL(model, "SmolLM2-135M-Instruct.Q4_1.gguf");
  const auto file = ember::gguf::GgufFile::open(model.toStdString());
  const QString templatePath = writeFile(
      dir_, "smollm2.jinja", QByteArray::fromStdString(*file->findString("tokenizer.chat_template")));
  for (const QString& conversation : {QStringLiteral("01_single_user"), QStringLiteral("04_system_multi_turn_generation")}) {
    const QString messages = writeFile(dir_, conversation + ".json", conversationFile(conversation, true));
    const Run ember = runEmber({"--model", model, "--messages", messages, "--add-generation-prompt"});
    const Run reference = runJinja2({"--template", templatePath, "--messages", messages,
                                     "--add-generation-prompt", "--bos", "<|im_start|>", "--eos", "<|im_end|>"});
    QCOMPARE(reference.exitCode, 0);
    QCOMPARE(ember.exitCode, 0);
    QVERIFY(ember.err.isEmpty());
    QCOMPARE(ember.out, reference.out);
  }
}

void RenderTemplateCli::modelFallbackWarnsOnStderr() {
  EMBER_REQUIRE_MODEL(model, "gemma-3-270m-q4_k_m.gguf");
  const QString messages = writeFile(dir_, "single.json", conversationFile("01_single_user", true));
  const QString builtin = writeFile(
      dir_, "gemma-builtin.jinja", QByteArray(ember::chat::findBuiltinTemplate("gemma")->source.data(),
                                              int(ember::chat::findBuiltinTemplate("gemma")->source.size())));
  const Run ember = runEmber({"--model", model, "--messages", messages, "--add-generation-prompt"});
  const Run reference = runJinja2({"--template", builtin, "--messages", messages, "--add-generation-prompt",
                                   "--bos", "<bos>", "--eos", "<eos>"});
  QCOMPARE(ember.exitCode, 0);
  QCOMPARE(ember.out, reference.out);
  QVERIFY2(ember.err.contains("warning") && ember.err.contains("built-in 'gemma'"), ember.err.constData());
}

void RenderTemplateCli::usageErrors() {
  const QString messages = writeFile(dir_, "u.json", "[]");
  const QString notJson = writeFile(dir_, "bad.json", "{not json");
  const QString tmpl = writeFile(dir_, "t.jinja", "{{ messages | length }}");
  const QList<QStringList> bad = {
      {"--messages", messages},                                         // no template
      {"--template", tmpl, "--model", tmpl, "--messages", messages},    // both
      {"--template", tmpl},                                             // no messages
      {"--template", tmpl, "--messages", notJson},                      // bad JSON
      {"--template", dir_.filePath("missing.jinja"), "--messages", messages},
      {"--template", tmpl, "--messages", messages, "--now", "yesterday"},
  };
  for (const QStringList& args : bad) {
    const Run r = runEmber(args);
    QVERIFY2(r.exitCode != 0, qPrintable(args.join(' ')));
    QVERIFY(r.out.isEmpty());
    QVERIFY(r.err.contains("error"));
  }
  const Run ok = runEmber({"--template", tmpl, "--messages", messages});
  QCOMPARE(ok.exitCode, 0);
  QCOMPARE(ok.out, QByteArray("0"));  // no trailing newline
}

QTEST_GUILESS_MAIN(RenderTemplateCli)
#include "test_render_template_cli.moc"
