// ember-cli render-template: renders a chat template (a .jinja file, or a model's own template
// with its built-in fallback) over messages from a JSON file and prints exactly the rendered
// text. The same message format is what `ember-cli generate` takes.
#include <cstdio>
#include <ctime>
#include <string>

#include "chat/builtin_templates.h"
#include "chat/chat_template.h"
#include "chat/template_resolver.h"
#include "cli_args.h"
#include "ember/error.h"
#include "gguf/gguf_file.h"

namespace ember::cli {
namespace {

// "2025-03-14T15:09:26" (or with a space) -> a fixed clock for strftime_now().
std::tm parseTimestamp(const std::string& text) {
  std::tm tm{};
  int year, month, day, hour = 0, minute = 0, second = 0;
  char separator = 'T';
  const int n = std::sscanf(text.c_str(), "%d-%d-%d%c%d:%d:%d", &year, &month, &day, &separator,
                            &hour, &minute, &second);
  if (n != 3 && n != 7) throw Error("--now expects YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS, got '" + text + "'");
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  timegm(&tm);  // fills in the weekday and day of the year
  return tm;
}

nlohmann::ordered_json readVariables(const std::string& path) {
  nlohmann::ordered_json data;
  try {
    data = nlohmann::ordered_json::parse(readFile(path));
  } catch (const nlohmann::json::exception& e) {
    throw Error("'" + path + "' is not valid JSON: " + e.what());
  }
  if (data.is_array()) return nlohmann::ordered_json{{"messages", data}};
  if (!data.is_object())
    throw Error("'" + path + "' must hold a JSON array of messages or an object of variables");
  return data;
}

}  // namespace

int runRenderTemplate(const Args& args) {
  const ParsedArgs parsed(args, {"--template", "--model", "--messages", "--bos", "--eos", "--now"},
                          {"--add-generation-prompt"});
  if (!parsed.positional().empty())
    throw Error("unexpected argument '" + parsed.positional().front() + "'");
  const auto templatePath = parsed.value("--template");
  const auto modelPath = parsed.value("--model");
  if (templatePath.has_value() == modelPath.has_value())
    throw Error("give exactly one of --template FILE.jinja or --model FILE.gguf");

  nlohmann::ordered_json variables = readVariables(parsed.required("--messages"));
  std::string defaultBos, defaultEos;
  std::optional<chat::ChatTemplate> chatTemplate;
  std::string family;  // with --model and its own template: the built-in to fall back to
  if (templatePath) {
    chatTemplate = chat::ChatTemplate::parse(readFile(*templatePath));
  } else {
    const auto file = gguf::GgufFile::open(*modelPath);
    chat::ResolvedTemplate resolved = chat::resolveChatTemplate(*file);
    if (resolved.isFallback) {
      std::fprintf(stderr, "ember-cli render-template: warning: %s\n", resolved.warning.c_str());
    } else {
      family = resolved.family;
    }
    defaultBos = resolved.bosToken;
    defaultEos = resolved.eosToken;
    chatTemplate = std::move(resolved.chatTemplate);
  }

  // Flags win over the file's own variables, which win over the defaults.
  if (parsed.flag("--add-generation-prompt")) variables["add_generation_prompt"] = true;
  if (!variables.contains("add_generation_prompt")) variables["add_generation_prompt"] = false;
  if (auto bos = parsed.value("--bos")) variables["bos_token"] = *bos;
  if (!variables.contains("bos_token")) variables["bos_token"] = defaultBos;
  if (auto eos = parsed.value("--eos")) variables["eos_token"] = *eos;
  if (!variables.contains("eos_token")) variables["eos_token"] = defaultEos;

  chat::RenderOptions options;
  if (auto now = parsed.value("--now")) {
    const std::tm fixed = parseTimestamp(*now);
    options.clock = [fixed] { return fixed; };
  }
  std::string text;
  try {
    text = chatTemplate->render(variables, options);
  } catch (const chat::TemplateError& e) {
    // As the engine does: a model template that meets something unsupported in this
    // conversation gives way to the built-in template of its family, with a warning.
    const bool replaceable = e.kind() == chat::TemplateErrorKind::Unsupported ||
                             e.kind() == chat::TemplateErrorKind::Limit;
    const chat::BuiltinTemplate* builtin = chat::findBuiltinTemplate(family);
    if (!replaceable || !builtin) throw;
    std::fprintf(stderr, "ember-cli render-template: warning: %s; using the built-in '%s' template\n",
                 e.what(), family.c_str());
    text = chat::ChatTemplate::parse(builtin->source).render(variables, options);
  }
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

}  // namespace ember::cli
