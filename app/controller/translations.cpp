#include "controller/translations.h"

#include <QCoreApplication>
#include <QLocale>
#include <QPointer>
#include <QTranslator>

namespace ember::app {
namespace {

// Qt Linguist files the C++ contexts by the class name as written ("AppController"); at run
// time Q_OBJECT classes ask with their namespace ("ember::app::AppController"). This translator
// tries the name without the namespace when the full one has no entry.
class NamespaceTolerantTranslator : public QTranslator {
 public:
  using QTranslator::QTranslator;
  QString translate(const char* context, const char* sourceText, const char* disambiguation,
                    int n) const override {
    QString found = QTranslator::translate(context, sourceText, disambiguation, n);
    if (!found.isNull() || !context) return found;
    const char* last = nullptr;
    for (const char* p = context; *p; ++p)
      if (p[0] == ':' && p[1] == ':') last = p + 2;
    return last ? QTranslator::translate(last, sourceText, disambiguation, n) : found;
  }
};

}  // namespace

QStringList translatedLanguages() { return {QStringLiteral("ko")}; }

QString chooseLanguage(const QString& preference, const QString& localeName) {
  const QString wanted = preference.isEmpty() || preference == QLatin1String("system")
                             ? localeName.section(QLatin1Char('_'), 0, 0).toLower()
                             : preference;
  return translatedLanguages().contains(wanted) ? wanted : QStringLiteral("en");
}

QString installTranslation(QCoreApplication& app, const QString& preference) {
  // The one installed before (by this function) gives way to the new choice.
  static QPointer<QTranslator> installed;
  if (installed) {
    app.removeTranslator(installed);
    delete installed;
  }
  const QString language = chooseLanguage(preference, QLocale::system().name());
  if (language == QLatin1String("en")) return language;
  auto* translator = new NamespaceTolerantTranslator(&app);
  if (!translator->load(QStringLiteral(":/i18n/ember_%1.qm").arg(language))) {
    delete translator;
    return QStringLiteral("en");
  }
  app.installTranslator(translator);
  installed = translator;
  return language;
}

}  // namespace ember::app
