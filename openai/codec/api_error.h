#pragma once
// An error as the OpenAI API answers it: an HTTP status and
// {"error": {"message", "type", "param", "code"}}.
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>

namespace ember::openai {

class ApiError : public std::runtime_error {
 public:
  ApiError(int status, std::string type, const std::string& message,
           std::optional<std::string> param = std::nullopt,
           std::optional<std::string> code = std::nullopt)
      : std::runtime_error(message), status_(status), type_(std::move(type)),
        param_(std::move(param)), code_(std::move(code)) {}

  int status() const { return status_; }
  const std::string& type() const { return type_; }
  const std::optional<std::string>& param() const { return param_; }
  const std::optional<std::string>& code() const { return code_; }
  nlohmann::ordered_json body() const;  // the {"error": {...}} object

  // The usual ones.
  static ApiError invalid(const std::string& message, std::optional<std::string> param,
                          std::optional<std::string> code = std::nullopt);
  static ApiError unauthorized(const std::string& message);
  static ApiError forbidden(const std::string& message);
  static ApiError notFound(const std::string& message, std::optional<std::string> param,
                           std::string code);
  static ApiError rateLimited(const std::string& message, std::string code);
  static ApiError server(const std::string& message);
  static ApiError unavailable(const std::string& message);

 private:
  int status_;
  std::string type_;
  std::optional<std::string> param_;
  std::optional<std::string> code_;
};

// Reads a body parsed back from the wire ({"error": ...}), for clients; nullopt if it is not one.
std::optional<ApiError> parseApiError(int status, const nlohmann::json& body);

}  // namespace ember::openai
