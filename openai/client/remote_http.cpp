#include "remote_http.h"

#include <cmath>
#include <mutex>

#include <curl/curl.h>

#include "ember/request.h"
#include "remote_protocol.h"

namespace ember::openai {

void ensureCurlInitialized() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

namespace {
size_t appendBody(char* data, size_t size, size_t count, void* user) {
  auto* body = static_cast<std::string*>(user);
  const size_t bytes = size * count;
  if (body->size() + bytes > (16u << 20)) return 0;  // a model list is never this large
  body->append(data, bytes);
  return bytes;
}
}  // namespace

HttpResult httpGet(const std::string& url, const std::string& apiKey,
                   std::chrono::milliseconds connectTimeout, std::chrono::milliseconds totalTimeout) {
  ensureCurlInitialized();
  HttpResult result;
  CURL* easy = curl_easy_init();
  if (!easy) {
    result.curlCode = CURLE_FAILED_INIT;
    result.curlError = "libcurl could not start a transfer";
    return result;
  }
  char errorBuffer[CURL_ERROR_SIZE] = {};
  curl_slist* headers = nullptr;
  std::string authorization;
  if (!apiKey.empty()) {
    authorization = "Authorization: Bearer " + apiKey;
    headers = curl_slist_append(headers, authorization.c_str());
  }
  headers = curl_slist_append(headers, "Accept: application/json");
  curl_easy_setopt(easy, CURLOPT_URL, url.c_str());
  curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, appendBody);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, &result.body);
  curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, errorBuffer);
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy, CURLOPT_NOPROXY, "localhost,127.0.0.1,::1");
  curl_easy_setopt(easy, CURLOPT_USERAGENT, "ember");
  curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(connectTimeout.count()));
  curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, static_cast<long>(totalTimeout.count()));
  const auto start = Clock::now();
  const CURLcode code = curl_easy_perform(easy);
  result.roundTripMs = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  result.curlCode = code;
  if (code != CURLE_OK)
    result.curlError = errorBuffer[0] ? errorBuffer : curl_easy_strerror(code);
  curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &result.status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(easy);
  return result;
}

std::string joinUrl(const std::string& base, const std::string& path) {
  std::string out = base;
  while (!out.empty() && out.back() == '/') out.pop_back();
  return out + path;
}

std::string serverRoot(const std::string& base) {
  std::string out = base;
  while (!out.empty() && out.back() == '/') out.pop_back();
  if (out.size() >= 3 && out.compare(out.size() - 3, 3, "/v1") == 0) out.resize(out.size() - 3);
  return out;
}

std::string hostOf(const std::string& url) {
  size_t start = url.find("://");
  start = start == std::string::npos ? 0 : start + 3;
  const size_t end = url.find('/', start);
  std::string host = url.substr(start, end == std::string::npos ? std::string::npos : end - start);
  const size_t at = host.rfind('@');  // user:password@host: never show credentials
  return at == std::string::npos ? host : host.substr(at + 1);
}

bool isConnectFailure(int curlCode) {
  return curlCode == CURLE_COULDNT_CONNECT || curlCode == CURLE_COULDNT_RESOLVE_HOST ||
         curlCode == CURLE_COULDNT_RESOLVE_PROXY;
}

std::string unreachableMessage(const std::string& server, const std::string& url,
                               const std::string& curlError) {
  return "cannot reach " + server + " at " + url + ": " + curlError +
         " (is the server running, and is the address right?)";
}

std::string httpErrorMessage(const std::string& server, long status, const std::string& body,
                             const std::string& model, std::optional<double> retryAfterSeconds) {
  const std::string detail = "HTTP " + std::to_string(status) + ": " + errorBodyMessage(body);
  if (status == 401 || status == 403)
    return server + " refused the API key (" + detail + "); check the key for this server";
  if (status == 404)
    return server + " does not know the model '" + model + "' or the address (" + detail +
           "); check the model name and that the base URL ends in /v1";
  if (status == 429) {
    std::string out = server + " is overloaded and turned the request away (" + detail + ")";
    if (retryAfterSeconds)
      out += "; it asks to retry after " +
             std::to_string(static_cast<long long>(std::ceil(*retryAfterSeconds))) + " s";
    return out;
  }
  if (status == 400 || status == 422) return server + " rejected the request (" + detail + ")";
  if (status >= 500) return server + " failed to answer (" + detail + ")";
  return server + " answered with an error (" + detail + ")";
}

}  // namespace ember::openai
