// LiveStatus: what an answer bubble says while its request is alive. References: numbers
// worked out by hand below (rates are tokens over the milliseconds between two events; the
// estimate is the tokens left at that rate, rounded up to whole seconds), and the wording the
// bubble promises ("Waiting for a free slot", "Reading prompt N/M tokens (K reused)").
#include <QtTest>

#include "controller/live_status.h"

using ember::app::LiveStatus;

class LiveStatusTest : public QObject {
  Q_OBJECT
 private slots:
  void startsBeforeAnyEvent() {
    LiveStatus s;
    QCOMPARE(s.stage(), LiveStatus::Stage::Submitted);
    QCOMPARE(s.fraction(), -1.0);
    QCOMPARE(s.text(), QStringLiteral("Starting…"));
  }

  void waitingHasNoBar() {
    LiveStatus s;
    s.onProgress(0, 900, 0, true, 5);
    QCOMPARE(s.stage(), LiveStatus::Stage::Waiting);
    QCOMPARE(s.fraction(), -1.0);
    QVERIFY(s.text().startsWith(QStringLiteral("Waiting for a free slot")));
  }

  void readingWithEstimate() {
    LiveStatus s;
    s.onProgress(0, 2048, 0, false, 100);
    QCOMPARE(s.text(), QStringLiteral("Reading prompt 0/2048 tokens"));  // no rate yet
    QCOMPARE(s.fraction(), 0.0);
    QCOMPARE(s.secondsLeft(), -1.0);
    // 512 tokens in 1000 ms: 512 tok/s; 1536 left -> 3 s.
    s.onProgress(512, 2048, 0, false, 1100);
    QCOMPARE(s.fraction(), 0.25);
    QCOMPARE(s.secondsLeft(), 3.0);
    QCOMPARE(s.text(), QStringLiteral("Reading prompt 512/2048 tokens · about 3 s left"));
    // 1000 tokens in 2400 ms: 416.67 tok/s; 1048 left -> 2.515 s -> "about 3 s".
    s.onProgress(1000, 2048, 0, false, 2500);
    QVERIFY(qAbs(s.secondsLeft() - 1048.0 / (1000.0 / 2.4)) < 1e-9);
    QCOMPARE(s.text(), QStringLiteral("Reading prompt 1000/2048 tokens · about 3 s left"));
    s.onProgress(2048, 2048, 0, false, 4000);  // done: no estimate left to show
    QCOMPARE(s.fraction(), 1.0);
    QCOMPARE(s.text(), QStringLiteral("Reading prompt 2048/2048 tokens"));
  }

  void reusedPrefixDoesNotInflateTheRate() {
    LiveStatus s;
    // Reading starts at the 512 reused tokens; 512 more in 1000 ms -> 512 tok/s, 1024 left: 2 s.
    s.onProgress(512, 2048, 512, false, 50);
    s.onProgress(1024, 2048, 512, false, 1050);
    QCOMPARE(s.secondsLeft(), 2.0);
    QCOMPARE(s.text(),
             QStringLiteral("Reading prompt 1024/2048 tokens (512 reused) · about 2 s left"));
  }

  void streamingSpeed() {
    LiveStatus s;
    s.onProgress(10, 10, 0, false, 900);
    s.onPiece(1000);
    QCOMPARE(s.stage(), LiveStatus::Stage::Streaming);
    QCOMPARE(s.fraction(), -1.0);
    QCOMPARE(s.text(), QStringLiteral("Writing…"));
    for (double ms : {1100.0, 1200.0, 1300.0, 1400.0}) s.onPiece(ms);
    // 4 gaps over 400 ms -> 10 tok/s.
    QCOMPARE(s.piecesPerSecond(), 10.0);
    QCOMPARE(s.text(), QStringLiteral("Writing · 10.0 tok/s"));
    s.onProgress(10, 10, 0, false, 1500);  // a late progress event does not go back
    QCOMPARE(s.stage(), LiveStatus::Stage::Streaming);
  }

  void requeuedAfterPreemptionStartsOver() {
    LiveStatus s;
    s.onProgress(0, 1000, 0, false, 0);
    s.onProgress(500, 1000, 0, false, 1000);
    s.onProgress(0, 1000, 0, true, 1100);  // preempted: queued again
    QCOMPARE(s.stage(), LiveStatus::Stage::Waiting);
    s.onProgress(0, 1000, 0, false, 2000);
    s.onProgress(250, 1000, 0, false, 2500);  // 500 tok/s since the new start; 750 left -> 1.5 s
    QCOMPARE(s.secondsLeft(), 1.5);
  }
};

QTEST_GUILESS_MAIN(LiveStatusTest)
#include "test_live_status.moc"
