// The reader on real GGUF files: the vocabulary files of ../shared/testdata/tokenizer/ and the two
// downloaded models. Every expected number and string below was read from the same files with
// the reference implementation, the PyPI package `gguf` 0.19.0 (GGUFReader): field counts exclude
// GGUFReader's three GGUF.* header pseudo-fields; tensor offsets are relative to the data section.
#include <QtTest>
#include <algorithm>
#include <map>

#include "common/test_paths.h"
#include "gguf/gguf_file.h"

using namespace ember::gguf;

namespace {

std::unique_ptr<GgufFile> openPath(const QString& path) {
  return GgufFile::open(path.toStdString());
}

QString hexOf(std::span<const uint8_t> bytes) {
  return QString::fromLatin1(
      QByteArray(reinterpret_cast<const char*>(bytes.data()), qsizetype(bytes.size())).toHex());
}

QString str(const std::string& s) {
  return QString::fromStdString(s);
}

}  // namespace

class TestGgufRealFiles : public QObject {
  Q_OBJECT

 private slots:
  void readsVocabularyFiles_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("architecture");
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("pre");
    QTest::addColumn<int>("metadataCount");
    QTest::addColumn<QStringList>("tokens");  // count, [0], [1000], last
    QTest::addColumn<QStringList>("merges");  // count, first, last (empty when absent)
    QTest::addColumn<qint64>("bos");
    QTest::addColumn<qint64>("eos");
    QTest::addColumn<QList<qint64>>("firstTokenTypes");
    QTest::newRow("gpt-2") << "ggml-vocab-gpt-2.gguf"
                           << "gpt2"
                           << "gpt2"
                           << "gpt-2" << 16 << QStringList{"50257", "!", "ale", "<|endoftext|>"}
                           << QStringList{"50000", "Ġ t", "Ġg azed"} << 50256ll << 50256ll
                           << QList<qint64>{1, 1, 1, 1};
    QTest::newRow("llama-bpe") << "ggml-vocab-llama-bpe.gguf"
                               << "llama"
                               << "gpt2"
                               << "llama-bpe" << 20
                               << QStringList{"128256", "!", "indow",
                                              "<|reserved_special_token_250|>"}
                               << QStringList{"280147", "Ġ Ġ", "éĶ ¦"} << 128000ll << 128001ll
                               << QList<qint64>{1, 1, 1, 1};
    QTest::newRow("llama-spm") << "ggml-vocab-llama-spm.gguf"
                               << "llama"
                               << "llama"
                               << "default" << 22 << QStringList{"32000", "<unk>", "ied", "给"}
                               << QStringList{} << 1ll << 2ll << QList<qint64>{2, 3, 3, 6};
    QTest::newRow("qwen2") << "ggml-vocab-qwen2.gguf"
                           << "qwen2"
                           << "gpt2"
                           << "qwen2" << 20 << QStringList{"151936", "!", "atus", "[PAD151935]"}
                           << QStringList{"151387", "Ġ Ġ", "â½ Ĺ"} << 151643ll << 151643ll
                           << QList<qint64>{1, 1, 1, 1};
    QTest::newRow("starcoder") << "ggml-vocab-starcoder.gguf"
                               << "starcoder2"
                               << "gpt2"
                               << "starcoder" << 19
                               << QStringList{"49152", "<|endoftext|>", "Comp", "sdb"}
                               << QStringList{"48872", "Ġ Ġ", "s db"} << 0ll << 0ll
                               << QList<qint64>{3, 3, 3, 3};
  }

  void readsVocabularyFiles() {
    QFETCH(QString, file);
    QFETCH(QString, architecture);
    QFETCH(QString, model);
    QFETCH(QString, pre);
    QFETCH(int, metadataCount);
    QFETCH(QStringList, tokens);
    QFETCH(QStringList, merges);
    QFETCH(qint64, bos);
    QFETCH(qint64, eos);
    QFETCH(QList<qint64>, firstTokenTypes);
    EMBER_REQUIRE_TESTDATA(path, "tokenizer/" + file);
    const auto gguf = openPath(path);
    QCOMPARE(gguf->version(), 3u);
    QCOMPARE(gguf->alignment(), uint64_t{32});
    QVERIFY(gguf->tensors().empty());
    QCOMPARE(int(gguf->metadata().size()), metadataCount);
    QCOMPARE(str(gguf->architecture()), architecture);
    QCOMPARE(str(gguf->getString("tokenizer.ggml.model")), model);
    QCOMPARE(str(*gguf->findString("tokenizer.ggml.pre")), pre);

    const std::vector<std::string> vocab = gguf->getStringArray("tokenizer.ggml.tokens");
    QCOMPARE(QString::number(vocab.size()), tokens[0]);
    QCOMPARE(str(vocab[0]), tokens[1]);
    QCOMPARE(str(vocab[1000]), tokens[2]);
    QCOMPARE(str(vocab.back()), tokens[3]);
    if (merges.isEmpty()) {
      QVERIFY(gguf->find("tokenizer.ggml.merges") == nullptr);
    } else {
      const std::vector<std::string> pairs = gguf->getStringArray("tokenizer.ggml.merges");
      QCOMPARE(QString::number(pairs.size()), merges[0]);
      QCOMPARE(str(pairs.front()), merges[1]);
      QCOMPARE(str(pairs.back()), merges[2]);
    }
    QCOMPARE(gguf->findInt("tokenizer.ggml.bos_token_id"), std::optional<int64_t>(bos));
    QCOMPARE(gguf->findInt("tokenizer.ggml.eos_token_id"), std::optional<int64_t>(eos));
    const std::vector<int64_t> types = gguf->getIntArray("tokenizer.ggml.token_type");
    QCOMPARE(types.size(), vocab.size());
    QCOMPARE(QList<qint64>(types.begin(), types.begin() + 4), firstTokenTypes);
  }

  void readsSentencePieceScores() {
    EMBER_REQUIRE_TESTDATA(path, "tokenizer/ggml-vocab-llama-spm.gguf");
    const auto gguf = openPath(path);
    const std::vector<float> scores = gguf->getFloatArray("tokenizer.ggml.scores");
    QCOMPARE(scores.size(), size_t{32000});
    QCOMPARE(scores[1000], -741.0f);
    QCOMPARE(gguf->findBool("tokenizer.ggml.add_bos_token"), std::optional<bool>(true));
    QCOMPARE(gguf->findBool("tokenizer.ggml.add_eos_token"), std::optional<bool>(false));
    QCOMPARE(gguf->findInt("llama.context_length"), std::optional<int64_t>(4096));
  }

  void readsModels_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("architecture");
    QTest::addColumn<int>("tensorCount");
    QTest::addColumn<qint64>("parameters");
    QTest::addColumn<qint64>("dataOffset");
    QTest::addColumn<QString>("typeCounts");
    QTest::addColumn<int>("vocabSize");
    // token_embd.weight: type, shape, offset, bytes, first and last 8 bytes of its data.
    QTest::addColumn<QStringList>("embedding");
    QTest::newRow("SmolLM2-135M Q4_1")
        << "SmolLM2-135M-Instruct.Q4_1.gguf"
        << "llama" << 272 << 134515008ll << 1785664ll << "F32:61 Q4_1:210 Q8_0:1" << 49152
        << QStringList{"Q8_0",     "576x49152",        "0",
                       "30081024", "3219d60d13f7e5ee", "10146bc62d4abbe8"};
    QTest::newRow("gemma-3-270m Q4_K_M")
        << "gemma-3-270m-q4_k_m.gguf"
        << "gemma3" << 236 << 268098176ll << 6525120ll << "F32:109 Q4_K:27 Q5_0:81 Q6_K:9 Q8_0:10"
        << 262144 << QStringList{"Q8_0",      "640x262144",       "2560",
                                 "178257920", "f210f447c7ddec30", "fc391e480e1000ea"};
  }

  void readsModels() {
    QFETCH(QString, file);
    QFETCH(QString, architecture);
    QFETCH(int, tensorCount);
    QFETCH(qint64, parameters);
    QFETCH(qint64, dataOffset);
    QFETCH(QString, typeCounts);
    QFETCH(int, vocabSize);
    QFETCH(QStringList, embedding);
    EMBER_REQUIRE_MODEL(path, file);
    const auto gguf = openPath(path);
    QCOMPARE(gguf->version(), 3u);
    QCOMPARE(int(gguf->metadata().size()), 33);
    QCOMPARE(str(gguf->architecture()), architecture);
    QCOMPARE(int(gguf->tensors().size()), tensorCount);
    QCOMPARE(qint64(gguf->dataOffset()), dataOffset);
    QCOMPARE(int(gguf->getStringArray("tokenizer.ggml.tokens").size()), vocabSize);

    qint64 elements = 0;
    std::map<std::string, int> types;
    for (const TensorInfo& t : gguf->tensors()) {
      elements += qint64(t.elementCount);
      ++types[std::string(ggmlTypeName(t.type))];
    }
    QCOMPARE(elements, parameters);
    QStringList typeList;
    for (const auto& [name, count] : types) typeList << str(name) + ":" + QString::number(count);
    QCOMPARE(typeList.join(' '), typeCounts);

    // The block sizes must tile the data section exactly: sorted by offset, each tensor starts
    // where the previous one ended (rounded up to the alignment), and the last one ends the file.
    std::vector<const TensorInfo*> byOffset;
    for (const TensorInfo& t : gguf->tensors()) byOffset.push_back(&t);
    std::sort(byOffset.begin(), byOffset.end(),
              [](const TensorInfo* a, const TensorInfo* b) { return a->offset < b->offset; });
    uint64_t expected = 0;
    for (const TensorInfo* t : byOffset) {
      QCOMPARE(t->offset, expected);
      expected =
          (t->offset + t->byteSize + gguf->alignment() - 1) / gguf->alignment() * gguf->alignment();
    }
    QCOMPARE(gguf->dataOffset() + expected, gguf->fileSize());

    const TensorInfo* embd = gguf->findTensor("token_embd.weight");
    QVERIFY(embd != nullptr);
    QCOMPARE(str(std::string(ggmlTypeName(embd->type))), embedding[0]);
    QCOMPARE(QString::number(embd->shape[0]) + "x" + QString::number(embd->shape[1]), embedding[1]);
    QCOMPARE(QString::number(embd->offset), embedding[2]);
    QCOMPARE(QString::number(embd->byteSize), embedding[3]);
    QCOMPARE(hexOf(embd->data.first(8)), embedding[4]);
    QCOMPARE(hexOf(embd->data.last(8)), embedding[5]);
  }
};

QTEST_APPLESS_MAIN(TestGgufRealFiles)
#include "test_gguf_real_files.moc"
