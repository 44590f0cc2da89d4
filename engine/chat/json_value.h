#pragma once
// JSON at the edges of the renderer: template variables arrive as nlohmann JSON (ordered, so
// dict keys keep the order the caller wrote, as Python's json.load does), and the tojson filter
// must print exactly what Python's json.dumps prints.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "chat/value.h"

namespace ember::chat {

Value valueFromJson(const nlohmann::ordered_json& json);

struct JsonDumpOptions {
  std::optional<std::string> indent;  // nullopt: one line
  std::optional<std::string> itemSeparator;  // default ", " (one line) or "," (indented)
  std::string keySeparator = ": ";
  bool sortKeys = false;
  bool ensureAscii = false;  // HF's tojson passes ensure_ascii=False
};

// json.dumps(value, ...). Throws a runtime TemplateError for values JSON cannot hold
// ("Object of type Undefined is not JSON serializable").
std::string pyJsonDumps(const Value& value, const JsonDumpOptions& options);

}  // namespace ember::chat
