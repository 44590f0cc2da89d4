#include "controller/code_highlighter.h"

#include <QDir>
#include <QFile>
#include <QHash>
#include <QTemporaryDir>

#ifdef EMBER_HAVE_SOURCE_HIGHLIGHT
#include <srchilite/langmap.h>
#include <srchilite/sourcehighlight.h>

#include <sstream>
#endif

namespace ember::app {
namespace {

// Colours readable on the app's code background, light and dark (source-highlight style files).
constexpr const char* kLightStyle =
    "keyword blue b; type darkgreen; usertype teal; string red; regexp orange; specialchar pink;"
    "comment brown i; number purple; preproc darkblue b; symbol darkred; function black b;"
    "cbracket red; classname teal; predef_var darkblue; predef_func darkblue b;\n";
constexpr const char* kDarkStyle =
    "keyword \"#82aaff\" b; type \"#c3e88d\"; usertype \"#89ddff\"; string \"#f3a683\";"
    "regexp \"#ffcb6b\"; specialchar \"#f78c6c\"; comment \"#8a8fa3\" i; number \"#c792ea\";"
    "preproc \"#82aaff\" b; symbol \"#e8e8ec\"; function \"#ffffff\" b; cbracket \"#e8e8ec\";"
    "classname \"#89ddff\"; predef_var \"#82aaff\"; predef_func \"#82aaff\" b;\n";

// Fence names people write that source-highlight's lang.map spells otherwise.
QString mapped(const QString& language) {
  static const QHash<QString, QString> aliases = {
      {"c++", "cpp"}, {"js", "javascript"}, {"ts", "javascript"}, {"typescript", "javascript"},
      {"py", "python"}, {"shell", "sh"}, {"bash", "sh"}, {"zsh", "sh"}, {"console", "sh"},
      {"rs", "rust"}, {"rb", "ruby"}, {"yml", "yaml"}, {"golang", "go"}, {"kt", "kotlin"},
      {"cs", "csharp"}, {"c#", "csharp"}, {"jsonc", "json"}, {"md", "markdown"}};
  const QString lower = language.trimmed().toLower();
  return aliases.value(lower, lower);
}

}  // namespace

struct CodeHighlighter::Impl {
  QCache<QString, QString> cache{400};
#ifdef EMBER_HAVE_SOURCE_HIGHLIGHT
  QTemporaryDir styles;  // the two style files, written once
  std::unique_ptr<srchilite::SourceHighlight> light, dark;
  std::unique_ptr<srchilite::LangMap> languages;

  srchilite::SourceHighlight& highlighter(bool isDark) {
    auto& slot = isDark ? dark : light;
    if (!slot) {
      const QString file = styles.filePath(isDark ? "dark.style" : "light.style");
      QFile out(file);
      if (out.open(QIODevice::WriteOnly)) out.write(isDark ? kDarkStyle : kLightStyle);
      out.close();
      slot = std::make_unique<srchilite::SourceHighlight>("html.outlang");
      slot->setStyleFile(file.toStdString());
      slot->setTabSpaces(4);
    }
    return *slot;
  }
#endif
};

CodeHighlighter::CodeHighlighter(QObject* parent) : QObject(parent), impl_(new Impl) {}
CodeHighlighter::~CodeHighlighter() = default;

bool CodeHighlighter::available() const {
#ifdef EMBER_HAVE_SOURCE_HIGHLIGHT
  return true;
#else
  return false;
#endif
}

QString CodeHighlighter::toHtml(const QString& code, const QString& language, bool dark) {
#ifdef EMBER_HAVE_SOURCE_HIGHLIGHT
  const QString lang = mapped(language);
  if (lang.isEmpty() || code.isEmpty()) return {};
  const QString key = lang + QChar(dark ? 'd' : 'l') + QChar(0) + code;
  if (const QString* hit = impl_->cache.object(key)) return *hit;
  QString html;
  try {
    if (!impl_->languages)
      impl_->languages = std::make_unique<srchilite::LangMap>("lang.map");
    const std::string langFile = impl_->languages->getMappedFileName(lang.toStdString());
    if (!langFile.empty()) {
      std::istringstream in(code.toStdString());
      std::ostringstream out;
      impl_->highlighter(dark).highlight(in, out, langFile);
      html = QString::fromStdString(out.str());
    }
  } catch (const std::exception&) {
    html.clear();  // a language file it cannot read: shown plain
  }
  impl_->cache.insert(key, new QString(html));
  return html;
#else
  Q_UNUSED(code);
  Q_UNUSED(language);
  Q_UNUSED(dark);
  return {};
#endif
}

}  // namespace ember::app
