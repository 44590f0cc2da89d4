// Malformed GGUF tensor tables and data sections, each built byte by byte in code (RELIABILITY.md,
// "Model files" 1 and 4-8). Expected offsets are the encoder's size just before it wrote the
// offending field of the tensor info (name, dimension count, a dimension, type, or data offset).
#include <QtTest>
#include <optional>

#include "gguf/gguf_encoder.h"
#include "gguf_test_support.h"

using ember::gguf::GgufEncoder;
using ember::gguf::Value;

namespace {

constexpr uint64_t kMax = UINT64_MAX;

struct TensorSpec {
  std::string name = "w";
  std::vector<uint64_t> shape{8};  // 8 F32 elements: 32 bytes
  uint32_t type = 0;
  uint64_t offset = 0;
};

// Where each field of each tensor info landed, and the finished image.
struct Built {
  GgufEncoder encoder;
  std::vector<quint64> entryAt, dimCountAt, firstDimAt, typeAt, offsetAt;
  quint64 tableEnd = 0;
  QByteArray bytes() const { return ember::test::toQByteArray(encoder.bytes()); }
};

// A v3 file with the given tensor infos, padded to the alignment, then `dataBytes` bytes of data.
Built build(const std::vector<TensorSpec>& specs, uint64_t dataBytes,
            std::optional<uint32_t> alignment = std::nullopt) {
  Built b;
  GgufEncoder& e = b.encoder;
  e.header(3, specs.size(), alignment ? 1 : 0);
  if (alignment) e.keyValue("general.alignment", Value::makeUInt32(*alignment));
  for (const TensorSpec& t : specs) {
    b.entryAt.push_back(e.size());
    e.string(t.name);
    b.dimCountAt.push_back(e.size());
    e.u32(static_cast<uint32_t>(t.shape.size()));
    b.firstDimAt.push_back(e.size());
    for (uint64_t dim : t.shape) e.u64(dim);
    b.typeAt.push_back(e.size());
    e.u32(t.type);
    b.offsetAt.push_back(e.size());
    e.u64(t.offset);
  }
  b.tableEnd = e.size();
  e.padTo(alignment.value_or(32));
  e.raw(std::string(dataBytes, '\x5a'));
  return b;
}

}  // namespace

class TestGgufMalformedTensors : public QObject {
  Q_OBJECT

 private slots:
  void validBaselineIsAccepted() {
    const Built b = build({{"w", {8}, 0, 0}, {"v", {4, 2}, 1, 32}}, 64);
    const auto file = ember::gguf::GgufFile::fromBuffer(ember::test::toBytes(b.bytes()), "ok.gguf");
    QCOMPARE(file->tensors().size(), size_t{2});
    QCOMPARE(file->tensors()[1].byteSize, uint64_t{16});
  }

  void rejects_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<quint64>("offset");
    QTest::addColumn<QString>("phrase");
    const auto add = [](const char* name, const QByteArray& bytes, quint64 offset,
                        const QString& phrase) {
      QTest::newRow(name) << bytes << offset << phrase;
    };

    // 1. Truncation inside the tensor table, before the data section, and in the data.
    {
      const Built b = build({{"token_embd.weight", {8}, 0, 0}, {"output.weight", {8}, 0, 32}}, 64);
      add("truncated in a dimension", b.bytes().left(qsizetype(b.firstDimAt[1]) + 3),
          b.firstDimAt[1],
          "expected dimension 0 of tensor 'output.weight' (8 bytes) but only 3 bytes remain");
      add("truncated in a data offset", b.bytes().left(qsizetype(b.offsetAt[1]) + 7), b.offsetAt[1],
          "expected the data offset of tensor 'output.weight' (8 bytes) but only 7");
      add("truncated before the data section", b.bytes().left(qsizetype(b.tableEnd)), b.tableEnd,
          "the tensor data section should start at byte");
      add("one byte short of the last tensor's data", b.bytes().chopped(1), b.offsetAt[1],
          "data of tensor 'output.weight' (32 bytes from byte");
    }
    add(
        "tensor name length 2^64-1",
        [] {
          GgufEncoder e;
          e.header(3, 1, 0).u64(kMax).raw(std::string(40, 'x'));
          return ember::test::toQByteArray(e.bytes());
        }(),
        24, "the name of tensor 0 length 18446744073709551615 is larger than the rest of the file");

    // 4. Dimensions.
    {
      const Built b = build({{"w", {1, 1, 1, 1, 8}, 0, 0}}, 32);
      add("5 dimensions", b.bytes(), b.dimCountAt[0],
          "tensor 'w' has 5 dimensions (expected 1 to 4)");
    }
    {
      const Built b = build({{"w", {}, 0, 0}}, 32);
      add("0 dimensions", b.bytes(), b.dimCountAt[0],
          "tensor 'w' has 0 dimensions (expected 1 to 4)");
    }
    {
      Built b = build({{"w", {8}, 0, 0}}, 32);
      QByteArray bytes = b.bytes();
      bytes.replace(qsizetype(b.dimCountAt[0]), 4, QByteArray(4, '\xff'));
      add("2^32-1 dimensions", bytes, b.dimCountAt[0], "tensor 'w' has 4294967295 dimensions");
    }
    {
      const Built b = build({{"w", {8, 0}, 0, 0}}, 32);
      add("a dimension of 0", b.bytes(), b.firstDimAt[0] + 8,
          "dimension 1 of tensor 'w' is 0 (expected 1 to");
    }
    {
      const Built b = build({{"w", {uint64_t{1} << 63}, 0, 0}}, 32);
      add("a dimension of 2^63 (negative as int64)", b.bytes(), b.firstDimAt[0],
          "dimension 0 of tensor 'w' is 9223372036854775808 (expected 1 to 9223372036854775807)");
    }
    {
      const Built b = build({{"w", {uint64_t{1} << 32, uint64_t{1} << 32}, 0, 0}}, 32);
      add("element count overflows 64 bits", b.bytes(), b.dimCountAt[0],
          "the element count of tensor 'w' overflows");
    }
    {
      const Built b =
          build({{"w", {uint64_t{1} << 21, uint64_t{1} << 21, uint64_t{1} << 21}, 0, 0}}, 32);
      add("element count of 2^63", b.bytes(), b.dimCountAt[0],
          "the element count of tensor 'w' overflows");
    }

    // 6. Unknown and negative tensor types.
    {
      const Built b = build({{"w", {8}, 4, 0}}, 32);
      add("type id 4 (retired Q4_2)", b.bytes(), b.typeAt[0],
          "tensor 'w' has unknown ggml type id 4");
    }
    {
      const Built b = build({{"w", {8}, 1000, 0}}, 32);
      add("type id 1000", b.bytes(), b.typeAt[0], "unknown ggml type id 1000");
    }
    {
      const Built b = build({{"w", {8}, 0xFFFFFFFFu, 0}}, 32);
      add("type id -1", b.bytes(), b.typeAt[0], "unknown ggml type id 4294967295 (as signed: -1");
    }
    {
      const Built b = build({{"w", {32}, 12, 0}}, 144);  // Q4_K blocks hold 256 elements
      add("row not a whole number of blocks", b.bytes(), b.typeAt[0],
          "rows of 32 elements (expected a multiple of its block size 256)");
    }

    // 5. Offsets: misaligned, past the end, overflowing.
    {
      const Built b = build({{"w", {8}, 0, 4}}, 64);
      add("misaligned offset", b.bytes(), b.offsetAt[0],
          "data offset 4 of tensor 'w' is not a multiple of the alignment (expected a multiple of "
          "32)");
    }
    {
      const Built b = build({{"w", {8}, 0, 32}}, 64, 64);
      add("offset misaligned for general.alignment 64", b.bytes(), b.offsetAt[0],
          "(expected a multiple of 64)");
    }
    {
      const Built b = build({{"w", {8}, 0, 1024}}, 32);
      add("offset past the end of the file", b.bytes(), b.offsetAt[0],
          "data offset 1024 of tensor 'w' is past the end of the file");
    }
    {
      const Built b = build({{"w", {8}, 0, 32}}, 32);
      add("offset + size past the end of the file", b.bytes(), b.offsetAt[0],
          "data of tensor 'w' (32 bytes from byte");
    }
    {
      const Built b = build({{"w", {8}, 0, kMax - 31}}, 32);
      add("offset 2^64-32 (start overflows)", b.bytes(), b.offsetAt[0],
          "data offset 18446744073709551584 of tensor 'w' is past the end of the file");
    }

    // 8. Duplicate and empty names.
    {
      const Built b = build({{"w", {8}, 0, 0}, {"w", {8}, 0, 32}}, 64);
      add("duplicate tensor name", b.bytes(), b.entryAt[1], "duplicate tensor name 'w'");
    }
    {
      const Built b = build({{"", {8}, 0, 0}}, 32);
      add("empty tensor name", b.bytes(), b.entryAt[0], "tensor 0 has an empty name");
    }
  }

  void rejects() {
    QFETCH(QByteArray, bytes);
    QFETCH(quint64, offset);
    QFETCH(QString, phrase);
    ember::test::expectRejected(bytes, offset, phrase);
  }
};

QTEST_APPLESS_MAIN(TestGgufMalformedTensors)
#include "test_gguf_malformed_tensors.moc"
