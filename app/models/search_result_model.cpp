#include "models/search_result_model.h"

namespace ember::app {

int SearchResultModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

QVariant SearchResultModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const SearchResultRow& r = rows_.at(index.row());
  switch (role) {
    case ConversationIdRole: return r.conversationId;
    case MessageIdRole: return r.messageId;
    case TitleRole: return r.conversationTitle;
    case Qt::DisplayRole:
    case SnippetRole: return r.snippet;
    default: return {};
  }
}

QHash<int, QByteArray> SearchResultModel::roleNames() const {
  return {{ConversationIdRole, "conversationId"}, {MessageIdRole, "messageId"},
          {TitleRole, "title"}, {SnippetRole, "snippet"}};
}

void SearchResultModel::setResults(const QList<SearchResultRow>& rows) {
  beginResetModel();
  rows_ = rows;
  endResetModel();
  emit countChanged();
}

}  // namespace ember::app
