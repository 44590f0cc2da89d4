#include "models/message_segment_model.h"

namespace ember::app {

int MessageSegmentModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(blocks_.size());
}

QVariant MessageSegmentModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= blocks_.size()) return {};
  const MarkdownBlock& block = blocks_.at(index.row());
  switch (role) {
    case CodeRole: return block.code;
    case LangRole: return block.lang;
    case TextRole: return block.text;
    case ClosedRole: return block.closed;
    default: return {};
  }
}

QHash<int, QByteArray> MessageSegmentModel::roleNames() const {
  return {{CodeRole, "code"}, {LangRole, "lang"}, {TextRole, "text"}, {ClosedRole, "closed"}};
}

void MessageSegmentModel::setText(const QString& text) {
  if (text == text_) return;
  const QString previous = text_;
  text_ = text;
  if (!markdown_) {
    QList<MarkdownBlock> blocks;
    if (!text.isEmpty()) blocks << MarkdownBlock{false, {}, text, 0, true};
    update(std::move(blocks), 0);
  } else {
    qsizetype kept = 0;
    QList<MarkdownBlock> blocks = splitMarkdownFrom(blocks_, previous, text, &kept);
    update(std::move(blocks), kept);
    if (!previous.isEmpty() && !text.startsWith(previous)) emit resplit();
  }
  emit textChanged();
}

void MessageSegmentModel::setMarkdown(bool markdown) {
  if (markdown == markdown_) return;
  markdown_ = markdown;
  const QString text = text_;
  text_.clear();
  blocks_.clear();  // split again from nothing in the new mode
  beginResetModel();
  endResetModel();
  setText(text);
  emit resplit();
  emit markdownChanged();
  emit countChanged();
}

// Announces only what changed: rows from `kept` on whose block differs, then added or removed
// rows at the end.
void MessageSegmentModel::update(QList<MarkdownBlock> blocks, qsizetype kept) {
  const qsizetype before = blocks_.size();
  const qsizetype common = std::min(before, blocks.size());
  for (qsizetype i = std::min(kept, common); i < common; ++i) {
    const MarkdownBlock& was = blocks_.at(i);
    const MarkdownBlock& now = blocks.at(i);
    QList<int> roles;
    if (was.code != now.code) roles << CodeRole;
    if (was.lang != now.lang) roles << LangRole;
    if (was.text != now.text) roles << TextRole;
    if (was.closed != now.closed) roles << ClosedRole;
    blocks_[i] = now;
    if (!roles.isEmpty()) emit dataChanged(index(int(i)), index(int(i)), roles);
  }
  if (blocks.size() > before) {
    beginInsertRows({}, int(before), int(blocks.size() - 1));
    for (qsizetype i = before; i < blocks.size(); ++i) blocks_ << blocks.at(i);
    endInsertRows();
  } else if (blocks.size() < before) {
    beginRemoveRows({}, int(blocks.size()), int(before - 1));
    blocks_.resize(blocks.size());
    endRemoveRows();
  }
  if (blocks_.size() != before) emit countChanged();
}

}  // namespace ember::app
