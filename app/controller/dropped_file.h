#pragma once
// A file dropped on the composer becomes part of the message: read here as UTF-8 text (a byte
// order mark dropped), refused with a reason when it is not a file, too large or not text, and
// written into the message as a block under its name.
#include <QString>

namespace ember::app {

// The largest file taken as an attachment: about half a million tokens of English, more than
// any context the app runs, so the context meter (not this limit) is what usually says no.
constexpr qint64 kMaxAttachmentBytes = 2 * 1024 * 1024;

enum class DropRefusal {
  None,        // read: `text` holds the content
  Folder,      // a folder, not a file
  Unreadable,  // could not be opened or read (`reason` has the system's words)
  TooLarge,    // more than the limit (`bytes` is the file's size)
  NotText,     // not UTF-8 text (invalid sequences, or NUL bytes as in binary files)
};

struct DroppedFile {
  QString name;  // the file's name without its folder
  QString text;  // its content when read
  DropRefusal refusal = DropRefusal::None;
  qint64 bytes = 0;  // the file's size
  QString reason;    // for Unreadable
};

DroppedFile readDroppedFile(const QString& path, qint64 maxBytes = kMaxAttachmentBytes);

// What the message carries for a file: its name and a colon on one line, then its content as a
// fenced code block. The fence is one backtick longer than the longest run of backticks inside
// (at least three), so no line of the content can close it (CommonMark's fence rule), and the
// file's suffix names the block's language ("notes.py" -> ```py).
QString attachmentBlock(const QString& name, const QString& text);

}  // namespace ember::app
