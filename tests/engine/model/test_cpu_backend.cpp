// CpuBackend's contract on the real SmolLM2 model: a batch that mixes sequences (a prompt chunk of
// one, a decode token of another) gives each the logits it gets when run alone; a step that wants
// only last logits gives the rows of one that wants them all, and caches the same; copyBlock
// duplicates a block's keys and values; a decode step allocates no heap memory once warm; bad
// batches are rejected with ember::Error. The reference for every comparison is the same backend
// run one sequence at a time (itself checked against llama.cpp in test_fidelity_llamacpp), and
// for the sizes the model's metadata as printed by `ember-cli inspect`.
#include <QtTest>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <new>

#include "backend/cpu/cpu_backend.h"
#include "common/test_paths.h"
#include "model/model_config.h"
#include "paged_sequence.h"

using namespace ember;

// Counts heap allocations made by this process (all threads) while `counting` is set.
namespace {
std::atomic<bool> counting{false};
std::atomic<long> allocations{0};
}  // namespace

void* operator new(std::size_t size) {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1);
  if (void* p = std::malloc(size ? size : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace {

constexpr const char* kModel = "SmolLM2-135M-Instruct.Q4_1.gguf";
constexpr int32_t kBlockSize = 16;
// SmolLM2 prompt ids, from tests/data/golden/SmolLM2-135M-Instruct.Q4_1.json (chat_short and
// raw_short).
const std::vector<TokenId> kPromptA = {
    1,   9690, 198, 2683, 359,   253,  5356, 5646, 11173, 3365, 3511, 308,  34519,
    28,  7018, 411, 407,  19712, 8182, 2,    198,  1,     4093, 198,  1780, 314,
    260, 3575, 282, 4649, 47,    2,    198,  1,    520,   9531, 198};
const std::vector<TokenId> kPromptB = {504, 1296, 3003, 4683, 359};

float maxAbsDiff(std::span<const float> a, std::span<const float> b) {
  float d = 0;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(a[i] - b[i]));
  return d;
}

// KL(softmax(p) || softmax(q)) over the whole vocabulary.
double klDivergence(std::span<const float> p, std::span<const float> q) {
  const double pMax = *std::max_element(p.begin(), p.end());
  const double qMax = *std::max_element(q.begin(), q.end());
  double pSum = 0, qSum = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    pSum += std::exp(p[i] - pMax);
    qSum += std::exp(q[i] - qMax);
  }
  double kl = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    const double logP = p[i] - pMax - std::log(pSum), logQ = q[i] - qMax - std::log(qSum);
    kl += std::exp(logP) * (logP - logQ);
  }
  return kl;
}

QString errorOf(Backend& backend, const ForwardBatch& batch) {
  ForwardOutput out;
  try {
    backend.forward(batch, out);
  } catch (const ember::Error& e) {
    return QString::fromStdString(e.what());
  }
  return {};
}

}  // namespace

class TestCpuBackend : public QObject {
  Q_OBJECT

  std::unique_ptr<gguf::GgufFile> file_;
  std::unique_ptr<cpu::CpuBackend> backend_;

  bool open() {
    if (backend_) return true;
    QString why;
    const QString path = test::findModel(kModel, &why);
    if (path.isEmpty()) return false;
    file_ = gguf::GgufFile::open(path.toStdString());
    backend_ = std::make_unique<cpu::CpuBackend>(*file_, model::readModelConfig(*file_), 2);
    backend_->allocateKvCache({kBlockSize, 32});
    return true;
  }

 private slots:
  void init() {
    if (!open()) {
      QString why;
      test::findModel(kModel, &why);
      if (test::underCi()) QFAIL(qPrintable(why));
      QSKIP(qPrintable(why));
    }
  }

  void sizesFollowTheModel() {
    // 30 layers x 3 kv heads x (64 + 64) key/value halves x 16 tokens x 2 bytes.
    QCOMPARE(backend_->kvBytesPerBlock(16), size_t(30 * 3 * 128 * 16 * 2));
    QCOMPARE(backend_->vocabSize(), size_t(49152));
    const BackendMemoryInfo info = backend_->memoryInfo();
    QCOMPARE(info.kvCacheBytes, backend_->kvBytesPerBlock(16) * 32);
    QVERIFY(info.weightBytes > 90'000'000 && info.weightBytes < 100'000'000);
    QVERIFY(backend_->name().starts_with("cpu"));
  }

  void mixedBatchMatchesSeparateRuns() {
    // Every step here holds several tokens: a one-token step sums its attention in llama.cpp's
    // one-token order instead, so it is compared only with other one-token steps.
    Backend& backend = *backend_;
    const size_t vocab = backend.vocabSize();
    // Alone: A's whole prompt; B's first 3 tokens, then its last 2 as a second chunk.
    test::PagedSequence a(kBlockSize, 0, 4, 11), b(kBlockSize, 4, 4, 12);
    const std::vector<float> aloneA = a.prefillAll(backend, kPromptA, 64);
    b.prefillAll(backend, std::span(kPromptB).first(3), 64);
    ForwardOutput out;
    const BatchSequence lastTwo = b.next(0, 2, BatchSequence::Logits::Last);
    backend.forward({std::span(kPromptB).subspan(3), {&lastTwo, 1}}, out);
    const std::vector<float> aloneB = out.logits;

    // Together, in one batch: A's prompt (all logits) and B's last 2 tokens (last logits), with
    // B's first 3 tokens already in its blocks. Both run on other blocks of the pool.
    test::PagedSequence a2(kBlockSize, 12, 4, 21), b2(kBlockSize, 8, 4, 22);
    b2.prefillAll(backend, std::span(kPromptB).first(3), 64);
    std::vector<TokenId> tokens = kPromptA;
    tokens.insert(tokens.end(), kPromptB.begin() + 3, kPromptB.end());
    const BatchSequence seqs[2] = {
        a2.next(0, int32_t(kPromptA.size()), BatchSequence::Logits::All),
        b2.next(int32_t(kPromptA.size()), 2, BatchSequence::Logits::Last)};
    backend.forward({tokens, seqs}, out);
    QCOMPARE(out.rows, kPromptA.size() + 1);
    const std::span<const float> together(out.logits);
    QCOMPARE(maxAbsDiff(together.first(kPromptA.size() * vocab), aloneA), 0.0f);
    QCOMPARE(maxAbsDiff(together.subspan(kPromptA.size() * vocab, vocab), aloneB), 0.0f);
  }

  void lastLogitsMatchAllLogits() {
    // A step that wants only its sequences' last logits runs the last layer's attention and
    // feed-forward on those tokens alone (the others' rows are dropped once their keys and values
    // are cached): its logits must be the matching rows of the all-logits step bit for bit, and
    // the cache it leaves the same, so the next step's logits match too. Two prompts in one step,
    // so that the kept rows move.
    Backend& backend = *backend_;
    const size_t vocab = backend.vocabSize();
    std::vector<TokenId> tokens = kPromptA;
    tokens.insert(tokens.end(), kPromptB.begin(), kPromptB.end());
    const auto na = int32_t(kPromptA.size()), nb = int32_t(kPromptB.size());
    auto run = [&](BatchSequence::Logits logits, int32_t firstBlock) {
      test::PagedSequence a(kBlockSize, firstBlock, 4, 41), b(kBlockSize, firstBlock + 4, 4, 42);
      const BatchSequence seqs[2] = {a.next(0, na, logits), b.next(na, nb, logits)};
      ForwardOutput out;
      backend.forward({tokens, seqs}, out);
      std::vector<float> rows(out.logits);
      a.advance(na);
      b.advance(nb);
      const TokenId next[2] = {kPromptA[3], kPromptB[1]};  // two more tokens, one step
      const BatchSequence steps[2] = {a.next(0, 1, BatchSequence::Logits::Last),
                                      b.next(1, 1, BatchSequence::Logits::Last)};
      backend.forward({next, steps}, out);
      rows.insert(rows.end(), out.logits.begin(), out.logits.end());
      return rows;
    };
    const std::vector<float> all = run(BatchSequence::Logits::All, 0);
    const std::vector<float> last = run(BatchSequence::Logits::Last, 8);
    QCOMPARE(all.size(), (size_t(na + nb) + 2) * vocab);
    QCOMPARE(last.size(), size_t(4) * vocab);
    const std::span<const float> a(all), l(last);
    QCOMPARE(maxAbsDiff(l.first(vocab), a.subspan(size_t(na - 1) * vocab, vocab)), 0.0f);
    QCOMPARE(maxAbsDiff(l.subspan(vocab, vocab), a.subspan(size_t(na + nb - 1) * vocab, vocab)),
             0.0f);
    QCOMPARE(maxAbsDiff(l.subspan(2 * vocab), a.subspan(size_t(na + nb) * vocab)), 0.0f);
  }

  void oneTokenStepsOfTwoSequences() {
    // Two sequences decoding in one step (T = 2) against each decoding alone (T = 1): the sums
    // differ only in order (see above); this small model amplifies that to logit differences
    // near 1, so the distributions are compared (KL) with the same top token.
    Backend& backend = *backend_;
    const size_t vocab = backend.vocabSize();
    test::PagedSequence a(kBlockSize, 0, 4, 31), b(kBlockSize, 4, 4, 32);
    a.prefillAll(backend, std::span(kPromptA).first(20), 64);
    b.prefillAll(backend, std::span(kPromptB).first(4), 64);
    ForwardOutput out;
    const std::span<const float> stepA = a.step(backend, kPromptA[20], out);
    const std::vector<float> aloneA(stepA.begin(), stepA.end());
    const std::span<const float> stepB = b.step(backend, kPromptB[4], out);
    const std::vector<float> aloneB(stepB.begin(), stepB.end());

    test::PagedSequence a2(kBlockSize, 8, 4, 31), b2(kBlockSize, 12, 4, 32);
    a2.prefillAll(backend, std::span(kPromptA).first(20), 64);
    b2.prefillAll(backend, std::span(kPromptB).first(4), 64);
    const TokenId tokens[2] = {kPromptA[20], kPromptB[4]};
    const BatchSequence seqs[2] = {a2.next(0, 1, BatchSequence::Logits::Last),
                                   b2.next(1, 1, BatchSequence::Logits::Last)};
    backend.forward({tokens, seqs}, out);
    QCOMPARE(out.rows, size_t(2));
    const std::span<const float> together(out.logits);
    QVERIFY(klDivergence(aloneA, together.first(vocab)) < 0.01);
    QVERIFY(klDivergence(aloneB, together.subspan(vocab, vocab)) < 0.01);
    QCOMPARE(test::argmax(together.first(vocab)), test::argmax(aloneA));
    QCOMPARE(test::argmax(together.subspan(vocab, vocab)), test::argmax(aloneB));
  }

  void copiedBlockContinuesTheSequence() {
    Backend& backend = *backend_;
    // 20 prompt tokens fill block 0 and 4 slots of block 1; fork block 1 into block 9 and
    // decode the same token on both tables: identical logits.
    const std::vector<TokenId> prompt(kPromptA.begin(), kPromptA.begin() + 20);
    std::vector<int32_t> original = {3, 5}, forked = {3, 9};
    ForwardOutput out;
    BatchSequence s;
    s.tokenCount = 20;
    s.blockTable = original;
    s.logits = BatchSequence::Logits::None;
    backend.forward({prompt, {&s, 1}}, out);
    QCOMPARE(out.rows, size_t(0));
    QVERIFY(backend.copyBlock(5, 9));
    QVERIFY(!backend.copyBlock(5, 99));
    s = {};
    s.tokenCount = 1;
    s.startPosition = 20;
    s.logits = BatchSequence::Logits::Last;
    const TokenId token = kPromptA[20];
    s.blockTable = original;
    backend.forward({{&token, 1}, {&s, 1}}, out);
    const std::vector<float> fromOriginal = out.logits;
    s.blockTable = forked;
    backend.forward({{&token, 1}, {&s, 1}}, out);
    QCOMPARE(maxAbsDiff(out.logits, fromOriginal), 0.0f);
  }

  void decodeStepAllocatesNothing() {
    Backend& backend = *backend_;
    test::PagedSequence s(kBlockSize, 0, 8, 3);
    s.prefillAll(backend, kPromptA, 64);
    ForwardOutput out;
    TokenId next = test::argmax(s.step(backend, 198, out));  // warm: buffers sized for T = 1
    allocations = 0;
    counting = true;
    for (int i = 0; i < 8; ++i) next = test::argmax(s.step(backend, next, out));
    counting = false;
    QCOMPARE(allocations.load(), 0L);
  }

  void rejectsBadBatches_data() {
    QTest::addColumn<int>("token");
    QTest::addColumn<int>("startPosition");
    QTest::addColumn<QList<int>>("blockTable");
    QTest::addColumn<QString>("message");
    QTest::newRow("token outside vocabulary") << 49152 << 0 << QList<int>{0} << "vocabulary";
    QTest::newRow("negative token") << -1 << 0 << QList<int>{0} << "vocabulary";
    QTest::newRow("block outside pool") << 1 << 0 << QList<int>{32} << "outside the pool";
    QTest::newRow("table too short") << 1 << 16 << QList<int>{0} << "needed";
    QTest::newRow("past context length") << 1 << 8192 << QList<int>(513, 0) << "context length";
  }

  void rejectsBadBatches() {
    QFETCH(int, token);
    QFETCH(int, startPosition);
    QFETCH(QList<int>, blockTable);
    QFETCH(QString, message);
    const std::vector<int32_t> table(blockTable.begin(), blockTable.end());
    const TokenId id = token;
    BatchSequence s;
    s.tokenCount = 1;
    s.startPosition = startPosition;
    s.blockTable = table;
    const QString error = errorOf(*backend_, {{&id, 1}, {&s, 1}});
    QVERIFY2(error.contains(message), qPrintable(error));
  }

  void rejectsSequencesThatDoNotCoverTheTokens() {
    const std::vector<TokenId> tokens = {1, 2, 3};
    const std::vector<int32_t> table = {0};
    BatchSequence s;
    s.tokenCount = 2;
    s.blockTable = table;
    QVERIFY(errorOf(*backend_, {tokens, {&s, 1}}).contains("cover"));
  }

  void refusesToRunWithoutKvCache() {
    cpu::CpuBackend fresh(*file_, backend_->config(), 1);
    const TokenId id = 1;
    const std::vector<int32_t> table = {0};
    BatchSequence s;
    s.tokenCount = 1;
    s.blockTable = table;
    QVERIFY(errorOf(fresh, {{&id, 1}, {&s, 1}}).contains("KV cache"));
  }
};

QTEST_APPLESS_MAIN(TestCpuBackend)
#include "test_cpu_backend.moc"
