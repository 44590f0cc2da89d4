// Stop strings on streamed text. The reference for each case is the plain definition applied to
// the whole text at once: the answer is the text before the earliest occurrence of any stop
// string (all of it if none occurs). Streaming must reach the same answer whatever the piece
// boundaries, never show a byte it later has to take back, and hold back only what could still
// become a stop string (the expected per-piece outputs below are worked out by hand).
#include <QtTest>

#include <algorithm>
#include <string>
#include <vector>

#include "ember/error.h"
#include "runtime/sampling/stop_matcher.h"

using namespace ember;

namespace {

std::vector<std::string> toStd(const QByteArrayList& list) {
  std::vector<std::string> out;
  for (const QByteArray& item : list) out.push_back(item.toStdString());
  return out;
}

// The definition, on the whole text: cut at the earliest occurrence of any stop string.
std::string cutAtEarliestStop(const std::string& text, const std::vector<std::string>& stops) {
  size_t cut = std::string::npos;
  for (const std::string& stop : stops) cut = std::min(cut, text.find(stop));
  return cut == std::string::npos ? text : text.substr(0, cut);
}

}  // namespace

class TestStopMatcher : public QObject {
  Q_OBJECT

 private slots:
  void streams_data() {
    QTest::addColumn<QByteArrayList>("stops");
    QTest::addColumn<QByteArrayList>("pieces");
    // What push() returns for each piece, then (when no stop fired) what flush() returns.
    QTest::addColumn<QByteArrayList>("expectedOutputs");
    QTest::addColumn<QByteArray>("expectedStop");  // empty: no stop fired

    QTest::newRow("no stop strings") << QByteArrayList{} << QByteArrayList{"Hel", "lo <"}
                                     << QByteArrayList{"Hel", "lo <", ""} << QByteArray();
    QTest::newRow("stop inside one piece")
        << QByteArrayList{"</s>"} << QByteArrayList{"Hello", " wor", "ld</s>tail"}
        << QByteArrayList{"Hello", " wor", "ld"} << QByteArray("</s>");
    // "<|end|>" over three pieces: "<" is held as soon as it appears.
    QTest::newRow("split over three pieces")
        << QByteArrayList{"<|end|>"} << QByteArrayList{"Hi <", "|en", "d|>", "more"}
        << QByteArrayList{"Hi ", "", ""} << QByteArray("<|end|>");
    // A false alarm is released as soon as it cannot be a stop any more.
    QTest::newRow("false alarm released")
        << QByteArrayList{"<|end|>"} << QByteArrayList{"a <", "|e", "x", "!"}
        << QByteArrayList{"a ", "", "<|ex", "!", ""} << QByteArray();
    // Held back at the end of generation: flush gives it back.
    QTest::newRow("held back until flush")
        << QByteArrayList{"<|end|>"} << QByteArrayList{"a <|e"}
        << QByteArrayList{"a ", "<|e"} << QByteArray();
    QTest::newRow("two stops, second fires")
        << QByteArrayList{"###", "\n\nUser:"} << QByteArrayList{"Answer.\n", "\nUs", "er: hi"}
        << QByteArrayList{"Answer.", "", ""} << QByteArray("\n\nUser:");
    // Overlapping prefixes: "ab" is held for "abc"; "abcd" holds both "abc" at 0 and "bcd" at 1:
    // the earliest wins.
    QTest::newRow("overlapping stops, earliest wins")
        << QByteArrayList{"bcd", "abc"} << QByteArrayList{"xab", "cd"}
        << QByteArrayList{"x", ""} << QByteArray("abc");
    // "aa" is held for "aab"; "aaab" contains "aab" at 1, so one "a" is shown.
    QTest::newRow("self-overlapping stop")
        << QByteArrayList{"aab"} << QByteArrayList{"aa", "ab"}
        << QByteArrayList{"", "a"} << QByteArray("aab");
    // The longest partial match decides: "abab" could still become "ababc"; "ab" alone also
    // matches the start of "abx". Then "x" completes "abx" at 2.
    QTest::newRow("longest partial match held")
        << QByteArrayList{"ababc", "abx"} << QByteArrayList{"zabab", "x"}
        << QByteArrayList{"z", "ab"} << QByteArray("abx");
    QTest::newRow("stop at the very start")
        << QByteArrayList{"###"} << QByteArrayList{"###", "text"}
        << QByteArrayList{""} << QByteArray("###");
    // Korean: "사용자:" split at character boundaries over three pieces.
    QTest::newRow("korean stop split")
        << QByteArrayList{"사용자:"} << QByteArrayList{"안녕하세요", " 사", "용", "자: 다음"}
        << QByteArrayList{"안녕하세요", " ", "", ""} << QByteArray("사용자:");
    // "끝" (EB 81 9D) split inside the character: still matched, nothing of it shown.
    QTest::newRow("multibyte split inside a character")
        << QByteArrayList{"끝"} << QByteArrayList{"가나\xEB\x81", "\x9D다"}
        << QByteArrayList{"가나", ""} << QByteArray("끝");
    // "끈" (EB 81 88) shares two bytes with "끝": held, then released whole.
    QTest::newRow("multibyte false alarm")
        << QByteArrayList{"끝"} << QByteArrayList{"\xEB\x81", "\x88!"}
        << QByteArrayList{"", "끈!", ""} << QByteArray();
  }
  void streams() {
    QFETCH(QByteArrayList, stops);
    QFETCH(QByteArrayList, pieces);
    QFETCH(QByteArrayList, expectedOutputs);
    QFETCH(QByteArray, expectedStop);
    StopMatcher matcher(toStd(stops));
    const std::string finalAnswer = cutAtEarliestStop(pieces.join().toStdString(), toStd(stops));
    QByteArrayList outputs;
    std::string shown;
    for (const QByteArray& piece : pieces) {
      if (matcher.stopped()) {
        const StopMatcher::Output after = matcher.push(piece.toStdString());
        QVERIFY(after.stopped);
        QVERIFY(after.text.empty());  // text after the stop is discarded
        continue;
      }
      const StopMatcher::Output out = matcher.push(piece.toStdString());
      outputs << QByteArray::fromStdString(out.text);
      shown += out.text;
      QCOMPARE(out.stopped, matcher.stopped());
      // Nothing is ever shown that the final answer does not have: what is shown so far is
      // always a prefix of it.
      QVERIFY2(finalAnswer.compare(0, shown.size(), shown) == 0, shown.c_str());
    }
    if (!matcher.stopped()) {
      const std::string rest = matcher.flush();
      outputs << QByteArray::fromStdString(rest);
      shown += rest;
    }
    QCOMPARE(outputs, expectedOutputs);
    QCOMPARE(QByteArray::fromStdString(matcher.matchedStop()), expectedStop);
    QCOMPARE(matcher.stopped(), !expectedStop.isEmpty());
    QCOMPARE(shown, finalAnswer);
  }

  // Every way of cutting a text into two or three pieces gives the answer the definition gives
  // on the whole text, and the stop string never appears, even in part, at the end of what was
  // shown while generation was still running.
  void everySplitAgreesWithTheDefinition_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QByteArrayList>("stops");
    QTest::newRow("ascii") << QByteArray("The end.<|im_end|>\nmore") << QByteArrayList{"<|im_end|>"};
    QTest::newRow("two stops") << QByteArray("a\n\nUser: b ### c")
                               << QByteArrayList{"###", "\n\nUser:"};
    QTest::newRow("korean") << QByteArray("네, 알겠습니다.\n사용자: 또") << QByteArrayList{"사용자:"};
    QTest::newRow("no stop occurs") << QByteArray("<|im_en <|im_end <|im_") << QByteArrayList{"<|im_end|>"};
  }
  void everySplitAgreesWithTheDefinition() {
    QFETCH(QByteArray, text);
    QFETCH(QByteArrayList, stops);
    const std::string whole = text.toStdString();
    const std::vector<std::string> stopList = toStd(stops);
    const std::string expected = cutAtEarliestStop(whole, stopList);
    for (size_t i = 0; i <= whole.size(); ++i) {
      for (size_t j = i; j <= whole.size(); ++j) {
        StopMatcher matcher(stopList);
        std::string shown;
        for (const std::string& piece :
             {whole.substr(0, i), whole.substr(i, j - i), whole.substr(j)}) {
          shown += matcher.push(piece).text;
          if (matcher.stopped()) break;
          // A proper prefix held back is never longer than the longest stop string minus one.
          size_t longest = 0;
          for (const std::string& stop : stopList) longest = std::max(longest, stop.size());
          QVERIFY(matcher.heldBackBytes() < longest);
        }
        if (!matcher.stopped()) shown += matcher.flush();
        if (shown != expected) {
          QFAIL(qPrintable(QStringLiteral("split at %1, %2: shown \"%3\"")
                               .arg(i).arg(j).arg(QString::fromStdString(shown))));
        }
      }
    }
  }

  void emptyStopStringIsRejected() {
    QVERIFY_THROWS_EXCEPTION(Error, StopMatcher({"ok", ""}));
  }

  void flushAfterStopIsEmpty() {
    StopMatcher matcher({"END"});
    QCOMPARE(matcher.push("xyEND").text, std::string("xy"));
    QCOMPARE(matcher.flush(), std::string());
    QCOMPARE(matcher.push("more").stopped, true);
  }
};

QTEST_APPLESS_MAIN(TestStopMatcher)
#include "test_stop_matcher.moc"
