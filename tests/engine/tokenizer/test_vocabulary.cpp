// readGgufVocabulary: the tokenizer.ggml.* metadata of real vocabularies (values cross-checked
// with gguf-py 0.19.0 reading the same files), and a clear error for each malformed model file a
// user may meet (missing tokenizer, special-token ids outside the vocabulary, malformed byte
// tokens such as <0x-1>, mismatched array lengths).
// Malformed files are built in memory with the GGUF writer.
#include <QtTest>

#include <algorithm>
#include <functional>
#include <map>

#include "bpe_test_cases.h"
#include "gguf/gguf_writer.h"
#include "tokenizer/gguf_vocabulary.h"

using namespace ember;
using namespace ember::gguf;
using namespace ember::test;

namespace {

using Metadata = std::map<std::string, Value>;

// A small well-formed SentencePiece-style vocabulary.
Metadata baseVocabulary() {
  Metadata m;
  m["tokenizer.ggml.model"] = Value::makeString("llama");
  m["tokenizer.ggml.tokens"] =
      Value::makeStringArray({"<unk>", "<s>", "</s>", "<0x0A>", "\xE2\x96\x81" "a", "<|im_end|>"});
  m["tokenizer.ggml.scores"] = Value::makeArray(
      ValueType::Float32, {Value::makeFloat32(0), Value::makeFloat32(0), Value::makeFloat32(0),
                           Value::makeFloat32(0), Value::makeFloat32(-1), Value::makeFloat32(0)});
  m["tokenizer.ggml.token_type"] = Value::makeArray(
      ValueType::Int32, {Value::makeInt32(2), Value::makeInt32(3), Value::makeInt32(3),
                         Value::makeInt32(6), Value::makeInt32(1), Value::makeInt32(3)});
  m["tokenizer.ggml.unknown_token_id"] = Value::makeUInt32(0);
  m["tokenizer.ggml.bos_token_id"] = Value::makeUInt32(1);
  m["tokenizer.ggml.eos_token_id"] = Value::makeUInt32(2);
  return m;
}

std::unique_ptr<GgufFile> fileOf(const Metadata& metadata) {
  GgufWriter writer;
  for (const auto& [key, value] : metadata) writer.add(key, value);
  return GgufFile::fromBuffer(writer.bytes(), "vocab-under-test.gguf");
}

void setToken(Metadata& m, size_t index, const std::string& text) {
  Array array = m["tokenizer.ggml.tokens"].asArray();
  array.items[index] = Value::makeString(text);
  m["tokenizer.ggml.tokens"] = Value::makeArray(ValueType::String, array.items);
}

struct BadCase {
  const char* name;
  std::function<void(Metadata&)> mutate;
  const char* messagePart;  // the error must name this
};

const std::vector<BadCase>& badCases() {
  static const std::vector<BadCase> cases = {
      {"no tokenizer model", [](Metadata& m) { m.erase("tokenizer.ggml.model"); },
       "tokenizer.ggml.model is missing"},
      {"no tokens", [](Metadata& m) { m.erase("tokenizer.ggml.tokens"); },
       "tokenizer.ggml.tokens is missing"},
      {"empty tokens",
       [](Metadata& m) { m["tokenizer.ggml.tokens"] = Value::makeStringArray({}); },
       "tokenizer.ggml.tokens is empty"},
      {"tokens not strings",
       [](Metadata& m) {
         m["tokenizer.ggml.tokens"] = Value::makeArray(ValueType::Int32, {Value::makeInt32(1)});
       },
       "tokenizer.ggml.tokens"},
      {"scores shorter",
       [](Metadata& m) {
         m["tokenizer.ggml.scores"] = Value::makeArray(ValueType::Float32, {Value::makeFloat32(0)});
       },
       "tokenizer.ggml.scores has 1 entries but tokenizer.ggml.tokens has 6"},
      {"token types longer",
       [](Metadata& m) {
         std::vector<Value> items(7, Value::makeInt32(1));
         m["tokenizer.ggml.token_type"] = Value::makeArray(ValueType::Int32, items);
       },
       "tokenizer.ggml.token_type has 7 entries"},
      {"unknown token type",
       [](Metadata& m) {
         std::vector<Value> items(6, Value::makeInt32(1));
         items[4] = Value::makeInt32(9);
         m["tokenizer.ggml.token_type"] = Value::makeArray(ValueType::Int32, items);
       },
       "tokenizer.ggml.token_type[4] = 9"},
      {"bos outside vocabulary",
       [](Metadata& m) { m["tokenizer.ggml.bos_token_id"] = Value::makeUInt32(6); },
       "tokenizer.ggml.bos_token_id = 6 is outside the vocabulary of 6 tokens"},
      {"eos at 2^32-1",
       [](Metadata& m) { m["tokenizer.ggml.eos_token_id"] = Value::makeUInt32(0xFFFFFFFFu); },
       "tokenizer.ggml.eos_token_id = 4294967295"},
      {"separator outside vocabulary",
       [](Metadata& m) { m["tokenizer.ggml.seperator_token_id"] = Value::makeUInt32(100); },
       "tokenizer.ggml.seperator_token_id = 100"},
      {"negative padding id",
       [](Metadata& m) { m["tokenizer.ggml.padding_token_id"] = Value::makeInt32(-1); },
       "tokenizer.ggml.padding_token_id = -1"},
      {"byte token <0x-1>", [](Metadata& m) { setToken(m, 3, "<0x-1>"); }, "'<0x-1>'"},
      {"byte token <0xZZ>", [](Metadata& m) { setToken(m, 3, "<0xZZ>"); }, "'<0xZZ>'"},
      {"byte token <0x100>", [](Metadata& m) { setToken(m, 3, "<0x100>"); }, "'<0x100>'"},
      {"byte token <0x4>", [](Metadata& m) { setToken(m, 3, "<0x4>"); }, "not of the form <0xHH>"},
      {"bpe without merges",
       [](Metadata& m) { m["tokenizer.ggml.model"] = Value::makeString("gpt2"); },
       "tokenizer.ggml.merges is missing or empty"},
  };
  return cases;
}

}  // namespace

class TestVocabulary : public QObject {
  Q_OBJECT

 private slots:
  void readsAWellFormedVocabulary() {
    const GgufVocabulary v = readGgufVocabulary(*fileOf(baseVocabulary()));
    QCOMPARE(v.model, std::string("llama"));
    QCOMPARE(v.tokens.size(), size_t(6));
    QCOMPARE(v.scores.size(), size_t(6));
    QCOMPARE(v.types[3], TokenType::Byte);
    QCOMPARE(v.special.bos, std::optional<TokenId>(1));
    QCOMPARE(v.special.unk, std::optional<TokenId>(0));
    QCOMPARE(v.special.addBos, true);  // SentencePiece's default without add_bos_token
    QCOMPARE(v.special.addEos, false);
    QCOMPARE(v.special.endOfGeneration, (std::vector<TokenId>{2, 5}));  // eos, then <|im_end|>
    QCOMPARE(parseByteToken(v.tokens[3]), std::optional<uint8_t>(0x0A));
  }

  // gpt-oss's harmony tokens, by llama.cpp's vocabulary loader (src/llama-vocab.cpp, 0.3.36):
  // the message markers are rendered (user-defined), and with <|return|> and <|call|> both ending
  // generation, <|end|> (the end of the reasoning channel's message) does not, and is rendered.
  void harmonyKeepsGeneratingPastTheReasoningChannel() {
    Metadata m = baseVocabulary();
    m["tokenizer.ggml.tokens"] = Value::makeStringArray(
        {"<unk>", "<s>", "</s>", "<0x0A>", "<|start|>", "<|channel|>", "<|message|>", "<|end|>",
         "<|return|>", "<|call|>"});
    std::vector<Value> scores(10, Value::makeFloat32(0)), types(10, Value::makeInt32(3));
    types[0] = Value::makeInt32(2);
    types[3] = Value::makeInt32(6);
    m["tokenizer.ggml.scores"] = Value::makeArray(ValueType::Float32, scores);
    m["tokenizer.ggml.token_type"] = Value::makeArray(ValueType::Int32, types);
    const GgufVocabulary v = readGgufVocabulary(*fileOf(m));
    QCOMPARE(v.special.endOfGeneration, (std::vector<TokenId>{2, 8, 9}));  // </s>, return, call
    for (size_t i : {4, 5, 6, 7}) QCOMPARE(v.types[i], TokenType::UserDefined);
    QCOMPARE(v.types[8], TokenType::Control);

    // Without <|call|> (not a harmony vocabulary), <|end|> still ends generation (Phi-3).
    setToken(m, 9, "<|eot|>");
    const GgufVocabulary other = readGgufVocabulary(*fileOf(m));
    QVERIFY(std::find(other.special.endOfGeneration.begin(), other.special.endOfGeneration.end(),
                      7) != other.special.endOfGeneration.end());
  }

  void rejectsMalformedMetadata_data() {
    QTest::addColumn<int>("index");
    for (size_t i = 0; i < badCases().size(); ++i)
      QTest::newRow(badCases()[i].name) << static_cast<int>(i);
  }
  void rejectsMalformedMetadata() {
    QFETCH(int, index);
    const BadCase& bad = badCases()[static_cast<size_t>(index)];
    Metadata metadata = baseVocabulary();
    bad.mutate(metadata);
    const auto file = fileOf(metadata);
    try {
      readGgufVocabulary(*file);
      QFAIL("accepted a malformed vocabulary");
    } catch (const Error& e) {
      const QString message = QString::fromUtf8(e.what());
      QVERIFY2(message.contains(QString::fromUtf8(bad.messagePart)), qPrintable(message));
      QVERIFY2(message.contains(QLatin1String("vocab-under-test.gguf")), qPrintable(message));
    }
  }

  void rejectsUnsupportedTokenizerTypes() {
    Metadata metadata = baseVocabulary();
    metadata["tokenizer.ggml.model"] = Value::makeString("rwkv");
    try {
      Tokenizer::fromGguf(*fileOf(metadata));
      QFAIL("accepted an unsupported tokenizer type");
    } catch (const Error& e) {
      QVERIFY2(QString::fromUtf8(e.what()).contains(QLatin1String("'rwkv'")), e.what());
    }
  }

  void rejectsMalformedMerges() {
    Metadata metadata = baseVocabulary();
    metadata["tokenizer.ggml.model"] = Value::makeString("gpt2");
    metadata.erase("tokenizer.ggml.token_type");
    metadata["tokenizer.ggml.merges"] = Value::makeStringArray({"<s>", "a b"});
    try {
      Tokenizer::fromGguf(*fileOf(metadata));
      QFAIL("accepted a merge without a space");
    } catch (const Error& e) {
      QVERIFY2(QString::fromUtf8(e.what()).contains(QLatin1String("tokenizer.ggml.merges[0]")),
               e.what());
    }
  }

  // Values printed by gguf-py 0.19.0 (GGUFReader) for the same files.
  void readsRealVocabularies_data() {
    QTest::addColumn<QString>("vocab");
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("pre");
    QTest::addColumn<int>("tokens");
    QTest::addColumn<int>("merges");
    QTest::addColumn<int>("bos");
    QTest::addColumn<int>("eos");
    QTest::newRow("gpt-2") << "gpt-2" << "gpt2" << "gpt-2" << 50257 << 50000 << 50256 << 50256;
    QTest::newRow("llama-bpe") << "llama-bpe" << "gpt2" << "llama-bpe" << 128256 << 280147 << 128000 << 128001;
    QTest::newRow("qwen2") << "qwen2" << "gpt2" << "qwen2" << 151936 << 151387 << 151643 << 151643;
    QTest::newRow("starcoder") << "starcoder" << "gpt2" << "starcoder" << 49152 << 48872 << 0 << 0;
    QTest::newRow("llama-spm") << "llama-spm" << "llama" << "default" << 32000 << 0 << 1 << 2;
  }
  void readsRealVocabularies() {
    QFETCH(QString, vocab);
    QFETCH(QString, model);
    QFETCH(QString, pre);
    QFETCH(int, tokens);
    QFETCH(int, merges);
    QFETCH(int, bos);
    QFETCH(int, eos);
    EMBER_REQUIRE_TESTDATA(path, vocabFile(vocab));
    const GgufVocabulary v = readGgufVocabulary(*GgufFile::open(path.toStdString()));
    QCOMPARE(QString::fromStdString(v.model), model);
    QCOMPARE(QString::fromStdString(v.pre), pre);
    QCOMPARE(v.tokens.size(), size_t(tokens));
    QCOMPARE(v.types.size(), size_t(tokens));
    QCOMPARE(v.merges.size(), size_t(merges));
    QCOMPARE(v.special.bos, std::optional<TokenId>(bos));
    QCOMPARE(v.special.eos, std::optional<TokenId>(eos));
  }

  void gemmaEndsOnEndOfTurn() {
    EMBER_REQUIRE_MODEL(path, QStringLiteral("gemma-3-270m-q4_k_m.gguf"));
    const GgufVocabulary v = readGgufVocabulary(*GgufFile::open(path.toStdString()));
    // gguf-py: eos = 1 (<eos>), token 106 is the control token <end_of_turn>.
    QCOMPARE(v.special.eos, std::optional<TokenId>(1));
    QCOMPARE(v.tokens[106], std::string("<end_of_turn>"));
    // Token 212 is "</s>", user-defined in the file; llama.cpp's llama_vocab::load makes that text
    // a control, end-of-generation token whatever its type, and so does Ember.
    QCOMPARE(v.tokens[212], std::string("</s>"));
    QCOMPARE(v.types[212], TokenType::Control);
    QCOMPARE(v.special.endOfGeneration, (std::vector<TokenId>{1, 106, 212}));
    QCOMPARE(v.special.addBos, true);
  }
};

QTEST_APPLESS_MAIN(TestVocabulary)
#include "test_vocabulary.moc"
