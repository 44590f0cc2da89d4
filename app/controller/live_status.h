#pragma once
// What an answer bubble says while its request is alive, before the stats line takes over:
// "Waiting for a free slot…", "Reading prompt 640/2048 tokens (512 reused) · about 12 s left"
// with a progress fraction, then the live speed while the answer streams. Fed with the worker's
// progress events and text pieces (times in ms since submission); pure logic, no Qt objects.
#include <QCoreApplication>
#include <QString>

namespace ember::app {

class LiveStatus {
 Q_DECLARE_TR_FUNCTIONS(LiveStatus)

 public:
  enum class Stage { Submitted, Waiting, Reading, Streaming };

  void onProgress(int done, int total, int cached, bool waiting, double ms);
  void onPiece(double ms);

  Stage stage() const { return stage_; }
  QString text() const;
  // 0..1 while the prompt is read; -1 when there is no bar to show.
  double fraction() const;
  // Seconds until the prompt is read at the rate measured so far; -1 until there is a rate.
  double secondsLeft() const;
  // Pieces per second over the answer so far (a piece is one token's text, nearly always);
  // 0 until two pieces arrived.
  double piecesPerSecond() const;
  int pieces() const { return pieces_; }

 private:
  Stage stage_ = Stage::Submitted;
  int done_ = 0, total_ = 0, cached_ = 0;
  // The first Reading event of this read: the rate is measured from it (a reused prefix costs
  // nothing and must not inflate it).
  int readStartDone_ = -1;
  double readStartMs_ = 0, lastProgressMs_ = 0;
  int pieces_ = 0;
  double firstPieceMs_ = 0, lastPieceMs_ = 0;
};

}  // namespace ember::app
