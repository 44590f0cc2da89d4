#include "models/message_model.h"

namespace ember::app {

int MessageModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

QVariant MessageModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const MessageRow& r = rows_.at(index.row());
  switch (role) {
    case IdRole: return r.id;
    case RoleRole: return r.role;
    case Qt::DisplayRole:
    case TextRole: return r.text;
    case StatusRole: return r.status;
    case StatsLineRole: return r.statsLine;
    case ErrorRole: return r.error;
    case SiblingIndexRole: return r.siblingIndex;
    case SiblingCountRole: return r.siblingCount;
    case StreamingRole: return r.status == QLatin1String("streaming");
    case IsLastRole: return index.row() == rows_.size() - 1;
    case LiveTextRole: return r.liveText;
    case LiveFractionRole: return r.liveFraction;
    case ReasoningRole: return r.reasoning;
    case ReasoningSecondsRole: return r.reasoningSeconds;
    default: return {};
  }
}

QHash<int, QByteArray> MessageModel::roleNames() const {
  return {{IdRole, "messageId"},         {RoleRole, "role"},
          {TextRole, "text"},            {StatusRole, "status"},
          {StatsLineRole, "statsLine"},  {ErrorRole, "errorText"},
          {SiblingIndexRole, "siblingIndex"}, {SiblingCountRole, "siblingCount"},
          {StreamingRole, "streaming"},  {IsLastRole, "isLast"},
          {LiveTextRole, "liveText"},    {LiveFractionRole, "liveFraction"},
          {ReasoningRole, "reasoning"},  {ReasoningSecondsRole, "reasoningSeconds"}};
}

void MessageModel::setMessages(const QList<MessageRow>& rows) {
  beginResetModel();
  rows_ = rows;
  endResetModel();
  emit countChanged();
}

void MessageModel::appendMessage(const MessageRow& row) {
  const int at = static_cast<int>(rows_.size());
  beginInsertRows({}, at, at);
  rows_.append(row);
  endInsertRows();
  if (at > 0) emit dataChanged(index(at - 1), index(at - 1), {IsLastRole});
  emit countChanged();
}

bool MessageModel::appendText(qint64 id, const QString& piece) {
  const int at = rowOf(id);
  if (at < 0) return false;
  rows_[at].text += piece;
  emit dataChanged(index(at), index(at), {TextRole});
  return true;
}

void MessageModel::setLive(qint64 id, const QString& text, double fraction) {
  const int at = rowOf(id);
  if (at < 0) return;
  MessageRow& r = rows_[at];
  if (r.liveText == text && r.liveFraction == fraction) return;
  r.liveText = text;
  r.liveFraction = fraction;
  emit dataChanged(index(at), index(at), {LiveTextRole, LiveFractionRole});
}

void MessageModel::appendReasoning(qint64 id, const QString& piece) {
  const int at = rowOf(id);
  if (at < 0) return;
  rows_[at].reasoning += piece;
  emit dataChanged(index(at), index(at), {ReasoningRole});
}

void MessageModel::setReasoningSeconds(qint64 id, double seconds) {
  const int at = rowOf(id);
  if (at < 0) return;
  rows_[at].reasoningSeconds = seconds;
  emit dataChanged(index(at), index(at), {ReasoningSecondsRole});
}

void MessageModel::finishMessage(qint64 id, const QString& status, const QString& statsLine,
                                 const QString& error) {
  const int at = rowOf(id);
  if (at < 0) return;
  rows_[at].status = status;
  rows_[at].statsLine = statsLine;
  rows_[at].error = error;
  rows_[at].liveText.clear();
  rows_[at].liveFraction = -1;
  emit dataChanged(index(at), index(at), {StatusRole, StatsLineRole, ErrorRole, StreamingRole,
                                          LiveTextRole, LiveFractionRole});
}

int MessageModel::rowOf(qint64 id) const {
  for (int i = static_cast<int>(rows_.size()) - 1; i >= 0; --i)
    if (rows_[i].id == id) return i;
  return -1;
}

const MessageRow* MessageModel::row(int index) const {
  return index >= 0 && index < rows_.size() ? &rows_[index] : nullptr;
}

}  // namespace ember::app
