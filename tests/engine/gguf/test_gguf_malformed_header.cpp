// Malformed GGUF headers and metadata, each built byte by byte in code (RELIABILITY.md, "Model
// files" 1-3, 7-8). The expected offsets follow the GGUF layout: magic at 0, version at 4,
// tensor count at 8, metadata count at 16, first key/value at 24; later offsets are the
// encoder's size just before it wrote the offending field.
#include <QtTest>
#include <random>

#include "gguf/gguf_encoder.h"
#include "gguf_test_support.h"

using ember::gguf::GgufEncoder;
using ember::gguf::Value;
using ember::gguf::ValueType;

namespace {

constexpr uint64_t kMax = UINT64_MAX;

uint32_t typeId(ValueType type) {
  return static_cast<uint32_t>(type);
}

QByteArray image(const GgufEncoder& e) {
  return ember::test::toQByteArray(e.bytes());
}

// A v3 header announcing `count` metadata entries and no tensors.
GgufEncoder withEntries(uint64_t count) {
  GgufEncoder e;
  e.header(3, 0, count);
  return e;
}

}  // namespace

class TestGgufMalformedHeader : public QObject {
  Q_OBJECT

 private:
  void row(const char* name, const GgufEncoder& e, quint64 offset, const QString& phrase) {
    QTest::newRow(name) << image(e) << offset << phrase;
  }

 private slots:
  void rejects_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<quint64>("offset");
    QTest::addColumn<QString>("phrase");

    // 1. Empty and truncated headers.
    QTest::newRow("empty file") << QByteArray() << quint64(0) << "the file is empty";
    QTest::newRow("truncated magic")
        << QByteArray("GGU") << quint64(0) << "expected the magic \"GGUF\" (4 bytes) but only 3";
    QTest::newRow("truncated version") << QByteArray("GGUF\x03\x00", 6) << quint64(4)
                                       << "expected the GGUF version (4 bytes) but only 2";
    QTest::newRow("truncated tensor count") << image(GgufEncoder().header(3, 0, 0)).left(12)
                                            << quint64(8) << "expected the tensor count";
    QTest::newRow("truncated metadata count") << image(GgufEncoder().header(3, 0, 0)).left(20)
                                              << quint64(16) << "expected the metadata count";
    // 2. Wrong magic, unsupported versions.
    QTest::newRow("wrong magic") << image(GgufEncoder().raw("GGML").u32(3).u64(0).u64(0))
                                 << quint64(0)
                                 << "wrong magic 0x47474d4c (\"GGML\") (expected \"GGUF\")";
    row("version 1", GgufEncoder().header(1, 0, 0), 4, "GGUF version 1 is not supported");
    row("version 0", GgufEncoder().header(0, 0, 0), 4, "GGUF version 0 is not supported");
    row("future version 4", GgufEncoder().header(4, 0, 0), 4,
        "GGUF version 4 is not supported (expected version 2 or 3)");
    row("version 0xFFFFFFFF", GgufEncoder().header(0xFFFFFFFFu, 0, 0), 4,
        "GGUF version 4294967295 is not supported");
    row("big-endian version 3", GgufEncoder().header(0x03000000u, 0, 0), 4, "big-endian");
    // 3. Absurd counts, rejected before anything is allocated.
    row("metadata count 2^64-1", withEntries(kMax), 16,
        "metadata count 18446744073709551615 is larger than the file could hold (expected at most "
        "0)");
    row("tensor count 2^64-1", GgufEncoder().header(3, kMax, 0).raw(std::string(66, '\0')), 8,
        "tensor count 18446744073709551615 is larger than the file could hold (expected at most "
        "2)");

    // 1. Truncation inside the metadata.
    {
      GgufEncoder e = withEntries(2);  // one entry of 41 bytes: room for two minimal ones
      e.keyValue("general.architecture", Value::makeString("x"));
      row("second entry missing", e, 24 + 41, "expected a metadata key length (8 bytes)");
    }
    row("truncated key", withEntries(1).u64(20).raw("general.arch"), 24,
        "metadata key length 20 is larger than the rest of the file (expected at most 12 bytes)");
    row("truncated value type", withEntries(1).string("some.key").u16(4), 24 + 16,
        "expected metadata value type (4 bytes) but only 2");
    row("truncated uint32 value",
        withEntries(1).string("some.key").u32(typeId(ValueType::UInt32)).u16(7), 24 + 16 + 4,
        "expected a uint32 value (4 bytes) but only 2");
    row("truncated float64 value",
        withEntries(1).string("some.key").u32(typeId(ValueType::Float64)).u32(0), 24 + 16 + 4,
        "expected a float64 value (8 bytes) but only 4");
    row("truncated string value",
        withEntries(1).string("some.key").u32(typeId(ValueType::String)).u64(10).raw("abc"),
        24 + 16 + 4,
        "string value length 10 is larger than the rest of the file (expected at most 3 bytes)");
    {
      GgufEncoder e = withEntries(1);
      e.string("tokenizer.tokens")
          .u32(typeId(ValueType::Array))
          .u32(typeId(ValueType::String))
          .u64(2);
      e.string("ab");
      const quint64 at = e.size();
      e.u64(5).raw("x");
      row("truncated inside an array of strings", e, at, "string value length 5 is larger than");
    }
    // 3. Lengths near 2^64 (a naive position + length would wrap around).
    row("key length 2^64-1", withEntries(1).u64(kMax).raw(std::string(8, 'k')), 24,
        "metadata key length 18446744073709551615 is larger than the rest of the file");
    row("string length 2^64-1",
        withEntries(1).string("some.key").u32(typeId(ValueType::String)).u64(kMax).raw("abc"),
        24 + 16 + 4,
        "string value length 18446744073709551615 is larger than the rest of the file");
    row("string length 2^64-8",
        withEntries(1).string("some.key").u32(typeId(ValueType::String)).u64(kMax - 7).raw("abc"),
        24 + 16 + 4,
        "string value length 18446744073709551608 is larger than the rest of the file");
    row("array length 2^64-1",
        withEntries(1)
            .string("some.key")
            .u32(typeId(ValueType::Array))
            .u32(typeId(ValueType::UInt8))
            .u64(kMax)
            .u8(1),
        24 + 16 + 4 + 4,
        "array length 18446744073709551615 is larger than the file could hold (expected at most 1 "
        "uint8 elements)");
    row("array length 2^61 of uint64 (bytes overflow)",
        withEntries(1)
            .string("some.key")
            .u32(typeId(ValueType::Array))
            .u32(typeId(ValueType::UInt64))
            .u64(uint64_t{1} << 61)
            .u64(1),
        24 + 16 + 4 + 4,
        "array length 2305843009213693952 is larger than the file could hold (expected at most 1 "
        "uint64 elements)");
    row("array of strings length 2^64-2",
        withEntries(1)
            .string("some.key")
            .u32(typeId(ValueType::Array))
            .u32(typeId(ValueType::String))
            .u64(kMax - 1)
            .string("a"),
        24 + 16 + 4 + 4, "array length 18446744073709551614 is larger than the file could hold");

    // Invalid value types and values.
    row("value type 13", withEntries(1).string("some.key").u32(13).u32(0), 24 + 16,
        "unknown metadata value type id 13 (expected 0 to 12) (in the value of 'some.key')");
    row("value type 2^32-1", withEntries(1).string("some.key").u32(0xFFFFFFFFu).u32(0), 24 + 16,
        "unknown metadata value type id 4294967295");
    row("array element type 13",
        withEntries(1).string("some.key").u32(typeId(ValueType::Array)).u32(13).u64(0), 24 + 16 + 4,
        "unknown array element type id 13");
    row("bool value 2",
        withEntries(1).string("some.key").u32(typeId(ValueType::Bool)).u8(2).raw("pad"),
        24 + 16 + 4, "bool value 2 is neither 0 nor 1");
    {
      // Nine arrays, each holding the next: the ninth starts 8 array headers after the first.
      GgufEncoder e = withEntries(1);
      e.string("deep").u32(typeId(ValueType::Array));
      const quint64 first = e.size();
      for (int level = 1; level <= 8; ++level) e.u32(typeId(ValueType::Array)).u64(1);
      e.u32(typeId(ValueType::UInt8)).u64(0);
      row("arrays nested 9 deep", e, first + 8 * 12,
          "arrays nested 9 levels deep (expected at most 8)");
    }

    // 8. Duplicate and empty keys.
    {
      GgufEncoder e = withEntries(2);
      e.keyValue("general.name", Value::makeString("a"));
      const quint64 second = e.size();
      e.keyValue("general.name", Value::makeString("b"));
      row("duplicate key", e, second, "duplicate metadata key 'general.name'");
    }
    row("empty key", withEntries(1).string("").u32(typeId(ValueType::UInt32)).u32(1), 24,
        "metadata key 0 is empty");

    // 7. Alignment of 0, 13, or stored with the wrong type (offset: the value).
    const quint64 alignmentValueAt = 24 + 8 + 17 + 4;
    row("alignment 0", withEntries(1).keyValue("general.alignment", Value::makeUInt32(0)),
        alignmentValueAt, "general.alignment is 0 (expected a non-zero power of two)");
    row("alignment 13", withEntries(1).keyValue("general.alignment", Value::makeUInt32(13)),
        alignmentValueAt, "general.alignment is 13 (expected a non-zero power of two)");
    row("alignment as uint64", withEntries(1).keyValue("general.alignment", Value::makeUInt64(32)),
        alignmentValueAt, "general.alignment is stored as uint64 (expected uint32)");
    row("alignment as string",
        withEntries(1).keyValue("general.alignment", Value::makeString("32")), alignmentValueAt,
        "general.alignment is stored as string (expected uint32)");
    row("alignment as int32", withEntries(1).keyValue("general.alignment", Value::makeInt32(32)),
        alignmentValueAt, "general.alignment is stored as int32 (expected uint32)");
  }

  void rejects() {
    QFETCH(QByteArray, bytes);
    QFETCH(quint64, offset);
    QFETCH(QString, phrase);
    ember::test::expectRejected(bytes, offset, phrase);
  }

  void everyTruncationOfAValidFileIsRejected() {
    // Cutting a valid file (metadata of several kinds, a tensor) at any byte before its end
    // must give a GgufError, never a crash or an accepted file.
    const std::vector<uint8_t> full = smallValidFile();
    QVERIFY(ember::gguf::GgufFile::fromBuffer(full, "full.gguf") != nullptr);
    for (size_t cut = 0; cut < full.size(); ++cut) {
      std::vector<uint8_t> part(full.begin(), full.begin() + qsizetype(cut));
      QVERIFY_THROWS_EXCEPTION(ember::gguf::GgufError,
                               ember::gguf::GgufFile::fromBuffer(std::move(part), "cut.gguf"));
    }
  }

  void randomCorruptionsAreAcceptedOrRejectedCleanly() {
    // Overwrite 1 to 4 bytes of a valid file with random values (fixed seed, so every run checks
    // the same files): each result either parses or throws GgufError; nothing else escapes,
    // and under ASan/UBSan (EMBER_SANITIZE) nothing reads outside the image.
    const std::vector<uint8_t> full = smallValidFile();
    std::mt19937 random(20240229);
    int rejected = 0;
    for (int round = 0; round < 4000; ++round) {
      std::vector<uint8_t> corrupt = full;
      const int changes = 1 + int(random() % 4);
      for (int i = 0; i < changes; ++i) {
        const size_t at = random() % corrupt.size();
        corrupt[at] = (random() % 3 == 0) ? 0xff : static_cast<uint8_t>(random());
      }
      try {
        ember::gguf::GgufFile::fromBuffer(std::move(corrupt), "corrupt.gguf");
      } catch (const ember::gguf::GgufError&) {
        ++rejected;
      }
    }
    QVERIFY(rejected > 0);
  }

 private:
  static std::vector<uint8_t> smallValidFile() {
    GgufEncoder e;
    e.header(3, 1, 3);
    e.keyValue("general.architecture", Value::makeString("llama"));
    e.keyValue("tokens", Value::makeStringArray({"a", "bc", ""}));
    e.keyValue("nested",
               Value::makeArray(ValueType::Array,
                                {Value::makeArray(ValueType::Int16, {Value::makeInt16(-1)})}));
    const uint64_t dims[] = {8};
    e.tensorInfo("w", dims, 0, 0).padTo(32).raw(std::string(32, '\x01'));
    return e.take();
  }
};

QTEST_APPLESS_MAIN(TestGgufMalformedHeader)
#include "test_gguf_malformed_header.moc"
