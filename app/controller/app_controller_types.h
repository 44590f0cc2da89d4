#pragma once
// The AppController's options, and its state grouped by what it is about: an answer being
// streamed, the message waiting to be sent, the deleted chat Undo would bring back, the export or
// import running, the chat database's open, the model's load and the context meter's count.
// Plain data; the AppController's files change it on the GUI thread.
#include <QElapsedTimer>
#include <QJsonObject>
#include <QList>
#include <QSet>
#include <QString>
#include <QStringList>
#include <QTimer>
#include <QVariantMap>
#include <algorithm>
#include <functional>
#include <memory>
#include <vector>

#include "controller/live_status.h"
#include "controller/think_splitter.h"
#include "models/conversation_list_model.h"
#include "models/model_memory_fit.h"
#include "worker/inference_worker.h"

namespace ember::app {

struct AppControllerOptions {
  QString databasePath;
  QStringList modelFolders;
  int undoDeleteMs = 8000;  // how long a deleted conversation can be brought back
  // Settings → Connections' list and key folder; empty: the app's own settings and data folder.
  QString connectionsSettingsPath;
  QString connectionsKeyDir;
};

// An answer streaming from the engine (or a remote server), shown or not, by its request key.
struct ActiveRequest {
  qint64 messageId = 0;
  qint64 conversationId = 0;
  QString text;
  QList<double> tokenTimesMs;
  QElapsedTimer sinceCheckpoint;
  QJsonObject sampling;
  QString model;
  QString backend;  // the engine's backend when it was submitted
  LiveStatus live;  // what its bubble says until it finishes
  // The reasoning section, apart from the text: by the engine's flag or the template's tags.
  ThinkSplitter splitter;
  bool reasoningFlagged = false;
  QString reasoning;
  double reasoningStartMs = -1, reasoningEndMs = -1;
  double reasoningMs() const {
    return reasoningStartMs < 0 ? 0 : std::max(0.0, reasoningEndMs - reasoningStartMs);
  }
};

// A message typed while its chat was answering, the model loading or the store opening.
struct QueuedMessage {
  qint64 conversationId = 0;
  QString text;
};

// The newest deleted conversation, while Undo can bring it back.
struct TrashUndo {
  qint64 conversationId = 0;
  QString title;
  ConversationRow row;  // how it stood in the list, for putting it back
};

// The export or import running on the store's thread (app_controller_export.cpp); one at a time.
struct Transfer {
  enum Kind { None, Export, Import } kind = None;
  QString path;
};

// The chat database's open on the store's thread (app_controller_open.cpp).
struct StoreOpenState {
  QString path;
  bool opening = false;
  QString text;  // the step shown ("… (step 2 of 4)")
  double fraction = 0;
  QString error;  // why the open failed; empty otherwise
  quint64 generation = 0;
  QSet<QString> settingsSetWhileOpening;  // saved before the store was open: written after
  std::vector<std::function<void()>> afterOpen;
  bool newChatWhenOpen = false;  // "New chat" while opening: made once the chats are there
};

// The local model: loaded, or on its way (app_controller_load.cpp).
struct ModelLoadState {
  bool loaded = false;
  bool loading = false;
  QString path;
  QString error;
  LoadedModel model;
  double fraction = 0;
  std::shared_ptr<LoadControl> control;  // the load on its way (cancel() stops it)
  // Loads handed to the worker and not yet ended. The worker runs them in order and ends each
  // with one signal, so only the end that brings this to 0 is the newest load's.
  int inFlight = 0;
  QString lastLoadedPath;  // the model loaded last (to go back to when a load is cancelled)
  // The memory the loaded model holds by the plan (given back when another model loads, since
  // the worker frees the old engine first), and whose memory that is ("system RAM" or the CUDA
  // backend's name).
  MemoryFitSettings fitSettings;  // the settings of the last load
  quint64 bytes = 0;
  QString memory;
  quint64 fitGeneration = 0;
};

// The context meter's count (app_controller_context.cpp): made on the worker's thread a moment
// after the last change; answers to older questions are dropped.
struct ContextCount {
  QString draft;
  QString countedDraft;  // the draft of the count on its way
  QTimer recountTimer;
  quint64 generation = 0;
  QVariantMap usage;
};

}  // namespace ember::app
