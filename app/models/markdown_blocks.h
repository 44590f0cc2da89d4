#pragma once
// An answer cut into the blocks the chat view shows: prose (Markdown) and fenced code (``` or
// ~~~), so that code gets its own monospace box, and so that a streaming answer is split again
// only from its last block. Prose is cut where Markdown itself always starts a new block: after a
// blank line when the next line is not indented (an indented one may continue a list item), and
// before an ATX heading. An unclosed fence (still streaming) runs to the end.
#include <QList>
#include <QString>
#include <QStringView>

namespace ember::app {

struct MarkdownBlock {
  bool code = false;
  QString lang;        // the fence's language ("python"); empty for prose or a bare fence
  QString text;        // prose lines, or the code between the fences
  qsizetype start = 0;  // where the block starts in the whole text (UTF-16 units)
  // A code block whose closing fence line is complete, or prose followed by another block:
  // more text cannot change it. The last block of a growing answer is usually open.
  bool closed = false;

  friend bool operator==(const MarkdownBlock&, const MarkdownBlock&) = default;
};

// All blocks of `text`.
QList<MarkdownBlock> splitMarkdown(QStringView text);

// The blocks of `text` given `previous`, the blocks of `previousText`: when `text` extends
// `previousText`, only the tail from the last block's start is split again and `*kept` says how
// many leading blocks are the previous ones, unchanged; otherwise a full split and `*kept` = 0.
QList<MarkdownBlock> splitMarkdownFrom(const QList<MarkdownBlock>& previous,
                                       QStringView previousText, QStringView text,
                                       qsizetype* kept);

}  // namespace ember::app
