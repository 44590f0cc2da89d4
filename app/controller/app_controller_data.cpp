// AppController: the store, conversations, search, model loading and settings.
#include <QFileInfo>
#include <QUrl>

#include "controller/app_controller.h"
#include "controller/conversation_settings.h"
#include "controller/stats_format.h"
#include "logging/app_log.h"

namespace ember::app {

// Store calls run on the store's own thread. The writes made while an answer streams are queued
// and never hold the GUI thread; the calls whose answer the GUI needs (a new message's id, what a
// view shows) are waited for. A write that finds the database locked by another program waits
// at most this long, then fails with a message the notice shows (the window never freezes for
// the store's default of seconds). Ember's own writes take milliseconds, and a second Ember
// process cannot hold the lock: it opens the store read-only.
constexpr int kGuiStoreWaitMs = 300;

void AppController::openStore(const QString& path) {
  try {
    store::ChatStore::Options options;
    options.busyTimeoutMs = kGuiStoreWaitMs;
    const store::OpenReport report = store_.open(path, options);
    if (report.recoveredFromCorruption)
      setNotice(tr("The chat database was damaged and has been set aside as %1; a new one was "
                   "started.").arg(report.corruptBackupPath));
    else if (report.readOnly)
      setNotice(tr("The chats are open read-only: %1").arg(report.readOnlyReason));
    else if (!report.migrationBackupPath.isEmpty())
      setNotice(tr("The chat database was updated to this version of Ember; a copy of the old "
                   "one was kept as %1.").arg(report.migrationBackupPath));
    else if (report.interruptedMessages > 0)
      setNotice(tr("%n answer(s) were cut short when Ember last closed; they are marked as "
                   "interrupted.", "", report.interruptedMessages));
    log::info(QStringLiteral("store opened: %1").arg(path));
  } catch (const std::exception& e) {
    setNotice(tr("The chat database could not be opened: %1").arg(QString::fromUtf8(e.what())));
    log::error(notice_);
    return;
  }
  reloadConversations();
  offerUndoForTrash();  // purges what has expired; a delete cut short by a crash can be undone
  if (conversations_.rowCount() > 0) openConversation(conversations_.idAt(0));
}

void AppController::reloadConversations() {
  QList<ConversationRow> rows;
  guarded([&] {
    for (const store::Conversation& c : store_.listConversations())
      rows << ConversationRow{c.id, c.title, c.updatedAt, isGenerating(c.id), c.pinned};
  });
  conversations_.setConversations(rows);
}

void AppController::updateGeneratingMark(qint64 conversationId) {
  conversations_.setGenerating(conversationId, isGenerating(conversationId));
}

void AppController::touchConversation(qint64 conversationId) {
  guarded([&] {
    if (const auto c = store_.conversation(conversationId))
      conversations_.touch({c->id, c->title, c->updatedAt, false, c->pinned});
  });
}

void AppController::reloadMessages() {
  QList<MessageRow> rows;
  if (currentConversation_ != 0 && store_.isOpen()) {
    guarded([&] {
      for (const store::Message& m : store_.activeBranch(currentConversation_)) {
        MessageRow row;
        row.id = m.id;
        row.role = store::roleName(m.role);
        row.text = m.content;
        row.status = store::statusName(m.status);
        row.reasoning = m.reasoning;
        row.reasoningSeconds = m.reasoningMs / 1000.0;
        if (m.role == store::Role::Assistant) {
          if (const auto stats = store_.stats(m.id)) row.statsLine = compactStatsLine(*stats);
        }
        const store::SiblingInfo siblings = store_.siblings(m.id);
        row.siblingIndex = siblings.index;
        row.siblingCount = siblings.count();
        for (const ActiveRequest& r : std::as_const(active_))
          if (r.messageId == m.id) {
            row.text = r.text;  // newer than the last checkpoint
            row.reasoning = r.reasoning;
            row.reasoningSeconds = r.reasoningEndMs >= 0 ? r.reasoningMs() / 1000.0 : -1;
            row.liveText = r.live.text();
            row.liveFraction = r.live.fraction();
          }
        rows << row;
      }
    });
  }
  messages_.setMessages(rows);
}

QString AppController::currentTitle() const {
  if (currentConversation_ == 0) return {};
  try {
    if (const auto c = store_.conversation(currentConversation_)) return c->title;
  } catch (const std::exception&) {
  }
  return {};
}

void AppController::newConversation() {
  // An untouched new chat is reused rather than piling up empty ones.
  if (currentConversation_ != 0 && messages_.rowCount() == 0) {
    emit focusComposer();
    return;
  }
  guarded([&] {
    currentConversation_ = store_.createConversation(tr("New chat"), modelPath_);
    // The default preset (or the default system prompt) becomes the new chat's own settings.
    const QJsonObject start = settingsForNewChat();
    if (!start.isEmpty()) store_.setConversationSettings(currentConversation_, start);
    touchConversation(currentConversation_);
  });
  reloadMessages();
  emit currentConversationChanged();
  emit generatingChanged();
  emit settingsChanged();
  emit focusComposer();
}

void AppController::openConversation(qint64 conversationId) {
  currentConversation_ = conversationId;
  followConversationModel(conversationId);  // a chat answered by a remote model goes on there
  reloadMessages();
  emit currentConversationChanged();
  emit generatingChanged();
  emit settingsChanged();
  emit focusComposer();
  sendQueuedIfReady();
}

void AppController::renameConversation(qint64 conversationId, const QString& title) {
  const QString trimmed = title.simplified();
  if (trimmed.isEmpty()) return;
  if (guarded([&] { store_.renameConversation(conversationId, trimmed); })) {
    conversations_.rename(conversationId, trimmed);
    if (conversationId == currentConversation_) emit currentConversationChanged();
  }
}

void AppController::deleteConversation(qint64 conversationId) {
  const QString key = activeKeyFor(conversationId);
  if (!key.isEmpty()) {
    // Its answer is saved as stopped, so that Undo brings back what was written so far.
    const ActiveRequest r = active_.take(key);  // the worker's late signals are ignored
    emit abortInWorker(key);
    guarded([&] {
      store_.finishAssistantMessage(r.messageId, r.text, store::MessageStatus::Stopped);
    });
    updateGeneratingMark(conversationId);
    emit generatingChanged();
  }
  // To the trash, not gone: Undo brings it back until the undo time has passed.
  if (!guarded([&] { store_.trashConversation(conversationId); })) return;
  offerUndoForTrash();
  if (queued_.conversationId == conversationId) cancelQueued();
  conversations_.remove(conversationId);
  if (conversationId == currentConversation_) {
    currentConversation_ = 0;
    if (conversations_.rowCount() > 0) openConversation(conversations_.idAt(0));
    else openConversation(0);
  }
}

void AppController::search(const QString& query) {
  QList<SearchResultRow> rows;
  if (!query.trimmed().isEmpty()) {
    const QString start = QStringLiteral("\x01"), end = QStringLiteral("\x02");
    guarded([&] {
      for (const store::SearchHit& hit : store_.search(query, 50, start, end)) {
        // The snippet is user text: escape it, then turn the markers into bold.
        QString snippet = hit.snippet.toHtmlEscaped();
        snippet.replace(start, QStringLiteral("<b>")).replace(end, QStringLiteral("</b>"));
        rows << SearchResultRow{hit.conversationId, hit.messageId, hit.conversationTitle,
                                snippet};
      }
    });
  }
  searchResults_.setResults(rows);
}

void AppController::openSearchHit(qint64 conversationId, qint64 messageId) {
  guarded([&] { store_.selectBranch(messageId); });  // the hit may be on another branch
  openConversation(conversationId);
  emit scrollToMessage(messageId);
}

void AppController::setNotice(const QString& text) {
  notice_ = text;
  emit noticeChanged();
}

void AppController::dismissNotice() { setNotice({}); }

// --- Model ------------------------------------------------------------------------------------

void AppController::rescanModels() {
  models_.scan(modelFolders_);
  refreshModelFit();
  refreshRemoteModels();
}

void AppController::loadModelUrl(const QUrl& url) { loadModel(url.toLocalFile()); }

void AppController::loadModel(const QString& path) {
  if (path.isEmpty()) return;
  // A load on its way is replaced: stopped at its next check (its cancel is then ignored, its
  // path not being the one loading).
  if (loadControl_) loadControl_->cancel();
  loadControl_ = std::make_shared<LoadControl>();
  // Answers on the old model end with it (saved as they are, marked as errors by the worker).
  modelLoading_ = true;
  modelLoadFraction_ = 0;
  modelLoaded_ = false;
  modelError_.clear();
  modelPath_ = path;
  remote_.reset();  // new answers go to the local model again, now and after a restart
  guarded([&] { store_.setAppSetting(QStringLiteral("lastRemoteModel"), QJsonValue()); });
  emit modelChanged();
  emit modelLoadProgressChanged();
  const QJsonObject settings = effectiveSettings();
  EngineOptions options;
  options.modelPath = path.toStdString();
  options.threads = settings.value("threads").toInt(0);
  options.contextLength = settings.value("contextLength").toInt(0);
  options.maxSequences = settings.value("maxSequences").toInt(kDefaultMaxSequences);
  options.backend = settings.value("backend").toString(QStringLiteral("auto")).toStdString();
  // A long prompt in one chat is computed in chunks of this many tokens between the other
  // chats' decode steps: on a 2-core CPU 256 tokens take a few hundred ms, which keeps their
  // streams moving (the engine's default of 512 suits throughput runs).
  options.stepTokenBudget = 256;
  loadFitSettings_ = fitSettingsNow();
  log::info(QStringLiteral("loading model %1 (device %2, %3 answers at once)")
                .arg(path, QString::fromStdString(options.backend))
                .arg(options.maxSequences));
  ++loadsInFlight_;
  emit loadInWorker(options, loadControl_);
}

void AppController::onLoaded(const LoadedModel& model) {
  if (--loadsInFlight_ > 0) return;  // a newer load follows: it frees this one first
  if (QString::fromStdString(model.info.path) != modelPath_) return;
  model_ = model;
  loadControl_.reset();
  modelLoading_ = false;
  modelLoaded_ = true;
  modelPath_ = QString::fromStdString(model.info.path);
  lastLoadedPath_ = modelPath_;
  const ModelFileInfo file = describeModelFile(modelPath_);
  models_.addFile(file);
  rememberLoadedModelMemory(model, file);
  guarded([&] { store_.setAppSetting(QStringLiteral("lastModel"), modelPath_); });
  log::info(QStringLiteral("model loaded: %1 (%2, %3)")
                .arg(modelPath_, QString::fromStdString(model.info.description),
                     QString::fromStdString(model.info.backendName)));
  if (!model.info.chatTemplateWarning.empty())
    setNotice(QString::fromStdString(model.info.chatTemplateWarning));
  emit modelChanged();
  emit modelLoadProgressChanged();
  emit settingsChanged();
  sendQueuedIfReady();
}

void AppController::onLoadFailed(const QString& path, const QString& message) {
  if (--loadsInFlight_ > 0) return;  // an older load, replaced since
  if (path != modelPath_) return;
  loadControl_.reset();
  modelLoading_ = false;
  modelLoaded_ = false;
  modelError_ = message;
  loadedModelBytes_ = 0;  // the worker freed the old model before trying
  log::warn(QStringLiteral("model load failed: %1").arg(message));
  emit modelChanged();
  emit modelLoadProgressChanged();
  refreshModelFit();
}

QString AppController::modelName() const {
  if (remote_) return remote_->model;
  return QFileInfo(modelPath_).fileName();
}

QString AppController::modelDetails() const {
  if (remote_) return remoteDeviceLabel(remote_->server, remote_->model);
  if (!modelLoaded_) return {};
  const ModelInfo& info = model_.info;
  return tr("%1 · context %2 · %3")
      .arg(QString::fromStdString(info.architecture))
      .arg(info.contextLength)
      .arg(QString::fromStdString(info.backendName));
}

// --- Settings ---------------------------------------------------------------------------------

QJsonObject AppController::effectiveSettings() const {
  try {
    if (currentConversation_ != 0)
      return store_.effectiveSettings(currentConversation_, builtInSettings());
    QJsonObject merged = builtInSettings();
    const QJsonObject defaults = store_.defaultConversationSettings();
    for (auto it = defaults.begin(); it != defaults.end(); ++it) merged.insert(it.key(), *it);
    return merged;
  } catch (const std::exception&) {
    return builtInSettings();
  }
}

QVariantMap AppController::settings() const { return effectiveSettings().toVariantMap(); }

QString AppController::settingError(const QString& key, const QVariant& value) const {
  ModelLimits limits;
  if (modelLoaded_)
    limits = {model_.vocabSize, model_.info.trainedContext, model_.info.contextLength};
  return app::settingError(effectiveSettings(), key, value, limits);
}

bool AppController::setSetting(const QString& key, const QVariant& value) {
  ModelLimits limits;
  if (modelLoaded_)
    limits = {model_.vocabSize, model_.info.trainedContext, model_.info.contextLength};
  QJsonValue normalized;
  if (!app::settingError(effectiveSettings(), key, value, limits, &normalized).isEmpty())
    return false;
  if (currentConversation_ == 0) newConversation();
  const bool ok = guarded([&] {
    QJsonObject own = store_.conversationSettings(currentConversation_);
    own.insert(key, normalized);
    store_.setConversationSettings(currentConversation_, own);
  });
  if (ok) emit settingsChanged();
  return ok;
}

void AppController::saveSettingsAsDefaults() {
  QJsonObject defaults = effectiveSettings();
  // The system prompt is not a default layer (it would change every older chat without one of
  // its own): new chats get a copy of it when they are created.
  const QJsonValue systemPrompt = defaults.take(QStringLiteral("systemPrompt"));
  guarded([&] {
    store_.setDefaultConversationSettings(defaults);
    store_.setAppSetting(QStringLiteral("defaultSystemPrompt"), systemPrompt.toString());
  });
}

}  // namespace ember::app
