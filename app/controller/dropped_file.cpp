#include "dropped_file.h"

#include <algorithm>

#include <QFile>
#include <QFileInfo>
#include <QStringDecoder>

namespace ember::app {

DroppedFile readDroppedFile(const QString& path, qint64 maxBytes) {
  DroppedFile file;
  const QFileInfo info(path);
  file.name = info.fileName();
  if (info.isDir()) {
    file.refusal = DropRefusal::Folder;
    return file;
  }
  QFile in(path);
  if (!in.open(QIODevice::ReadOnly)) {
    file.refusal = DropRefusal::Unreadable;
    file.reason = in.errorString();
    return file;
  }
  // The size as opened (not as listed before): a file that grows while read is cut at the limit
  // plus one byte, which is enough to refuse it.
  file.bytes = in.size();
  const QByteArray bytes = in.read(maxBytes + 1);
  if (in.error() != QFileDevice::NoError) {
    file.refusal = DropRefusal::Unreadable;
    file.reason = in.errorString();
    return file;
  }
  if (bytes.size() > maxBytes) {
    file.bytes = std::max<qint64>(file.bytes, bytes.size());
    file.refusal = DropRefusal::TooLarge;
    return file;
  }
  QStringDecoder utf8(QStringDecoder::Utf8, QStringDecoder::Flag::Stateless);
  QString text = utf8(bytes);
  if (utf8.hasError() || bytes.contains('\0')) {
    file.refusal = DropRefusal::NotText;
    return file;
  }
  if (text.startsWith(QChar(0xFEFF))) text.remove(0, 1);
  file.text = std::move(text);
  return file;
}

QString attachmentBlock(const QString& name, const QString& text) {
  qsizetype longest = 0, run = 0;
  for (const QChar c : text) {
    run = c == u'`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const QString fence(std::max<qsizetype>(3, longest + 1), u'`');
  // The info string may not hold a backtick, and spaces would end the language there.
  QString language = QFileInfo(name).suffix().toLower();
  language.remove(u'`');
  language.remove(u' ');
  QString block = name + QStringLiteral(":\n") + fence + language + u'\n' + text;
  if (!text.endsWith(u'\n')) block += u'\n';
  return block + fence;
}

}  // namespace ember::app
