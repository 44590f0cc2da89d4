#pragma once
// The gateway's checks before any compute is spent: API keys (stored as SHA-256, compared in
// constant time, never logged), the Host header (DNS rebinding), CORS origins, and per-key token
// buckets for requests and tokens per minute.
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace ember::openai {

// The keys a server accepts. Only their SHA-256 digests are kept.
class ApiKeys {
 public:
  void add(const std::string& key);  // throws ember::Error for an empty key
  bool empty() const { return digests_.empty(); }
  // The key's id ("key-1", ...) when it is one of them; every stored digest is compared, in
  // constant time, whatever matches.
  std::optional<std::string> identify(const std::string& presented) const;

 private:
  std::vector<std::string> digests_;  // 32 bytes each
};

// "Authorization: Bearer K" or "X-Api-Key: K"; empty when neither is given.
std::string presentedKey(const std::string& authorization, const std::string& xApiKey);

// True when a request carries more than one credential: two Authorization fields, two X-Api-Key
// fields, or both fields naming different keys. Authorization is a singleton field (RFC 9110
// 11.6.2, 5.3: only list-based fields may repeat), so which of two values counts would be a guess
// (a proxy may act on the first, the server on the last): such a request is refused.
bool conflictingKeys(const std::vector<std::string>& authorizations,
                     const std::vector<std::string>& xApiKeys);

bool isLoopbackHost(const std::string& host);  // 127.0.0.0/8, ::1, localhost

// The Host header must name the server: a loopback name (any port) when it listens on loopback,
// its bound address, or one of the extra names; with a wildcard bind any Host is accepted (keys
// guard that server).
bool hostAllowed(const std::string& hostHeader, const std::string& boundHost,
                 const std::vector<std::string>& extraHosts);

// Token bucket: `perMinute` units refill evenly over a minute, up to a burst of `perMinute`.
class TokenBucket {
 public:
  using Clock = std::chrono::steady_clock;
  explicit TokenBucket(double perMinute, Clock::time_point now);
  // Takes `amount` when at least one unit is there (a large request may overdraw it; the
  // next ones then wait for it to refill); otherwise returns the seconds until one is.
  std::optional<double> take(double amount, Clock::time_point now);
  void charge(double amount, Clock::time_point now);  // spend without checking (after the fact)

 private:
  void refill(Clock::time_point now);
  double perMinute_;
  double level_;
  Clock::time_point last_;
};

// Per key: requests per minute and tokens (prompt + completion) per minute; 0 = no limit.
class RateLimiter {
 public:
  RateLimiter(double requestsPerMinute, double tokensPerMinute)
      : rpm_(requestsPerMinute), tpm_(tokensPerMinute) {}
  struct Refusal {
    std::string reason;  // "rate_limit" or "tokens"
    int retryAfterSeconds;
  };
  // Admits one request (taking a request unit) or says why not and when to retry.
  std::optional<Refusal> admit(const std::string& keyId);
  void chargeTokens(const std::string& keyId, int64_t tokens);

 private:
  double rpm_, tpm_;
  std::mutex mutex_;
  std::map<std::string, TokenBucket> requests_, tokens_;
};

}  // namespace ember::openai
