#pragma once
// Shared by the chat-template tests: renders cases with Python's Jinja2 (Debian's
// python3-jinja2, through tests/tools/render_jinja2.py, set up as Hugging Face transformers
// renders chat templates) and compares Ember's renderer with it byte for byte.
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QString>
#include <QtTest>

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "chat/chat_template.h"
#include "common/test_paths.h"

namespace ember::test {

using Json = nlohmann::ordered_json;

// Both renderers format strftime_now() at this moment, so dated templates compare equal.
inline constexpr const char* kFixedNow = "2025-03-14T15:09:26";

inline std::tm fixedNow() {
  std::tm tm{};
  tm.tm_year = 2025 - 1900;
  tm.tm_mon = 2;
  tm.tm_mday = 14;
  tm.tm_hour = 15;
  tm.tm_min = 9;
  tm.tm_sec = 26;
  timegm(&tm);
  return tm;
}

inline chat::RenderOptions fixedClockOptions() {
  chat::RenderOptions options;
  options.clock = fixedNow;
  return options;
}

struct ReferenceCase {
  std::string id;
  std::string templateSource;
  Json variables;
};

struct ReferenceResult {
  bool ok = false;
  std::string output;     // when ok
  std::string errorType;  // Jinja2's exception class, when not ok
  std::string message;
  int line = 0;           // for TemplateSyntaxError
};

inline QString chatDataDir() { return sourceDir() + QStringLiteral("/tests/engine/chat/data"); }

inline Json readJsonFile(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return Json();
  const QByteArray bytes = f.readAll();
  return Json::parse(bytes.begin(), bytes.end());
}

// Runs the reference renderer over all cases in one Python process. Returns false with `why`
// when it cannot run (no python3-jinja2, script missing, bad output).
inline bool renderWithJinja2(const std::vector<ReferenceCase>& cases,
                             std::map<std::string, ReferenceResult>* results, QString* why) {
  Json request{{"now", kFixedNow}, {"cases", Json::array()}};
  for (const auto& c : cases)
    request["cases"].push_back(Json{{"id", c.id}, {"template", c.templateSource}, {"variables", c.variables}});
  const QString script = sourceDir() + QStringLiteral("/tests/tools/render_jinja2.py");
  QByteArray out, err;
  const std::string body = request.dump();
  const int rc = runProcess(QStringLiteral(EMBER_PYTHON), {script, QStringLiteral("--batch")}, &out,
                            &err, QByteArray::fromStdString(body));
  if (rc != 0) {
    *why = QStringLiteral("the Jinja2 reference renderer (%1 %2) failed (exit %3): %4; install "
                          "python3-jinja2")
               .arg(QStringLiteral(EMBER_PYTHON), script)
               .arg(rc)
               .arg(QString::fromUtf8(err).left(400));
    return false;
  }
  Json parsed;
  try {
    parsed = Json::parse(out.begin(), out.end());
  } catch (const std::exception& e) {
    *why = QStringLiteral("unreadable output from the Jinja2 reference renderer: %1").arg(e.what());
    return false;
  }
  for (const auto& r : parsed) {
    ReferenceResult result;
    result.ok = r.at("ok").get<bool>();
    if (result.ok) {
      result.output = r.at("output").get<std::string>();
    } else {
      result.errorType = r.at("error_type").get<std::string>();
      result.message = r.at("message").get<std::string>();
      if (r.contains("line") && r["line"].is_number_integer()) result.line = r["line"].get<int>();
    }
    (*results)[r.at("id").get<std::string>()] = std::move(result);
  }
  return true;
}

// Fails (CI) or skips (elsewhere) when the reference renderer cannot run.
#define EMBER_REQUIRE_JINJA2(cases, results)                       \
  do {                                                             \
    QString why_;                                                  \
    if (!ember::test::renderWithJinja2(cases, results, &why_)) {   \
      if (ember::test::underCi()) QFAIL(qPrintable(why_));         \
      QSKIP(qPrintable(why_));                                     \
    }                                                              \
  } while (0)

// Renders with Ember and compares with Jinja2's result: the same bytes, or, where Jinja2
// raised, a failure too, with the same message. Returns through QTest on a mismatch.
inline void compareWithReference(const ReferenceResult& reference, const std::string& source,
                                 const Json& variables) {
  std::string ours;
  try {
    ours = chat::ChatTemplate::parse(source).render(variables, fixedClockOptions());
  } catch (const chat::TemplateError& e) {
    if (reference.ok)
      QFAIL(qPrintable(QStringLiteral("Jinja2 renders, Ember fails: %1").arg(QString::fromUtf8(e.what()))));
    if (reference.line > 0) QCOMPARE(e.line(), reference.line);
    // Jinja2 words syntax errors its own way (and Python's compiler reports a misplaced
    // break); for those the failure and its line are what count, elsewhere the message too.
    if (reference.errorType == "TemplateSyntaxError" || reference.errorType == "SyntaxError")
      return;
    QCOMPARE(QString::fromStdString(e.message()), QString::fromStdString(reference.message));
    return;
  }
  if (!reference.ok)
    QFAIL(qPrintable(QStringLiteral("Jinja2 fails (%1: %2), Ember renders: %3")
                         .arg(QString::fromStdString(reference.errorType),
                              QString::fromStdString(reference.message),
                              QString::fromStdString(ours).left(300))));
  if (ours != reference.output) {
    size_t at = 0;
    while (at < ours.size() && at < reference.output.size() && ours[at] == reference.output[at]) ++at;
    const size_t from = at > 40 ? at - 40 : 0;
    QFAIL(qPrintable(QStringLiteral("output differs from Jinja2 at byte %1 (lengths %2 vs %3):\n"
                                    "  ember:  ...%4\n  jinja2: ...%5")
                         .arg(at)
                         .arg(ours.size())
                         .arg(reference.output.size())
                         .arg(QString::fromUtf8(ours.substr(from, 120)).toHtmlEscaped(),
                              QString::fromUtf8(reference.output.substr(from, 120)).toHtmlEscaped())));
  }
}

// One template of a test's corpus: its name, source, and the special tokens of its model's
// tokenizer_config.json.
struct TemplateSource {
  std::string name;
  std::string source;
  std::string bos, eos;
};

// Every template crossed with every conversation of data/conversations/: rendered by Jinja2 once,
// in prepare() (from initTestCase), then compared with Ember case by case (addRows() in the data
// function, check() in the test function). A case id is "<template name>/<conversation>".
class TemplateCorpus {
 public:
  void prepare(const std::vector<TemplateSource>& templates) {
    const QDir conversationsDir(chatDataDir() + "/conversations");
    const QStringList conversations =
        conversationsDir.entryList({"*.json"}, QDir::Files, QDir::Name);
    QVERIFY2(conversations.size() >= 8, "expected at least 8 conversations");
    std::vector<ReferenceCase> cases;
    for (const TemplateSource& t : templates) {
      sources_[t.name] = t.source;
      for (const QString& c : conversations) {
        Json variables = readJsonFile(conversationsDir.filePath(c)).at("variables");
        variables["bos_token"] = t.bos;
        variables["eos_token"] = t.eos;
        const std::string id = t.name + "/" + QFileInfo(c).baseName().toStdString();
        variables_[id] = variables;
        cases.push_back({id, t.source, variables});
      }
    }
    EMBER_REQUIRE_JINJA2(cases, &reference_);
  }

  void addRows() const {
    QTest::addColumn<QString>("id");
    for (const auto& [id, variables] : variables_)
      QTest::newRow(id.c_str()) << QString::fromStdString(id);
  }

  void check(const QString& id) {
    const std::string key = id.toStdString();
    QVERIFY(reference_.count(key));
    compareWithReference(reference_[key], sources_[key.substr(0, key.find('/'))], variables_[key]);
  }

 private:
  std::map<std::string, std::string> sources_;  // template name -> source
  std::map<std::string, Json> variables_;       // case id -> variables
  std::map<std::string, ReferenceResult> reference_;
};

}  // namespace ember::test
