#pragma once
// Values that travel between the GUI thread and the inference thread through queued signals.
// Everything here is copied; nothing points into objects owned by the other thread.
#include <QMetaType>
#include <QString>
#include <memory>
#include <nlohmann/json.hpp>

#include "ember/engine.h"
#include "ember/request.h"

namespace ember::app {

// One answer to produce: the chat so far (role/content objects) and the sampler's settings.
struct WorkerRequest {
  QString key;  // chosen by the caller; every signal about this request carries it
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  SamplingParams sampling;
};

// What the worker reports when a model is ready.
struct LoadedModel {
  ModelInfo info;
  qint64 vocabSize = 0;
};

}  // namespace ember::app

Q_DECLARE_METATYPE(ember::app::WorkerRequest)
Q_DECLARE_METATYPE(ember::app::LoadedModel)
Q_DECLARE_METATYPE(ember::EngineOptions)
Q_DECLARE_METATYPE(ember::RequestStats)
Q_DECLARE_METATYPE(ember::PromptTokenCount)
Q_DECLARE_METATYPE(std::shared_ptr<ember::LoadControl>)
