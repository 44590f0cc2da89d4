// Long metadata arrays (tokenizer vocabularies, scores, token types) are kept in their encoded
// form after parsing. Reference: the values written by GgufWriter, whose encoding the GGUF
// specification fixes (test_gguf_reader checks it byte for byte against gguf-py), and offsets
// counted by hand from that encoding.
#include <QtTest>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "gguf/metadata_parser.h"
#include "gguf_test_support.h"

using ember::gguf::Array;
using ember::gguf::GgufFile;
using ember::gguf::GgufWriter;
using ember::gguf::Value;
using ember::gguf::ValueType;

namespace {

// Item i of an array of `type`, spread over the type's range (extremes included).
Value itemOf(ValueType type, size_t i) {
  const auto k = static_cast<int64_t>(i);
  switch (type) {
    case ValueType::UInt8: return Value::makeUInt8(static_cast<uint8_t>(255 - i % 256));
    case ValueType::Int8: return Value::makeInt8(static_cast<int8_t>(k % 256 - 128));
    case ValueType::UInt16: return Value::makeUInt16(static_cast<uint16_t>(65535 - k * 7));
    case ValueType::Int16: return Value::makeInt16(static_cast<int16_t>(k * 37 - 32768));
    case ValueType::UInt32: return Value::makeUInt32(UINT32_MAX - static_cast<uint32_t>(k));
    case ValueType::Int32: return Value::makeInt32(INT32_MIN + static_cast<int32_t>(k * 3));
    case ValueType::UInt64: return Value::makeUInt64(UINT64_MAX - static_cast<uint64_t>(k));
    case ValueType::Int64: return Value::makeInt64(INT64_MIN + k);
    case ValueType::Float32: return Value::makeFloat32(-1e-7f * float(k) - 3.5f);
    case ValueType::Float64: return Value::makeFloat64(1e300 / double(k + 1));
    case ValueType::Bool: return Value::makeBool(i % 3 == 0);
    case ValueType::String:
      // Empty, short and long (heap-allocated) texts, some with NUL bytes.
      return Value::makeString(i % 5 == 0 ? std::string() : std::string("\xe2\x96\x81") +
                                   std::string(i % 40, char('a' + i % 26)) + std::string(1, '\0'));
    default: break;
  }
  return {};
}

Value arrayOf(ValueType type, size_t count) {
  std::vector<Value> items;
  for (size_t i = 0; i < count; ++i) items.push_back(itemOf(type, i));
  return Value::makeArray(type, std::move(items));
}

std::unique_ptr<GgufFile> fileWith(const Value& value) {
  GgufWriter writer;
  writer.addString("before", "x").add("key", value).addUInt32("after", 9);
  return GgufFile::fromBuffer(writer.bytes(), "long-arrays.gguf");
}

}  // namespace

class TestGgufLongArrays : public QObject {
  Q_OBJECT

 private slots:
  void readBackEqual_data() {
    QTest::addColumn<int>("type");
    QTest::addColumn<int>("count");
    QTest::addColumn<bool>("packed");
    const size_t threshold = ember::gguf::kPackedArrayItems;
    for (ValueType type :
         {ValueType::UInt8, ValueType::Int8, ValueType::UInt16, ValueType::Int16,
          ValueType::UInt32, ValueType::Int32, ValueType::UInt64, ValueType::Int64,
          ValueType::Float32, ValueType::Float64, ValueType::String, ValueType::Bool}) {
      for (size_t count : {threshold - 1, threshold, size_t(5000)}) {
        // Bools are validated item by item (0 or 1), so they are never packed.
        const bool packed = count >= threshold && type != ValueType::Bool;
        QTest::addRow("%s x%zu", ember::gguf::valueTypeName(type).data(), count)
            << int(type) << int(count) << packed;
      }
    }
  }

  void readBackEqual() {
    QFETCH(int, type);
    QFETCH(int, count);
    QFETCH(bool, packed);
    const Value written = arrayOf(ValueType(type), size_t(count));
    const auto file = fileWith(written);
    const Array& read = file->get("key").asArray();
    QCOMPARE(bool(read.packed), packed);
    QCOMPARE(read.items.empty(), packed);
    QCOMPARE(read.size(), size_t(count));
    QCOMPARE(read.elementType, ValueType(type));
    QVERIFY(file->get("key") == written);
    for (size_t i = 0; i < size_t(count); ++i) {
      const Value item = read.at(i);
      QCOMPARE(item.type, ValueType(type));
      if (!(item == written.asArray().items[i])) QFAIL(qPrintable(QString("item %1").arg(i)));
    }
    QVERIFY_THROWS_EXCEPTION(ember::Error, read.at(size_t(count)));
    QCOMPARE(file->get("after").asUInt(), uint64_t{9});
  }

  void typedGettersSeePackedItems() {
    const size_t n = 3000;
    GgufWriter writer;
    writer.add("strings", arrayOf(ValueType::String, n))
        .add("floats", arrayOf(ValueType::Float32, n))
        .add("ints", arrayOf(ValueType::Int32, n))
        .add("huge", arrayOf(ValueType::UInt64, n));
    const auto file = GgufFile::fromBuffer(writer.bytes(), "getters.gguf");
    const std::vector<std::string> strings = file->getStringArray("strings");
    const std::vector<float> floats = file->getFloatArray("floats");
    const std::vector<int64_t> ints = file->getIntArray("ints");
    QCOMPARE(strings.size(), n);
    QCOMPARE(floats.size(), n);
    QCOMPARE(ints.size(), n);
    for (size_t i = 0; i < n; ++i) {
      QCOMPARE(strings[i], itemOf(ValueType::String, i).asString());
      QCOMPARE(file->get("strings").asArray().stringAt(i), std::string_view(strings[i]));
      QCOMPARE(floats[i], float(itemOf(ValueType::Float32, i).asFloat()));
      QCOMPARE(ints[i], itemOf(ValueType::Int32, i).asInt());
    }
    // UINT64_MAX - i does not fit int64: the same error as for an unpacked array.
    QVERIFY_THROWS_EXCEPTION(ember::gguf::GgufError, file->getIntArray("huge"));
    QVERIFY_THROWS_EXCEPTION(ember::Error, file->get("floats").asArray().stringAt(0));
  }

  // A string cut off inside a long array is reported where its length field is, as before.
  void truncatedLongStringArrayIsRejected() {
    const size_t n = 2000;
    const Value strings = arrayOf(ValueType::String, n);
    GgufWriter writer;
    writer.add("key", strings);
    std::vector<uint8_t> image = writer.bytes();
    // v3 header (4 magic + 4 version + 8 tensor count + 8 entry count) = 24, the key (8 + 3),
    // the value type (4), the element type (4) and the count (8): the items start at byte 51.
    uint64_t lastLengthAt = 51;
    for (size_t i = 0; i + 1 < n; ++i) lastLengthAt += 8 + strings.asArray().items[i].asString().size();
    const size_t lastSize = strings.asArray().items[n - 1].asString().size();
    QVERIFY(lastSize > 1);
    image.resize(lastLengthAt + 8 + lastSize - 1);
    ember::test::expectRejected(ember::test::toQByteArray(image), lastLengthAt,
                                "is larger than the rest of the file");
  }
};

QTEST_GUILESS_MAIN(TestGgufLongArrays)
#include "test_gguf_long_arrays.moc"
