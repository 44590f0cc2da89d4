// ember-cli export / import: conversations out of the app's chat database as Markdown or JSON
// (every branch, settings and each answer's stats and token timeline), and JSON back in as new
// conversations. Reads the SQLite file directly (no Qt), also while the app has it open.
#include <cstdio>
#include <fstream>
#include <iostream>

#include "cli_args.h"
#include "ember/error.h"
#include "store/export/chat_export.h"

namespace ember::cli {

int runExport(const Args& args) {
  const ParsedArgs parsed(args, {"--db", "--conversation", "--format", "--out"}, {});
  const std::string format = parsed.value("--format").value_or("md");
  if (format != "md" && format != "json")
    throw Error("--format must be md or json, not '" + format + "'");
  std::optional<int64_t> conversation;
  if (const auto id = parsed.value("--conversation")) {
    try {
      size_t used = 0;
      conversation = std::stoll(*id, &used);
      if (used != id->size()) throw std::invalid_argument("trailing text");
    } catch (const std::exception&) {
      throw Error("--conversation must be a conversation id (a number), not '" + *id + "'");
    }
  }
  const chatexport::Json doc = chatexport::exportJson(parsed.required("--db"), conversation);
  const std::string text = format == "json" ? doc.dump(2) + "\n" : chatexport::toMarkdown(doc);
  if (const auto out = parsed.value("--out")) {
    std::ofstream file(*out, std::ios::binary);
    if (!(file << text)) throw Error("cannot write " + *out);
  } else {
    std::cout << text;
  }
  return 0;
}

int runImport(const Args& args) {
  const ParsedArgs parsed(args, {"--db", "--file"}, {});
  const std::string path = parsed.required("--file");
  const chatexport::Json doc =
      chatexport::Json::parse(readFile(path), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) throw Error(path + " is not JSON");
  const chatexport::ImportResult result = chatexport::importJson(parsed.required("--db"), doc);
  std::printf("imported %d conversation(s), %d message(s)\n", result.conversations,
              result.messages);
  return 0;
}

}  // namespace ember::cli
