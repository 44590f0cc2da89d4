#pragma once
// The usage meter: per API key and per UTC day, requests and prompt/cached/completion tokens,
// kept in SQLite (one UPSERT per finished request, so a restart loses nothing).
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

struct sqlite3;

namespace ember::openai {

struct UsageRow {
  std::string day;    // YYYY-MM-DD (UTC)
  std::string keyId;  // "key-1", ... or "local" without keys
  int64_t requests = 0;
  int64_t promptTokens = 0;
  int64_t cachedTokens = 0;
  int64_t completionTokens = 0;
};

class UsageMeter {
 public:
  explicit UsageMeter(const std::string& path);  // creates the file and table; throws ember::Error
  ~UsageMeter();
  UsageMeter(const UsageMeter&) = delete;
  UsageMeter& operator=(const UsageMeter&) = delete;

  void record(const std::string& keyId, int64_t promptTokens, int64_t cachedTokens,
              int64_t completionTokens);
  std::vector<UsageRow> rows() const;  // by day, then key

  static std::string today();

 private:
  mutable std::mutex mutex_;
  sqlite3* db_ = nullptr;
};

}  // namespace ember::openai
