// SseReader against the event-stream examples of the WHATWG HTML standard (section 9.2.6, "Event
// stream interpretation"; expected events worked out by hand from its rules), plus frames split
// at every byte, CR / LF / CRLF endings, a BOM and an endless line.
#include <QtTest>

#include "client/sse_reader.h"
#include "ember/error.h"

using ember::openai::SseEvent;
using ember::openai::SseReader;

namespace {
std::vector<SseEvent> readAll(std::string_view stream) {
  SseReader reader;
  std::vector<SseEvent> out;
  reader.feed(stream, out);
  return out;
}
std::vector<std::string> datas(const std::vector<SseEvent>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) out.push_back(e.data);
  return out;
}
}  // namespace

class TestSseReader : public QObject {
  Q_OBJECT
 private slots:
  void specExamples_data() {
    QTest::addColumn<QByteArray>("stream");
    QTest::addColumn<QStringList>("expected");
    // Spec: three data lines are one event, joined by LF.
    QTest::newRow("multi-line data") << QByteArray("data: YHOO\ndata: +2\ndata: 10\n\n")
                                     << QStringList{"YHOO\n+2\n10"};
    // Spec: a comment, ids ignored, no space after the colon, and only one space stripped.
    QTest::newRow("comments and spaces")
        << QByteArray(": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\n"
                      "data:  third event\n\n")
        << QStringList{"first event", "second event", " third event"};
    // Spec: "data" alone is an empty data line; the last event has no blank line: dropped.
    QTest::newRow("empty data fields") << QByteArray("data\n\ndata\ndata\n\ndata:")
                                       << QStringList{"", "\n"};
    QTest::newRow("CRLF endings") << QByteArray("data: a\r\n\r\ndata: b\r\n\r\n")
                                  << QStringList{"a", "b"};
    QTest::newRow("CR endings") << QByteArray("data: a\r\rdata: b\r\r") << QStringList{"a", "b"};
    QTest::newRow("BOM at the start") << QByteArray("\xEF\xBB\xBF" "data: x\n\n")
                                      << QStringList{"x"};
    QTest::newRow("blank lines alone dispatch nothing") << QByteArray("\n\n\n: ping\n\n")
                                                        << QStringList{};
  }
  void specExamples() {
    QFETCH(QByteArray, stream);
    QFETCH(QStringList, expected);
    const auto got = datas(readAll(std::string_view(stream.constData(), stream.size())));
    QStringList gotList;
    for (const auto& d : got) gotList << QString::fromStdString(d);
    QCOMPARE(gotList, expected);
  }

  void eventTypeIsKept() {
    const auto events = readAll("event: error\ndata: {\"x\":1}\n\ndata: y\n\n");
    QCOMPARE(events.size(), size_t(2));
    QCOMPARE(events[0].type, std::string("error"));
    QCOMPARE(events[0].data, std::string("{\"x\":1}"));
    QCOMPARE(events[1].type, std::string());
  }

  // Any split of the stream, between CR and LF and inside the BOM included, gives the same events.
  void everySplitGivesTheSameEvents() {
    const std::string stream =
        "\xEF\xBB\xBF: keep-alive\r\ndata: {\"a\":\"1\"}\r\n\r\nevent: e\ndata: two\rdata: "
        "lines\r\r\ndata: [DONE]\n\n";
    const auto whole = readAll(stream);
    QCOMPARE(whole.size(), size_t(3));
    QCOMPARE(whole[1].data, std::string("two\nlines"));
    for (size_t cut = 0; cut <= stream.size(); ++cut) {
      SseReader reader;
      std::vector<SseEvent> out;
      reader.feed(std::string_view(stream).substr(0, cut), out);
      reader.feed(std::string_view(stream).substr(cut), out);
      QCOMPARE(datas(out), datas(whole));
    }
    SseReader reader;  // one byte at a time
    std::vector<SseEvent> out;
    for (char c : stream) reader.feed(std::string_view(&c, 1), out);
    QCOMPARE(datas(out), datas(whole));
    QVERIFY(!reader.midEvent());
  }

  void endlessLineIsAnError() {
    SseReader reader(64);
    std::vector<SseEvent> out;
    QVERIFY_THROWS_EXCEPTION(ember::Error, reader.feed("data: " + std::string(100, 'x'), out));
  }
};

QTEST_APPLESS_MAIN(TestSseReader)
#include "test_sse_reader.moc"
