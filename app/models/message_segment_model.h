#pragma once
// The blocks one message bubble shows, as a list model its Repeater builds delegates from: the
// answer's Markdown cut into prose and code blocks (markdown_blocks.h), or the user's own words as
// one plain block. When the text grows (streaming), only the tail from the last block is split
// again and only rows whose block changed are announced, so the delegates of finished blocks are
// left alone (no re-parse, no re-highlight, no binding runs). All of it is C++, so a piece of text
// makes no JavaScript garbage.
#include <QAbstractListModel>
#include <QList>
#include <QString>
#include <QtQml/qqmlregistration.h>

#include "models/markdown_blocks.h"

namespace ember::app {

class MessageSegmentModel : public QAbstractListModel {
  Q_OBJECT
  QML_ELEMENT
  Q_PROPERTY(QString text READ text WRITE setText NOTIFY textChanged)
  // false: the text is shown as written, in one block (the user's message).
  Q_PROPERTY(bool markdown READ markdown WRITE setMarkdown NOTIFY markdownChanged)
  Q_PROPERTY(int count READ rowCount NOTIFY countChanged)
 public:
  enum Roles { CodeRole = Qt::UserRole + 1, LangRole, TextRole, ClosedRole };
  using QAbstractListModel::QAbstractListModel;

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QHash<int, QByteArray> roleNames() const override;

  QString text() const { return text_; }
  void setText(const QString& text);
  bool markdown() const { return markdown_; }
  void setMarkdown(bool markdown);

 signals:
  void textChanged();
  void markdownChanged();
  void countChanged();
  // The text was not an extension of the previous one (another branch, an edit): the blocks
  // were split anew, so sizes measured from them are to be measured again.
  void resplit();

 private:
  void update(QList<MarkdownBlock> blocks, qsizetype kept);

  QString text_;
  bool markdown_ = true;
  QList<MarkdownBlock> blocks_;
};

}  // namespace ember::app
