// AppController: the context meter. What the shown conversation plus the draft would take as a
// prompt, counted by the engine with the model's template and tokenizer on the worker's thread,
// against what the context leaves for the prompt.
#include <algorithm>

#include "controller/app_controller.h"
#include "controller/conversation_settings.h"

namespace ember::app {

void AppController::setDraft(const QString& text) {
  if (text == meter_.draft) return;
  meter_.draft = text;
  scheduleRecount();
}

void AppController::recount() {
  // A remote model's tokenizer is the server's: no local count stands for it; the meter shows
  // the context length the server reported (0: unknown).
  if (remote_) {
    ++meter_.generation;
    const QVariantMap usage{{"known", false}, {"remote", true},
                            {"contextLength", remote_->contextLength}};
    if (meter_.usage != usage) {
      meter_.usage = usage;
      emit contextUsageChanged();
    }
    return;
  }
  if (!load_.loaded) {
    ++meter_.generation;  // an answer on its way is for a model that is gone
    if (!meter_.usage.isEmpty()) {
      meter_.usage.clear();
      emit contextUsageChanged();
    }
    return;
  }
  WorkerRequest request;
  try {
    request.messages = chatMessages(currentConversation_, 0);
    request.sampling = samplingFrom(effectiveSettings());
  } catch (const std::exception& e) {
    meter_.usage = {{"known", false}, {"error", QString::fromUtf8(e.what())}};
    emit contextUsageChanged();
    return;
  }
  // The draft is what the next message will be; without one, the chat as it stands.
  if (!meter_.draft.trimmed().isEmpty())
    request.messages.push_back({{"role", "user"}, {"content", meter_.draft.toStdString()}});
  const bool onlySystem = std::all_of(request.messages.begin(), request.messages.end(),
                                      [](const auto& m) { return m["role"] == "system"; });
  if (onlySystem) {  // nothing to count yet
    meter_.usage = {{"known", false}};
    emit contextUsageChanged();
    return;
  }
  meter_.countedDraft = meter_.draft;
  emit countInWorker(++meter_.generation, request);
}

void AppController::onTokensCounted(quint64 generation, const PromptTokenCount& count,
                                    const QString& error) {
  if (generation != meter_.generation) return;  // a newer count is on its way
  if (!error.isEmpty()) {
    meter_.usage = {{"known", false}, {"error", error}};
  } else {
    meter_.usage = {{"known", true},
                     {"tokens", count.tokens},
                     {"maxPromptTokens", count.maxPromptTokens},
                     {"contextLength", count.contextLength},
                     {"droppedTurns", count.droppedTurns},
                     {"fits", count.fits},
                     {"error", QString()},
                     {"draft", meter_.countedDraft}};
  }
  emit contextUsageChanged();
}

}  // namespace ember::app
