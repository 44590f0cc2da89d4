#pragma once
// What the controller fault tests share: the model they answer with, the GUI thread's bound and
// its meter, a send that waits for the answer, and the version-2 fixture database.
#include <QElapsedTimer>
#include <QFile>
#include <QObject>
#include <QSignalSpy>
#include <QString>
#include <QTimer>
#include <QtTest>
#include <algorithm>

#include "app/store/store_test_support.h"
#include "common/test_paths.h"
#include "controller/app_controller.h"

namespace ember::test::fault {

constexpr auto kModel = "SmolLM2-135M-Instruct.Q4_1.gguf";
constexpr qint64 kGapBoundMs = 400;  // the GUI thread's longest stand-still allowed

// The GUI thread's longest gap between two ticks of a 5 ms timer on it, from start() on: how long
// the window could not have drawn or taken input.
class GuiGapMeter {
 public:
  GuiGapMeter() {
    ticker_.setInterval(5);
    QObject::connect(&ticker_, &QTimer::timeout,
                     [this] { longestMs_ = std::max(longestMs_, sinceTick_.restart()); });
  }
  void start() {
    longestMs_ = 0;
    sinceTick_.start();
    ticker_.start();
  }
  void stop() { ticker_.stop(); }
  qint64 longestMs() const { return longestMs_; }

 private:
  QTimer ticker_;
  QElapsedTimer sinceTick_;
  qint64 longestMs_ = 0;
};

inline bool sendAndFinish(app::AppController& controller, const QString& text) {
  QSignalSpy finished(&controller, &app::AppController::answerFinished);
  if (!controller.send(text)) return false;
  return QTest::qWaitFor([&] { return finished.count() >= 1; }, 120000);
}

// The version-2 fixture (a released schema) with `extra` more messages in its first chat; kept
// when `path` exists.
inline bool makeV2Fixture(const QString& path, int extra) {
  if (QFile::exists(path)) return true;
  QFile sql(ember::test::sourceDir() + "/tests/fault/data/chats_v2.sql");
  if (!sql.open(QIODevice::ReadOnly)) return false;
  store::test::RawDb raw(path, store::test::RawDb::Create);
  if (!raw.exec(QString::fromUtf8(sql.readAll()))) return false;
  return extra == 0 || raw.exec(QStringLiteral(
      "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < %1) "
      "INSERT INTO messages (conversation_id, parent_id, role, content, created_at, status) "
      "SELECT (SELECT min(id) FROM conversations), NULL, 'user', "
      "printf('startup message %d about kestrels and slow disks, long enough to take "
      "room in the index', x), x, 'complete' FROM n").arg(extra));
}

}  // namespace ember::test::fault
