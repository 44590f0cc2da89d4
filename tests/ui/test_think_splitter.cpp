// ThinkSplitter: a streamed answer split into reasoning and answer at <think>...</think>, the
// way reasoning models' templates write it (Qwen3, DeepSeek-R1: the section opens the answer).
// References: the whole text, split by hand; every way of cutting it into pieces must give the
// same two parts.
#include <QtTest>

#include "controller/think_splitter.h"

using ember::app::ThinkSplitter;

namespace {
std::pair<QString, QString> run(const QStringList& pieces) {
  ThinkSplitter s;
  QString reasoning, answer;
  for (const QString& p : pieces) {
    const auto out = s.push(p);
    reasoning += out.reasoning;
    answer += out.answer;
  }
  const auto out = s.flush();
  return {reasoning + out.reasoning, answer + out.answer};
}
}  // namespace

class ThinkSplitterTest : public QObject {
  Q_OBJECT
 private slots:
  void everyCutGivesTheSameSplit_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("reasoning");
    QTest::addColumn<QString>("answer");
    QTest::newRow("think then answer")
        << "<think>\nThe user greets me.\n</think>\n\nHello!" << "The user greets me.\n" << "Hello!";
    QTest::newRow("leading newline") << "\n<think>x < y</think>Yes." << "x < y" << "Yes.";
    QTest::newRow("no think") << "Plain <think> later is text." << ""
                              << "Plain <think> later is text.";
    QTest::newRow("empty think") << "<think>\n\n</think>\n\nHi" << "" << "Hi";
    QTest::newRow("unfinished think") << "<think>still going" << "still going" << "";
    QTest::newRow("looks like a tag") << "<thin air" << "" << "<thin air";
    QTest::newRow("korean") << "<think>인사를 한다</think>안녕하세요" << "인사를 한다" << "안녕하세요";
  }
  void everyCutGivesTheSameSplit() {
    QFETCH(QString, text);
    QFETCH(QString, reasoning);
    QFETCH(QString, answer);
    QCOMPARE(run({text}), std::make_pair(reasoning, answer));
    // One character at a time, and cut at every position into two.
    QStringList chars;
    for (QChar c : text) chars << QString(c);
    QCOMPARE(run(chars), std::make_pair(reasoning, answer));
    for (qsizetype i = 1; i < text.size(); ++i)
      QCOMPARE(run({text.left(i), text.mid(i)}), std::make_pair(reasoning, answer));
  }

  void flaggedReasoningEndsTagDetection() {
    ThinkSplitter s;
    s.answerBegan();  // the engine flagged the reasoning; what follows is all answer
    QCOMPARE(s.push("<think>not a section").answer, QStringLiteral("<think>not a section"));
  }
};

QTEST_GUILESS_MAIN(ThinkSplitterTest)
#include "test_think_splitter.moc"
