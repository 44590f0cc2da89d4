// The blocks model a message bubble builds its delegates from, under Qt's own
// QAbstractItemModelTester (every signal and index checked against the QAbstractItemModel
// contract as each change happens). What a streaming answer must cost is asserted through the
// model's own signals: a piece announces only the row it changed (or the rows it added), never a
// finished block. Expected blocks are written out by hand from the Markdown rules in
// markdown_blocks.h.
#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QtTest>

#include "models/message_segment_model.h"

using ember::app::MessageSegmentModel;

namespace {

// "P:text" for prose, "C<lang>:text" for code, "+" appended when the block is closed.
QStringList blocksOf(const MessageSegmentModel& m) {
  QStringList out;
  for (int i = 0; i < m.rowCount(); ++i) {
    const QModelIndex at = m.index(i);
    const bool code = m.data(at, MessageSegmentModel::CodeRole).toBool();
    QString line = code ? QStringLiteral("C%1:").arg(m.data(at, MessageSegmentModel::LangRole).toString())
                        : QStringLiteral("P:");
    line += m.data(at, MessageSegmentModel::TextRole).toString();
    if (m.data(at, MessageSegmentModel::ClosedRole).toBool()) line += QLatin1Char('+');
    out << line;
  }
  return out;
}

// The rows a dataChanged spy saw, in order.
QList<int> changedRows(const QSignalSpy& spy) {
  QList<int> rows;
  for (const QList<QVariant>& call : spy) {
    const auto from = call.at(0).toModelIndex(), to = call.at(1).toModelIndex();
    for (int r = from.row(); r <= to.row(); ++r) rows << r;
  }
  return rows;
}

}  // namespace

class MessageSegmentModelTest : public QObject {
  Q_OBJECT
 private slots:
  void streamingAnnouncesOnlyTheChangedTail() {
    MessageSegmentModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
    QSignalSpy resplit(&model, &MessageSegmentModel::resplit);

    model.setText(QStringLiteral("Intro"));
    QCOMPARE(blocksOf(model), QStringList({"P:Intro"}));
    QCOMPARE(inserted.size(), 1);

    model.setText(QStringLiteral("Intro line\n\n```py"));
    QCOMPARE(blocksOf(model), QStringList({"P:Intro line\n+", "Cpy:"}));
    QCOMPARE(changedRows(changed), QList<int>({0}));  // the prose got its end and was closed
    changed.clear();

    model.setText(QStringLiteral("Intro line\n\n```py\nx = 1"));
    QCOMPARE(blocksOf(model), QStringList({"P:Intro line\n+", "Cpy:x = 1"}));
    QCOMPARE(changedRows(changed), QList<int>({1}));  // only the open code block
    changed.clear();

    // The closing fence line still growing: not closed yet; once it ends, closed.
    model.setText(QStringLiteral("Intro line\n\n```py\nx = 1\n```"));
    QCOMPARE(blocksOf(model), QStringList({"P:Intro line\n+", "Cpy:x = 1"}));
    model.setText(QStringLiteral("Intro line\n\n```py\nx = 1\n```\n"));
    QCOMPARE(blocksOf(model), QStringList({"P:Intro line\n+", "Cpy:x = 1+"}));
    QCOMPARE(changedRows(changed), QList<int>({1}));  // its closed role, nothing else
    QCOMPARE(changed.last().at(2).value<QList<int>>(), QList<int>({MessageSegmentModel::ClosedRole}));
    changed.clear();

    model.setText(QStringLiteral("Intro line\n\n```py\nx = 1\n```\nDone."));
    QCOMPARE(blocksOf(model), QStringList({"P:Intro line\n+", "Cpy:x = 1+", "P:Done."}));
    QCOMPARE(changedRows(changed), QList<int>());  // a row added, none rewritten
    QCOMPARE(inserted.size(), 3);
    QCOMPARE(resplit.size(), 0);  // every step extended the text
  }

  void replacedTextIsSplitAnew() {
    MessageSegmentModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy resplit(&model, &MessageSegmentModel::resplit);
    model.setText(QStringLiteral("# A\nfirst\n\nsecond"));
    QCOMPARE(blocksOf(model), QStringList({"P:# A\nfirst\n+", "P:second"}));
    QCOMPARE(resplit.size(), 0);
    model.setText(QStringLiteral("# B"));  // another branch: not an extension
    QCOMPARE(blocksOf(model), QStringList({"P:# B"}));
    QCOMPARE(resplit.size(), 1);
    model.setText(QString());
    QCOMPARE(model.rowCount(), 0);
  }

  // The blank line after the fence belongs to the prose block after it, as in the full split.
  void plainTextIsOneBlockAsWritten() {
    MessageSegmentModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setMarkdown(false);
    model.setText(QStringLiteral("my code:\n```\nx\n```\n\n# not a heading"));
    QCOMPARE(blocksOf(model), QStringList({"P:my code:\n```\nx\n```\n\n# not a heading+"}));
    model.setMarkdown(true);  // the same text, now as Markdown
    QCOMPARE(blocksOf(model), QStringList({"P:my code:+", "C:x+", "P:\n# not a heading"}));
  }
};

QTEST_GUILESS_MAIN(MessageSegmentModelTest)
#include "test_message_segment_model.moc"
