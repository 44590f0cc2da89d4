// Finding and driving the items of a real QML window in a test, as a user would reach them.
#pragma once

#include <QCoreApplication>
#include <QDropEvent>
#include <QMimeData>
#include <QQuickItem>
#include <QQuickWindow>
#include <QString>
#include <QUrl>
#include <QtTest>

namespace ember::test {

inline QQuickItem* findItem(QQuickItem* item, const QString& name) {
  if (item->objectName() == name) return item;
  for (QQuickItem* child : item->childItems())
    if (QQuickItem* found = findItem(child, name)) return found;
  return nullptr;
}

inline bool anyVisible(QQuickItem* item, const QString& name) {
  if (item->objectName() == name && item->isVisible()) return true;
  for (QQuickItem* child : item->childItems())
    if (anyVisible(child, name)) return true;
  return false;
}

// QTest::keyClicks exists only for widgets; a window gets one key at a time.
inline void typeText(QWindow* window, const char* text) {
  for (const char* c = text; *c; ++c) QTest::keyClick(window, *c);
}

inline QPoint centreOf(const QQuickItem* item) {
  return item->mapToScene(QPointF(item->width() / 2, item->height() / 2)).toPoint();
}

// Drags `data` onto the window at `at` and drops it there, through the window's own event
// delivery (enter, move, drop: what a drag from another program sends). Returns whether the drop
// was taken as a copy.
inline bool dropMimeData(QQuickWindow* window, QPoint at, const QMimeData& data,
                         Qt::DropActions offered) {
  QDragEnterEvent enter(at, offered, &data, Qt::LeftButton, Qt::NoModifier);
  QCoreApplication::sendEvent(window, &enter);
  QDragMoveEvent move(at, offered, &data, Qt::LeftButton, Qt::NoModifier);
  QCoreApplication::sendEvent(window, &move);
  QDropEvent drop(QPointF(at), offered, &data, Qt::LeftButton, Qt::NoModifier);
  QCoreApplication::sendEvent(window, &drop);
  return drop.isAccepted() && drop.dropAction() == Qt::CopyAction;
}

// Text (text/plain), as dragged from another program's text.
inline bool dropText(QQuickWindow* window, QPoint at, const QString& text) {
  QMimeData data;
  data.setText(text);
  return dropMimeData(window, at, data, Qt::CopyAction | Qt::MoveAction);
}

// Files, as a file manager offers them: their URLs (text/uri-list) with their paths as
// text/plain beside them.
inline bool dropUrls(QQuickWindow* window, QPoint at, const QList<QUrl>& urls) {
  QMimeData data;
  data.setUrls(urls);
  QStringList paths;
  for (const QUrl& url : urls) paths << url.toLocalFile();
  data.setText(paths.join('\n'));
  return dropMimeData(window, at, data, Qt::CopyAction | Qt::MoveAction | Qt::LinkAction);
}

// `chars` characters of numbered Korean and English lines (UTF-8: 1 to 3 bytes a character).
inline QString koreanAndEnglishText(qsizetype chars) {
  QString text;
  for (int line = 0; text.size() < chars; ++line)
    text += QStringLiteral("%1: 안녕하세요, 세계! the quick brown fox 한국어 문장입니다.\n").arg(line);
  text.truncate(chars);
  return text;
}

}  // namespace ember::test
