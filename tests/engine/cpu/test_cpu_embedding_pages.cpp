// The token lookups of a tied embedding read its repacked copy (fast kernels) where that gives
// the same floats, so the embedding's file pages, released while repacking, stay out of the
// process. References: the dequantization formulas of backend/cpu/quant/dequantize.cpp (the
// source rows, computed by dequantizeRow as before) for the values, and the kernel's record of
// this process's mapped pages (/proc/self/pagemap, bit 63 "present") for the memory:
// - for every type embeddingReadsRepacked accepts, a repacked row equals the source row float
//   for float (== : a -0 may become +0, which no later operation tells apart);
// - after a 512-token prompt of random ids on SmolLM2 (tied Q8_0 embedding, 28.7 MiB) in fast
//   mode, under 15% of the embedding's pages are mapped (one page-cache folio of up to 2 MiB
//   may be shared with the metadata before it, which is read through the mapping; before this
//   change all of them were, as each lookup faulted in whole folios); the same prompt in
//   reference mode, whose output matrix reads every row per token, has over 90% mapped (the
//   measurement sees pages).
// Runtime: about 17 s on the loaded 2-core machine (most of it the reference row) (the SmolLM2 rows skip without the model).
#include <QtTest>
#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <random>

#include "backend/backend_factory.h"
#include "backend/cpu/cpu_backend_weights.h"
#include "backend/cpu/matmul.h"
#include "backend/cpu/repack.h"
#include "backend/cpu/thread_pool.h"
#include "common/test_paths.h"
#include "cpu_test_support.h"
#include "engine/model/paged_sequence.h"
#include "gguf/gguf_file.h"

using namespace ember;
using gguf::GgmlType;

namespace {

// Fraction of the pages wholly inside `bytes` that this process has mapped now.
double mappedFraction(std::span<const uint8_t> bytes) {
  const auto page = uintptr_t(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (uintptr_t(bytes.data()) + page - 1) / page;
  const uintptr_t end = (uintptr_t(bytes.data()) + bytes.size()) / page;
  const int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  std::vector<uint64_t> entries(end - begin);
  const ssize_t got = pread(fd, entries.data(), entries.size() * 8, off_t(begin * 8));
  close(fd);
  if (got != ssize_t(entries.size() * 8)) return -1;
  size_t present = 0;
  for (uint64_t e : entries) present += e >> 63;
  return double(present) / double(entries.size());
}

// Runs a prompt of 512 random token ids (seeded) through `backend`, in chunks of 128.
void runRandomPrompt(Backend& backend, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<TokenId> id(0, TokenId(backend.vocabSize()) - 1);
  std::vector<TokenId> tokens(512);
  for (TokenId& t : tokens) t = id(rng);
  test::PagedSequence sequence(16, 0, 32, seed);
  ForwardOutput out;
  for (size_t begin = 0; begin < tokens.size(); begin += 128) {
    const BatchSequence s = sequence.next(0, 128, BatchSequence::Logits::Last);
    const ForwardBatch batch{std::span<const TokenId>(tokens).subspan(begin, 128), {&s, 1}};
    backend.forward(batch, out);
    sequence.advance(128);
  }
}

}  // namespace

class TestCpuEmbeddingPages : public QObject {
  Q_OBJECT

 private slots:
  void repackedRowsAreTheSourceRows_data() {
    QTest::addColumn<GgmlType>("type");
    for (GgmlType t : {GgmlType::Q8_0, GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1})
      QTest::newRow(std::string(gguf::ggmlTypeName(t)).c_str()) << t;
  }
  void repackedRowsAreTheSourceRows() {
    QFETCH(GgmlType, type);
    QVERIFY(cpu::embeddingReadsRepacked(type));
    cpu::ThreadPool pool(2);
    for (int64_t rows : {1, 17, 45}) {
      const int64_t cols = 96;
      const test::OwnedMatrix src = test::randomMatrix(type, rows, cols, uint32_t(rows * 31));
      const auto packed = cpu::repackMatrix(src.view, pool);
      QVERIFY(packed != nullptr);
      std::vector<float> fromSource(static_cast<size_t>(cols)), fromRepacked(static_cast<size_t>(cols));
      for (int64_t r = 0; r < rows; ++r) {
        cpu::dequantizeRow(src.view, r, fromSource.data());
        cpu::dequantizeRepackedRow(*packed, r, fromRepacked.data());
        for (int64_t j = 0; j < cols; ++j)
          if (!(fromSource[size_t(j)] == fromRepacked[size_t(j)]))
            QFAIL(qPrintable(QStringLiteral("row %1 col %2: %3 vs %4").arg(r).arg(j)
                                 .arg(fromSource[size_t(j)]).arg(fromRepacked[size_t(j)])));
      }
    }
  }

  void lossyLayoutsKeepTheFileRows() {
    for (GgmlType t : {GgmlType::Q4_0, GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K,
                       GgmlType::F16, GgmlType::F32})
      QVERIFY2(!cpu::embeddingReadsRepacked(t), gguf::ggmlTypeName(t).data());
  }

  void promptLeavesTheEmbeddingPagesAlone_data() {
    QTest::addColumn<QString>("kernels");
    QTest::addColumn<bool>("expectMapped");
    QTest::newRow("fast") << "fast" << false;
    QTest::newRow("reference (control)") << "reference" << true;
  }
  void promptLeavesTheEmbeddingPagesAlone() {
    QFETCH(QString, kernels);
    QFETCH(bool, expectMapped);
    EMBER_REQUIRE_MODEL(model, "SmolLM2-135M-Instruct.Q4_1.gguf");
    const auto file = gguf::GgufFile::open(model.toStdString());
    QVERIFY(file->isFileMapped());
    const gguf::TensorInfo* embedding = file->findTensor("token_embd.weight");
    QVERIFY(embedding != nullptr);
    QCOMPARE(embedding->type, GgmlType::Q8_0);
    QVERIFY(file->findTensor("output.weight") == nullptr);  // tied
    const std::unique_ptr<Backend> backend =
        makeBackend(*file, "cpu", 2, nullptr, kernels.toStdString());
    backend->allocateKvCache(KvCacheShape{16, 32, 512});
    runRandomPrompt(*backend, 7);
    const double mapped = mappedFraction(embedding->data);
    QVERIFY2(mapped >= 0, "cannot read /proc/self/pagemap");
    qInfo("%s kernels: %.1f%% of the embedding's pages mapped", qPrintable(kernels),
          100 * mapped);
    if (expectMapped)
      QVERIFY2(mapped > 0.9, qPrintable(QString::number(mapped)));
    else
      QVERIFY2(mapped < 0.15, qPrintable(QString::number(mapped)));
  }
};

QTEST_APPLESS_MAIN(TestCpuEmbeddingPages)
#include "test_cpu_embedding_pages.moc"
