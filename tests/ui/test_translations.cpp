// The Korean translation: chosen by the system locale unless the setting says otherwise, every
// string of the .ts translated, and found at run time for QML and for C++ classes inside
// namespaces (whose context Qt asks with the namespace). Also a check that the QML shows no
// English text outside qsTr. References: the .ts in resources/translations (the translations
// themselves) and Qt's documented contexts (QML: the file's base name; QObject::tr: the class's
// full name).
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QRegularExpression>
#include <QtTest>

#include "common/test_paths.h"
#include "controller/translations.h"

using namespace ember::app;

class TranslationsTest : public QObject {
  Q_OBJECT
 private slots:
  void chooseLanguage_data() {
    QTest::addColumn<QString>("preference");
    QTest::addColumn<QString>("locale");
    QTest::addColumn<QString>("expected");
    QTest::newRow("korean desktop") << "system" << "ko_KR" << "ko";
    QTest::newRow("unset = system") << "" << "ko_KR" << "ko";
    QTest::newRow("english desktop") << "system" << "en_US" << "en";
    QTest::newRow("no translation yet") << "system" << "fr_FR" << "en";
    QTest::newRow("override to english") << "en" << "ko_KR" << "en";
    QTest::newRow("override to korean") << "ko" << "en_GB" << "ko";
    QTest::newRow("C locale") << "system" << "C" << "en";
  }
  void chooseLanguage() {
    QFETCH(QString, preference);
    QFETCH(QString, locale);
    QFETCH(QString, expected);
    QCOMPARE(ember::app::chooseLanguage(preference, locale), expected);
  }

  void everyStringIsTranslated() {
    QFile ts(QDir(ember::test::sourceDir()).filePath("resources/translations/ember_ko.ts"));
    QVERIFY(ts.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(ts.readAll());
    QVERIFY(text.count(QStringLiteral("<message")) > 150);
    QCOMPARE(text.count(QStringLiteral("type=\"unfinished\"")), 0);
    QCOMPARE(text.count(QStringLiteral("type=\"vanished\"")), 0);
  }

  void koreanIsFoundAtRunTime() {
    QCOMPARE(installTranslation(*QCoreApplication::instance(), QStringLiteral("ko")),
             QStringLiteral("ko"));
    QCOMPARE(QCoreApplication::translate("ember::app::AppController", "New chat"),
             QStringLiteral("새 대화"));  // C++ in a namespace
    QCOMPARE(QCoreApplication::translate("LiveStatus", "Reading prompt %1/%2 tokens"),
             QStringLiteral("프롬프트 읽는 중 %1/%2 토큰"));
    QCOMPARE(QCoreApplication::translate("Composer", "Send"), QStringLiteral("보내기"));  // QML
    QCOMPARE(QCoreApplication::translate("ember::app::LocalApiServer", "Key kept %1."),
             QStringLiteral("API 키: %1."));  // the local API server's key line
    QCOMPARE(QCoreApplication::translate("ReasoningSection", "Thought for %n s", nullptr, 3),
             QStringLiteral("3초 동안 생각함"));
  }

  // A string shown to people is written with qsTr in QML: a bare English literal after `text:`
  // or `placeholderText:` would stay English on a Korean desktop.
  void qmlHasNoBareText() {
    static const QRegularExpression bare(
        QStringLiteral("(?:^|\\s)(?:text|placeholderText|title|Accessible\\.name):\\s*\"[^\"]*[A-Za-z]{2}"));
    QDirIterator it(QDir(ember::test::sourceDir()).filePath("ui"), {"*.qml"});
    QStringList offenders;
    while (it.hasNext()) {
      QFile f(it.next());
      QVERIFY(f.open(QIODevice::ReadOnly));
      int line = 0;
      for (const QString& l : QString::fromUtf8(f.readAll()).split('\n')) {
        ++line;
        if (bare.match(l).hasMatch())
          offenders << QStringLiteral("%1:%2: %3").arg(it.fileName()).arg(line).arg(l.trimmed());
      }
    }
    QVERIFY2(offenders.isEmpty(), qPrintable(offenders.join('\n')));
  }
};

QTEST_GUILESS_MAIN(TranslationsTest)
#include "test_translations.moc"
