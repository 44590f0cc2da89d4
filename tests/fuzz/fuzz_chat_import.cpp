// libFuzzer harness for the chat database's JSON import (app/store/export, what ember-cli import
// and the app's Import read): the input is a file offered for import, parsed as JSON and
// imported into a fresh in-memory database at the current schema. Invariants: the import ends in
// an ImportResult or an ExportError, never another exception or a crash; a refused import
// leaves the database empty (all or nothing); an accepted one holds exactly the conversations
// and messages it reports, passes PRAGMA integrity_check and exports again.
// The schema comes from the store's own migrations (app/store/schema.cpp, read at start-up), so
// the harness always fuzzes the current version.
#include <sqlite3.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "store/export/chat_export.h"

namespace {

void check(bool condition) {
  if (!condition) std::abort();
}

// Every migration's SQL, in order, and the version they reach.
struct Schema {
  std::string sql;
  int version = 0;
};

Schema loadSchema() {
  std::ifstream in(EMBER_SOURCE_DIR "/app/store/schema.cpp");
  std::stringstream text;
  text << in.rdbuf();
  const std::string source = text.str();
  Schema schema;
  const std::string open = "R\"sql(", close = ")sql\"";
  for (size_t at = source.find(open); at != std::string::npos; at = source.find(open, at)) {
    const size_t end = source.find(close, at);
    check(end != std::string::npos);
    schema.sql += source.substr(at + open.size(), end - at - open.size());
    ++schema.version;
    at = end;
  }
  check(schema.version > 0);  // the harness would test nothing
  schema.sql += "PRAGMA user_version = " + std::to_string(schema.version) + ";";
  return schema;
}

const Schema& schema() {
  static const Schema s = loadSchema();
  return s;
}

std::string scalar(sqlite3* db, const char* sql) {
  sqlite3_stmt* stmt = nullptr;
  check(sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr) == SQLITE_OK);
  std::string value;
  if (sqlite3_step(stmt) == SQLITE_ROW) {
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    value = text ? text : "";
  }
  sqlite3_finalize(stmt);
  return value;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // In-memory databases shared between the harness's connection and the importer's, by URI.
  sqlite3_config(SQLITE_CONFIG_URI, 1);
  (void)schema();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace ce = ember::chatexport;
  const ce::Json document = ce::Json::parse(data, data + size, nullptr, /*exceptions=*/false);
  if (document.is_discarded()) return 0;  // the importer's callers refuse non-JSON first

  static long run = 0;
  const std::string uri = "file:fuzz-import-" + std::to_string(++run) + "?mode=memory&cache=shared";
  sqlite3* keeper = nullptr;  // holds the in-memory database for the run
  check(sqlite3_open_v2(uri.c_str(), &keeper, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI,
                        nullptr) == SQLITE_OK);
  check(sqlite3_exec(keeper, schema().sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK);
  try {
    const ce::ImportResult result = ce::importJson(uri, document, ce::WriterRole::CallerIsWriter);
    check(std::to_string(result.conversations) == scalar(keeper, "SELECT count(*) FROM conversations"));
    check(std::to_string(result.messages) == scalar(keeper, "SELECT count(*) FROM messages"));
    check(scalar(keeper, "PRAGMA integrity_check") == "ok");
    const ce::Json again = ce::exportJson(uri);
    check(again.at("conversations").size() == static_cast<size_t>(result.conversations));
  } catch (const ce::ExportError&) {
    check(scalar(keeper, "SELECT count(*) FROM conversations") == "0");
    check(scalar(keeper, "SELECT count(*) FROM messages") == "0");
  }
  sqlite3_close(keeper);
  return 0;
}
