// A mapped model file truncated or replaced while in use never kills the process with SIGBUS
// (RELIABILITY "Model files"): MappedFile maps zeros over the pages past the new end, reports
// lostPages(), and changedOnDisk() tells a replaced file. The engine-level check (a request
// fails with "load the model again") reads GgufFile::dataLost(), exercised here on a real GGUF.
// References: the bytes written by the test itself; the page size from sysconf.
#include <QtTest>

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "common/mapped_file.h"
#include "gguf/gguf_file.h"

using ember::MappedFile;

namespace {

std::filesystem::path scratch(const char* name) {
  // The test runs in the build folder (ctest's working directory): it writes only there.
  const auto dir = std::filesystem::current_path() / "mapped_file_changes";
  std::filesystem::create_directories(dir);
  return dir / name;
}

void writeFile(const std::filesystem::path& p, size_t size, uint8_t seed) {
  std::vector<char> bytes(size);
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<char>((i * 31 + seed) & 0xff);
  std::ofstream(p, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(size));
}

uint8_t expectedByte(size_t i, uint8_t seed) { return static_cast<uint8_t>((i * 31 + seed) & 0xff); }

}  // namespace

class MappedFileChanges : public QObject {
  Q_OBJECT

 private slots:
  void truncatedWhileMappedReadsZerosNotSigbus() {
    const auto path = scratch("truncated.bin");
    const size_t size = 1 << 20;
    writeFile(path, size, 7);
    MappedFile file(path);
    QCOMPARE(file.data()[100], expectedByte(100, 7));
    QVERIFY(!file.lostPages());
    QVERIFY(!file.changedOnDisk());
    // Rewritten in place, as `curl -o same-name` does: cut to 4 KiB.
    QCOMPARE(::truncate(path.c_str(), 4096), 0);
    QVERIFY(file.changedOnDisk());
    // Without the handler this read raises SIGBUS and the test process dies.
    volatile uint8_t past = file.data()[size / 2];
    QCOMPARE(static_cast<int>(past), 0);
    QVERIFY(file.lostPages());
    QCOMPARE(static_cast<int>(file.data()[size - 1]), 0);
  }

  void replacedByRenameKeepsTheOldBytes() {
    const auto path = scratch("replaced.bin");
    const size_t size = 256 << 10;
    writeFile(path, size, 3);
    MappedFile file(path);
    const auto fresh = scratch("replaced.bin.part");
    writeFile(fresh, 1000, 9);
    std::filesystem::rename(fresh, path);  // what a careful downloader does
    QVERIFY(file.changedOnDisk());
    QCOMPARE(file.data()[size - 1], expectedByte(size - 1, 3));  // the old inode lives on
    QVERIFY(!file.lostPages());
  }

  void removedFileIsChanged() {
    const auto path = scratch("removed.bin");
    writeFile(path, 8192, 1);
    MappedFile file(path);
    std::filesystem::remove(path);
    QVERIFY(file.changedOnDisk());
    QCOMPARE(file.data()[8191], expectedByte(8191, 1));
  }

  void ggufReportsDataLost() {
    // GGUF v3 by hand (gguf.md): no metadata, one F32 tensor "w" of 16384 elements at offset 0
    // of the data section, which starts at the next multiple of 32.
    const auto path = scratch("cut.gguf");
    const uint32_t elements = 16384;
    {
      std::ofstream out(path, std::ios::binary);
      auto put = [&](auto v) { out.write(reinterpret_cast<const char*>(&v), sizeof v); };
      out.write("GGUF", 4);
      put(uint32_t{3});
      put(uint64_t{1});  // tensors
      put(uint64_t{0});  // metadata entries
      put(uint64_t{1});
      out.write("w", 1);
      put(uint32_t{1});  // dimensions
      put(uint64_t{elements});
      put(uint32_t{0});  // F32
      put(uint64_t{0});  // offset
      const std::streamoff header = out.tellp();
      std::vector<char> pad(static_cast<size_t>((32 - header % 32) % 32), 0);
      out.write(pad.data(), static_cast<std::streamsize>(pad.size()));
      for (uint32_t i = 0; i < elements; ++i) put(1.0f);
    }
    auto gguf = ember::gguf::GgufFile::open(path);
    QCOMPARE(gguf->tensors().size(), size_t{1});
    const auto data = gguf->tensors()[0].data;
    QCOMPARE(data.size(), size_t{elements} * 4);
    QVERIFY(!gguf->dataLost());
    QCOMPARE(::truncate(path.c_str(), 64), 0);
    volatile uint8_t last = data[data.size() - 1];  // was 0x3f, the top byte of 1.0f
    QCOMPARE(static_cast<int>(last), 0);
    QVERIFY(gguf->dataLost());
    QVERIFY(gguf->changedOnDisk());
  }

  // Two mappings: a fault in one does not mark the other.
  void faultStaysWithItsMapping() {
    const auto a = scratch("a.bin"), b = scratch("b.bin");
    writeFile(a, 64 << 10, 1);
    writeFile(b, 64 << 10, 2);
    MappedFile fa(a), fb(b);
    QCOMPARE(::truncate(a.c_str(), 0), 0);
    volatile uint8_t x = fa.data()[40000];
    QCOMPARE(static_cast<int>(x), 0);
    QVERIFY(fa.lostPages());
    QVERIFY(!fb.lostPages());
    QCOMPARE(fb.data()[40000], expectedByte(40000, 2));
  }
};

QTEST_APPLESS_MAIN(MappedFileChanges)
#include "test_mapped_file_changes.moc"
