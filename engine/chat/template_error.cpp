#include "chat/template_error.h"

namespace ember::chat {
namespace {

std::string describe(TemplateErrorKind kind, const std::string& message, int line, int column) {
  std::string text = "chat template " + templateErrorKindName(kind);
  if (line > 0) text += " at line " + std::to_string(line) + ", column " + std::to_string(column);
  return text + ": " + message;
}

}  // namespace

std::string templateErrorKindName(TemplateErrorKind kind) {
  switch (kind) {
    case TemplateErrorKind::Syntax: return "syntax error";
    case TemplateErrorKind::Unsupported: return "unsupported feature";
    case TemplateErrorKind::Runtime: return "error";
    case TemplateErrorKind::Undefined: return "undefined value";
    case TemplateErrorKind::Security: return "sandbox violation";
    case TemplateErrorKind::Raised: return "exception";
    case TemplateErrorKind::Limit: return "limit exceeded";
  }
  return "error";
}

TemplateError::TemplateError(TemplateErrorKind kind, std::string message, int line, int column)
    : ember::Error(describe(kind, message, line, column)),
      kind_(kind),
      message_(std::move(message)),
      line_(line),
      column_(column) {}

TemplateError TemplateError::located(int line, int column) const {
  return TemplateError(kind_, message_, line, column);
}

void throwRuntime(const std::string& message) {
  throw TemplateError(TemplateErrorKind::Runtime, message);
}

void throwUnsupported(const std::string& message) {
  throw TemplateError(TemplateErrorKind::Unsupported, message);
}

void throwLimit(const std::string& message) {
  throw TemplateError(TemplateErrorKind::Limit, message);
}

}  // namespace ember::chat
