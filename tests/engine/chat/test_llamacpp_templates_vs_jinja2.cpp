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
  void initTestCase() {
    const QString dir = ember::test::llamaCppDataDir() + QStringLiteral("/models/templates");
    if (!QDir(dir).exists()) {
      const QString why = dir + QStringLiteral(" is missing: run scripts/fetch-llamacpp-vocab.sh "
                                               "or set EMBER_LLAMACPP_DATA");
      if (ember::test::underCi()) QFAIL(qPrintable(why));
      QSKIP(qPrintable(why));
    }
    std::vector<ember::test::TemplateSource> sources;
    for (const TemplateFile& t : kTemplates) {
      QFile f(dir + "/" + t.file);
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

QTEST_GUILESS_MAIN(LlamaCppTemplatesVsJinja2)
#include "test_llamacpp_templates_vs_jinja2.moc"
