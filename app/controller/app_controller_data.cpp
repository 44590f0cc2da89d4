// AppController: the store, conversations, search, model loading and settings.
#include <QCoreApplication>
#include <QFileInfo>
#include <QUrl>

#include "controller/app_controller.h"
#include "controller/conversation_settings.h"
#include "controller/stats_format.h"
#include "logging/app_log.h"

namespace ember::app {

void AppController::reloadConversations() {
  store_.read([this](store::ChatStore& s) {
    QList<store::Conversation> list;
    QString error;
    try {
      list = s.listConversations();
    } catch (const std::exception& e) {
      error = QString::fromUtf8(e.what());
    }
    QMetaObject::invokeMethod(
        this,
        [this, list, error] {
          if (!error.isEmpty()) {
            setNotice(error);
            return;
          }
          const QString titleBefore = currentTitle();
          QList<ConversationRow> rows;
          for (const store::Conversation& c : list)
            rows << ConversationRow{c.id, c.title, c.updatedAt, isGenerating(c.id), c.pinned};
          conversations_.setConversations(rows);
          if (currentTitle() != titleBefore) emit currentConversationChanged();
        },
        Qt::QueuedConnection);
  });
}

void AppController::updateGeneratingMark(qint64 conversationId) {
  conversations_.setGenerating(conversationId, isGenerating(conversationId));
}

void AppController::touchConversation(qint64 conversationId) {
  // Moved to the top as the store does on a new message (its updated_at is now).
  if (const ConversationRow* found = conversations_.find(conversationId)) {
    ConversationRow row = *found;
    row.updatedAt = QDateTime::currentDateTimeUtc();
    conversations_.touch(row);
  }
}

QString AppController::currentTitle() const {
  const ConversationRow* row = conversations_.find(currentConversation_);
  return row ? row->title : QString();
}

void AppController::newConversation() {
  if (!storeReady()) {  // no id can be handed out yet: made once the chats are open
    open_.newChatWhenOpen = true;
    return;
  }
  // An untouched new chat is reused rather than piling up empty ones.
  if (currentConversation_ != 0 && messages_.rowCount() == 0 && !messagesLoading_) {
    emit focusComposer();
    return;
  }
  // Its id is handed out now and its row shown at once; the write follows on the store thread.
  const qint64 id = store_.reserveConversationId();
  const QString title = tr("New chat");
  const QString model = load_.path;
  // The default preset (or the default system prompt) becomes the new chat's own settings.
  const QJsonObject start = settingsForNewChat();
  write(
      [id, title, model, start](store::ChatStore& s) {
        s.createConversation(title, model, id);
        if (!start.isEmpty()) s.setConversationSettings(id, start);
      },
      [this, id] {
        conversations_.remove(id);
        if (currentConversation_ == id)
          openConversation(conversations_.rowCount() > 0 ? conversations_.idAt(0) : 0);
        reloadConversations();  // as stored
      });
  ++branchGeneration_;  // a read of the chat shown before is no longer wanted
  currentConversation_ = id;
  ownSettings_ = start;
  messages_.clear();
  stats_.clear();
  siblingIds_.clear();
  if (messagesLoading_) {
    messagesLoading_ = false;
    emit messagesLoadingChanged();
  }
  conversations_.touch({id, title, QDateTime::currentDateTimeUtc(), false, false});
  emit currentConversationChanged();
  emit generatingChanged();
  emit settingsChanged();
  emit focusComposer();
}

void AppController::openConversation(qint64 conversationId) {
  openConversationThen(conversationId, {});
}

void AppController::openConversationThen(qint64 conversationId, std::function<void()> then) {
  currentConversation_ = conversationId;
  followConversationModel(conversationId);  // a chat answered by a remote model goes on there
  // Until its rows arrive the chat shows empty with messagesLoading set; a message sent now
  // waits for them (queued_).
  messages_.clear();
  ownSettings_ = {};
  loadBranch([this, then] {
    if (then) then();
    sendQueuedIfReady();
  });
  emit currentConversationChanged();
  emit generatingChanged();
  emit settingsChanged();
  emit focusComposer();
}

void AppController::renameConversation(qint64 conversationId, const QString& title) {
  const QString trimmed = title.simplified();
  const ConversationRow* row = conversations_.find(conversationId);
  if (trimmed.isEmpty() || !row) return;
  write([conversationId, trimmed](store::ChatStore& s) {
    s.renameConversation(conversationId, trimmed);
  }, [this] { reloadConversations(); });
  conversations_.rename(conversationId, trimmed);
  if (conversationId == currentConversation_) emit currentConversationChanged();
}

void AppController::deleteConversation(qint64 conversationId) {
  if (conversationId == 0) return;
  // Not listed (made behind the GUI's back, as tests do): its title comes with the trash read.
  const ConversationRow* found = conversations_.find(conversationId);
  const ConversationRow row = found ? *found : ConversationRow{conversationId, {}, {}, false, false};
  const QString key = activeKeyFor(conversationId);
  if (!key.isEmpty()) {
    // Its answer is saved as stopped, so that Undo brings back what was written so far.
    const ActiveRequest r = active_.take(key);  // the worker's late signals are ignored
    emit abortInWorker(key);
    store_.finishAssistantMessage(r.messageId, r.text, store::MessageStatus::Stopped);
    updateGeneratingMark(conversationId);
    emit generatingChanged();
  }
  // To the trash, not gone: Undo brings it back until the undo time has passed. Shown gone at
  // once; when the write fails the list is read again.
  write([conversationId](store::ChatStore& s) { s.trashConversation(conversationId); },
        [this] {
          reloadConversations();
          offerUndoForTrash();
        });
  undo_ = {conversationId, row.title, row};
  emit undoDeleteChanged();
  offerUndoForTrash();  // queued after the write: it sees it
  if (queued_.conversationId == conversationId) cancelQueued();
  conversations_.remove(conversationId);
  if (conversationId == currentConversation_) {
    currentConversation_ = 0;
    openConversation(conversations_.rowCount() > 0 ? conversations_.idAt(0) : 0);
  }
}

void AppController::search(const QString& query) {
  const quint64 generation = ++searchGeneration_;
  if (query.trimmed().isEmpty()) {
    searchResults_.setResults({});
    if (searching_) {
      searching_ = false;
      emit searchingChanged();
    }
    return;
  }
  if (!searching_) {
    searching_ = true;
    emit searchingChanged();
  }
  store_.read([this, query, generation](store::ChatStore& s) {
    const QString start = QStringLiteral("\x01"), end = QStringLiteral("\x02");
    QList<SearchResultRow> rows;
    QString error;
    try {
      for (const store::SearchHit& hit : s.search(query, 50, start, end)) {
        // The snippet is user text: escape it, then turn the markers into bold.
        QString snippet = hit.snippet.toHtmlEscaped();
        snippet.replace(start, QStringLiteral("<b>")).replace(end, QStringLiteral("</b>"));
        rows << SearchResultRow{hit.conversationId, hit.messageId, hit.conversationTitle,
                                snippet};
      }
    } catch (const std::exception& e) {
      error = QString::fromUtf8(e.what());
    }
    QMetaObject::invokeMethod(
        this,
        [this, generation, rows, error] {
          if (generation != searchGeneration_) return;  // typed on since: a newer one follows
          if (!error.isEmpty()) setNotice(error);
          searchResults_.setResults(rows);
          searching_ = false;
          emit searchingChanged();
        },
        Qt::QueuedConnection);
  });
}

void AppController::openSearchHit(qint64 conversationId, qint64 messageId) {
  // The hit may be on another branch: that one is made active first (queued ahead of the read).
  write([messageId](store::ChatStore& s) { s.selectBranch(messageId); });
  openConversationThen(conversationId, [this, messageId] { emit scrollToMessage(messageId); });
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
  if (load_.control) load_.control->cancel();
  load_.control = std::make_shared<LoadControl>();
  // Answers on the old model end with it (saved as they are, marked as errors by the worker).
  load_.loading = true;
  load_.fraction = 0;
  load_.loaded = false;
  load_.error.clear();
  load_.path = path;
  remote_.reset();  // new answers go to the local model again, now and after a restart
  saveAppSetting(QStringLiteral("lastRemoteModel"), QJsonValue());
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
  load_.fitSettings = fitSettingsNow();
  log::info(QStringLiteral("loading model %1 (device %2, %3 answers at once)")
                .arg(path, QString::fromStdString(options.backend))
                .arg(options.maxSequences));
  ++load_.inFlight;
  emit loadInWorker(options, load_.control);
}

void AppController::onLoaded(const LoadedModel& model) {
  if (--load_.inFlight > 0) return;  // a newer load follows: it frees this one first
  if (QString::fromStdString(model.info.path) != load_.path) return;
  load_.model = model;
  load_.control.reset();
  load_.loading = false;
  load_.loaded = true;
  load_.path = QString::fromStdString(model.info.path);
  load_.lastLoadedPath = load_.path;
  const ModelFileInfo file = describeModelFile(load_.path);
  models_.addFile(file);
  rememberLoadedModelMemory(model, file);
  saveAppSetting(QStringLiteral("lastModel"), load_.path);
  log::info(QStringLiteral("model loaded: %1 (%2, %3)")
                .arg(load_.path, QString::fromStdString(model.info.description),
                     QString::fromStdString(model.info.backendName)));
  if (!model.info.chatTemplateWarning.empty())
    setNotice(QString::fromStdString(model.info.chatTemplateWarning));
  emit modelChanged();
  emit modelLoadProgressChanged();
  emit settingsChanged();
  sendQueuedIfReady();
}

void AppController::onLoadFailed(const QString& path, const QString& message) {
  if (--load_.inFlight > 0) return;  // an older load, replaced since
  if (path != load_.path) return;
  load_.control.reset();
  load_.loading = false;
  load_.loaded = false;
  load_.error = message;
  load_.bytes = 0;  // the worker freed the old model before trying
  log::warn(QStringLiteral("model load failed: %1").arg(message));
  emit modelChanged();
  emit modelLoadProgressChanged();
  refreshModelFit();
}

QString AppController::modelName() const {
  if (remote_) return remote_->model;
  return QFileInfo(load_.path).fileName();
}

QString AppController::modelDetails() const {
  if (remote_) return remoteDeviceLabel(remote_->server, remote_->model);
  if (!load_.loaded) return {};
  const ModelInfo& info = load_.model.info;
  return tr("%1 · context %2 · %3")
      .arg(QString::fromStdString(info.architecture))
      .arg(info.contextLength)
      .arg(QString::fromStdString(info.backendName));
}

// --- Settings ---------------------------------------------------------------------------------

QJsonObject AppController::effectiveSettings() const {
  // The same layers as ChatStore::effectiveSettings, from the GUI's copies.
  QJsonObject merged = builtInSettings();
  const QJsonObject defaults = appSettings_.value(QStringLiteral("conversationDefaults")).toObject();
  for (auto it = defaults.begin(); it != defaults.end(); ++it) merged.insert(it.key(), *it);
  if (currentConversation_ != 0)
    for (auto it = ownSettings_.begin(); it != ownSettings_.end(); ++it)
      merged.insert(it.key(), *it);
  return merged;
}

QVariantMap AppController::settings() const { return effectiveSettings().toVariantMap(); }

QString AppController::settingError(const QString& key, const QVariant& value) const {
  ModelLimits limits;
  if (load_.loaded)
    limits = {load_.model.vocabSize, load_.model.info.trainedContext, load_.model.info.contextLength};
  return app::settingError(effectiveSettings(), key, value, limits);
}

bool AppController::setSetting(const QString& key, const QVariant& value) {
  ModelLimits limits;
  if (load_.loaded)
    limits = {load_.model.vocabSize, load_.model.info.trainedContext, load_.model.info.contextLength};
  QJsonValue normalized;
  if (!app::settingError(effectiveSettings(), key, value, limits, &normalized).isEmpty())
    return false;
  if (currentConversation_ == 0) newConversation();
  saveOwnSettings({{key, normalized}});
  emit settingsChanged();
  return true;
}

void AppController::saveSettingsAsDefaults() {
  QJsonObject defaults = effectiveSettings();
  // The system prompt is not a default layer (it would change every older chat without one of
  // its own): new chats get a copy of it when they are created.
  const QJsonValue systemPrompt = defaults.take(QStringLiteral("systemPrompt"));
  saveAppSetting(QStringLiteral("conversationDefaults"), defaults);
  saveAppSetting(QStringLiteral("defaultSystemPrompt"), systemPrompt.toString());
}

}  // namespace ember::app
