#pragma once
// AppController: what the QML calls. It owns the store (GUI thread), the inference thread and the
// list models, and runs the data path: send → user message committed → streaming answer begun →
// InferenceWorker::submit → pieces appended to the MessageModel and checkpointed at most every
// second → finish committed with its stats.
//
// Several conversations can generate at once (one request each, up to EngineOptions::maxSequences
// running in the engine, more queued there): every streaming answer is tracked by its request key
// with the text received so far, whether or not its conversation is the one shown. Pieces for a
// hidden conversation are kept there (and checkpointed); opening it shows them and the rest
// keeps arriving. `generating` and stop() are about the conversation shown.
//
// Exposed to QML as the singleton `AppController` (QML_SINGLETON; main() creates the instance and
// create() hands it to the engine).
#include <QHash>
#include <QJsonObject>
#include <QObject>
#include <QQmlEngine>
#include <QThreadPool>
#include <QTimer>
#include <QVariantMap>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "connections/connections_model.h"
#include "connections/remote_chat.h"
#include "controller/app_controller_types.h"
#include "models/conversation_list_model.h"
#include "models/message_model.h"
#include "models/model_list_model.h"
#include "models/model_memory_fit.h"
#include "models/search_result_model.h"
#include "store/threaded_chat_store.h"
#include "worker/inference_worker.h"

namespace ember::app {

class AppController : public QObject {
  Q_OBJECT
  QML_ELEMENT
  QML_SINGLETON
  Q_PROPERTY(ember::app::ConversationListModel* conversations READ conversations CONSTANT)
  Q_PROPERTY(ember::app::MessageModel* messages READ messages CONSTANT)
  Q_PROPERTY(ember::app::SearchResultModel* searchResults READ searchResults CONSTANT)
  Q_PROPERTY(ember::app::ModelListModel* models READ models CONSTANT)
  Q_PROPERTY(qint64 currentConversationId READ currentConversationId NOTIFY currentConversationChanged)
  Q_PROPERTY(QString currentTitle READ currentTitle NOTIFY currentConversationChanged)
  Q_PROPERTY(bool generating READ generating NOTIFY generatingChanged)
  Q_PROPERTY(bool modelLoaded READ modelLoaded NOTIFY modelChanged)
  Q_PROPERTY(bool modelLoading READ modelLoading NOTIFY modelChanged)
  Q_PROPERTY(QString modelName READ modelName NOTIFY modelChanged)
  Q_PROPERTY(QString modelDetails READ modelDetails NOTIFY modelChanged)
  Q_PROPERTY(QString modelError READ modelError NOTIFY modelChanged)
  // While a model loads: how far (0..1) and "Loading <file> 37%"; 0 and "" otherwise.
  Q_PROPERTY(double modelLoadFraction READ modelLoadFraction NOTIFY modelLoadProgressChanged)
  Q_PROPERTY(QString modelLoadText READ modelLoadText NOTIFY modelLoadProgressChanged)
  Q_PROPERTY(QString composerBlockReason READ composerBlockReason NOTIFY composerBlockReasonChanged)
  Q_PROPERTY(QString notice READ notice NOTIFY noticeChanged)
  Q_PROPERTY(QVariantMap settings READ settings NOTIFY settingsChanged)
  // A message typed while the shown chat was answering (or the model loading): sent as soon as
  // it can be; empty when none waits.
  Q_PROPERTY(QString queuedMessage READ queuedMessage NOTIFY queuedMessageChanged)
  // The title of the conversation that Undo would bring back; empty when there is none.
  Q_PROPERTY(QString undoDeleteTitle READ undoDeleteTitle NOTIFY undoDeleteChanged)
  // The context meter: what the shown chat plus the draft would take. Keys: known (bool),
  // tokens, maxPromptTokens, contextLength, droppedTurns, fits (bool), error (string), draft
  // (the draft text this count includes).
  // The picker's lines about the servers: "asking <server>…", or why one did not answer.
  Q_PROPERTY(QStringList remoteServerLines READ remoteServerLines NOTIFY remoteServersChanged)
  Q_PROPERTY(QVariantMap contextUsage READ contextUsage NOTIFY contextUsageChanged)
  // Presets: a system prompt with the next-message settings, saved by name.
  Q_PROPERTY(QStringList presetNames READ presetNames NOTIFY presetsChanged)
  Q_PROPERTY(QString defaultPreset READ defaultPreset NOTIFY presetsChanged)
  // The UI language setting: "system" (the desktop's locale), "en" or "ko"; read at start.
  Q_PROPERTY(QString language READ language NOTIFY languageChanged)
  // The shown chat's messages are being read from the store (opening a long chat); its rows and
  // settings arrive when this turns false.
  Q_PROPERTY(bool messagesLoading READ messagesLoading NOTIFY messagesLoadingChanged)
  // A search is running on the store's thread; the results arrive when this turns false.
  Q_PROPERTY(bool searching READ searching NOTIFY searchingChanged)
  // An export or an import is running on the store's thread (one at a time); transferText says
  // which and where ("Exporting to <file>…"), empty when none runs.
  Q_PROPERTY(bool exporting READ exporting NOTIFY transferChanged)
  Q_PROPERTY(bool importing READ importing NOTIFY transferChanged)
  Q_PROPERTY(QString transferText READ transferText NOTIFY transferChanged)
  // The chat database is being opened (checked, and for an older version copied and updated) on
  // the store's thread: the window shows "Opening your chats…" with storeOpeningText (the step,
  // "… (step 2 of 4)") and storeOpeningFraction (0..1, by steps). A message sent meanwhile is
  // queued (queuedMessage) and goes out once the chats are shown. storeError: why the open
  // failed (retryOpenStore tries again), empty otherwise.
  Q_PROPERTY(bool storeOpening READ storeOpening NOTIFY storeOpeningChanged)
  Q_PROPERTY(QString storeOpeningText READ storeOpeningText NOTIFY storeOpeningChanged)
  Q_PROPERTY(double storeOpeningFraction READ storeOpeningFraction NOTIFY storeOpeningChanged)
  Q_PROPERTY(QString storeError READ storeError NOTIFY storeOpeningChanged)

 public:
  using Options = AppControllerOptions;
  explicit AppController(const Options& options, QObject* parent = nullptr);
  ~AppController() override;

  static void setInstance(AppController* controller);
  static AppController* create(QQmlEngine*, QJSEngine*);

  ConversationListModel* conversations() { return &conversations_; }
  MessageModel* messages() { return &messages_; }
  SearchResultModel* searchResults() { return &searchResults_; }
  ModelListModel* models() { return &models_; }
  // The engine the chats run on, for other clients of it (the local API server).
  EngineHost& engineHost() { return inference_.worker()->host(); }
  qint64 currentConversationId() const { return currentConversation_; }
  QString currentTitle() const;
  bool generating() const;
  bool modelLoaded() const { return load_.loaded; }
  bool modelLoading() const { return load_.loading; }
  QString modelName() const;
  QString modelDetails() const;
  QString modelError() const { return load_.error; }
  double modelLoadFraction() const { return load_.loading ? load_.fraction : 0.0; }
  QString modelLoadText() const;
  QString composerBlockReason() const;
  QString notice() const { return notice_; }
  bool messagesLoading() const { return messagesLoading_; }
  bool searching() const { return searching_; }
  bool exporting() const { return transfer_.kind == Transfer::Export; }
  bool importing() const { return transfer_.kind == Transfer::Import; }
  QString transferText() const;
  bool storeOpening() const { return open_.opening; }
  QString storeOpeningText() const { return open_.opening ? open_.text : QString(); }
  double storeOpeningFraction() const { return open_.fraction; }
  QString storeError() const { return open_.error; }
  Q_INVOKABLE void retryOpenStore();
  // Runs f once the store's open has ended (at once when it has): what needs the app settings
  // at start (the model used last, the language). Also after a failed open.
  void whenStoreOpen(std::function<void()> f);
  // The model file used last (app settings; empty until the store is open).
  QString lastModelPath() const;
  QVariantMap settings() const;
  // The chat database, on its own thread (threaded_chat_store.h); its calls run in order.
  store::ThreadedChatStore& store() { return store_; }
  QString undoDeleteTitle() const { return undo_.title; }
  QVariantMap contextUsage() const { return meter_.usage; }
  QStringList presetNames() const;
  QString language() const;
  Q_INVOKABLE void setLanguage(const QString& language);
  QString defaultPreset() const;
  QString queuedMessage() const {
    return queued_.conversationId == currentConversation_ ? queued_.text : QString();
  }

  // --- Chat ----------------------------------------------------------------------------------
  // Sends now, or queues the message while the shown chat answers or the model loads; returns
  // an empty string when it was sent or queued, else why it was not (for the composer to show).
  Q_INVOKABLE QString sendOrQueue(const QString& text);
  Q_INVOKABLE void cancelQueued();
  // The composer's text as it is typed: the context meter is counted again shortly after.
  Q_INVOKABLE void setDraft(const QString& text);
  Q_INVOKABLE bool send(const QString& text);
  Q_INVOKABLE void stop();
  Q_INVOKABLE void regenerate();
  Q_INVOKABLE void editMessage(qint64 messageId, const QString& newText);
  Q_INVOKABLE void switchBranch(qint64 messageId, int delta);
  Q_INVOKABLE QVariantMap statsDetails(qint64 messageId) const;
  Q_INVOKABLE void copyText(const QString& text) const;
  // The clipboard's text (Qt Quick has no clipboard type): the composer asks how long a paste is
  // before its text field takes it.
  Q_INVOKABLE QString clipboardText() const;
  // A file dropped on the composer, as the message will carry it: {name, block (its text under
  // its name, dropped_file.h), characters (of its content)}, or {name, error} saying why it is
  // not attached (a folder, unreadable, over 2 MB, not text).
  Q_INVOKABLE QVariantMap readDroppedFile(const QUrl& url) const;
  // The primary selection's text, for a middle-click paste (X11, and Wayland's primary
  // selection); empty where the platform has none.
  Q_INVOKABLE QString selectionText() const;
  Q_INVOKABLE int messageRow(qint64 messageId) const { return messages_.rowOf(messageId); }
  Q_INVOKABLE bool isGenerating(qint64 conversationId) const {
    return !activeKeyFor(conversationId).isEmpty();
  }

  // --- Conversations and search --------------------------------------------------------------
  Q_INVOKABLE void newConversation();
  Q_INVOKABLE void openConversation(qint64 conversationId);
  Q_INVOKABLE void renameConversation(qint64 conversationId, const QString& title);
  Q_INVOKABLE void deleteConversation(qint64 conversationId);  // to the trash, with Undo
  Q_INVOKABLE void undoDelete();
  Q_INVOKABLE void setPinned(qint64 conversationId, bool pinned);
  // To a file as "md" or "json" (conversationId 0: all), on the store's thread; returns why it
  // was refused (another export or import running), empty when it started. exportFinished
  // tells how it ended.
  Q_INVOKABLE QString exportConversations(qint64 conversationId, const QUrl& file,
                                          const QString& format);
  // A JSON export added as new conversations, on the store's thread; returns why it was
  // refused, empty when it started. importFinished tells how it ended (the first imported chat
  // is then opened).
  Q_INVOKABLE QString importConversations(const QUrl& file);
  Q_INVOKABLE void search(const QString& query);
  Q_INVOKABLE void openSearchHit(qint64 conversationId, qint64 messageId);
  Q_INVOKABLE void dismissNotice();
  // The window's last geometry (x, y, width, height; empty when none was saved), kept in the
  // store's app settings.
  Q_INVOKABLE QVariantList savedWindowGeometry() const;
  Q_INVOKABLE void saveWindowGeometry(int x, int y, int width, int height, bool maximized);
  Q_INVOKABLE bool savedWindowMaximized() const;

  // --- Model and settings --------------------------------------------------------------------
  Q_INVOKABLE void loadModel(const QString& path);
  Q_INVOKABLE void loadModelUrl(const QUrl& url);
  Q_INVOKABLE void reloadModel() { loadModel(load_.path); }
  // Stops the load in progress (app_controller_load.cpp). The model loaded before it, if any,
  // is loaded again (the engine freed it when the load began) and the notice says so.
  Q_INVOKABLE void cancelModelLoad();
  Q_INVOKABLE void rescanModels();
  // A remote server's model from the picker's row (app_controller_remote.cpp): new answers go
  // to it until a local model is loaded again.
  Q_INVOKABLE void useRemoteModel(int row);
  bool usingRemoteModel() const { return remote_.has_value(); }
  // At startup: takes up the remote model chosen last time (its server is asked again, and a
  // notice says so when it is gone); false when the last choice was a local file.
  bool restoreRemoteModel();
  QStringList remoteServerLines() const { return remoteServerLines_; }
  Q_INVOKABLE QString settingError(const QString& key, const QVariant& value) const;
  Q_INVOKABLE bool setSetting(const QString& key, const QVariant& value);
  Q_INVOKABLE void saveSettingsAsDefaults();
  // app_controller_presets.cpp. savePreset keeps the shown chat's system prompt and sampling
  // settings under `name` (replacing one of that name); applyPreset sets them on the shown chat;
  // setDefaultPreset makes new chats start with one ("" for none).
  Q_INVOKABLE bool savePreset(const QString& name);
  Q_INVOKABLE void applyPreset(const QString& name);
  Q_INVOKABLE void deletePreset(const QString& name);
  Q_INVOKABLE void setDefaultPreset(const QString& name);

 signals:
  void currentConversationChanged();
  void generatingChanged();
  void modelChanged();
  void modelLoadProgressChanged();
  void remoteServersChanged();
  void composerBlockReasonChanged();
  void noticeChanged();
  void settingsChanged();
  void queuedMessageChanged();
  void undoDeleteChanged();
  void contextUsageChanged();
  void presetsChanged();
  void languageChanged();
  void messagesLoadingChanged();
  void searchingChanged();
  void transferChanged();
  void storeOpeningChanged();
  // How an export or import ended: the error, empty when it worked.
  void exportFinished(const QString& path, const QString& error);
  void importFinished(int conversations, const QString& error);
  void countInWorker(quint64 generation, const ember::app::WorkerRequest& request);
  void focusComposer();
  void scrollToMessage(qint64 messageId);
  void answerFinished(qint64 messageId);  // committed to the store (tests, accessibility)
  // A streamed piece arrived for an answer, shown or not (tests, accessibility).
  void pieceReceived(qint64 conversationId, qint64 messageId, const QString& piece);
  void submitToWorker(const ember::app::WorkerRequest& request);
  void abortInWorker(const QString& key);
  void loadInWorker(const ember::EngineOptions& options,
                    const std::shared_ptr<ember::LoadControl>& control);

 private:
  // app_controller_reasoning.cpp: routes a split piece to the reasoning or the answer.
  void addReasoning(ActiveRequest& r, const QString& piece, double ms);
  void endReasoning(ActiveRequest& r, double ms);
  void addAnswerText(ActiveRequest& r, const QString& piece);
  void onReasoningPiece(const QString& key, const QString& text, double ms);
  void checkpointIfDue(ActiveRequest& r, double ms);  // text and reasoning, once a second
  // app_controller_open.cpp: the open queued on the store thread, and its end back here.
  void openStore(const QString& path);
  void storeOpened(const store::OpenReport& report, const QString& error, QJsonObject settings,
                   const QList<store::Conversation>& conversations);
  void runWhenStoreOpen();
  QString openStageText(int stage) const;
  // Open and not failed: ids can be reserved, writes land.
  bool storeReady() const { return !open_.opening && open_.error.isEmpty(); }
  void reloadConversations();  // read again on the store thread
  void openConversationThen(qint64 conversationId, std::function<void()> then);
  bool startAnswer(qint64 conversationId, qint64 assistantId, qint64 upToMessageId);
  nlohmann::ordered_json chatMessages(qint64 conversationId, qint64 upToMessageId) const;
  QString activeKeyFor(qint64 conversationId) const;
  void setNotice(const QString& text);
  void touchConversation(qint64 conversationId);
  void updateGeneratingMark(qint64 conversationId);  // the sidebar's mark for it
  void onPiece(const QString& key, const QString& text, double ms);
  void onProgress(const QString& key, int done, int total, int cached, bool waiting, double ms);
  void onFinished(const QString& key, const RequestStats& stats);
  void onFailed(const QString& key, const QString& message);
  void onLoaded(const LoadedModel& model);
  void onLoadFailed(const QString& path, const QString& message);
  void onLoadFraction(const QString& path, double fraction);
  void onLoadCancelled(const QString& path);
  QJsonObject effectiveSettings() const;
  // The model picker's "will it fit" lines (app_controller_fit.cpp): the current load settings
  // and the chosen device's free memory, asked on fitQueries_ (a CUDA device's first answer
  // takes a while) and applied back here unless a newer question was asked since.
  MemoryFitSettings fitSettingsNow() const;
  void refreshModelFit();
  void applyModelFit(quint64 generation, MemoryFitSettings settings);
  void rememberLoadedModelMemory(const LoadedModel& model, const ModelFileInfo& file);
  // Remote models (app_controller_remote.cpp): the picker's remote rows from the connections'
  // model lists, and the label a remote answer's stats carry as the device.
  void refreshRemoteModels();
  void connectRemoteChat();
  void onConnectionsTested();
  void updateRemoteServerLines();
  // Sends new answers to `model` of the connection (once its key is read) and remembers the
  // choice for the next start; false, with a notice, when the connection is no longer listed.
  bool chooseRemote(const QString& connectionId, const QString& server, const QString& model);
  // Which model a chat's answers came from (a remote one is taken up again when it is opened).
  void rememberAnswerModel(qint64 conversationId);
  void followConversationModel(qint64 conversationId);
  QString answerModel() const;  // the model a new answer is stored with
  // Runs a store operation; a StoreError becomes the notice and false.
  bool guarded(const std::function<void()>& f);

  // The GUI thread never waits on the store (app_controller_store.cpp): writes are queued with
  // write(), the GUI showing their outcome at once; reads run on the store thread and come back
  // through the event loop. What the GUI shows is its own copy: the conversation list, the shown
  // branch (messages_, with stats_ and siblingIds_), the shown chat's own settings and the app
  // settings (read once at start).
  //
  // write(f, undo): f runs on the store thread after everything queued before it. When it
  // fails, the notice says why and `undo` (GUI thread) puts the GUI back: it reads again what
  // the store holds (after a failed fsync SQLite cannot tell whether the row is on disk, so the
  // GUI is not simply rolled back).
  void write(std::function<void(store::ChatStore&)> f, std::function<void()> undo = {});
  QJsonValue appSetting(const QString& key) const { return appSettings_.value(key); }
  void saveAppSetting(const QString& key, const QJsonValue& value);  // the copy, then queued
  // Sets these keys of the shown chat's own settings (merged on the store thread, so a chat
  // whose settings are still on their way keeps its other ones).
  void saveOwnSettings(const QJsonObject& changes);
  // Reads the shown chat's active branch and own settings on the store thread; a result for a
  // chat no longer shown, or older than a newer read, is dropped. `then` runs once it is shown.
  void loadBranch(std::function<void()> then = {});
  // The shown branch as rows (a copy of messages_).
  QList<MessageRow> shownRows() const;
  // What the user must be told under an answer, from its saved stats: older messages left out
  // to fit the context window, the model's chat template replaced by a built-in one (empty when
  // neither). The same text when the answer ends and whenever its chat is opened again.
  QString answerNote(const store::MessageStats& stats) const;
  void dropAnswer(const QString& key);
  // A send, edit or regeneration whose rows could not be saved: its answer stopped, the chat
  // read back from the store (app_controller.cpp).
  void undoAnswer(qint64 conversationId, qint64 answerId);
  void reloadAppSettings();  // read again on the store thread
  // The settings saved before the store was open (open_.settingsSetWhileOpening).
  void writePendingSettings();
  // A request whose rows could not be saved: ended here.
  static MessageRow streamingRow(qint64 id, int siblingIndex = 0, int siblingCount = 1);

  // First: destroyed last, after the worker threads; its destructor saves what is still queued.
  store::ThreadedChatStore store_;
  InferenceThread inference_;
  MessageModel messages_;
  ConversationListModel conversations_;
  SearchResultModel searchResults_;
  ModelListModel models_;
  QStringList modelFolders_;
  qint64 currentConversation_ = 0;
  QHash<QString, ActiveRequest> active_;
  quint64 requestCounter_ = 0;
  ModelLoadState load_;  // the model loaded or loading, and the memory it holds
  QString notice_;
  QueuedMessage queued_;
  void sendQueuedIfReady();
  // Purges the trash of what has expired, offers Undo for the newest deleted conversation left
  // and times the next purge (app_controller_trash.cpp).
  void offerUndoForTrash();
  QJsonObject presets() const;
  QJsonObject settingsForNewChat() const;  // the default preset, or the default system prompt
  // The context meter (app_controller_context.cpp; ContextCount).
  void scheduleRecount() { meter_.recountTimer.start(); }
  void recount();
  void onTokensCounted(quint64 generation, const PromptTokenCount& count, const QString& error);
  ContextCount meter_;
  int undoDeleteMs_ = 8000;
  QTimer undoTimer_;
  TrashUndo undo_;
  std::unique_ptr<ConnectionsModel> connections_;
  RemoteChat remoteChat_;
  std::optional<RemoteTarget> remote_;  // the remote model in use, if any
  QStringList remoteServerLines_;
  // The GUI's copies of what the store holds (see write() above).
  QJsonObject appSettings_;
  QJsonObject ownSettings_;  // the shown chat's own settings layer
  QHash<qint64, store::MessageStats> stats_;      // the shown branch's answers
  QHash<qint64, QList<qint64>> siblingIds_;        // the shown branch's messages
  bool messagesLoading_ = false;
  quint64 branchGeneration_ = 0;  // the newest branch read asked for
  quint64 trashGeneration_ = 0;
  bool searching_ = false;
  quint64 searchGeneration_ = 0;
  Transfer transfer_;  // the export or import running (app_controller_export.cpp)
  void setTransfer(Transfer::Kind kind, const QString& path);
  QString refuseSecondTransfer() const;  // why a second one cannot start; empty when it can
  StoreOpenState open_;  // the store's open (app_controller_open.cpp)
  QThreadPool fitQueries_;  // last: destroyed (and waited for) first
};

}  // namespace ember::app
