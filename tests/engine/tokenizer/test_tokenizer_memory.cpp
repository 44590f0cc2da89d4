// The heap that Gemma 3's 262144-piece vocabulary keeps after loading, against stated bounds:
// the GGUF metadata at most about its encoded size, and the tokenizer one copy of the texts
// beyond what libsentencepiece itself holds. Heap figures are glibc's mallinfo2 (bytes handed out
// and still in use), which do not depend on timing or on the machine's load.
// References: the file's own encoded metadata size; a std::vector<std::string> copy of the
// vocabulary measured here; and a bare libsentencepiece processor loaded with the same model
// (what the tokenizer keeps beside it when it encodes with the library).
#include <malloc.h>
#include <sentencepiece_processor.h>

#include <fcntl.h>
#include <unistd.h>

#include <QtTest>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "common/test_paths.h"
#include "gguf/gguf_file.h"
#include "tokenizer/gguf_vocabulary.h"
#include "tokenizer/spm_tokenizer.h"
#include "tokenizer/tokenizer.h"

namespace {

size_t heapInUse() {
  const struct mallinfo2 info = mallinfo2();
  return info.uordblks + info.hblkhd;  // small chunks in use + mmap'd large blocks
}

// Heap kept by what make() returns, while it is alive.
template <typename Make>
size_t heapKeptBy(Make make) {
  const size_t before = heapInUse();
  const auto kept = make();
  const size_t after = heapInUse();
  return after > before ? after - before : 0;
}

double mb(size_t bytes) { return double(bytes) / 1e6; }

// Bytes of this process's mapping of `path` (from file offset 0) in [0, end) that are mapped in
// its page tables (/proc/self/maps for the mapping, /proc/self/pagemap's "present" bit per page).
// Counting pages by file offset, not the mapping's whole Rss, matters: a kernel that caches the
// file in large folios maps a whole folio on a fault, so pages past the header (the tensor data's
// first, never read) can be resident after the header's pages were dropped.
size_t presentBytesBefore(const std::string& path, uint64_t end) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  uint64_t start = 0;
  while (std::getline(maps, line)) {
    if (line.size() < path.size() || line.compare(line.size() - path.size(), path.size(), path) != 0)
      continue;
    unsigned long long from = 0, to = 0, offset = 0;
    char perms[8] = {};
    if (std::sscanf(line.c_str(), "%llx-%llx %7s %llx", &from, &to, perms, &offset) == 4 &&
        offset == 0) {
      start = from;
      break;
    }
  }
  if (start == 0) return 0;
  const auto page = uint64_t(sysconf(_SC_PAGESIZE));
  const int fd = open("/proc/self/pagemap", O_RDONLY);  // 8-byte entries, read as such
  if (fd < 0) return size_t(-1);
  size_t present = 0;
  for (uint64_t at = 0; at < end; at += page) {
    uint64_t entry = 0;
    if (pread(fd, &entry, sizeof entry, off_t((start + at) / page * 8)) != sizeof entry) {
      close(fd);
      return size_t(-1);
    }
    if (entry >> 63) present += page;
  }
  close(fd);
  return present;
}

}  // namespace

class TestTokenizerMemory : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    QSKIP("the sanitizer's allocator does not report through mallinfo2");
#endif
    EMBER_REQUIRE_MODEL(path, "gemma-3-270m-q4_k_m.gguf");
    modelPath_ = path.toStdString();
  }

  // Before, every array item was a 48-byte Value: 38.5 MB for this file, 6.5 MB encoded.
  void ggufMetadataKeepsAboutItsEncodedSize() {
    size_t arrayItems = 0;
    uint64_t encodedBytes = 0;
    const size_t kept = heapKeptBy([&] {
      auto file = ember::gguf::GgufFile::open(modelPath_);
      for (const auto& [key, value] : file->metadata())
        if (value.type == ember::gguf::ValueType::Array) arrayItems += value.asArray().size();
      encodedBytes = file->dataOffset();  // header, metadata and tensor table
      return file;
    });
    // The encoded bytes once, plus an 8-byte end offset per array item (strings), plus 1 MB.
    const size_t bound = size_t(encodedBytes) + 8 * arrayItems + (size_t(1) << 20);
    qInfo("GgufFile keeps %.1f MB of heap; bound %.1f MB (%.1f MB encoded, %zu array items)",
          mb(kept), mb(bound), mb(encodedBytes), arrayItems);
    QVERIFY2(kept <= bound, qPrintable(QString("kept %1 bytes").arg(kept)));
  }

  // The header, metadata and tensor table were parsed into copies, so their pages of the mapping
  // are dropped: before, all 6.5 MB of them stayed resident for as long as the file was open.
  void headerPagesLeaveTheResidentSet() {
    const auto file = ember::gguf::GgufFile::open(modelPath_);
    const std::string canonical = std::filesystem::canonical(modelPath_).string();
    const auto page = uint64_t(sysconf(_SC_PAGESIZE));
    const uint64_t headerPages = file->dataOffset() / page * page;  // wholly before the data
    const size_t present = presentBytesBefore(canonical, headerPages);
    qInfo("%.1f MB of the file's %.1f MB before the tensor data are mapped after open",
          mb(present), mb(file->dataOffset()));
    QVERIFY(file->dataOffset() > (size_t(4) << 20));
    QVERIFY2(present != size_t(-1), "cannot read /proc/self/pagemap");
    // What may remain: neighbours the kernel maps around a fault (fault_around_bytes, 64 KiB by
    // default), should one come after the release.
    QVERIFY2(present <= (size_t(64) << 10), qPrintable(QString("%1 bytes mapped").arg(present)));
    QCOMPARE(file->getStringArray("tokenizer.ggml.tokens").at(105), std::string("<start_of_turn>"));
  }

  // The tokenizer with Ember's own SentencePiece encoder (the default) keeps one copy of the
  // texts and a few bytes per token; with libsentencepiece it also keeps the library's own
  // structures (52.0 MB for this vocabulary, measured as a bare processor below).
  void tokenizerKeepsOneCopyOfTheVocabulary() {
    const auto file = ember::gguf::GgufFile::open(modelPath_);
    const ember::GgufVocabulary vocab = ember::readGgufVocabulary(*file);
    const size_t n = vocab.tokens.size();
    QCOMPARE(n, size_t{262144});

    const size_t ownKept = heapKeptBy([&] {
      return ember::makeSentencePieceTokenizer(vocab, ember::SpmEncoderChoice::Own);
    });
    const size_t withLibraryKept = heapKeptBy([&] {
      return ember::makeSentencePieceTokenizer(vocab, ember::SpmEncoderChoice::Library);
    });
    const std::string serialized = ember::sentencePieceModelOf(vocab);
    const size_t libraryKept = heapKeptBy([&] {
      auto processor = std::make_unique<sentencepiece::SentencePieceProcessor>();
      const auto status = processor->LoadFromSerializedProto(serialized);
      if (!status.ok()) qFatal("libsentencepiece rejected the model: %s", status.ToString().c_str());
      return processor;
    });
    const size_t oneCopy =
        heapKeptBy([&] { return std::make_unique<std::vector<std::string>>(vocab.tokens); });
    const size_t emberBesideLibrary =
        withLibraryKept > libraryKept ? withLibraryKept - libraryKept : 0;
    // One copy of the texts, a 4-byte type and at most 8 bytes of index per token, and 2 MB for
    // the matcher of Gemma's 6k+ control and user-defined tokens and the rest (measured: 13.0 MB
    // beside the library, against 30.6 MB when the index held its own copy).
    const size_t bound = oneCopy + 12 * n + (size_t(2) << 20);
    // The own encoder adds a 4-byte score per token and a few kB of user-defined pieces
    // (measured: 14.1 MB in all, against 65.0 MB with libsentencepiece).
    const size_t ownBound = bound + 4 * n;
    qInfo("tokenizer keeps %.1f MB with its own encoder (bound %.1f MB), %.1f MB with "
          "libsentencepiece (the library %.1f MB, Ember %.1f MB beside it, bound %.1f MB); one "
          "copy of the texts is %.1f MB",
          mb(ownKept), mb(ownBound), mb(withLibraryKept), mb(libraryKept), mb(emberBesideLibrary),
          mb(bound), mb(oneCopy));
    QVERIFY2(ownKept <= ownBound, qPrintable(QString("the tokenizer keeps %1 bytes").arg(ownKept)));
    QVERIFY2(emberBesideLibrary <= bound,
             qPrintable(QString("Ember keeps %1 bytes beside the library").arg(emberBesideLibrary)));
    // The library's structures are what the own encoder leaves out.
    QVERIFY(ownKept + libraryKept / 2 < withLibraryKept);
  }

 private:
  std::string modelPath_;
};

QTEST_GUILESS_MAIN(TestTokenizerMemory)
#include "test_tokenizer_memory.moc"
