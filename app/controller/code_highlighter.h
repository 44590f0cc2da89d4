#pragma once
// Code blocks of answers coloured by language through GNU source-highlight (a kept library, not
// a lexer of ours): HTML for a rich-text TextEdit. Exposed to QML as the singleton
// `CodeHighlighter`. Results are cached by (language, dark, text), so the finished blocks of a
// streaming answer are not highlighted again when the answer grows.
#include <QCache>
#include <QObject>
#include <QQmlEngine>
#include <QString>
#include <memory>

namespace ember::app {

class CodeHighlighter : public QObject {
  Q_OBJECT
  QML_ELEMENT
  QML_SINGLETON
 public:
  explicit CodeHighlighter(QObject* parent = nullptr);
  ~CodeHighlighter() override;

  // Whether this build has source-highlight (otherwise code stays plain).
  Q_INVOKABLE bool available() const;
  // The code as HTML (<pre> with coloured spans) for a fence language such as "cpp", "python",
  // "js", "sh"; empty when the language is not known (the caller shows plain text).
  Q_INVOKABLE QString toHtml(const QString& code, const QString& language, bool dark = false);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ember::app
