#include "server/usage_meter.h"

#include <sqlite3.h>

#include <ctime>

#include "ember/error.h"

namespace ember::openai {
namespace {

void check(sqlite3* db, int rc, const char* what) {
  if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW)
    throw Error(std::string("usage meter: ") + what + ": " + sqlite3_errmsg(db));
}

struct Statement {
  sqlite3_stmt* s = nullptr;
  Statement(sqlite3* db, const char* sql) { check(db, sqlite3_prepare_v2(db, sql, -1, &s, nullptr), "prepare"); }
  ~Statement() { sqlite3_finalize(s); }
};

}  // namespace

UsageMeter::UsageMeter(const std::string& path) {
  if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
      SQLITE_OK) {
    const std::string message = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw Error("cannot open the usage database " + path + ": " + message);
  }
  sqlite3_busy_timeout(db_, 2000);
  check(db_, sqlite3_exec(db_,
                          "PRAGMA journal_mode=WAL;"
                          "CREATE TABLE IF NOT EXISTS usage ("
                          " day TEXT NOT NULL, key_id TEXT NOT NULL,"
                          " requests INTEGER NOT NULL DEFAULT 0,"
                          " prompt_tokens INTEGER NOT NULL DEFAULT 0,"
                          " cached_tokens INTEGER NOT NULL DEFAULT 0,"
                          " completion_tokens INTEGER NOT NULL DEFAULT 0,"
                          " PRIMARY KEY (day, key_id))",
                          nullptr, nullptr, nullptr),
        "create table");
}

UsageMeter::~UsageMeter() { sqlite3_close(db_); }

std::string UsageMeter::today() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char day[16];
  std::strftime(day, sizeof day, "%Y-%m-%d", &utc);
  return day;
}

void UsageMeter::record(const std::string& keyId, int64_t promptTokens, int64_t cachedTokens,
                        int64_t completionTokens) {
  std::lock_guard lock(mutex_);
  Statement st(db_,
               "INSERT INTO usage (day, key_id, requests, prompt_tokens, cached_tokens,"
               " completion_tokens) VALUES (?1, ?2, 1, ?3, ?4, ?5)"
               " ON CONFLICT(day, key_id) DO UPDATE SET requests = requests + 1,"
               " prompt_tokens = prompt_tokens + ?3, cached_tokens = cached_tokens + ?4,"
               " completion_tokens = completion_tokens + ?5");
  const std::string day = today();
  sqlite3_bind_text(st.s, 1, day.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st.s, 2, keyId.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(st.s, 3, promptTokens);
  sqlite3_bind_int64(st.s, 4, cachedTokens);
  sqlite3_bind_int64(st.s, 5, completionTokens);
  check(db_, sqlite3_step(st.s), "record");
}

std::vector<UsageRow> UsageMeter::rows() const {
  std::lock_guard lock(mutex_);
  Statement st(db_,
               "SELECT day, key_id, requests, prompt_tokens, cached_tokens, completion_tokens"
               " FROM usage ORDER BY day, key_id");
  std::vector<UsageRow> rows;
  int rc;
  while ((rc = sqlite3_step(st.s)) == SQLITE_ROW) {
    UsageRow r;
    r.day = reinterpret_cast<const char*>(sqlite3_column_text(st.s, 0));
    r.keyId = reinterpret_cast<const char*>(sqlite3_column_text(st.s, 1));
    r.requests = sqlite3_column_int64(st.s, 2);
    r.promptTokens = sqlite3_column_int64(st.s, 3);
    r.cachedTokens = sqlite3_column_int64(st.s, 4);
    r.completionTokens = sqlite3_column_int64(st.s, 5);
    rows.push_back(std::move(r));
  }
  check(db_, rc, "read");
  return rows;
}

}  // namespace ember::openai
