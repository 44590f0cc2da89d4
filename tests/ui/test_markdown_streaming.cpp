// A long answer streaming into a real MessageBubble (offscreen), piece by piece as the engine
// hands them out: 4,000 pieces of Markdown with prose, lists and fenced code. Checks that the
// incremental split (splitMarkdownFrom: only the last block is split again) gives exactly the
// blocks of a full split at every step, and that while streaming only the last two segments of
// the bubble ever get new text (the one being written, and the one it closes): the blocks before
// are not parsed again. Prints the GUI thread's time per piece (bindings, Markdown parsing of the
// changed segment, layout and the frame), the lag a steady stream would see with those times,
// and the split's cost both ways, side by side in this run. The machine may be busy: the figures
// are for reading, not asserted. Reference for correctness: the full split of the same text.
#include <ctime>
#include <functional>
#include <QGuiApplication>
#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickStyle>
#include <QQuickWindow>
#include <QTemporaryDir>
#include <QtQml/qqmlextensionplugin.h>
#include <QtTest>

#include "common/store_open_wait.h"
#include "controller/app_controller.h"
#include "models/markdown_blocks.h"

Q_IMPORT_QML_PLUGIN(EmberPlugin)

using namespace ember::app;

namespace {

// About 4,000 pieces of 1 to 6 characters (an engine's text pieces are about that long).
QStringList answerPieces() {
  QString text;
  for (int section = 1; text.size() < 16000; ++section) {
    text += QStringLiteral("## Step %1\n\nThis step explains **part %1** of the plan, with a "
                           "[link](https://example.org/%1) and `inline code`.\n\n- first point\n"
                           "- second point with *emphasis*\n\n```python\ndef step_%1(x):\n"
                           "    return x * %1  # comment\n```\n\n").arg(section);
  }
  QStringList pieces;
  for (qsizetype at = 0, n = 0; at < text.size(); ++n) {
    const qsizetype len = 1 + (n * 7) % 6;
    pieces << text.mid(at, len);
    at += len;
  }
  return pieces;
}

double percentile(QList<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v.isEmpty() ? 0 : v.at(qMin(v.size() - 1, qsizetype(p / 100.0 * double(v.size()))));
}

// How late each piece would be handled if pieces arrived every `intervalMs` and the GUI thread
// took costMs[i] for piece i (a single queue: a slow piece delays the ones behind it).
QList<double> lagForSteadyStream(const QList<double>& costMs, double intervalMs) {
  QList<double> lag;
  double busyUntil = 0;
  for (qsizetype i = 0; i < costMs.size(); ++i) {
    const double arrives = double(i) * intervalMs;
    const double starts = std::max(arrives, busyUntil);
    busyUntil = starts + costMs[i];
    lag << busyUntil - arrives;
  }
  return lag;
}

// The bubble's text segments in order (the Repeater's delegates in the body column).
QList<QQuickItem*> segmentsOf(QQuickItem* body) {
  QList<QQuickItem*> found;
  for (QQuickItem* child : body->childItems())
    if (child->objectName() == QLatin1String("segment")) found << child;
  std::sort(found.begin(), found.end(), [](QQuickItem* a, QQuickItem* b) {
    return a->property("index").toInt() < b->property("index").toInt();
  });
  return found;
}

// CPU time of the calling thread, in ms: what the GUI thread itself spent, whatever else the
// (shared, busy) machine runs.
double threadCpuMs() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) * 1e3 + double(t.tv_nsec) / 1e6;
}

}  // namespace

class MarkdownStreamingTest : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  std::unique_ptr<AppController> controller_;

 private slots:
  void initTestCase() {
    AppController::Options options;
    options.databasePath = dir_.filePath("ember.sqlite");
    controller_ = std::make_unique<AppController>(options);
    QVERIFY(ember::test::waitForStoreOpen(*controller_));
    AppController::setInstance(controller_.get());
  }

  // Blocks of small answers, written out by hand from the rules in markdown_blocks.h (a new
  // block after a blank line unless indented, before an ATX heading, fences apart).
  void splitsAsMarkdownStartsBlocks() {
    struct Case {
      QString text;
      QStringList blocks;  // "P:" prose, "C<lang>:" code, then the block's text
    };
    const QList<Case> cases = {
        {"one\ntwo\n\nthree", {"P:one\ntwo\n", "P:three"}},
        {"- a\n\n  still a\nnext", {"P:- a\n\n  still a\nnext"}},
        {"text\n# Title\nmore", {"P:text", "P:# Title\nmore"}},
        {"text\n#", {"P:text\n#"}},             // "#" may still become "#x"
        {"text\n#\nafter", {"P:text", "P:#\nafter"}},  // a complete "#" line is a heading
        {"#hashtag\nline", {"P:#hashtag\nline"}},
        {"intro\n```python\nx = 1\n\ny = 2\n```\nafter", {"P:intro", "Cpython:x = 1\n\ny = 2", "P:after"}},
        {"~~~ c++\nint a;\n````\n~~~~", {"Cc++:int a;\n````"}},  // only its own mark closes, a longer run too
        {"```\nopen and\nstill streaming", {"C:open and\nstill streaming"}},
        {"```js", {"Cjs:"}},
        {"\n\n   \n", {}},
    };
    for (const Case& c : cases) {
      QStringList got;
      for (const MarkdownBlock& b : splitMarkdown(c.text))
        got << (b.code ? QStringLiteral("C%1:").arg(b.lang) : QStringLiteral("P:")) + b.text;
      QCOMPARE(got, c.blocks);
    }
    // closed: every block but the last; the last code block once its closing fence line ended.
    const QList<MarkdownBlock> open = splitMarkdown(QStringLiteral("a\n\n```sh\nls\n```"));
    QCOMPARE(open.size(), 2);
    QVERIFY(open[0].closed);
    QVERIFY(!open[1].closed);
    QVERIFY(splitMarkdown(QStringLiteral("a\n\n```sh\nls\n```\n")).last().closed);
  }

  // The reference: the full split of the same text at every step.
  void incrementalSplitEqualsFullSplit() {
    QList<MarkdownBlock> previous;
    QString text, previousText;
    QElapsedTimer incremental, full;
    qint64 incrementalNs = 0, fullNs = 0;
    const QStringList pieces = answerPieces();
    for (const QString& piece : pieces) {
      text += piece;
      qsizetype kept = -1;
      incremental.start();
      const QList<MarkdownBlock> blocks = splitMarkdownFrom(previous, previousText, text, &kept);
      incrementalNs += incremental.nsecsElapsed();
      full.start();
      const QList<MarkdownBlock> reference = splitMarkdown(text);
      fullNs += full.nsecsElapsed();
      QCOMPARE(blocks, reference);
      QCOMPARE(kept, qMax<qsizetype>(0, previous.size() - 1));
      previous = blocks;
      previousText = text;
    }
    // Not an extension (an edit): split in full.
    qsizetype kept = -1;
    QCOMPARE(splitMarkdownFrom(previous, previousText, QStringLiteral("other"), &kept),
             splitMarkdown(QStringLiteral("other")));
    QCOMPARE(kept, 0);
    qInfo("split over %lld pieces: incremental %.1f ms in all, full %.1f ms (%.1fx)",
          qlonglong(pieces.size()), incrementalNs / 1e6, fullNs / 1e6,
          incrementalNs > 0 ? double(fullNs) / double(incrementalNs) : 0.0);
  }

  void longAnswerStreamsIntoABubble() {
    QQmlApplicationEngine engine;
    engine.addImportPath(QStringLiteral("qrc:/qt/qml"));  // the Ember module's own resources
    engine.loadData(R"(
      import QtQuick
      import Ember
      Window {
        id: root
        width: 900; height: 700; visible: true
        property string answer: ""
        MessageBubble {
          objectName: "bubble"
          width: 900
          index: 0; messageId: 1; role: "assistant"; text: root.answer; status: "streaming"
          statsLine: ""; errorText: ""; siblingIndex: 0; siblingCount: 1; streaming: true
          isLast: true; liveText: "Writing"; liveFraction: -1; reasoning: ""; reasoningSeconds: -1
        }
      })");
    QVERIFY(!engine.rootObjects().isEmpty());
    auto* window = qobject_cast<QQuickWindow*>(engine.rootObjects().first());
    QVERIFY(QTest::qWaitForWindowExposed(window));
    int frames = 0;
    connect(window, &QQuickWindow::frameSwapped, this, [&] { ++frames; });
    // The bubble's column of segments (the MessageBubble item itself has the same name).
    QQuickItem* body = nullptr;
    for (QQuickItem* item : window->findChildren<QQuickItem*>("bubble"))
      if (item->inherits("QQuickColumn")) body = item;
    QVERIFY(body);
    QString text;
    QList<double> perPieceMs, updateCpuMs, frameCpuMs;
    QElapsedTimer clock, total;
    QHash<QQuickItem*, QString> shown;  // each segment's text after the previous piece
    int rewrites = 0, earlierRewrites = 0;
    // A piece's CPU time, apart for pieces that start a block (a delegate is built) and the rest.
    QList<double> startedBlockCpuMs, grewBlockCpuMs;
    qsizetype blocksBefore = 0;
    total.start();
    for (const QString& piece : answerPieces()) {
      text += piece;
      clock.start();
      const double cpu0 = threadCpuMs();
      window->setProperty("answer", text);  // the split, the segment rows, their bindings
      const double cpu1 = threadCpuMs();
      QCoreApplication::processEvents();  // polish, layout, the frame
      perPieceMs << double(clock.nsecsElapsed()) / 1e6;
      updateCpuMs << cpu1 - cpu0;
      frameCpuMs << threadCpuMs() - cpu1;
      // Outside the clock: which segments got new text with this piece.
      const QList<QQuickItem*> segments = segmentsOf(body);
      (segments.size() > blocksBefore ? startedBlockCpuMs : grewBlockCpuMs)
          << updateCpuMs.last() + frameCpuMs.last();
      blocksBefore = segments.size();
      for (qsizetype i = 0; i < segments.size(); ++i) {
        const QString now = segments[i]->property("text").toString();
        const auto it = shown.find(segments[i]);
        if (it != shown.end() && *it != now) {
          ++rewrites;
          if (i < segments.size() - 2) ++earlierRewrites;
        }
        shown[segments[i]] = now;
      }
    }
    const int segmentCount = int(segmentsOf(body).size());
    qInfo("4000-piece answer (%lld chars, %d segments): GUI thread per piece (wall) p50 %.2f ms, "
          "p95 %.2f ms, max %.2f ms; %.1f s in all, %d frames; %d segment rewrites",
          qlonglong(text.size()), segmentCount, percentile(perPieceMs, 50),
          percentile(perPieceMs, 95), percentile(perPieceMs, 100), total.elapsed() / 1000.0,
          frames, rewrites);
    qInfo("  its CPU time per piece: update (split, rows, bindings) p50 %.2f ms, p95 %.2f ms; "
          "polish + layout + frame p50 %.2f ms, p95 %.2f ms",
          percentile(updateCpuMs, 50), percentile(updateCpuMs, 95), percentile(frameCpuMs, 50),
          percentile(frameCpuMs, 95));
    qInfo("  CPU per piece that starts a block (%lld pieces): p50 %.2f ms, p95 %.2f ms; that "
          "grows one (%lld): p50 %.2f ms, p95 %.2f ms",
          qlonglong(startedBlockCpuMs.size()), percentile(startedBlockCpuMs, 50),
          percentile(startedBlockCpuMs, 95), qlonglong(grewBlockCpuMs.size()),
          percentile(grewBlockCpuMs, 50), percentile(grewBlockCpuMs, 95));
    QList<double> cpuMs;
    for (qsizetype i = 0; i < updateCpuMs.size(); ++i) cpuMs << updateCpuMs[i] + frameCpuMs[i];
    for (const double interval : {20.0, 10.0}) {
      const QList<double> lag = lagForSteadyStream(perPieceMs, interval);
      const QList<double> cpuLag = lagForSteadyStream(cpuMs, interval);
      qInfo("  a piece every %.0f ms (%.0f tok/s): lag by wall times p50 %.2f ms, p95 %.2f ms, "
            "max %.2f ms; by CPU times p50 %.2f ms, p95 %.2f ms, max %.2f ms (one frame at "
            "60 Hz: 16.7 ms)",
            interval, 1000.0 / interval, percentile(lag, 50), percentile(lag, 95),
            percentile(lag, 100), percentile(cpuLag, 50), percentile(cpuLag, 95),
            percentile(cpuLag, 100));
    }
    // Only the segment being written and the one it just closed ever change.
    QCOMPARE(earlierRewrites, 0);
    QVERIFY(segmentCount > 100);  // blocks: prose paragraphs, lists, headings and code apart
    // The bubble shows all of it: every code block became a code segment.
    const int blocks = int(text.count(QStringLiteral("```python")));
    int codeSegments = 0;
    std::function<void(QQuickItem*)> walk = [&](QQuickItem* item) {
      if (item->objectName() == QLatin1String("codeText") && item->isVisible()) ++codeSegments;
      for (QQuickItem* child : item->childItems()) walk(child);
    };
    walk(window->contentItem());
    QCOMPARE(codeSegments, blocks);
  }
};

int main(int argc, char* argv[]) {
  qputenv("QT_QPA_PLATFORM", "offscreen");
  QGuiApplication app(argc, argv);
  QQuickStyle::setStyle(QStringLiteral("Fusion"));
  MarkdownStreamingTest test;
  return QTest::qExec(&test, argc, argv);
}
#include "test_markdown_streaming.moc"
