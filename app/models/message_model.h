#pragma once
// The active branch of the open conversation, one row per message, as the chat view shows it.
// Only the GUI thread touches it: the controller appends streamed pieces it received as values.
#include <QAbstractListModel>
#include <QList>
#include <QString>
#include <QtQml/qqmlregistration.h>

namespace ember::app {

struct MessageRow {
  qint64 id = 0;
  QString role;    // "user", "assistant", "system"
  QString text;
  QString status;  // "complete", "streaming", "interrupted", "stopped", "error"
  QString statsLine;  // "TTFT 120 ms · 48.2 tok/s · 64 tokens"; empty when not measured
  QString error;      // why generation failed, when it did
  QString reasoning;            // the model's thinking, shown folded
  double reasoningSeconds = -1;  // how long it thought; -1 while it still thinks
  // While the answer is alive: its stage ("Reading prompt 640/2048 tokens · about 12 s left",
  // the live speed) and the prompt-reading fraction (0..1; -1: no bar).
  QString liveText;
  double liveFraction = -1;
  int siblingIndex = 0;  // 0-based
  int siblingCount = 1;
};

class MessageModel : public QAbstractListModel {
  Q_OBJECT
  QML_ELEMENT
  QML_UNCREATABLE("Owned by the AppController")
  Q_PROPERTY(int count READ rowCount NOTIFY countChanged)
 public:
  enum Roles {
    IdRole = Qt::UserRole + 1,
    RoleRole,
    TextRole,
    StatusRole,
    StatsLineRole,
    ErrorRole,
    SiblingIndexRole,
    SiblingCountRole,
    StreamingRole,
    IsLastRole,
    LiveTextRole,
    LiveFractionRole,
    ReasoningRole,
    ReasoningSecondsRole,
  };
  using QAbstractListModel::QAbstractListModel;

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QHash<int, QByteArray> roleNames() const override;

  void setMessages(const QList<MessageRow>& rows);
  void clear() { setMessages({}); }
  void appendMessage(const MessageRow& row);
  // Appends a streamed piece to the message `id`; false when it is not shown.
  bool appendText(qint64 id, const QString& piece);
  void setLive(qint64 id, const QString& text, double fraction);
  void appendReasoning(qint64 id, const QString& piece);
  void setReasoningSeconds(qint64 id, double seconds);
  void finishMessage(qint64 id, const QString& status, const QString& statsLine,
                     const QString& error = {});
  int rowOf(qint64 id) const;
  const MessageRow* row(int index) const;
  Q_INVOKABLE qint64 lastId() const { return rows_.isEmpty() ? 0 : rows_.last().id; }

 signals:
  void countChanged();

 private:
  QList<MessageRow> rows_;
};

}  // namespace ember::app
