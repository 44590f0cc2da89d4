#include "controller/live_status.h"

#include <algorithm>
#include <cmath>

namespace ember::app {

void LiveStatus::onProgress(int done, int total, int cached, bool waiting, double ms) {
  if (stage_ == Stage::Streaming) return;  // a late event of a finished read
  if (waiting) {
    stage_ = Stage::Waiting;
    total_ = total;
    readStartDone_ = -1;  // queued again (a preemption): the read starts over
    return;
  }
  stage_ = Stage::Reading;
  done_ = done;
  total_ = total;
  cached_ = cached;
  if (readStartDone_ < 0 || done < readStartDone_) {
    readStartDone_ = done;
    readStartMs_ = ms;
  }
  lastProgressMs_ = ms;
}

void LiveStatus::onPiece(double ms) {
  stage_ = Stage::Streaming;
  if (pieces_ == 0) firstPieceMs_ = ms;
  lastPieceMs_ = ms;
  ++pieces_;
}

double LiveStatus::fraction() const {
  if (stage_ != Stage::Reading || total_ <= 0) return -1;
  return std::clamp(double(done_) / total_, 0.0, 1.0);
}

double LiveStatus::secondsLeft() const {
  if (stage_ != Stage::Reading || readStartDone_ < 0) return -1;
  const double elapsed = lastProgressMs_ - readStartMs_;
  const int read = done_ - readStartDone_;
  if (read <= 0 || elapsed <= 0) return -1;
  return (total_ - done_) / (read / elapsed) / 1000.0;
}

double LiveStatus::piecesPerSecond() const {
  const double elapsed = lastPieceMs_ - firstPieceMs_;
  if (pieces_ < 2 || elapsed <= 0) return 0;
  return (pieces_ - 1) / (elapsed / 1000.0);
}

QString LiveStatus::text() const {
  switch (stage_) {
    case Stage::Submitted: return tr("Starting…");
    case Stage::Waiting: return tr("Waiting for a free slot (other chats are answering)…");
    case Stage::Reading: {
      QString line = cached_ > 0 ? tr("Reading prompt %1/%2 tokens (%3 reused)")
                                       .arg(done_).arg(total_).arg(cached_)
                                 : tr("Reading prompt %1/%2 tokens").arg(done_).arg(total_);
      const double left = secondsLeft();
      if (left >= 0 && done_ < total_)
        line += QStringLiteral(" · ") +
                tr("about %n s left", "", static_cast<int>(std::max(1.0, std::ceil(left))));
      return line;
    }
    case Stage::Streaming: {
      const double rate = piecesPerSecond();
      if (rate <= 0) return tr("Writing…");
      return tr("Writing · %1 tok/s").arg(rate, 0, 'f', 1);
    }
  }
  return {};
}

}  // namespace ember::app
