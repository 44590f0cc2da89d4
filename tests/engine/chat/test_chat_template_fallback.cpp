// Choosing a model's chat template: its own tokenizer.chat_template when it works, else a
// built-in template for its family with a warning (RELIABILITY.md, "Model files" 9). The
// built-in templates are Jinja and are checked against Python's Jinja2 like any template, and
// against the model families' own templates (Gemma 2's from the testdata folder, SmolLM2's from
// the real model) where the conversation is one both can express. GGUFs are built in memory
// with GgufWriter; the real models are the two of scripts/fetch-models.sh.
#include <QDir>
#include <QtTest>

#include "chat/builtin_templates.h"
#include "chat/template_resolver.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "jinja2_reference.h"

using ember::chat::ResolvedTemplate;
using ember::test::Json;

namespace {

std::unique_ptr<ember::gguf::GgufFile> makeGguf(const std::string& architecture,
                                                const std::vector<std::string>& tokens,
                                                const std::optional<std::string>& chatTemplate,
                                                uint32_t bos, uint32_t eos) {
  ember::gguf::GgufWriter writer;
  writer.addString("general.architecture", architecture);
  writer.addString("tokenizer.ggml.model", "gpt2");
  writer.addStringArray("tokenizer.ggml.tokens", tokens);
  writer.addUInt32("tokenizer.ggml.bos_token_id", bos);
  writer.addUInt32("tokenizer.ggml.eos_token_id", eos);
  if (chatTemplate) writer.addString("tokenizer.chat_template", *chatTemplate);
  return ember::gguf::GgufFile::fromBuffer(writer.bytes(), "in-memory " + architecture + ".gguf");
}

Json conversationVariables(const QString& name) {
  return ember::test::readJsonFile(ember::test::chatDataDir() + "/conversations/" + name + ".json")
      .at("variables");
}

QStringList conversationNames() {
  QStringList names;
  for (const QString& f : QDir(ember::test::chatDataDir() + "/conversations")
                              .entryList({"*.json"}, QDir::Files, QDir::Name))
    names << QFileInfo(f).baseName();
  return names;
}

ember::chat::Conversation toConversation(const Json& variables) {
  ember::chat::Conversation c;
  c.messages = variables.at("messages");
  c.addGenerationPrompt = variables.value("add_generation_prompt", false);
  if (variables.contains("tools")) c.tools = variables["tools"];
  return c;
}

}  // namespace

class ChatTemplateFallback : public QObject {
  Q_OBJECT

 private slots:
  void builtinTemplatesRenderLikeJinja2();
  void builtinGemmaMatchesGemma2Template();
  void absentTemplateFallsBack();
  void brokenTemplateFallsBackWithPosition();
  void templateUnsupportedAtRenderFallsBack();
  void mistypedTemplateFallsBack();
  void templateThatRaisesOnPurposeIsKept();
  void conversationTheTemplateCannotRenderFallsBack();
  void familyFromTokensAndArchitecture_data();
  void familyFromTokensAndArchitecture();
  void smolLm2UsesItsOwnTemplate();
  void gemma3HasNoTemplateAndFallsBack();
};

void ChatTemplateFallback::builtinTemplatesRenderLikeJinja2() {
  std::vector<ember::test::ReferenceCase> cases;
  for (const auto& builtin : ember::chat::builtinTemplates()) {
    for (const QString& name : conversationNames()) {
      Json variables = conversationVariables(name);
      variables["bos_token"] = "<BOS>";
      variables["eos_token"] = "<EOS>";
      cases.push_back({std::string(builtin.name) + "/" + name.toStdString(),
                       std::string(builtin.source), variables});
    }
  }
  QVERIFY(cases.size() >= 6 * 8);
  std::map<std::string, ember::test::ReferenceResult> reference;
  EMBER_REQUIRE_JINJA2(cases, &reference);
  for (const auto& c : cases) {
    QVERIFY2(reference[c.id].ok, c.id.c_str());  // a built-in never fails on a conversation
    ember::test::compareWithReference(reference[c.id], c.templateSource, c.variables);
    if (QTest::currentTestFailed()) qWarning("case %s", c.id.c_str());
    QVERIFY(!QTest::currentTestFailed());
  }
}

// Gemma 2's own template (testdata) and the built-in agree wherever Gemma 2's accepts the
// conversation (no system message, alternating roles).
void ChatTemplateFallback::builtinGemmaMatchesGemma2Template() {
  EMBER_REQUIRE_TESTDATA(path, "chat-templates/google-gemma-2-2b-it.jinja");
  QFile f(path);
  QVERIFY(f.open(QIODevice::ReadOnly));
  const auto gemma2 = ember::chat::ChatTemplate::parse(f.readAll().toStdString());
  const auto builtin = ember::chat::ChatTemplate::parse(ember::chat::findBuiltinTemplate("gemma")->source);
  int compared = 0;
  for (const QString& name : conversationNames()) {
    Json variables = conversationVariables(name);
    variables["bos_token"] = "<bos>";
    variables["eos_token"] = "<eos>";
    std::string expected;
    try {
      expected = gemma2.render(variables);
    } catch (const ember::chat::TemplateError&) {
      continue;  // Gemma 2 refuses it (system role, tool turns)
    }
    QCOMPARE(QString::fromStdString(builtin.render(variables)), QString::fromStdString(expected));
    ++compared;
  }
  QVERIFY(compared >= 4);
}

void ChatTemplateFallback::absentTemplateFallsBack() {
  const auto file = makeGguf("gemma3", {"<pad>", "<eos>", "<bos>", "<start_of_turn>", "<end_of_turn>"},
                             std::nullopt, 2, 1);
  const ResolvedTemplate resolved = ember::chat::resolveChatTemplate(*file);
  QVERIFY(resolved.isFallback);
  QCOMPARE(QString::fromStdString(resolved.name), QStringLiteral("gemma"));
  QVERIFY(QString::fromStdString(resolved.warning).contains("no tokenizer.chat_template"));
  QVERIFY(QString::fromStdString(resolved.warning).contains("'gemma'"));
  QCOMPARE(QString::fromStdString(resolved.bosToken), QStringLiteral("<bos>"));
  QCOMPARE(QString::fromStdString(resolved.eosToken), QStringLiteral("<eos>"));
  ember::chat::Conversation c;
  c.messages = Json::array({Json{{"role", "user"}, {"content", "Hi"}}});
  QCOMPARE(QString::fromStdString(resolved.render(c)),
           QStringLiteral("<bos><start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\n"));
}

void ChatTemplateFallback::brokenTemplateFallsBackWithPosition() {
  const auto file = makeGguf("qwen2", {"<|endoftext|>", "<|im_start|>", "<|im_end|>"},
                             "{% for m in messages %}\n{{ m.content }\n{% endfor %}", 1, 2);
  const ResolvedTemplate resolved = ember::chat::resolveChatTemplate(*file);
  QVERIFY(resolved.isFallback);
  QCOMPARE(QString::fromStdString(resolved.name), QStringLiteral("chatml"));
  QVERIFY2(QString::fromStdString(resolved.warning).contains("line 2"), resolved.warning.c_str());
  QVERIFY(QString::fromStdString(resolved.warning).contains("<|im_start|>"));
}

void ChatTemplateFallback::templateUnsupportedAtRenderFallsBack() {
  const auto file = makeGguf("llama", {"<s>", "</s>", "[INST]"},
                             "{{ bos_token }}{{ messages[0].content.zfill(8) }}", 0, 1);
  const ResolvedTemplate resolved = ember::chat::resolveChatTemplate(*file);
  QVERIFY(resolved.isFallback);
  QCOMPARE(QString::fromStdString(resolved.name), QStringLiteral("llama2"));
  QVERIFY2(QString::fromStdString(resolved.warning).contains("zfill"), resolved.warning.c_str());
}

void ChatTemplateFallback::mistypedTemplateFallsBack() {
  ember::gguf::GgufWriter writer;
  writer.addString("general.architecture", "phi3");
  writer.addUInt32("tokenizer.chat_template", 7);
  const auto file = ember::gguf::GgufFile::fromBuffer(writer.bytes(), "mistyped.gguf");
  const ResolvedTemplate resolved = ember::chat::resolveChatTemplate(*file);
  QVERIFY(resolved.isFallback);
  QCOMPARE(QString::fromStdString(resolved.name), QStringLiteral("phi3"));
  QVERIFY(QString::fromStdString(resolved.warning).contains("not a string"));
  QCOMPARE(QString::fromStdString(resolved.bosToken), QString());  // no vocabulary: no texts
}

// Gemma 2's template raises for a system message: that is the template working as written,
// not a reason to replace it.
void ChatTemplateFallback::templateThatRaisesOnPurposeIsKept() {
  const std::string source =
      "{% if messages[0]['role'] == 'user' %}{{ raise_exception('needs a system message') }}"
      "{% endif %}{% for m in messages %}{{ m.content }}{% endfor %}";
  const auto file = makeGguf("llama", {"<s>", "</s>"}, source, 0, 1);
  const ResolvedTemplate resolved = ember::chat::resolveChatTemplate(*file);
  QVERIFY(!resolved.isFallback);
  QCOMPARE(QString::fromStdString(resolved.name), QStringLiteral("model"));
  QVERIFY(resolved.warning.empty());
}

// A template that only meets an unsupported construct for some conversations (here: tool
// definitions) is kept, and those conversations are rendered with the built-in instead.
void ChatTemplateFallback::conversationTheTemplateCannotRenderFallsBack() {
  const std::string source =
      "{% if tools %}{{ tools[0].function.name.zfill(3) }}{% endif %}"
      "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}";
  const auto file = makeGguf("qwen2", {"<|endoftext|>", "<|im_start|>", "<|im_end|>"}, source, 1, 2);
  const ResolvedTemplate resolved = ember::chat::resolveChatTemplate(*file);
  QVERIFY(!resolved.isFallback);
  QCOMPARE(QString::fromStdString(resolved.family), QStringLiteral("chatml"));
  ember::chat::Conversation plain = toConversation(conversationVariables("01_single_user"));
  std::string warning;
  QCOMPARE(QString::fromStdString(resolved.render(plain, {}, &warning)),
           QStringLiteral("<|im_start|>user\nHello! How are you today?<|im_end|>\n"));
  QVERIFY(warning.empty());
  ember::chat::Conversation withTools = toConversation(conversationVariables("06_tools_available"));
  const std::string text = resolved.render(withTools, {}, &warning);
  QVERIFY2(QString::fromStdString(warning).contains("zfill"), warning.c_str());
  QVERIFY(QString::fromStdString(warning).contains("'chatml'"));
  QCOMPARE(QString::fromStdString(text),
           QStringLiteral("<|im_start|>user\nWhat's the weather like in Seoul right now?<|im_end|>\n"
                          "<|im_start|>assistant\n"));
  // The template's own refusals are not replaced.
  const auto strict = makeGguf("qwen2", {"<|im_start|>"}, "{{ raise_exception('no') if messages | length > 1 }}", 0, 0);
  const ResolvedTemplate strictResolved = ember::chat::resolveChatTemplate(*strict);
  QVERIFY_THROWS_EXCEPTION(ember::chat::TemplateError,
                           strictResolved.render(toConversation(conversationVariables("03_multi_turn"))));
}

void ChatTemplateFallback::familyFromTokensAndArchitecture_data() {
  QTest::addColumn<QString>("architecture");
  QTest::addColumn<QStringList>("tokens");
  QTest::addColumn<QString>("family");
  // The control tokens each family's chat format is written with.
  QTest::newRow("llama 3 vocabulary") << "llama" << QStringList{"<|start_header_id|>"} << "llama3";
  QTest::newRow("llama 2 vocabulary") << "llama" << QStringList{"[INST]"} << "llama2";
  QTest::newRow("mistral vocabulary") << "mistral" << QStringList{"[INST]"} << "mistral";
  QTest::newRow("qwen vocabulary") << "qwen2" << QStringList{"<|im_start|>"} << "chatml";
  QTest::newRow("smollm on llama arch") << "llama" << QStringList{"<|im_start|>"} << "chatml";
  QTest::newRow("gemma vocabulary") << "gemma3" << QStringList{"<start_of_turn>"} << "gemma";
  QTest::newRow("phi-3 vocabulary") << "phi3" << QStringList{"<|user|>"} << "phi3";
  QTest::newRow("gemma by architecture") << "gemma2" << QStringList{} << "gemma";
  QTest::newRow("llama by architecture") << "llama" << QStringList{} << "llama2";
  QTest::newRow("nothing known") << "" << QStringList{} << "chatml";
}

void ChatTemplateFallback::familyFromTokensAndArchitecture() {
  QFETCH(QString, architecture);
  QFETCH(QStringList, tokens);
  QFETCH(QString, family);
  std::string basis;
  const std::string chosen = ember::chat::chooseBuiltinFamily(
      architecture.toStdString(),
      [&](std::string_view t) { return tokens.contains(QString::fromUtf8(t.data(), int(t.size()))); },
      &basis);
  QCOMPARE(QString::fromStdString(chosen), family);
  QVERIFY(!basis.empty());
  QVERIFY(ember::chat::findBuiltinTemplate(chosen));
}

// SmolLM2's GGUF carries a ChatML template; Ember uses it, with the BOS/EOS texts its
// vocabulary names (<|im_start|>, <|im_end|>, as in the model's tokenizer_config.json), and it
// renders like Jinja2 over every conversation. The built-in chatml agrees with it wherever the
// conversation has a system message (SmolLM2 adds its own otherwise).
void ChatTemplateFallback::smolLm2UsesItsOwnTemplate() {
  EMBER_REQUIRE_MODEL(path, "SmolLM2-135M-Instruct.Q4_1.gguf");
  const auto file = ember::gguf::GgufFile::open(path.toStdString());
  const ResolvedTemplate resolved = ember::chat::resolveChatTemplate(*file);
  QVERIFY2(!resolved.isFallback, resolved.warning.c_str());
  QCOMPARE(QString::fromStdString(resolved.bosToken), QStringLiteral("<|im_start|>"));
  QCOMPARE(QString::fromStdString(resolved.eosToken), QStringLiteral("<|im_end|>"));
  const std::string source = *file->findString("tokenizer.chat_template");
  std::vector<ember::test::ReferenceCase> cases;
  for (const QString& name : conversationNames()) {
    Json variables = conversationVariables(name);
    variables["bos_token"] = resolved.bosToken;
    variables["eos_token"] = resolved.eosToken;
    cases.push_back({name.toStdString(), source, variables});
  }
  std::map<std::string, ember::test::ReferenceResult> reference;
  EMBER_REQUIRE_JINJA2(cases, &reference);
  const auto chatml = ember::chat::ChatTemplate::parse(ember::chat::findBuiltinTemplate("chatml")->source);
  for (const auto& c : cases) {
    ember::test::compareWithReference(reference[c.id], c.templateSource, c.variables);
    QVERIFY2(!QTest::currentTestFailed(), c.id.c_str());
    const bool hasSystem = c.variables["messages"][0]["role"] == "system";
    const bool hasTools = c.variables.dump().find("tool_calls") != std::string::npos;
    if (hasSystem && !hasTools && reference[c.id].ok)
      QCOMPARE(QString::fromStdString(chatml.render(c.variables)),
               QString::fromStdString(reference[c.id].output));
  }
}

// The Gemma 3 GGUF of fetch-models.sh has no tokenizer.chat_template: Ember falls back to the
// built-in gemma template (its vocabulary has <start_of_turn>) and says so.
void ChatTemplateFallback::gemma3HasNoTemplateAndFallsBack() {
  EMBER_REQUIRE_MODEL(path, "gemma-3-270m-q4_k_m.gguf");
  const auto file = ember::gguf::GgufFile::open(path.toStdString());
  QVERIFY(!file->find("tokenizer.chat_template"));
  const ResolvedTemplate resolved = ember::chat::resolveChatTemplate(*file);
  QVERIFY(resolved.isFallback);
  QCOMPARE(QString::fromStdString(resolved.name), QStringLiteral("gemma"));
  QVERIFY(QString::fromStdString(resolved.warning).contains("<start_of_turn>"));
  QCOMPARE(QString::fromStdString(resolved.bosToken), QStringLiteral("<bos>"));
  QCOMPARE(QString::fromStdString(resolved.eosToken), QStringLiteral("<eos>"));
  const std::string text = resolved.render(toConversation(conversationVariables("05_non_ascii")));
  QVERIFY(text.rfind("<bos><start_of_turn>user\n당신은 친절한 도우미입니다.", 0) == 0);
  QVERIFY(QString::fromStdString(text).endsWith("<start_of_turn>model\n"));
}

QTEST_GUILESS_MAIN(ChatTemplateFallback)
#include "test_chat_template_fallback.moc"
