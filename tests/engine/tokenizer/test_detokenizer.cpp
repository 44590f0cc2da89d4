// The incremental detokenizer: bytes are held back until a character is complete, ill-formed
// bytes become U+FFFD exactly as Python 3.11's incremental UTF-8 decoder
// (codecs.getincrementaldecoder("utf-8")(errors="replace")) produces them, and SentencePiece's
// dummy-prefix space is dropped once. Byte tokens come from the qwen2 vocabulary; the leading-
// space cases use llama.cpp's llama-spm vectors (the ids must stream back to the input text).
#include <QtTest>

#include "bpe_test_cases.h"
#include "tokenizer/byte_unicode.h"
#include "tokenizer/utf8.h"

using namespace ember;
using namespace ember::test;

namespace {

// A minimal SentencePiece-like vocabulary: U+2581 stands for a space and the encoder's dummy
// prefix must be dropped from the first piece (SentencePiece's decoding rule).
class TinySentencePiece : public Tokenizer {
 public:
  TinySentencePiece() {
    tokenTexts_ = {"<s>", "\xE2\x96\x81Hello", "\xE2\x96\x81world", "\xE2\x96\x81", "!"};
    tokenTypes_ = {TokenType::Control, TokenType::Normal, TokenType::Normal, TokenType::Normal,
                   TokenType::Normal};
    special_.bos = 0;
    finishVocabulary();
  }
  std::string tokenBytes(TokenId id, bool renderSpecial) const override {
    if (tokenType(id) == TokenType::Control) return renderSpecial ? tokenText(id) : std::string();
    const std::string_view text = tokenText(id);
    std::string out;
    for (size_t i = 0; i < text.size();) {
      if (text.substr(i, 3) == "\xE2\x96\x81") {
        out += ' ';
        i += 3;
      } else {
        out += text[i++];
      }
    }
    return out;
  }
  size_t vocabSize() const override { return tokenTexts_.size(); }
  bool stripsLeadingSpace() const override { return true; }
  std::string_view kindName() const override { return "test"; }

 protected:
  void encodeFragment(std::string_view, std::vector<TokenId>&) const override {}  // decode-only
};

QStringList streamPieces(const Tokenizer& tokenizer, const std::vector<TokenId>& ids) {
  IncrementalDetokenizer detokenizer(tokenizer);
  QStringList pieces;
  for (TokenId id : ids) pieces << QString::fromStdString(detokenizer.push(id));
  pieces << QString::fromStdString(detokenizer.flush());
  return pieces;
}

}  // namespace

class TestDetokenizer : public QObject {
  Q_OBJECT

 private slots:
  void holdsBackPartialCharacters_data() {
    QTest::addColumn<QByteArray>("bytes");       // one byte token per byte
    QTest::addColumn<QStringList>("expected");   // what each push returns, then flush()
    const QString r = QStringLiteral("\uFFFD");
    const QString n;  // nothing yet
    QTest::newRow("korean, three byte tokens per syllable")
        << QByteArray("안녕하세요")
        << QStringList{n, n, "안", n, n, "녕", n, n, "하", n, n, "세", n, n, "요", n};
    QTest::newRow("0xFF between letters") << QByteArray("A\xFF" "B") << QStringList{"A", r, "B", n};
    QTest::newRow("sequence cut by a letter") << QByteArray("\xE2\x82" "A")
                                              << QStringList{n, n, r + "A", n};
    QTest::newRow("truncated at the end") << QByteArray("\xF0\x9F\x98") << QStringList{n, n, n, r};
    QTest::newRow("overlong C0") << QByteArray("\xC0\xAF") << QStringList{r, r, n};
    QTest::newRow("past U+10FFFF") << QByteArray("\xF4\x90\x80\x80") << QStringList{n, r + r, r, r, n};
    QTest::newRow("lone continuations") << QByteArray("\x80\x80" "A") << QStringList{r, r, "A", n};
    QTest::newRow("overlong E0") << QByteArray("\xE0\x80\xAF") << QStringList{n, r + r, r, n};
  }
  void holdsBackPartialCharacters() {
    QFETCH(QByteArray, bytes);
    QFETCH(QStringList, expected);
    EMBER_REQUIRE_TESTDATA(path, vocabFile(QStringLiteral("qwen2")));
    const Tokenizer& tokenizer = cachedTokenizer(path);
    std::vector<TokenId> ids;
    for (char b : bytes) {
      const auto id = tokenizer.findToken(byte_unicode::encodeByte(static_cast<uint8_t>(b)));
      QVERIFY(id.has_value());
      ids.push_back(*id);
    }
    QCOMPARE(streamPieces(tokenizer, ids), expected);
    QCOMPARE(QString::fromStdString(tokenizer.decode(ids)), expected.join(QString()));
  }

  // ED A0 80 is an encoded surrogate: three U+FFFD in all. (Python's decoder holds the A0 one
  // byte longer than needed; the detokenizer replaces as soon as no byte can complete it.)
  void replacesSurrogates() {
    EMBER_REQUIRE_TESTDATA(path, vocabFile(QStringLiteral("qwen2")));
    const Tokenizer& tokenizer = cachedTokenizer(path);
    std::vector<TokenId> ids;
    for (uint8_t b : {0xED, 0xA0, 0x80}) ids.push_back(*tokenizer.findToken(byte_unicode::encodeByte(b)));
    QCOMPARE(streamPieces(tokenizer, ids).join(QString()), QStringLiteral("\uFFFD\uFFFD\uFFFD"));
  }

  void rendersControlTokensOnlyWhenAsked() {
    EMBER_REQUIRE_TESTDATA(path, vocabFile(QStringLiteral("qwen2")));
    const Tokenizer& tokenizer = cachedTokenizer(path);
    const std::vector<TokenId> ids = tokenizer.encode("<|im_start|>user\nHi<|im_end|>", true);
    QCOMPARE(QString::fromStdString(tokenizer.decode(ids, false)), QStringLiteral("user\nHi"));
    QCOMPARE(QString::fromStdString(tokenizer.decode(ids, true)),
             QStringLiteral("<|im_start|>user\nHi<|im_end|>"));
  }

  void dropsTheDummyPrefixOnce_data() {
    QTest::addColumn<QList<int>>("ids");
    QTest::addColumn<QStringList>("expected");
    QTest::newRow("first word") << QList<int>{1, 2, 4} << QStringList{"Hello", " world", "!", ""};
    QTest::newRow("after BOS") << QList<int>{0, 1, 2} << QStringList{"", "Hello", " world", ""};
    QTest::newRow("lone space piece first") << QList<int>{3, 1} << QStringList{"", " Hello", ""};
  }
  void dropsTheDummyPrefixOnce() {
    QFETCH(QList<int>, ids);
    QFETCH(QStringList, expected);
    const TinySentencePiece tokenizer;
    QCOMPARE(streamPieces(tokenizer, std::vector<TokenId>(ids.begin(), ids.end())), expected);
  }

  void streamsSentencePieceVectors_data() {
    QTest::addColumn<int>("index");
    for (int i = 0; i < 46; ++i) QTest::addRow("llama-spm/%02d", i) << i;
  }
  void streamsSentencePieceVectors() {
    QFETCH(int, index);
    EMBER_REQUIRE_TESTDATA(path, vocabFile(QStringLiteral("llama-spm")));
    const auto cases = readVocabCases(path);
    QVERIFY(static_cast<size_t>(index) < cases.size());
    const Tokenizer& tokenizer = cachedTokenizer(path);
    QVERIFY(tokenizer.stripsLeadingSpace());
    std::string streamed;
    for (const QString& piece : streamPieces(tokenizer, cases[static_cast<size_t>(index)].ids)) {
      QVERIFY(utf8::isValid(piece.toStdString()));
      streamed += piece.toStdString();
    }
    QCOMPARE(QByteArray::fromStdString(streamed),
             QByteArray::fromStdString(cases[static_cast<size_t>(index)].text));
  }

  void rejectsIdsOutsideTheVocabulary() {
    const TinySentencePiece tokenizer;
    IncrementalDetokenizer detokenizer(tokenizer);
    QVERIFY_THROWS_EXCEPTION(Error, detokenizer.push(5));
    QVERIFY_THROWS_EXCEPTION(Error, detokenizer.push(-1));
  }
};

QTEST_APPLESS_MAIN(TestDetokenizer)
#include "test_detokenizer.moc"
