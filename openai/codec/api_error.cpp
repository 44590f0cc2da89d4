#include "codec/api_error.h"

#include "codec/fields.h"

namespace ember::openai {

nlohmann::ordered_json ApiError::body() const {
  auto orNull = [](const std::optional<std::string>& v) {
    return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
  };
  nlohmann::ordered_json error;
  error[field::kErrorMessage] = what();
  error[field::kErrorType] = type_;
  error[field::kErrorParam] = orNull(param_);
  error[field::kErrorCode] = orNull(code_);
  return {{field::kError, error}};
}

ApiError ApiError::invalid(const std::string& message, std::optional<std::string> param,
                           std::optional<std::string> code) {
  return ApiError(400, "invalid_request_error", message, std::move(param), std::move(code));
}
ApiError ApiError::unauthorized(const std::string& message) {
  return ApiError(401, "invalid_request_error", message, std::nullopt, "invalid_api_key");
}
ApiError ApiError::forbidden(const std::string& message) {
  return ApiError(403, "invalid_request_error", message, std::nullopt, "forbidden");
}
ApiError ApiError::notFound(const std::string& message, std::optional<std::string> param,
                            std::string code) {
  return ApiError(404, "invalid_request_error", message, std::move(param), std::move(code));
}
ApiError ApiError::rateLimited(const std::string& message, std::string code) {
  return ApiError(429, "rate_limit_error", message, std::nullopt, std::move(code));
}
ApiError ApiError::server(const std::string& message) {
  return ApiError(500, "server_error", message);
}
ApiError ApiError::unavailable(const std::string& message) {
  return ApiError(503, "server_error", message, std::nullopt, "model_not_ready");
}

std::optional<ApiError> parseApiError(int status, const nlohmann::json& body) {
  if (!body.is_object() || !body.contains(field::kError) || !body[field::kError].is_object())
    return std::nullopt;
  const auto& e = body[field::kError];
  auto str = [&](const char* key) -> std::optional<std::string> {
    if (e.contains(key) && e[key].is_string()) return e[key].get<std::string>();
    return std::nullopt;
  };
  return ApiError(status, str(field::kErrorType).value_or("error"),
                  str(field::kErrorMessage).value_or("unknown error"), str(field::kErrorParam),
                  str(field::kErrorCode));
}

}  // namespace ember::openai
