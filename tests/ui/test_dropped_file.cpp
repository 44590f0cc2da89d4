// Files dropped on the composer (controller/dropped_file.h): what is read, what is refused and
// why, and the block the message carries. References: the bytes each test writes itself; UTF-8's
// rules for what is not text (an invalid sequence, a NUL byte as in binary files); the expected
// blocks written out by hand from CommonMark's fence rule (a fence is closed only by a run of
// backticks at least as long as the opening one, so the opening must be longer than any run
// inside the content).
#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include "controller/dropped_file.h"

using namespace ember::app;

namespace {

QString writeFile(const QTemporaryDir& dir, const QString& name, const QByteArray& bytes) {
  const QString path = dir.filePath(name);
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly) || f.write(bytes) != bytes.size()) return {};
  return path;
}

}  // namespace

class DroppedFileTest : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;

 private slots:
  void koreanTextIsReadAsItIs() {
    const QString text = QStringLiteral("회의록: 다음 주 일정\nNotes: ship on Friday.\n");
    const DroppedFile file = readDroppedFile(writeFile(dir_, "회의록.txt", text.toUtf8()));
    QCOMPARE(file.refusal, DropRefusal::None);
    QCOMPARE(file.name, QStringLiteral("회의록.txt"));
    QCOMPARE(file.text, text);
  }

  void byteOrderMarkIsDropped() {
    const DroppedFile file = readDroppedFile(writeFile(dir_, "bom.txt", "\xEF\xBB\xBFhello"));
    QCOMPARE(file.refusal, DropRefusal::None);
    QCOMPARE(file.text, QStringLiteral("hello"));
  }

  void notTextIsRefused_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::newRow("NUL byte (binary)") << QByteArray("PK\x03\x04\0\0data", 10);
    QTest::newRow("invalid sequence") << QByteArray("caf\xC3\x28");
    QTest::newRow("cut in a Korean character") << QString("한국어").toUtf8().left(7);
    QTest::newRow("lone surrogate encoded") << QByteArray("\xED\xA0\x80");
  }
  void notTextIsRefused() {
    QFETCH(QByteArray, bytes);
    const DroppedFile file = readDroppedFile(writeFile(dir_, "data.bin", bytes));
    QCOMPARE(file.refusal, DropRefusal::NotText);
    QCOMPARE(file.name, QStringLiteral("data.bin"));
    QVERIFY(file.text.isEmpty());
  }

  void sizeLimitIsInclusive() {
    const qint64 limit = 1000;
    const DroppedFile exact =
        readDroppedFile(writeFile(dir_, "exact.txt", QByteArray(limit, 'a')), limit);
    QCOMPARE(exact.refusal, DropRefusal::None);
    QCOMPARE(exact.text.size(), limit);
    const DroppedFile over =
        readDroppedFile(writeFile(dir_, "over.txt", QByteArray(limit + 1, 'a')), limit);
    QCOMPARE(over.refusal, DropRefusal::TooLarge);
    QCOMPARE(over.bytes, limit + 1);
    QVERIFY(over.text.isEmpty());
  }

  void folderAndMissingFileAreRefused() {
    QVERIFY(QDir(dir_.path()).mkdir("notes"));
    const DroppedFile folder = readDroppedFile(dir_.filePath("notes"));
    QCOMPARE(folder.refusal, DropRefusal::Folder);
    QCOMPARE(folder.name, QStringLiteral("notes"));
    const DroppedFile missing = readDroppedFile(dir_.filePath("gone.txt"));
    QCOMPARE(missing.refusal, DropRefusal::Unreadable);
    QVERIFY(!missing.reason.isEmpty());
  }

  void blockFencesTheContent_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("expected");
    QTest::newRow("code, language from the suffix")
        << "notes.py" << "print(1)\n" << "notes.py:\n```py\nprint(1)\n```";
    QTest::newRow("no newline at the end gets one")
        << "a.txt" << "one line" << "a.txt:\n```txt\none line\n```";
    QTest::newRow("no suffix, no language") << "Makefile" << "all:\n" << "Makefile:\n```\nall:\n```";
    QTest::newRow("upper-case suffix") << "README.MD" << "# Title\n" << "README.MD:\n```md\n# Title\n```";
    QTest::newRow("a fence inside: one backtick longer")
        << "guide.md" << "Run:\n```sh\nmake\n```\n" << "guide.md:\n````md\nRun:\n```sh\nmake\n```\n````";
    QTest::newRow("the longest run counts")
        << "x.md" << "`a` ``b`` `````c" << "x.md:\n``````md\n`a` ``b`` `````c\n``````";
    QTest::newRow("Korean") << "메모.txt" << "안녕하세요\n" << "메모.txt:\n```txt\n안녕하세요\n```";
    QTest::newRow("empty file") << "empty.txt" << "" << "empty.txt:\n```txt\n\n```";
  }
  void blockFencesTheContent() {
    QFETCH(QString, name);
    QFETCH(QString, text);
    QFETCH(QString, expected);
    QCOMPARE(attachmentBlock(name, text), expected);
  }
};

QTEST_GUILESS_MAIN(DroppedFileTest)
#include "test_dropped_file.moc"
