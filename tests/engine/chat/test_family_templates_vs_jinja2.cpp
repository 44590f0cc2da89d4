// The chat templates of the model families Ember runs that neither llama.cpp's models/templates
// nor the shared test data carry, kept in data/templates/ as each model publishes it (the
// tokenizer.chat_template of its GGUF, the chat_template of its tokenizer_config.json):
//  - microsoft-Phi-4-mini-instruct.jinja: Phi-4-mini-instruct's tokenizer_config.json;
//  - allenai-OLMo-2-1124-7B-Instruct.jinja: OLMo 2 Instruct's tokenizer_config.json, decoded from
//    its JSON (the Tülu 3 template with bos_token first; the newlines inside its string literals are
//    real newlines, as the GGUF conversion stores them);
//  - HuggingFaceTB-SmolLM2-135M-Instruct.jinja: tokenizer.chat_template of
//    SmolLM2-135M-Instruct.Q4_1.gguf, Ember's default model.
// Each is rendered over every conversation in data/conversations/ by Ember and by Python's
// Jinja2 (tests/tools/render_jinja2.py, set up as Hugging Face transformers renders chat
// templates). Outputs must be byte-identical; where Jinja2 raises, Ember must fail the same way.
#include <QtTest>

#include "jinja2_reference.h"

namespace {
// File, bos_token, eos_token (as in each model's tokenizer_config.json).
struct TemplateFile {
  const char* file;
  const char* bos;
  const char* eos;
};
constexpr TemplateFile kTemplates[] = {
    {"microsoft-Phi-4-mini-instruct.jinja", "<|endoftext|>", "<|endoftext|>"},
    {"allenai-OLMo-2-1124-7B-Instruct.jinja", "<|endoftext|>", "<|endoftext|>"},
    {"HuggingFaceTB-SmolLM2-135M-Instruct.jinja", "<|im_start|>", "<|im_end|>"},
};
}  // namespace

class FamilyTemplatesVsJinja2 : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    std::vector<ember::test::TemplateSource> sources;
    for (const TemplateFile& t : kTemplates) {
      QFile f(ember::test::chatDataDir() + "/templates/" + t.file);
      QVERIFY2(f.open(QIODevice::ReadOnly), qPrintable(f.fileName() + " is missing"));
      sources.push_back({t.file, f.readAll().toStdString(), t.bos, t.eos});
    }
    corpus_.prepare(sources);
  }
  void rendersLikeJinja2_data() { corpus_.addRows(); }
  void rendersLikeJinja2() {
    QFETCH(QString, id);
    corpus_.check(id);
  }

 private:
  ember::test::TemplateCorpus corpus_;
};

QTEST_GUILESS_MAIN(FamilyTemplatesVsJinja2)
#include "test_family_templates_vs_jinja2.moc"
