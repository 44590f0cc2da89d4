// The chat templates of the newer model families, from llama.cpp's own models/templates/ folder
// (as vendored in PyPI llama-cpp-python 0.3.36, fetched by scripts/fetch-llamacpp-vocab.sh into
// $EMBER_LLAMACPP_DATA), rendered over every conversation in data/conversations/ by Ember and by
// Python's Jinja2 at test time (tests/tools/render_jinja2.py, set up as Hugging Face transformers
// renders chat templates). Outputs must be byte-identical; where Jinja2 raises, Ember must fail
// with the same message.
#include <QDir>
#include <QtTest>

#include "engine/tokenizer/bpe_test_cases.h"
#include "jinja2_reference.h"

using ember::test::Json;

namespace {
// File, bos_token, eos_token (as in each model's tokenizer_config.json).
struct TemplateFile {
  const char* file;
  const char* bos;
  const char* eos;
};
constexpr TemplateFile kTemplates[] = {
    {"openai-gpt-oss-120b.jinja", "<|startoftext|>", "<|return|>"},
    {"ibm-granite-granite-4.0.jinja", "<|end_of_text|>", "<|end_of_text|>"},
    {"ibm-granite-granite-4.1.jinja", "<|end_of_text|>", "<|end_of_text|>"},
    {"Mistral-Small-3.2-24B-Instruct-2506.jinja", "<s>", "</s>"},
    {"unsloth-mistral-Devstral-Small-2507.jinja", "<s>", "</s>"},
    {"mistralai-Ministral-3-14B-Reasoning-2512.jinja", "<s>", "</s>"},
    {"Qwen3.5-4B.jinja", "", "<|im_end|>"},
    {"Qwen3-Coder.jinja", "", "<|im_end|>"},
    {"Qwen-QwQ-32B.jinja", "", "<|im_end|>"},
    {"deepseek-ai-DeepSeek-R1-Distill-Llama-8B.jinja", "<｜begin▁of▁sentence｜>",
     "<｜end▁of▁sentence｜>"},
    {"google-gemma-4-31B-it-interleaved.jinja", "<bos>", "<eos>"},
    {"meta-llama-Llama-3.3-70B-Instruct.jinja", "<|begin_of_text|>", "<|eot_id|>"},
};
}  // namespace

class LlamaCppTemplatesVsJinja2 : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase();
  void rendersLikeJinja2_data();
  void rendersLikeJinja2();

 private:
  std::map<std::string, std::string> sources_;  // template file name -> source
  std::map<std::string, Json> variables_;       // case id -> variables
  std::map<std::string, ember::test::ReferenceResult> reference_;
};

void LlamaCppTemplatesVsJinja2::initTestCase() {
  const QString dir = ember::test::llamaCppDataDir() + QStringLiteral("/models/templates");
  if (!QDir(dir).exists()) {
    const QString why = dir + QStringLiteral(" is missing: run scripts/fetch-llamacpp-vocab.sh or "
                                             "set EMBER_LLAMACPP_DATA");
    if (ember::test::underCi()) QFAIL(qPrintable(why));
    QSKIP(qPrintable(why));
  }
  const QDir conversationsDir(ember::test::chatDataDir() + "/conversations");
  const QStringList conversations = conversationsDir.entryList({"*.json"}, QDir::Files, QDir::Name);
  QVERIFY2(conversations.size() >= 8, "expected at least 8 conversations");
  std::vector<ember::test::ReferenceCase> cases;
  for (const TemplateFile& t : kTemplates) {
    QFile f(dir + "/" + t.file);
    QVERIFY2(f.open(QIODevice::ReadOnly), qPrintable(f.fileName() + " is missing"));
    const std::string name = t.file;
    sources_[name] = f.readAll().toStdString();
    for (const QString& c : conversations) {
      Json variables = ember::test::readJsonFile(conversationsDir.filePath(c)).at("variables");
      variables["bos_token"] = t.bos;
      variables["eos_token"] = t.eos;
      const std::string id = name + "/" + QFileInfo(c).baseName().toStdString();
      variables_[id] = variables;
      cases.push_back({id, sources_[name], variables});
    }
  }
  EMBER_REQUIRE_JINJA2(cases, &reference_);
}

void LlamaCppTemplatesVsJinja2::rendersLikeJinja2_data() {
  QTest::addColumn<QString>("id");
  for (const auto& [id, variables] : variables_) QTest::newRow(id.c_str()) << QString::fromStdString(id);
}

void LlamaCppTemplatesVsJinja2::rendersLikeJinja2() {
  QFETCH(QString, id);
  const std::string key = id.toStdString();
  const std::string templateName = key.substr(0, key.find('/'));
  QVERIFY(reference_.count(key));
  ember::test::compareWithReference(reference_[key], sources_[templateName], variables_[key]);
}

QTEST_GUILESS_MAIN(LlamaCppTemplatesVsJinja2)
#include "test_llamacpp_templates_vs_jinja2.moc"
