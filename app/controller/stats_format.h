#pragma once
// An answer's statistics: from the engine's RequestStats to what the store keeps, and from
// there to the compact line under a bubble and the details panel.
#include <QList>
#include <QString>
#include <QVariantMap>

#include "ember/request.h"
#include "store/store_types.h"

namespace ember::app {

store::MessageStats toMessageStats(const RequestStats& stats, const QList<double>& tokenTimesMs,
                                   const QJsonObject& sampling, const QString& model,
                                   const QString& backend);

// "reused 96 of 130 prompt tokens": how much of the prompt the prefix cache served.
QString promptReuseText(const store::MessageStats& stats);

// "TTFT 120 ms · 48.2 tok/s · 64 tokens · reused 96 of 130 prompt tokens · cpu (avx2, 8 threads)"
// (the reuse part only when the prompt was measured, the backend only when known).
QString compactStatsLine(const store::MessageStats& stats);

// The sampling settings an answer used as label → text rows ("Temperature" → "0.7"), known
// keys first in the settings panel's order, then any others as they are (seed has its own row).
QVariantList samplingRows(const QJsonObject& sampling);

// Every figure as a label → text pair list (for the details panel), plus "tokenTimes".
QVariantMap statsDetails(const store::MessageStats& stats);

}  // namespace ember::app
