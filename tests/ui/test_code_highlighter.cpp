// Code blocks coloured through GNU source-highlight. References: the code itself (the HTML with
// its tags removed and entities decoded must be the code, character for character) and
// source-highlight's default language files (C++ and Python keywords are marked, an unknown
// language comes back empty so the bubble shows plain text).
#include <QGuiApplication>
#include <QTextDocument>
#include <QtTest>

#include "common/test_paths.h"
#include "controller/code_highlighter.h"

using ember::app::CodeHighlighter;

namespace {
QString plainOf(const QString& html) {
  QTextDocument doc;
  doc.setHtml(html);
  return doc.toPlainText();
}
}  // namespace

class CodeHighlighterTest : public QObject {
  Q_OBJECT
  CodeHighlighter highlighter_;

 private slots:
  void initTestCase() {
    if (!highlighter_.available()) {
      if (ember::test::underCi()) QFAIL("built without source-highlight (libsource-highlight-dev)");
      QSKIP("built without source-highlight (apt-get install libsource-highlight-dev)");
    }
  }

  void keywordsAreColouredAndTextKept_data() {
    QTest::addColumn<QString>("lang");
    QTest::addColumn<QString>("code");
    QTest::addColumn<QString>("keyword");
    QTest::newRow("cpp") << "cpp" << "int main() {\n  return a < b && c > 0; // done\n}" << "return";
    QTest::newRow("c++ alias") << "c++" << "for (auto& x : xs) {}" << "for";
    QTest::newRow("python") << "python" << "def f(x):\n    return \"안녕\" if x else None" << "def";
    QTest::newRow("sh alias") << "bash" << "if [ -f a ]; then echo ok; fi" << "then";
  }
  void keywordsAreColouredAndTextKept() {
    QFETCH(QString, lang);
    QFETCH(QString, code);
    QFETCH(QString, keyword);
    for (const bool dark : {false, true}) {
      const QString html = highlighter_.toHtml(code, lang, dark);
      QVERIFY2(!html.isEmpty(), qPrintable(lang));
      QVERIFY2(html.contains(QStringLiteral(">%1<").arg(keyword)), qPrintable(html));
      QVERIFY2(html.contains(QStringLiteral("<font color")) || html.contains(QStringLiteral("color:")),
               qPrintable(html));
      QCOMPARE(plainOf(html).trimmed(), code.trimmed());
    }
  }

  void unknownLanguageIsPlain() {
    QCOMPARE(highlighter_.toHtml("some text", "no-such-language"), QString());
    QCOMPARE(highlighter_.toHtml("some text", ""), QString());
  }
};

int main(int argc, char* argv[]) {
  qputenv("QT_QPA_PLATFORM", "offscreen");  // QTextDocument needs a GUI application
  QGuiApplication app(argc, argv);
  CodeHighlighterTest test;
  return QTest::qExec(&test, argc, argv);
}
#include "test_code_highlighter.moc"
