// AppController: construction, the chat flows (send, stop, regenerate, edit, branches) and the
// worker's signals. Conversations, search, model and settings are in app_controller_*.cpp.
#include "controller/app_controller.h"

#include <QClipboard>
#include <QGuiApplication>
#include <QJsonDocument>
#include <QLocale>
#include <QPointer>
#include <QUrl>

#include "controller/conversation_settings.h"
#include "controller/dropped_file.h"
#include "controller/stats_format.h"
#include "logging/app_log.h"

namespace ember::app {
namespace {
QPointer<AppController> g_instance;
}

void AppController::setInstance(AppController* controller) { g_instance = controller; }

AppController* AppController::create(QQmlEngine*, QJSEngine*) {
  Q_ASSERT(g_instance);
  QJSEngine::setObjectOwnership(g_instance, QJSEngine::CppOwnership);
  return g_instance;
}

AppController::AppController(const Options& options, QObject* parent)
    : QObject(parent), modelFolders_(options.modelFolders), undoDeleteMs_(options.undoDeleteMs) {
  // A queued write (a checkpoint, the end of an answer) that fails tells the user as a
  // synchronous one does: the notice, shown from the GUI thread.
  store_.setErrorHandler([this](const QString& message) {
    QMetaObject::invokeMethod(
        this,
        [this, message] {
          log::error(QStringLiteral("store: %1").arg(message));
          setNotice(message);
        },
        Qt::QueuedConnection);
  });
  undoTimer_.setSingleShot(true);
  connect(&undoTimer_, &QTimer::timeout, this, &AppController::offerUndoForTrash);
  meter_.recountTimer.setSingleShot(true);
  meter_.recountTimer.setInterval(250);  // typing: count once the keys pause
  connect(&meter_.recountTimer, &QTimer::timeout, this, &AppController::recount);
  InferenceWorker* worker = inference_.worker();
  // Queued both ways: the worker lives on its own thread and only ever sends values back.
  connect(this, &AppController::submitToWorker, worker, &InferenceWorker::submit,
          Qt::QueuedConnection);
  connect(this, &AppController::abortInWorker, worker, &InferenceWorker::abort,
          Qt::QueuedConnection);
  connect(this, &AppController::loadInWorker, worker, &InferenceWorker::loadModelWith,
          Qt::QueuedConnection);
  connect(worker, &InferenceWorker::pieceReady, this, &AppController::onPiece,
          Qt::QueuedConnection);
  connect(this, &AppController::countInWorker, worker, &InferenceWorker::countTokens,
          Qt::QueuedConnection);
  connect(worker, &InferenceWorker::tokensCounted, this, &AppController::onTokensCounted,
          Qt::QueuedConnection);
  for (auto changed : {&AppController::currentConversationChanged, &AppController::modelChanged,
                       &AppController::settingsChanged, &AppController::generatingChanged})
    connect(this, changed, this, &AppController::scheduleRecount);
  connect(worker, &InferenceWorker::promptProgress, this, &AppController::onProgress,
          Qt::QueuedConnection);
  connect(worker, &InferenceWorker::reasoningPieceReady, this, &AppController::onReasoningPiece,
          Qt::QueuedConnection);
  connect(worker, &InferenceWorker::finished, this, &AppController::onFinished,
          Qt::QueuedConnection);
  connect(worker, &InferenceWorker::failed, this, &AppController::onFailed,
          Qt::QueuedConnection);
  connect(worker, &InferenceWorker::loaded, this, &AppController::onLoaded, Qt::QueuedConnection);
  connect(worker, &InferenceWorker::loadFailed, this, &AppController::onLoadFailed,
          Qt::QueuedConnection);
  connect(worker, &InferenceWorker::loadFraction, this, &AppController::onLoadFraction,
          Qt::QueuedConnection);
  connect(worker, &InferenceWorker::loadCancelled, this, &AppController::onLoadCancelled,
          Qt::QueuedConnection);
  connect(worker, &InferenceWorker::loadProgress, this,
          [](const QString& stage) { log::info(stage); }, Qt::QueuedConnection);
  connect(this, &AppController::generatingChanged, this,
          &AppController::composerBlockReasonChanged);
  connect(this, &AppController::modelChanged, this, &AppController::composerBlockReasonChanged);
  connect(this, &AppController::settingsChanged, this, &AppController::refreshModelFit);
  connect(this, &AppController::currentConversationChanged, this,
          &AppController::queuedMessageChanged);
  fitQueries_.setMaxThreadCount(1);
  connections_ = options.connectionsSettingsPath.isEmpty()
                     ? std::make_unique<ConnectionsModel>()
                     : std::make_unique<ConnectionsModel>(options.connectionsSettingsPath,
                                                          options.connectionsKeyDir, false);
  connectRemoteChat();
  openStore(options.databasePath);
  rescanModels();
}

AppController::~AppController() {
  // Settings saved while the file still opens (the window's geometry at a quick quit): queued
  // behind the open, which the store's destructor finishes.
  if (open_.opening) writePendingSettings();
  // Answers still streaming are saved as stopped (queued; store_'s destructor runs the queue);
  // the worker thread is joined by inference_.
  for (const ActiveRequest& r : std::as_const(active_)) {
    guarded([&] {
      store_.finishAssistantMessage(r.messageId, r.text, store::MessageStatus::Stopped);
    });
  }
}

bool AppController::guarded(const std::function<void()>& f) {
  try {
    f();
    return true;
  } catch (const std::exception& e) {
    log::error(QStringLiteral("store: %1").arg(QString::fromUtf8(e.what())));
    setNotice(QString::fromUtf8(e.what()));
    return false;
  }
}

QString AppController::composerBlockReason() const {
  if (remote_) return {};
  if (load_.loading) return tr("Loading the model…");
  if (!load_.loaded)
    return load_.error.isEmpty() ? tr("No model loaded: choose one from the model menu.")
                                 : tr("The model could not be loaded: choose another one, or "
                                      "another compute device in Settings.");
  return {};
}

bool AppController::generating() const { return !activeKeyFor(currentConversation_).isEmpty(); }

QString AppController::activeKeyFor(qint64 conversationId) const {
  for (auto it = active_.cbegin(); it != active_.cend(); ++it)
    if (it->conversationId == conversationId) return it.key();
  return {};
}

// Send, edit and regenerate show their rows and start the answer at once; the rows are written
// on the store thread in order (the user's message first, then the answer's row, then its
// checkpoints and final save), with ids handed out beforehand. The user's message therefore lands
// before anything of its answer: a crash loses it only together with its answer, never while the
// answer is saved. When a write fails, the notice says why, the answer is stopped and the chat
// is read back from the store (what is shown is what is stored).
bool AppController::send(const QString& text) {
  if (text.trimmed().isEmpty()) return false;
  if (!storeReady()) {  // no ids before the open: sent once the chats are shown
    if (!queued_.text.isEmpty() && queued_.text != text) return false;
    queued_ = {0, text};
    emit queuedMessageChanged();
    return true;
  }
  if (!composerBlockReason().isEmpty() || generating()) return false;
  if (messagesLoading_) {  // the chat's rows are on their way: sent as soon as they are shown
    queued_ = {currentConversation_, text};
    emit queuedMessageChanged();
    return true;
  }
  if (currentConversation_ == 0) newConversation();
  const qint64 conversationId = currentConversation_;
  const qint64 parent = messages_.lastId();  // the active leaf
  const qint64 userId = store_.reserveMessageId();
  const qint64 answerId = store_.reserveMessageId();
  const ConversationRow* row = conversations_.find(conversationId);
  QString title;
  if (row && row->title == tr("New chat")) {
    const QString simple = text.simplified();
    title = simple.size() > 48 ? simple.left(47).trimmed() + QChar(0x2026) : simple;
  }
  const QString model = answerModel();
  write(
      [=](store::ChatStore& s) {
        s.addMessage(conversationId, parent, store::Role::User, text, userId);
        if (!title.isEmpty()) s.renameConversation(conversationId, title);
        s.beginAssistantMessage(userId, model, answerId);
      },
      [this, conversationId, answerId, title] {
        undoAnswer(conversationId, answerId);
        if (!title.isEmpty()) reloadConversations();  // the title, as stored
      });
  MessageRow user;
  user.id = userId;
  user.role = QStringLiteral("user");
  user.text = text;
  user.status = QStringLiteral("complete");
  messages_.appendMessage(user);
  messages_.appendMessage(streamingRow(answerId));
  siblingIds_.insert(userId, {userId});
  siblingIds_.insert(answerId, {answerId});
  if (!title.isEmpty()) conversations_.rename(conversationId, title);
  startAnswer(conversationId, answerId, userId);
  touchConversation(conversationId);
  emit currentConversationChanged();
  return true;
}

// The chat as the model sees it: the system prompt, then the shown branch up to the message.
nlohmann::ordered_json AppController::chatMessages(qint64 conversationId, qint64 upTo) const {
  Q_ASSERT(conversationId == currentConversation_);  // answers start in the shown chat
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  const QString system = effectiveSettings().value("systemPrompt").toString();
  if (!system.trimmed().isEmpty())
    out.push_back({{"role", "system"}, {"content", system.toStdString()}});
  for (int i = 0; i < messages_.rowCount(); ++i) {
    const MessageRow& m = *messages_.row(i);
    if (m.role != QLatin1String("system") && !m.text.isEmpty())
      out.push_back({{"role", m.role.toStdString()}, {"content", m.text.toStdString()}});
    if (m.id == upTo) break;
  }
  return out;
}

bool AppController::startAnswer(qint64 conversationId, qint64 assistantId, qint64 upTo) {
  WorkerRequest request;
  request.key = QStringLiteral("r%1-m%2").arg(++requestCounter_).arg(assistantId);
  request.messages = chatMessages(conversationId, upTo);
  ActiveRequest active;
  active.messageId = assistantId;
  active.conversationId = conversationId;
  active.model = remote_ ? remote_->model : load_.path;
  active.backend = remote_ ? remoteDeviceLabel(remote_->server, remote_->model)
                           : QString::fromStdString(load_.model.info.backendName);
  try {
    request.sampling = samplingFrom(effectiveSettings());
  } catch (const std::exception& e) {
    store_.finishAssistantMessage(assistantId, {}, store::MessageStatus::Error);
    messages_.finishMessage(assistantId, QStringLiteral("error"), {}, QString::fromUtf8(e.what()));
    return false;
  }
  active.sampling = samplingJson(request.sampling);
  active.sinceCheckpoint.start();
  active_.insert(request.key, active);
  messages_.setLive(assistantId, active.live.text(), active.live.fraction());
  log::info(QStringLiteral("request %1 submitted (conversation %2, %3 messages)")
                .arg(request.key).arg(conversationId).arg(request.messages.size()));
  rememberAnswerModel(conversationId);
  if (remote_)
    remoteChat_.submit(request, *remote_);
  else
    emit submitToWorker(request);
  updateGeneratingMark(conversationId);
  emit generatingChanged();
  return true;
}

void AppController::stop() {
  const QString key = activeKeyFor(currentConversation_);
  if (key.isEmpty()) return;
  if (remoteChat_.running(key))
    remoteChat_.abort(key);
  else
    emit abortInWorker(key);
}

void AppController::regenerate() {
  if (!storeReady() || generating() || !composerBlockReason().isEmpty() ||
      messages_.rowCount() < 2)
    return;
  const MessageRow* last = messages_.row(messages_.rowCount() - 1);
  if (!last || last->role != QLatin1String("assistant")) return;
  const qint64 conversationId = currentConversation_;
  const qint64 previousId = last->id;
  const qint64 parentId = messages_.row(messages_.rowCount() - 2)->id;  // its user message
  const qint64 answerId = store_.reserveMessageId();
  const QList<MessageRow> before = shownRows();
  const QString model = answerModel();
  write([=](store::ChatStore& s) { s.beginRegeneration(previousId, model, answerId); },
        [this, conversationId, answerId] { undoAnswer(conversationId, answerId); });
  QList<qint64> siblings = siblingIds_.value(previousId, {previousId});
  siblings << answerId;
  for (qint64 id : std::as_const(siblings)) siblingIds_.insert(id, siblings);
  QList<MessageRow> rows = before;
  rows.last() = streamingRow(answerId, siblings.size() - 1, siblings.size());
  messages_.setMessages(rows);
  startAnswer(conversationId, answerId, parentId);
}

void AppController::editMessage(qint64 messageId, const QString& newText) {
  if (!storeReady() || generating() || newText.trimmed().isEmpty() ||
      !composerBlockReason().isEmpty())
    return;
  const int at = messages_.rowOf(messageId);
  if (at < 0 || messages_.row(at)->role != QLatin1String("user")) return;
  const qint64 conversationId = currentConversation_;
  const qint64 userId = store_.reserveMessageId();
  const qint64 answerId = store_.reserveMessageId();
  const QList<MessageRow> before = shownRows();
  const QString model = answerModel();
  write(
      [=](store::ChatStore& s) {
        s.editMessage(messageId, newText, userId);
        s.beginAssistantMessage(userId, model, answerId);
      },
      [this, conversationId, answerId] { undoAnswer(conversationId, answerId); });
  QList<qint64> siblings = siblingIds_.value(messageId, {messageId});
  siblings << userId;
  for (qint64 id : std::as_const(siblings)) siblingIds_.insert(id, siblings);
  siblingIds_.insert(answerId, {answerId});
  QList<MessageRow> rows = before.mid(0, at);
  MessageRow user;
  user.id = userId;
  user.role = QStringLiteral("user");
  user.text = newText;
  user.status = QStringLiteral("complete");
  user.siblingIndex = siblings.size() - 1;
  user.siblingCount = siblings.size();
  rows << user << streamingRow(answerId);
  messages_.setMessages(rows);
  startAnswer(conversationId, answerId, userId);
}

void AppController::switchBranch(qint64 messageId, int delta) {
  const QList<qint64> siblings = siblingIds_.value(messageId);
  const int index = siblings.indexOf(messageId);
  const int target = index + delta;
  if (index < 0 || target < 0 || target >= siblings.size()) return;
  const qint64 targetId = siblings.at(target);
  write([targetId](store::ChatStore& s) { s.selectBranch(targetId); });
  loadBranch();  // queued after the write: it reads the branch it selected
}

QVariantMap AppController::statsDetails(qint64 messageId) const {
  if (const auto it = stats_.constFind(messageId); it != stats_.cend())
    return app::statsDetails(*it);
  return {};
}

void AppController::copyText(const QString& text) const {
  if (QClipboard* clipboard = QGuiApplication::clipboard()) clipboard->setText(text);
}

QString AppController::clipboardText() const {
  const QClipboard* clipboard = QGuiApplication::clipboard();
  return clipboard ? clipboard->text() : QString();
}

QVariantMap AppController::readDroppedFile(const QUrl& url) const {
  if (!url.isLocalFile())
    return {{"name", url.fileName()},
            {"error", tr("%1 is not a file on this computer.").arg(url.toDisplayString())}};
  const DroppedFile file = app::readDroppedFile(url.toLocalFile());
  QString error;
  switch (file.refusal) {
    case DropRefusal::None:
      return {{"name", file.name},
              {"block", attachmentBlock(file.name, file.text)},
              {"characters", file.text.size()}};
    case DropRefusal::Folder:
      error = tr("%1 is a folder: drop the files in it instead.").arg(file.name);
      break;
    case DropRefusal::Unreadable:
      error = tr("%1 could not be read: %2").arg(file.name, file.reason);
      break;
    case DropRefusal::TooLarge:
      error = tr("%1 is %2; files up to %3 can be attached.")
                  .arg(file.name, QLocale().formattedDataSize(file.bytes),
                       QLocale().formattedDataSize(kMaxAttachmentBytes));
      break;
    case DropRefusal::NotText:
      error = tr("%1 is not a text file: only text (UTF-8) can be attached.").arg(file.name);
      break;
  }
  return {{"name", file.name}, {"error", error}};
}

QString AppController::selectionText() const {
  const QClipboard* clipboard = QGuiApplication::clipboard();
  return clipboard && clipboard->supportsSelection() ? clipboard->text(QClipboard::Selection)
                                                     : QString();
}

void AppController::onPiece(const QString& key, const QString& text, double ms) {
  const auto it = active_.find(key);
  if (it == active_.end()) return;
  it->tokenTimesMs << ms;
  it->live.onPiece(ms);
  if (it->reasoningFlagged) it->splitter.answerBegan();
  const ThinkSplitter::Split split = it->splitter.push(text);
  if (!split.reasoning.isEmpty()) addReasoning(*it, split.reasoning, ms);
  if (!split.answer.isEmpty()) {
    endReasoning(*it, ms);
    addAnswerText(*it, split.answer);
  }
  messages_.setLive(it->messageId, it->live.text(), it->live.fraction());
  checkpointIfDue(*it, ms);
  emit pieceReceived(it->conversationId, it->messageId, text);
}

void AppController::onProgress(const QString& key, int done, int total, int cached,
                               bool waiting, double ms) {
  const auto it = active_.find(key);
  if (it == active_.end()) return;
  it->live.onProgress(done, total, cached, waiting, ms);
  messages_.setLive(it->messageId, it->live.text(), it->live.fraction());
}

void AppController::onFinished(const QString& key, const RequestStats& stats) {
  const auto it = active_.find(key);
  if (it == active_.end()) return;
  // What the splitter still holds belongs to the answer (or to an unfinished reasoning section).
  const ThinkSplitter::Split rest = it->splitter.flush();
  const double endMs = it->tokenTimesMs.isEmpty() ? 0 : it->tokenTimesMs.last();
  if (!rest.reasoning.isEmpty()) addReasoning(*it, rest.reasoning, endMs);
  endReasoning(*it, endMs);
  if (!rest.answer.isEmpty()) addAnswerText(*it, rest.answer);
  const ActiveRequest r = *it;
  active_.erase(it);
  if (!r.reasoning.isEmpty())
    guarded([&] { store_.setReasoning(r.messageId, r.reasoning, r.reasoningMs()); });
  store::MessageStats saved =
      toMessageStats(stats, r.tokenTimesMs, r.sampling, r.model, r.backend);
  // A remote server's own timings, beside the ones measured here (in the stats JSON).
  if (stats.serverTimings.is_object() && !stats.serverTimings.empty())
    saved.sampling.insert(QStringLiteral("server_timings"),
                          QJsonDocument::fromJson(QByteArray::fromStdString(
                                                      stats.serverTimings.dump()))
                              .object());
  const bool stopped = stats.finishReason == FinishReason::Cancelled;
  const auto status = stopped ? store::MessageStatus::Stopped : store::MessageStatus::Complete;
  store_.finishAssistantMessage(r.messageId, r.text, status, saved);
  stats_.insert(r.messageId, saved);
  messages_.finishMessage(r.messageId, store::statusName(status), compactStatsLine(saved),
                          answerNote(saved));
  log::request({key, saved.finishReason, stats.queueWaitMs, stats.tokenizeMs, stats.prefillMs,
                stats.ttftMs, stats.totalMs, stats.decodeTokensPerSecond, stats.promptTokens,
                stats.generatedTokens});
  updateGeneratingMark(r.conversationId);
  emit generatingChanged();
  emit answerFinished(r.messageId);
  sendQueuedIfReady();
}

void AppController::onFailed(const QString& key, const QString& message) {
  const auto it = active_.find(key);
  if (it == active_.end()) return;
  const ActiveRequest r = *it;
  active_.erase(it);
  guarded([&] {
    store_.finishAssistantMessage(r.messageId, r.text, store::MessageStatus::Error);
  });
  messages_.finishMessage(r.messageId, QStringLiteral("error"), {}, message);
  log::warn(QStringLiteral("request %1 failed: %2").arg(key, message));
  updateGeneratingMark(r.conversationId);
  emit generatingChanged();
  emit answerFinished(r.messageId);
  sendQueuedIfReady();
}

}  // namespace ember::app
