#pragma once
// The one error type of the chat-template renderer. It carries the template position (1-based
// line and column; 0 when the failure has no position, such as a limit hit outside any node)
// and a kind, so that callers can tell a template that raised on purpose (raise_exception) from
// a template that uses something this renderer does not support.
#include <cstdint>
#include <string>

#include "ember/error.h"

namespace ember::chat {

enum class TemplateErrorKind {
  Syntax,       // the template does not parse
  Unsupported,  // valid Jinja that this renderer does not implement
  Runtime,      // a type error, a bad argument, ... while rendering
  Undefined,    // an operation on an undefined value (Jinja's UndefinedError)
  Security,     // access the sandbox refuses (Jinja's SecurityError)
  Raised,       // the template called raise_exception(message)
  Limit,        // a RenderLimits bound was exceeded
};

std::string templateErrorKindName(TemplateErrorKind kind);

class TemplateError : public ember::Error {
 public:
  TemplateError(TemplateErrorKind kind, std::string message, int line = 0, int column = 0);

  TemplateErrorKind kind() const { return kind_; }
  // The bare message, as Jinja2 would word it (for raise_exception: exactly the argument).
  const std::string& message() const { return message_; }
  int line() const { return line_; }
  int column() const { return column_; }
  bool hasLocation() const { return line_ > 0; }
  // A copy of this error placed at a template position.
  TemplateError located(int line, int column) const;

 private:
  TemplateErrorKind kind_;
  std::string message_;
  int line_;
  int column_;
};

// Shorthands for the common kinds.
[[noreturn]] void throwRuntime(const std::string& message);
[[noreturn]] void throwUnsupported(const std::string& message);
[[noreturn]] void throwLimit(const std::string& message);

}  // namespace ember::chat
