#include "models/conversation_list_model.h"

#include <algorithm>

#include <QLocale>

namespace ember::app {

int ConversationListModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

QVariant ConversationListModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const ConversationRow& r = rows_.at(index.row());
  switch (role) {
    case IdRole: return r.id;
    case Qt::DisplayRole:
    case TitleRole: return r.title;
    case UpdatedRole:
      return QLocale().toString(r.updatedAt.toLocalTime(), QLocale::ShortFormat);
    case GeneratingRole: return r.generating;
    case PinnedRole: return r.pinned;
    default: return {};
  }
}

QHash<int, QByteArray> ConversationListModel::roleNames() const {
  return {{IdRole, "conversationId"}, {TitleRole, "title"}, {UpdatedRole, "updated"},
          {GeneratingRole, "generating"}, {PinnedRole, "pinned"}};
}

void ConversationListModel::setConversations(const QList<ConversationRow>& rows) {
  beginResetModel();
  rows_ = rows;
  endResetModel();
  emit countChanged();
}

void ConversationListModel::touch(const ConversationRow& row) {
  const int at = rowOf(row.id);
  // Where it goes: the top, or below the pinned ones (not counting itself).
  int target = 0;
  if (!row.pinned)
    for (int i = 0; i < rows_.size(); ++i)
      if (rows_[i].pinned && rows_[i].id != row.id) ++target;
  if (at < 0) {
    beginInsertRows({}, target, target);
    rows_.insert(target, row);
    endInsertRows();
    emit countChanged();
    return;
  }
  if (at != target) {
    // Qt's move destination is the row index before which it lands, in the old numbering.
    beginMoveRows({}, at, at, {}, target > at ? target + 1 : target);
    rows_.move(at, target);
    endMoveRows();
  }
  const bool generating = rows_[target].generating;
  rows_[target] = row;
  rows_[target].generating = generating;
  emit dataChanged(index(target), index(target));
}

void ConversationListModel::setGenerating(qint64 id, bool generating) {
  const int at = rowOf(id);
  if (at < 0 || rows_[at].generating == generating) return;
  rows_[at].generating = generating;
  emit dataChanged(index(at), index(at), {GeneratingRole});
}

void ConversationListModel::rename(qint64 id, const QString& title) {
  const int at = rowOf(id);
  if (at < 0) return;
  rows_[at].title = title;
  emit dataChanged(index(at), index(at), {TitleRole});
}

void ConversationListModel::remove(qint64 id) {
  const int at = rowOf(id);
  if (at < 0) return;
  beginRemoveRows({}, at, at);
  rows_.removeAt(at);
  endRemoveRows();
  emit countChanged();
}

void ConversationListModel::setPinned(qint64 id, bool pinned) {
  const int at = rowOf(id);
  if (at < 0) return;
  QList<ConversationRow> rows = rows_;
  rows[at].pinned = pinned;
  std::stable_sort(rows.begin(), rows.end(), [](const ConversationRow& a, const ConversationRow& b) {
    if (a.pinned != b.pinned) return a.pinned;
    if (a.updatedAt != b.updatedAt) return a.updatedAt > b.updatedAt;
    return a.id > b.id;
  });
  setConversations(rows);
}

const ConversationRow* ConversationListModel::find(qint64 id) const {
  const int at = rowOf(id);
  return at < 0 ? nullptr : &rows_[at];
}

int ConversationListModel::rowOf(qint64 id) const {
  for (int i = 0; i < rows_.size(); ++i)
    if (rows_[i].id == id) return i;
  return -1;
}

qint64 ConversationListModel::idAt(int row) const {
  return row >= 0 && row < rows_.size() ? rows_[row].id : 0;
}

}  // namespace ember::app
