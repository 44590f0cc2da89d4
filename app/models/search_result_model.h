#pragma once
// Search hits over all message text, best first.
#include <QAbstractListModel>
#include <QList>
#include <QtQml/qqmlregistration.h>

namespace ember::app {

struct SearchResultRow {
  qint64 conversationId = 0;
  qint64 messageId = 0;
  QString conversationTitle;
  QString snippet;  // rich text: the match in bold, the rest escaped
};

class SearchResultModel : public QAbstractListModel {
  Q_OBJECT
  QML_ELEMENT
  QML_UNCREATABLE("Owned by the AppController")
  Q_PROPERTY(int count READ rowCount NOTIFY countChanged)
 public:
  enum Roles { ConversationIdRole = Qt::UserRole + 1, MessageIdRole, TitleRole, SnippetRole };
  using QAbstractListModel::QAbstractListModel;

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QHash<int, QByteArray> roleNames() const override;
  void setResults(const QList<SearchResultRow>& rows);

 signals:
  void countChanged();

 private:
  QList<SearchResultRow> rows_;
};

}  // namespace ember::app
