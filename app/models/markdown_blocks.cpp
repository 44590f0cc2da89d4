#include "models/markdown_blocks.h"

namespace ember::app {
namespace {

// "```python" / "~~~ c++": the fence (3 or more of one character) and the language after it.
bool opensFence(QStringView trimmed, QStringView* fence, QStringView* lang) {
  if (trimmed.size() < 3 || (trimmed[0] != u'`' && trimmed[0] != u'~')) return false;
  const QChar mark = trimmed[0];
  qsizetype n = 0;
  while (n < trimmed.size() && trimmed[n] == mark) ++n;
  if (n < 3) return false;
  *fence = trimmed.first(n);
  qsizetype at = n;
  while (at < trimmed.size() && trimmed[at].isSpace()) ++at;
  qsizetype end = at;
  // The language: ASCII word characters and + # . - ("c++", "c#", "objective-c").
  while (end < trimmed.size()) {
    const char16_t c = trimmed[end].unicode();
    const bool word = (c >= u'a' && c <= u'z') || (c >= u'A' && c <= u'Z') ||
                      (c >= u'0' && c <= u'9') || c == u'_';
    if (!word && c != u'+' && c != u'#' && c != u'.' && c != u'-') break;
    ++end;
  }
  *lang = trimmed.sliced(at, end - at);
  return true;
}

// The fence that opened the block, or a longer run, possibly mixing ` and ~ as written.
bool closesFence(QStringView trimmed, QStringView fence) {
  if (!trimmed.startsWith(fence)) return false;
  for (const QChar c : trimmed)
    if (c != u'`' && c != u'~') return false;
  return true;
}

// "# Title": 1 to 6 '#' then a space; on a line that may still grow, a bare "###" is not yet
// one ("#x" would not be a heading).
bool isHeading(QStringView line, bool complete) {
  qsizetype n = 0;
  while (n < line.size() && line[n] == u'#') ++n;
  if (n < 1 || n > 6) return false;
  if (n == line.size()) return complete;
  return line[n].isSpace();
}

// Splits `text` (which starts at `base` in the whole answer) into blocks.
QList<MarkdownBlock> split(QStringView text, qsizetype base) {
  QList<MarkdownBlock> blocks;
  qsizetype proseStart = -1, proseEnd = 0;  // the prose lines so far: [proseStart, proseEnd)
  bool proseHasText = false;
  bool inCode = false;
  QStringView fence, lang;
  qsizetype codeStart = 0, codeBodyStart = 0, codeBodyEnd = -1;  // -1: no code line yet
  bool afterBlank = false;  // the prose so far ends with a blank line
  auto flushProse = [&] {
    if (proseStart >= 0 && proseHasText) {
      MarkdownBlock block;
      block.text = text.sliced(proseStart, proseEnd - proseStart).toString();
      block.start = base + proseStart;
      blocks << block;
    }
    proseStart = -1;
    proseHasText = false;
  };
  auto pushCode = [&](bool closed) {
    MarkdownBlock block;
    block.code = true;
    block.lang = lang.toString();
    if (codeBodyEnd >= 0) block.text = text.sliced(codeBodyStart, codeBodyEnd - codeBodyStart).toString();
    block.start = base + codeStart;
    block.closed = closed;
    blocks << block;
  };
  qsizetype offset = 0;
  while (true) {
    const qsizetype newline = text.indexOf(u'\n', offset);
    const bool complete = newline >= 0;  // the last line may still grow (streaming)
    const qsizetype lineEnd = complete ? newline : text.size();
    const QStringView line = text.sliced(offset, lineEnd - offset);
    const QStringView trimmed = line.trimmed();
    if (!inCode) {
      if (opensFence(trimmed, &fence, &lang)) {
        flushProse();
        inCode = true;
        codeStart = offset;
        codeBodyStart = lineEnd + 1;
        codeBodyEnd = -1;
      } else {
        const bool blank = trimmed.isEmpty();
        const bool startsBlock =
            !blank && ((afterBlank && !line.front().isSpace()) || isHeading(line, complete));
        if (startsBlock && proseHasText) flushProse();
        if (proseStart < 0) proseStart = offset;
        proseEnd = lineEnd;
        proseHasText = proseHasText || !blank;
        afterBlank = blank;
      }
    } else if (closesFence(trimmed, fence)) {
      pushCode(complete);
      inCode = false;
      afterBlank = false;
    } else {
      codeBodyEnd = lineEnd;
    }
    if (!complete) break;
    offset = newline + 1;
  }
  if (inCode) pushCode(false);
  flushProse();
  // Every block but the last is followed by another: finished. A code block says for itself.
  for (qsizetype i = 0; i + 1 < blocks.size(); ++i) blocks[i].closed = true;
  return blocks;
}

}  // namespace

QList<MarkdownBlock> splitMarkdown(QStringView text) { return split(text, 0); }

QList<MarkdownBlock> splitMarkdownFrom(const QList<MarkdownBlock>& previous,
                                       QStringView previousText, QStringView text,
                                       qsizetype* kept) {
  if (previous.isEmpty() || !text.startsWith(previousText)) {
    *kept = 0;
    return splitMarkdown(text);
  }
  const qsizetype from = previous.last().start;
  QList<MarkdownBlock> blocks = previous.first(previous.size() - 1);
  blocks << split(text.sliced(from), from);
  *kept = previous.size() - 1;
  return blocks;
}

}  // namespace ember::app
