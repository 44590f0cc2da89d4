#pragma once
// libcurl pieces shared by RemoteGenerator's streaming loop and its one-shot GETs (/models,
// /health): global init, a blocking GET, URL joining and the messages a user reads when a server
// cannot be reached or says no. Messages name the server and the URL, never the key.
#include <chrono>
#include <optional>
#include <string>

namespace ember::openai {

void ensureCurlInitialized();  // curl_global_init once per process

struct HttpResult {
  int curlCode = 0;        // CURLcode; 0 = the exchange completed
  std::string curlError;   // libcurl's text for curlCode
  long status = 0;         // HTTP status, 0 when none arrived
  std::string body;
  double roundTripMs = 0;
};

HttpResult httpGet(const std::string& url, const std::string& apiKey,
                   std::chrono::milliseconds connectTimeout, std::chrono::milliseconds totalTimeout);

// base "http://h:8000/v1/" + path "/models" -> "http://h:8000/v1/models".
std::string joinUrl(const std::string& base, const std::string& path);
// "http://h:8000/v1" -> "http://h:8000" (where /health lives); other bases are returned as given.
std::string serverRoot(const std::string& base);
// "h:8000" from a URL, for a server that was given no name.
std::string hostOf(const std::string& url);

// True for libcurl failures that mean nothing reached the server (refused, unresolved, connect
// timeout): a request may safely go elsewhere.
bool isConnectFailure(int curlCode);

std::string unreachableMessage(const std::string& server, const std::string& url,
                               const std::string& curlError);
// An HTTP error answer as one sentence, e.g. "llama refused the API key (HTTP 401: ...)".
std::string httpErrorMessage(const std::string& server, long status, const std::string& body,
                             const std::string& model, std::optional<double> retryAfterSeconds);

}  // namespace ember::openai
