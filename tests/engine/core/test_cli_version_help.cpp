// Every program answers --version (version and commit) and every ember-cli command answers
// --help with its own usage (exit 0, stdout); `generate --json` reports the prompt's token
// ids. References: the project version in CMakeLists.txt, the commit from `git rev-parse` at
// configure time (12 hex digits, or "unknown" outside a checkout), the usage text's command
// list, and `ember-cli tokenize` for the same text.
#include <QRegularExpression>
#include <QtTest>

#include <nlohmann/json.hpp>

#include "common/test_paths.h"

class CliVersionHelp : public QObject {
  Q_OBJECT

 private slots:
  void versionNamesVersionAndCommit() {
    QByteArray out, err;
    QCOMPARE(ember::test::runProcess(ember::test::builtProgram("ember-cli"), {"--version"}, &out, &err), 0);
    const QRegularExpression line(
        QStringLiteral("^ember-cli \\d+\\.\\d+\\.\\d+ \\(commit ([0-9a-f]{12}|unknown)\\)\\n$"));
    QVERIFY2(line.match(QString::fromUtf8(out)).hasMatch(), out.constData());
  }

  void everyCommandHasHelp_data() {
    QTest::addColumn<QString>("command");
    for (const char* c : {"inspect", "tokenize", "detokenize", "render-template", "generate", "chat",
                          "logits", "plan", "synth-model", "cut-model"})
      QTest::newRow(c) << QString::fromLatin1(c);
  }
  void everyCommandHasHelp() {
    QFETCH(QString, command);
    QByteArray out, err;
    QCOMPARE(ember::test::runProcess(ember::test::builtProgram("ember-cli"), {command, "--help"}, &out, &err), 0);
    QVERIFY2(out.contains(("  " + command + " ").toUtf8()), out.constData());
    QVERIFY2(err.isEmpty(), err.constData());
  }

  void generateJsonReportsPromptIds() {
    EMBER_REQUIRE_MODEL(model, "SmolLM2-135M-Instruct.Q4_1.gguf");
    QByteArray out, err;
    QCOMPARE(ember::test::runProcess(ember::test::builtProgram("ember-cli"),
                                     {"generate", "--model", model, "--prompt", "Hello there",
                                      "--max-tokens", "2", "--temperature", "0", "--json"},
                                     &out, &err), 0);
    const QByteArray last = out.trimmed().split('\n').last();
    const auto j = nlohmann::json::parse(last.toStdString());
    QByteArray ids;
    QCOMPARE(ember::test::runProcess(ember::test::builtProgram("ember-cli"),
                                     {"tokenize", "--vocab", model, "--text", "Hello there"}, &ids), 0);
    std::vector<int> expected;
    for (const QByteArray& id : ids.trimmed().split(' ')) expected.push_back(id.toInt());
    QCOMPARE(j.at("prompt_ids").get<std::vector<int>>(), expected);
    QCOMPARE(j.at("prompt_tokens").get<int>(), static_cast<int>(expected.size()));
  }
};

QTEST_APPLESS_MAIN(CliVersionHelp)
#include "test_cli_version_help.moc"
