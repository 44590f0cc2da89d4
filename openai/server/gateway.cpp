#include "server/gateway.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <algorithm>
#include <cmath>

#include "ember/error.h"

namespace ember::openai {
namespace {

std::string sha256(const std::string& text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(text.data(), text.size(), digest, &length, EVP_sha256(), nullptr) != 1)
    throw Error("SHA-256 failed");
  return std::string(reinterpret_cast<const char*>(digest), length);
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// "host:port", "[v6]:port", "host" -> host (lower case).
std::string hostPart(const std::string& header) {
  if (!header.empty() && header[0] == '[') {
    const auto end = header.find(']');
    return end == std::string::npos ? header : lower(header.substr(1, end - 1));
  }
  const auto colon = header.rfind(':');
  if (colon != std::string::npos && header.find(':') == colon) return lower(header.substr(0, colon));
  return lower(header);
}

}  // namespace

void ApiKeys::add(const std::string& key) {
  if (key.empty()) throw Error("an API key cannot be empty");
  digests_.push_back(sha256(key));
}

std::optional<std::string> ApiKeys::identify(const std::string& presented) const {
  if (presented.empty()) return std::nullopt;
  const std::string digest = sha256(presented);  // fixed length whatever was presented
  std::optional<std::string> match;
  for (size_t i = 0; i < digests_.size(); ++i)
    if (CRYPTO_memcmp(digest.data(), digests_[i].data(), digest.size()) == 0 && !match)
      match = "key-" + std::to_string(i + 1);
  return match;
}

std::string presentedKey(const std::string& authorization, const std::string& xApiKey) {
  if (!xApiKey.empty()) return xApiKey;
  const std::string prefix = "bearer ";
  if (authorization.size() > prefix.size() &&
      lower(authorization.substr(0, prefix.size())) == prefix)
    return authorization.substr(prefix.size());
  return {};
}

bool conflictingKeys(const std::vector<std::string>& authorizations,
                     const std::vector<std::string>& xApiKeys) {
  if (authorizations.size() > 1 || xApiKeys.size() > 1) return true;
  if (authorizations.empty() || xApiKeys.empty()) return false;
  return presentedKey(authorizations[0], "") != xApiKeys[0];
}

bool isLoopbackHost(const std::string& host) {
  const std::string h = lower(host);
  if (h == "localhost") return true;
  // Numeric addresses only: a name such as "127.0.0.1.example.com" starts like one but may
  // resolve anywhere (and as a Host header it is what a DNS-rebinding page sends).
  in_addr v4{};
  if (inet_pton(AF_INET, h.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  return inet_pton(AF_INET6, h.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

bool hostAllowed(const std::string& hostHeader, const std::string& boundHost,
                 const std::vector<std::string>& extraHosts) {
  if (boundHost == "0.0.0.0" || boundHost == "::") return true;
  if (hostHeader.empty()) return false;  // HTTP/1.1 requires it
  const std::string host = hostPart(hostHeader);
  if (isLoopbackHost(boundHost) && isLoopbackHost(host)) return true;
  if (host == lower(boundHost)) return true;
  return std::any_of(extraHosts.begin(), extraHosts.end(),
                     [&](const std::string& h) { return lower(h) == host; });
}

TokenBucket::TokenBucket(double perMinute, Clock::time_point now)
    : perMinute_(perMinute), level_(perMinute), last_(now) {}

void TokenBucket::refill(Clock::time_point now) {
  const double seconds = std::chrono::duration<double>(now - last_).count();
  level_ = std::min(perMinute_, level_ + seconds * perMinute_ / 60.0);
  last_ = now;
}

std::optional<double> TokenBucket::take(double amount, Clock::time_point now) {
  refill(now);
  if (level_ >= std::min(amount, 1.0)) {
    level_ -= amount;
    return std::nullopt;
  }
  return (std::min(amount, 1.0) - level_) * 60.0 / perMinute_;
}

void TokenBucket::charge(double amount, Clock::time_point now) {
  refill(now);
  level_ -= amount;
}

std::optional<RateLimiter::Refusal> RateLimiter::admit(const std::string& keyId) {
  std::lock_guard lock(mutex_);
  const auto now = TokenBucket::Clock::now();
  auto retryAfter = [](double seconds) { return std::max(1, int(std::ceil(seconds))); };
  if (tpm_ > 0) {
    auto& bucket = tokens_.try_emplace(keyId, tpm_, now).first->second;
    // Zero tokens asked: only checks that the bucket is not overdrawn.
    if (auto wait = bucket.take(0, now)) return Refusal{"tokens", retryAfter(*wait)};
  }
  if (rpm_ > 0) {
    auto& bucket = requests_.try_emplace(keyId, rpm_, now).first->second;
    if (auto wait = bucket.take(1, now)) return Refusal{"rate_limit", retryAfter(*wait)};
  }
  return std::nullopt;
}

void RateLimiter::chargeTokens(const std::string& keyId, int64_t tokens) {
  if (tpm_ <= 0) return;
  std::lock_guard lock(mutex_);
  const auto now = TokenBucket::Clock::now();
  tokens_.try_emplace(keyId, tpm_, now).first->second.charge(double(tokens), now);
}

}  // namespace ember::openai
