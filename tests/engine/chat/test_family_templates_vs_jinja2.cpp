// The chat templates of the model families Ember runs that neither llama.cpp's models/templates
// nor the shared test data carry, kept in data/templates/ as each model publishes it (the
// tokenizer.chat_template of its GGUF, the chat_template of its tokenizer_config.json):
//  - microsoft-Phi-4-mini-instruct.jinja: Phi-4-mini-instruct's tokenizer_config.json;
//  - allenai-OLMo-2-1124-7B-Instruct.jinja: OLMo 2 Instruct's tokenizer_config.json, decoded from
//    its JSON (the Tülu 3 template with bos_token first; the newlines inside its string literals are
//    real newlines, as the GGUF conversion stores them);
//  - HuggingFaceTB-SmolLM2-135M-Instruct.jinja: tokenizer.chat_template of
//    SmolLM2-135M-Instruct.Q4_1.gguf, Ember's default model;
//  - google-gemma-3-it.jinja: Gemma 3 instruct's tokenizer_config.json (the template the
//    gemma-3-*-it GGUFs carry), decoded from its JSON, so the '\n\n' after the system text and the
//    newline after each role are real newlines inside the string literals. Gemma 3 has no system
//    role: the system text is put in front of the first user turn; "assistant" becomes "model";
//    every content is trimmed; roles must alternate or the template raises.
// Each is rendered over every conversation in data/conversations/ by Ember and by Python's
// Jinja2 (tests/tools/render_jinja2.py, set up as Hugging Face transformers renders chat
// templates). Outputs must be byte-identical; where Jinja2 raises, Ember must fail the same way.
// Gemma 3 has its own cases besides: content given as a list of text and image parts (its
// template's other branch), the alternation and content-type errors it raises, and one
// conversation (system, three turns, Korean) spelled out by hand from Gemma's published prompt
// layout, so that a wrong copy of the template fails even where both renderers agree on it.
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
    {"google-gemma-3-it.jinja", "<bos>", "<eos>"},
};
}  // namespace

class FamilyTemplatesVsJinja2 : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    std::vector<ember::test::TemplateSource> sources;
    for (const TemplateFile& t : kTemplates) {
      const std::string source = readTemplate(t.file);
      QVERIFY2(!source.empty(), (std::string(t.file) + " is missing").c_str());
      sources.push_back({t.file, source, t.bos, t.eos});
    }
    corpus_.prepare(sources);
  }
  void rendersLikeJinja2_data() { corpus_.addRows(); }
  void rendersLikeJinja2() {
    QFETCH(QString, id);
    corpus_.check(id);
  }

  void gemma3PartsAndErrorsLikeJinja2() {
    using ember::test::Json;
    const std::string source = readTemplate("google-gemma-3-it.jinja");
    const auto conversation = [](Json messages) {
      return Json{{"messages", std::move(messages)}, {"add_generation_prompt", true},
                  {"bos_token", "<bos>"}, {"eos_token", "<eos>"}};
    };
    const std::vector<ember::test::ReferenceCase> cases = {
        {"parts", source,
         conversation(Json::parse(R"([
           {"role": "system", "content": [{"type": "text", "text": "  한국어로 답하세요.  "}]},
           {"role": "user", "content": [{"type": "image"}, {"type": "text", "text": " 이 사진은 뭐예요? "}]},
           {"role": "assistant", "content": [{"type": "text", "text": "고양이 사진이에요.\n"}]},
           {"role": "user", "content": [{"type": "text", "text": "몇 마리?"}, {"type": "image"}]}])"))},
        {"two users in a row", source,
         conversation(Json::parse(R"([{"role": "user", "content": "a"}, {"role": "user", "content": "b"}])"))},
        {"system only", source, conversation(Json::parse(R"([{"role": "system", "content": "s"}])"))},
        {"number as content", source, conversation(Json::parse(R"([{"role": "user", "content": 42}])"))},
    };
    std::map<std::string, ember::test::ReferenceResult> reference;
    EMBER_REQUIRE_JINJA2(cases, &reference);
    QVERIFY(!reference["two users in a row"].ok);  // the template's own alternation check
    QVERIFY(!reference["number as content"].ok);
    for (const auto& c : cases) {
      QVERIFY2(reference.count(c.id), c.id.c_str());
      ember::test::compareWithReference(reference[c.id], c.templateSource, c.variables);
      if (QTest::currentTestFailed()) QFAIL(("in case: " + c.id).c_str());
    }
  }

  // Gemma's published layout: <bos>, then per turn "<start_of_turn>" + user|model + "\n" +
  // trimmed text + "<end_of_turn>\n"; the system text and a blank line open the first user
  // turn; the generation prompt is "<start_of_turn>model\n".
  void gemma3KoreanConversationAsPublished() {
    const std::string source = readTemplate("google-gemma-3-it.jinja");
    const auto variables = ember::test::readJsonFile(ember::test::chatDataDir() +
                                                     "/conversations/05_non_ascii.json")
                               .at("variables");
    auto withTokens = variables;
    withTokens["bos_token"] = "<bos>";
    withTokens["eos_token"] = "<eos>";
    const std::string expected =
        "<bos><start_of_turn>user\n"
        "당신은 친절한 도우미입니다. Réponds en français si possible.\n\n"
        "안녕하세요! 오늘 서울 날씨는 어때요? 🌤️<end_of_turn>\n"
        "<start_of_turn>model\n"
        "서울은 맑고 따뜻해요 — «très agréable», \"quoted\" and a back\\slash.<end_of_turn>\n"
        "<start_of_turn>user\n"
        "고마워요! Ünïcödé ñ 日本語も大丈夫？<end_of_turn>\n"
        "<start_of_turn>model\n";
    const std::string ours = ember::chat::ChatTemplate::parse(source).render(
        withTokens, ember::test::fixedClockOptions());
    QCOMPARE(QString::fromStdString(ours), QString::fromStdString(expected));
  }

 private:
  static std::string readTemplate(const char* file) {
    QFile f(ember::test::chatDataDir() + "/templates/" + file);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return f.readAll().toStdString();
  }

  ember::test::TemplateCorpus corpus_;
};

QTEST_GUILESS_MAIN(FamilyTemplatesVsJinja2)
#include "test_family_templates_vs_jinja2.moc"
