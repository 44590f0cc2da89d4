#pragma once
// Per-conversation settings as the store keeps them (a JSON object), their built-in defaults,
// and their translation to the engine's SamplingParams with the engine's own validation, so that
// the settings panel refuses exactly what the engine would refuse.
#include <QJsonObject>
#include <QString>
#include <QVariant>

#include "ember/sampling_params.h"

namespace ember::app {

// Keys: systemPrompt, temperature, topP, topK, minP, repeatPenalty, maxTokens, seed ("random" or
// a decimal), contextLength (0 = the model's), threads (0 = one per core); and for the next model
// load: maxSequences (answers generated at once, 1..kMaxSequencesLimit), backend (the compute
// device: "auto", "cpu" or "cuda", EngineOptions::backend).
inline constexpr int kDefaultMaxSequences = 4;
inline constexpr int kMaxSequencesLimit = 64;
QJsonObject builtInSettings();

// Throws ember::Error (a message for the user) when a value is malformed.
SamplingParams samplingFrom(const QJsonObject& settings);
QJsonObject samplingJson(const SamplingParams& params);  // as stored with each answer's stats

struct ModelLimits {
  qint64 vocabSize = 0;       // 0 when no model is loaded: only the model-free checks run
  qint64 trainedContext = 0;
  qint64 contextLength = 0;
};

// The message for the user when `key` set to `value` (as typed) is refused, or an empty string.
// On success, *normalized (when given) holds the value to store.
QString settingError(const QJsonObject& current, const QString& key, const QVariant& value,
                     const ModelLimits& limits, QJsonValue* normalized = nullptr);

}  // namespace ember::app
