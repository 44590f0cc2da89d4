#pragma once
// The user interface's language: the "language" app setting ("system", "en" or "ko"; "system"
// when unset) or else the system locale. Translations are compiled from resources/translations
// into the ui library's resources (:/i18n/ember_<lang>.qm).
#include <QString>
#include <QStringList>

class QCoreApplication;

namespace ember::app {

// The languages there is a translation for, besides the English the sources are written in.
QStringList translatedLanguages();  // {"ko"}

// The language code to use for a preference and a locale name ("ko_KR"): "en" or one of
// translatedLanguages().
QString chooseLanguage(const QString& preference, const QString& localeName);

// Installs the translator for chooseLanguage(preference, system locale); returns the language
// installed ("en": none needed). Call before the QML is loaded; called again, it replaces the
// translator it installed before (then retranslate the QML engine).
QString installTranslation(QCoreApplication& app, const QString& preference);

}  // namespace ember::app
