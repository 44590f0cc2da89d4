// AppController: the context meter. What the shown conversation plus the draft would take as a
// prompt, counted by the engine with the model's template and tokenizer on the worker's thread,
// against what the context leaves for the prompt.
#include <algorithm>

#include "controller/app_controller.h"
#include "controller/conversation_settings.h"

namespace ember::app {

void AppController::setDraft(const QString& text) {
  if (text == draft_) return;
  draft_ = text;
  scheduleRecount();
}

void AppController::recount() {
  // A remote model's tokenizer is the server's: no local count stands for it; the meter shows
  // the context length the server reported (0: unknown).
  if (remote_) {
    ++countGeneration_;
    const QVariantMap usage{{"known", false}, {"remote", true},
                            {"contextLength", remote_->contextLength}};
    if (contextUsage_ != usage) {
      contextUsage_ = usage;
      emit contextUsageChanged();
    }
    return;
  }
  if (!modelLoaded_) {
    ++countGeneration_;  // an answer on its way is for a model that is gone
    if (!contextUsage_.isEmpty()) {
      contextUsage_.clear();
      emit contextUsageChanged();
    }
    return;
  }
  WorkerRequest request;
  try {
    request.messages = chatMessages(currentConversation_, 0);
    request.sampling = samplingFrom(effectiveSettings());
  } catch (const std::exception& e) {
    contextUsage_ = {{"known", false}, {"error", QString::fromUtf8(e.what())}};
    emit contextUsageChanged();
    return;
  }
  // The draft is what the next message will be; without one, the chat as it stands.
  if (!draft_.trimmed().isEmpty())
    request.messages.push_back({{"role", "user"}, {"content", draft_.toStdString()}});
  const bool onlySystem = std::all_of(request.messages.begin(), request.messages.end(),
                                      [](const auto& m) { return m["role"] == "system"; });
  if (onlySystem) {  // nothing to count yet
    contextUsage_ = {{"known", false}};
    emit contextUsageChanged();
    return;
  }
  countedDraft_ = draft_;
  emit countInWorker(++countGeneration_, request);
}

void AppController::onTokensCounted(quint64 generation, const PromptTokenCount& count,
                                    const QString& error) {
  if (generation != countGeneration_) return;  // a newer count is on its way
  if (!error.isEmpty()) {
    contextUsage_ = {{"known", false}, {"error", error}};
  } else {
    contextUsage_ = {{"known", true},
                     {"tokens", count.tokens},
                     {"maxPromptTokens", count.maxPromptTokens},
                     {"contextLength", count.contextLength},
                     {"droppedTurns", count.droppedTurns},
                     {"fits", count.fits},
                     {"error", QString()},
                     {"draft", countedDraft_}};
  }
  emit contextUsageChanged();
}

}  // namespace ember::app
