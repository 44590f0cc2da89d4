// The GGUF reader and writer against a file written by the reference implementation (PyPI gguf
// 0.19.0, see golden_gguf_py.h), round trips of every value type through GgufWriter in versions
// 2 and 3, alignment handling, tensor views, and the ggml type table.
#include <QTemporaryDir>
#include <QtTest>
#include <cstring>

#include "ember/error.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "gguf_test_support.h"
#include "golden_gguf_py.h"

using namespace ember::gguf;
using ember::test::sequentialBytes;
using ember::test::toBytes;

Q_DECLARE_METATYPE(ember::gguf::Value)

namespace {

std::vector<float> floatsOf(std::span<const uint8_t> bytes) {
  std::vector<float> out(bytes.size() / sizeof(float));
  std::memcpy(out.data(), bytes.data(), out.size() * sizeof(float));
  return out;
}

std::vector<uint8_t> floatBytes(const std::vector<float>& values) {
  std::vector<uint8_t> out(values.size() * sizeof(float));
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

// The same content as the gguf-py script in golden_gguf_py.h, through our writer.
GgufWriter goldenContentWriter() {
  GgufWriter w(3);
  w.addString("general.architecture", "testarch");
  w.addUInt8("t.u8", 200).addInt8("t.i8", -100).addUInt16("t.u16", 60000).addInt16("t.i16", -30000);
  w.addUInt32("t.u32", 4000000000u).addInt32("t.i32", -2000000000).addFloat32("t.f32", 1.5f);
  w.addBool("t.bool", true).addString("t.str", "h\xc3\xa9llo\nworld");
  w.addUInt64("t.u64", UINT64_MAX).addInt64("t.i64", INT64_MIN).addFloat64("t.f64", -0.1);
  w.addStringArray("t.arr.str", {"a", "", "\xc3\xbc"});
  w.addInt32Array("t.arr.i32", {1, -2, 3});
  w.addFloat32Array("t.arr.f32", {0.5f, -0.25f});
  w.addArray("t.arr.nested", ValueType::Array,
             {Value::makeArray(ValueType::Int32, {Value::makeInt32(1), Value::makeInt32(2)}),
              Value::makeArray(ValueType::Int32, {Value::makeInt32(3)})});
  w.addTensor("a.f32", GgmlType::F32, {3, 2}, floatBytes({1, 2, 3, 4, 5, 6}));
  w.addTensor("b.q8", GgmlType::Q8_0, {32, 2}, sequentialBytes(68));
  return w;
}

}  // namespace

class TestGgufReader : public QObject {
  Q_OBJECT

 private slots:
  void readsFileWrittenByGgufPy() {
    const auto file = GgufFile::fromBuffer(toBytes(ember::test::goldenGgufFromGgufPy()), "golden");
    QCOMPARE(file->version(), 3u);
    QCOMPARE(file->metadata().size(), size_t{17});
    QCOMPARE(file->architecture(), std::string("testarch"));
    QCOMPARE(file->get("t.u8"), Value::makeUInt8(200));
    QCOMPARE(file->get("t.i8"), Value::makeInt8(-100));
    QCOMPARE(file->get("t.u16"), Value::makeUInt16(60000));
    QCOMPARE(file->get("t.i16"), Value::makeInt16(-30000));
    QCOMPARE(file->get("t.u32"), Value::makeUInt32(4000000000u));
    QCOMPARE(file->get("t.i32"), Value::makeInt32(-2000000000));
    QCOMPARE(file->get("t.f32"), Value::makeFloat32(1.5f));
    QCOMPARE(file->findBool("t.bool"), std::optional<bool>(true));
    QCOMPARE(file->getString("t.str"), std::string("h\xc3\xa9llo\nworld"));
    QCOMPARE(file->get("t.u64").asUInt(), UINT64_MAX);
    QCOMPARE(file->findInt("t.i64"), std::optional<int64_t>(INT64_MIN));
    QCOMPARE(file->get("t.f64"), Value::makeFloat64(-0.1));
    QCOMPARE(file->getStringArray("t.arr.str"), (std::vector<std::string>{"a", "", "\xc3\xbc"}));
    QCOMPARE(file->getIntArray("t.arr.i32"), (std::vector<int64_t>{1, -2, 3}));
    QCOMPARE(file->getFloatArray("t.arr.f32"), (std::vector<float>{0.5f, -0.25f}));
    const Array& nested = file->get("t.arr.nested").asArray();
    QCOMPARE(nested.elementType, ValueType::Array);
    QCOMPARE(nested.items.size(), size_t{2});
    QCOMPARE(nested.items[0].asArray().items.size(), size_t{2});
    QCOMPARE(nested.items[1].asArray().items[0].asInt(), int64_t{3});

    // Layout as gguf's GGUFReader reports it (golden_gguf_py.h).
    QCOMPARE(file->dataOffset(), uint64_t{672});
    QCOMPARE(file->fileSize(), uint64_t{800});
    QCOMPARE(file->tensors().size(), size_t{2});
    const TensorInfo* a = file->findTensor("a.f32");
    QVERIFY(a != nullptr);
    QCOMPARE(a->type, GgmlType::F32);
    QCOMPARE(a->shape, (std::vector<uint64_t>{3, 2}));
    QCOMPARE(a->offset, uint64_t{0});
    QCOMPARE(a->byteSize, uint64_t{24});
    QCOMPARE(floatsOf(a->data), (std::vector<float>{1, 2, 3, 4, 5, 6}));
    const TensorInfo* b = file->findTensor("b.q8");
    QVERIFY(b != nullptr);
    QCOMPARE(b->type, GgmlType::Q8_0);
    QCOMPARE(b->shape, (std::vector<uint64_t>{32, 2}));
    QCOMPARE(b->offset, uint64_t{32});
    QCOMPARE(b->elementCount, uint64_t{64});
    QCOMPARE(b->byteSize, uint64_t{68});
    QCOMPARE(std::vector<uint8_t>(b->data.begin(), b->data.end()), sequentialBytes(68));
    QVERIFY(file->findTensor("missing") == nullptr);
  }

  void writerMatchesGgufPyByteForByte() {
    const std::vector<uint8_t> ours = goldenContentWriter().bytes();
    QCOMPARE(ember::test::toQByteArray(ours), ember::test::goldenGgufFromGgufPy());
  }

  void roundTripsEveryValueType_data() {
    QTest::addColumn<uint32_t>("version");
    QTest::addColumn<Value>("value");
    const std::vector<std::pair<const char*, Value>> values = {
        {"uint8", Value::makeUInt8(255)},
        {"int8", Value::makeInt8(-128)},
        {"uint16", Value::makeUInt16(65535)},
        {"int16", Value::makeInt16(-32768)},
        {"uint32", Value::makeUInt32(UINT32_MAX)},
        {"int32", Value::makeInt32(INT32_MIN)},
        {"float32", Value::makeFloat32(-3.25e-7f)},
        {"bool false", Value::makeBool(false)},
        {"bool true", Value::makeBool(true)},
        {"string", Value::makeString(std::string("a\0b\xe2\x82\xac", 6))},
        {"empty string", Value::makeString("")},
        {"uint64", Value::makeUInt64(UINT64_MAX)},
        {"int64", Value::makeInt64(INT64_MIN)},
        {"float64", Value::makeFloat64(1e300)},
        {"empty array", Value::makeArray(ValueType::Float32, {})},
        {"array of strings", Value::makeStringArray({"<s>", "", "\xe2\x96\x81the"})},
        {"array of uint64", Value::makeArray(ValueType::UInt64, {Value::makeUInt64(1),
                                                                 Value::makeUInt64(UINT64_MAX)})},
        {"array of bools",
         Value::makeArray(ValueType::Bool, {Value::makeBool(true), Value::makeBool(false)})},
        {"array of arrays of strings",
         Value::makeArray(ValueType::Array,
                          {Value::makeStringArray({"x"}), Value::makeStringArray({})})},
    };
    for (uint32_t version : {2u, 3u})
      for (const auto& [name, value] : values)
        QTest::addRow("v%u %s", version, name) << version << value;
    // Eight levels of nesting is the deepest the reader accepts.
    Value deep = Value::makeArray(ValueType::UInt8, {Value::makeUInt8(7)});
    for (int level = 2; level <= 8; ++level) deep = Value::makeArray(ValueType::Array, {deep});
    QTest::addRow("v3 arrays nested 8 deep") << 3u << deep;
  }

  void roundTripsEveryValueType() {
    QFETCH(uint32_t, version);
    QFETCH(Value, value);
    GgufWriter writer(version);
    writer.addString("before", "x").add("key", value).addUInt32("after", 9);
    const auto file = GgufFile::fromBuffer(writer.bytes(), "roundtrip.gguf");
    QCOMPARE(file->version(), version);
    QCOMPARE(file->metadata().size(), size_t{3});
    QCOMPARE(file->metadata()[1].first, std::string("key"));
    QVERIFY(file->get("key") == value);
    QCOMPARE(file->get("after").asUInt(), uint64_t{9});
  }

  void placesTensorsAtAlignedOffsets_data() {
    QTest::addColumn<uint32_t>("alignment");
    QTest::addColumn<bool>("explicitKey");
    QTest::newRow("default 32") << 32u << false;
    QTest::newRow("1") << 1u << true;
    QTest::newRow("8") << 8u << true;
    QTest::newRow("64") << 64u << true;
    QTest::newRow("4096") << 4096u << true;
  }

  void placesTensorsAtAlignedOffsets() {
    QFETCH(uint32_t, alignment);
    QFETCH(bool, explicitKey);
    GgufWriter writer;
    if (explicitKey) writer.setAlignment(alignment);
    // 3 floats (12 bytes), then a Q4_0 row of 32 elements (18 bytes), then 5 F16s (10 bytes).
    writer.addTensor("first", GgmlType::F32, {3}, floatBytes({1.5f, 2.5f, 3.5f}));
    writer.addTensor("second", GgmlType::Q4_0, {32}, sequentialBytes(18, 100));
    writer.addTensor("third", GgmlType::F16, {5}, sequentialBytes(10, 200));
    const auto file = GgufFile::fromBuffer(writer.bytes(), "aligned.gguf");
    QCOMPARE(file->alignment(), uint64_t{alignment});
    QCOMPARE(file->dataOffset() % alignment, uint64_t{0});
    // Each tensor begins at the next multiple of the alignment after the previous one's end.
    const auto roundUp = [&](uint64_t n) { return (n + alignment - 1) / alignment * alignment; };
    const std::vector<uint64_t> expected = {0, roundUp(12), roundUp(roundUp(12) + 18)};
    const std::vector<uint64_t> sizes = {12, 18, 10};
    for (size_t i = 0; i < 3; ++i) {
      const TensorInfo& t = file->tensors()[i];
      QCOMPARE(t.offset, expected[i]);
      QCOMPARE(t.byteSize, sizes[i]);
      QCOMPARE(t.data.size(), sizes[i]);
      // Views into one image: pointer distance equals offset distance (no copies).
      QCOMPARE(static_cast<uint64_t>(t.data.data() - file->tensors()[0].data.data()), t.offset);
    }
    QCOMPARE(floatsOf(file->tensors()[0].data), (std::vector<float>{1.5f, 2.5f, 3.5f}));
    QCOMPARE(file->tensors()[1].data[0], uint8_t{100});
    QCOMPARE(file->tensors()[2].data[9], uint8_t{209});
  }

  void opensFileOnDiskThroughMmap() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = dir.filePath("disk.gguf").toStdString();
    goldenContentWriter().writeFile(path);
    const auto file = GgufFile::open(path);
    QCOMPARE(file->path(), path);
    QCOMPARE(file->fileSize(), uint64_t{800});
    QCOMPARE(floatsOf(file->findTensor("a.f32")->data), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  }

  void fileWithoutTensorsMayEndBeforePadding() {
    GgufWriter writer(2);
    writer.addString("general.architecture", "none");  // 24 + 8+20 + 4 + 8+4 = 68 bytes
    const std::vector<uint8_t> image = writer.bytes();
    QCOMPARE(image.size(), size_t{68});
    const auto file = GgufFile::fromBuffer(image, "vocab-only.gguf");
    QVERIFY(file->tensors().empty());
    QCOMPARE(file->dataOffset(), uint64_t{68});
  }

  void typedGettersRejectOtherTypes() {
    GgufWriter writer;
    writer.addString("s", "text").addFloat32("f", 0.5f).addStringArray("strings", {"a"});
    writer.addInt32Array("ints", {1}).addUInt64("huge", UINT64_MAX).addBool("b", true);
    const auto file = GgufFile::fromBuffer(writer.bytes(), "typed.gguf");
    QCOMPARE(file->findString("missing"), std::optional<std::string>());
    QCOMPARE(file->findInt("missing"), std::optional<int64_t>());
    QCOMPARE(file->findFloat("f"), std::optional<double>(0.5));
    QCOMPARE(file->getFloatArray("ints"), (std::vector<float>{1.0f}));
    QVERIFY_THROWS_EXCEPTION(GgufError, file->get("missing"));
    QVERIFY_THROWS_EXCEPTION(GgufError, file->findInt("s"));
    QVERIFY_THROWS_EXCEPTION(GgufError, file->findInt("huge"));  // does not fit int64
    QVERIFY_THROWS_EXCEPTION(GgufError, file->findBool("s"));
    QVERIFY_THROWS_EXCEPTION(GgufError, file->findString("f"));
    QVERIFY_THROWS_EXCEPTION(GgufError, file->getStringArray("ints"));
    QVERIFY_THROWS_EXCEPTION(GgufError, file->getIntArray("strings"));
    QVERIFY_THROWS_EXCEPTION(ember::Error, file->get("b").asString());
    try {
      file->getStringArray("ints");
    } catch (const GgufError& e) {
      const QString what = QString::fromStdString(e.what());
      QVERIFY2(what.contains("'ints' holds array of int32 (expected an array of strings)"),
               qPrintable(what));
    }
  }

  void writerRejectsInvalidInput() {
    GgufWriter writer;
    writer.addUInt32("k", 1);
    QVERIFY_THROWS_EXCEPTION(ember::Error, writer.addUInt32("k", 2));
    QVERIFY_THROWS_EXCEPTION(ember::Error, writer.setAlignment(13));
    QVERIFY_THROWS_EXCEPTION(ember::Error,
                             writer.addTensor("t", GgmlType::F32, {4}, sequentialBytes(15)));
    QVERIFY_THROWS_EXCEPTION(ember::Error,
                             writer.addTensor("t", GgmlType::Q4_0, {16}, sequentialBytes(9)));
    QVERIFY_THROWS_EXCEPTION(
        ember::Error, writer.addTensor("t", GgmlType::F32, {1, 1, 1, 1, 1}, sequentialBytes(4)));
    QVERIFY_THROWS_EXCEPTION(ember::Error, writer.addTensor("t", GgmlType::F32, {0}, {}));
    QVERIFY_THROWS_EXCEPTION(ember::Error, GgufWriter(1));
    QVERIFY_THROWS_EXCEPTION(ember::Error,
                             Value::makeArray(ValueType::Int32, {Value::makeUInt8(1)}));
  }

  // Block layouts from gguf 0.19.0's GGML_QUANT_SIZES (elements per block, bytes per block),
  // except Q8_1: gguf-py still lists 40 bytes, the layout of an older ggml; current ggml's
  // ggml-common.h asserts sizeof(block_q8_1) == 2 * sizeof(ggml_half) + QK8_1 = 36.
  void typeTraitsMatchReference_data() {
    QTest::addColumn<uint32_t>("id");
    QTest::addColumn<QString>("name");
    QTest::addColumn<uint32_t>("blockSize");
    QTest::addColumn<uint32_t>("typeSize");
    const struct {
      uint32_t id;
      const char* name;
      uint32_t block, size;
    } rows[] = {
        {0, "F32", 1, 4},         {1, "F16", 1, 2},         {2, "Q4_0", 32, 18},
        {3, "Q4_1", 32, 20},      {6, "Q5_0", 32, 22},      {7, "Q5_1", 32, 24},
        {8, "Q8_0", 32, 34},      {9, "Q8_1", 32, 36},      {10, "Q2_K", 256, 84},
        {11, "Q3_K", 256, 110},   {12, "Q4_K", 256, 144},   {13, "Q5_K", 256, 176},
        {14, "Q6_K", 256, 210},   {15, "Q8_K", 256, 292},   {16, "IQ2_XXS", 256, 66},
        {17, "IQ2_XS", 256, 74},  {18, "IQ3_XXS", 256, 98}, {19, "IQ1_S", 256, 50},
        {20, "IQ4_NL", 32, 18},   {21, "IQ3_S", 256, 110},  {22, "IQ2_S", 256, 82},
        {23, "IQ4_XS", 256, 136}, {24, "I8", 1, 1},         {25, "I16", 1, 2},
        {26, "I32", 1, 4},        {27, "I64", 1, 8},        {28, "F64", 1, 8},
        {29, "IQ1_M", 256, 56},   {30, "BF16", 1, 2},       {34, "TQ1_0", 256, 54},
        {35, "TQ2_0", 256, 66},   {39, "MXFP4", 32, 17},    {40, "NVFP4", 64, 36},
        {41, "Q1_0", 128, 18},
    };
    for (const auto& r : rows)
      QTest::newRow(r.name) << r.id << QString(r.name) << r.block << r.size;
  }

  void typeTraitsMatchReference() {
    QFETCH(uint32_t, id);
    QFETCH(QString, name);
    QFETCH(uint32_t, blockSize);
    QFETCH(uint32_t, typeSize);
    const auto traits = ggmlTypeTraits(id);
    QVERIFY(traits.has_value());
    QCOMPARE(QString::fromUtf8(traits->name.data(), qsizetype(traits->name.size())), name);
    QCOMPARE(traits->blockSize, blockSize);
    QCOMPARE(traits->typeSize, typeSize);
  }

  void removedTypeIdsAreUnknown() {
    // Ids ggml retired (Q4_2, Q4_3, the 4x4/4x8/8x8 repacks) or never used.
    for (uint32_t id : {4u, 5u, 31u, 32u, 33u, 36u, 37u, 38u, 42u, 0xFFFFFFFFu})
      QVERIFY2(!ggmlTypeTraits(id).has_value(), qPrintable(QString::number(id)));
  }
};

QTEST_APPLESS_MAIN(TestGgufReader)
#include "test_gguf_reader.moc"
