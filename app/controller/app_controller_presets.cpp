// AppController: presets (a system prompt with the settings that apply to the next message,
// saved by name in the app settings) and what a new chat starts with.
#include <QJsonArray>
#include <algorithm>

#include "controller/app_controller.h"

namespace ember::app {
namespace {

const QString kPresetsKey = QStringLiteral("presets");
const QString kDefaultPresetKey = QStringLiteral("defaultPreset");
// The settings a preset holds: those read for each message (not context, threads, device...,
// which need a reload and belong to the machine rather than to a way of chatting).
const QStringList kPresetKeys = {"systemPrompt", "temperature", "topP", "topK",
                                 "minP", "repeatPenalty", "maxTokens", "seed"};

}  // namespace

QJsonObject AppController::presets() const {
  try {
    return appSetting(kPresetsKey).toObject();
  } catch (const std::exception&) {
    return {};
  }
}

QStringList AppController::presetNames() const {
  QStringList names = presets().keys();
  std::sort(names.begin(), names.end(), [](const QString& a, const QString& b) {
    return a.localeAwareCompare(b) < 0;
  });
  return names;
}

QString AppController::defaultPreset() const {
  try {
    const QString name = appSetting(kDefaultPresetKey).toString();
    return presets().contains(name) ? name : QString();
  } catch (const std::exception&) {
    return {};
  }
}

bool AppController::savePreset(const QString& name) {
  const QString trimmed = name.simplified();
  if (trimmed.isEmpty()) return false;
  const QJsonObject current = effectiveSettings();
  QJsonObject preset;
  for (const QString& key : kPresetKeys)
    if (current.contains(key)) preset.insert(key, current.value(key));
  QJsonObject all = presets();
  all.insert(trimmed, preset);
  const bool ok = guarded([&] { saveAppSetting(kPresetsKey, all); });
  if (ok) emit presetsChanged();
  return ok;
}

void AppController::applyPreset(const QString& name) {
  const QJsonObject preset = presets().value(name).toObject();
  if (preset.isEmpty()) return;
  if (currentConversation_ == 0) newConversation();
  saveOwnSettings(preset);
  emit settingsChanged();
}

void AppController::deletePreset(const QString& name) {
  QJsonObject all = presets();
  if (!all.contains(name)) return;
  all.remove(name);
  guarded([&] { saveAppSetting(kPresetsKey, all); });
  emit presetsChanged();
}

void AppController::setDefaultPreset(const QString& name) {
  if (!name.isEmpty() && !presets().contains(name)) return;
  guarded([&] { saveAppSetting(kDefaultPresetKey, name); });
  emit presetsChanged();
}

QJsonObject AppController::settingsForNewChat() const {
  const QString preset = defaultPreset();
  if (!preset.isEmpty()) return presets().value(preset).toObject();
  const QString prompt = appSetting(QStringLiteral("defaultSystemPrompt")).toString();
  if (prompt.trimmed().isEmpty()) return {};
  return {{QStringLiteral("systemPrompt"), prompt}};
}

QString AppController::language() const {
  try {
    const QString saved = appSetting(QStringLiteral("language")).toString();
    return saved.isEmpty() ? QStringLiteral("system") : saved;
  } catch (const std::exception&) {
    return QStringLiteral("system");
  }
}

void AppController::setLanguage(const QString& language) {
  static const QStringList known = {"system", "en", "ko"};
  if (!known.contains(language) || language == this->language()) return;
  if (guarded([&] { saveAppSetting(QStringLiteral("language"), language); })) {
    setNotice(tr("The language changes the next time Ember starts."));
    emit languageChanged();
  }
}

}  // namespace ember::app
