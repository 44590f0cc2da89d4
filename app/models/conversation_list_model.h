#pragma once
// The sidebar: every conversation, pinned ones first, then most recently updated first, each
// marked while one of its answers is being generated (several conversations can generate at
// once).
#include <QAbstractListModel>
#include <QDateTime>
#include <QList>
#include <QtQml/qqmlregistration.h>

namespace ember::app {

struct ConversationRow {
  qint64 id = 0;
  QString title;
  QDateTime updatedAt;
  bool generating = false;  // an answer in it is streaming now
  bool pinned = false;
};

class ConversationListModel : public QAbstractListModel {
  Q_OBJECT
  QML_ELEMENT
  QML_UNCREATABLE("Owned by the AppController")
  Q_PROPERTY(int count READ rowCount NOTIFY countChanged)
 public:
  enum Roles { IdRole = Qt::UserRole + 1, TitleRole, UpdatedRole, GeneratingRole, PinnedRole };
  using QAbstractListModel::QAbstractListModel;

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QHash<int, QByteArray> roleNames() const override;

  void setConversations(const QList<ConversationRow>& rows);
  // Puts the conversation first among the pinned or the others (it was just updated),
  // inserting it when new. Its generating mark is kept (the store does not know it).
  void touch(const ConversationRow& row);
  void setGenerating(qint64 id, bool generating);
  void rename(qint64 id, const QString& title);
  void remove(qint64 id);
  // Pins or unpins a row and moves it where the store's order puts it (pinned first, then the
  // most recently updated).
  void setPinned(qint64 id, bool pinned);
  const ConversationRow* find(qint64 id) const;
  QList<ConversationRow> allRows() const { return rows_; }
  int rowOf(qint64 id) const;
  Q_INVOKABLE qint64 idAt(int row) const;

 signals:
  void countChanged();

 private:
  QList<ConversationRow> rows_;
};

}  // namespace ember::app
