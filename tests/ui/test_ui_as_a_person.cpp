// The real `ember` window on the real default model, driven the way a person drives it: an X
// server (Xvfb) of its own, keys typed and pasted with xdotool/xclip (no test hooks, no test
// environment variables in the app), pictures taken with ImageMagick's `import` and read back
// with OCR (tesseract). xdotool gives the new window the input focus as a window manager would
// (there is none under Xvfb); everything after that is typing.
// References: the store (SQLite, read-only while the app runs) must hold exactly what was typed,
// so the first keys typed right after the window appeared reached the composer; the words the
// bubble promises while a long prompt is read ("Reading prompt N/M tokens"), read off the
// screen by OCR; Esc stops the second answer and it is kept as stopped. Pictures land in
// <build>/bin/ui-person/. Runtime: about a minute.
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>
#include <sqlite3.h>

#include "common/test_paths.h"

namespace {
constexpr auto kModel = "SmolLM2-135M-Instruct.Q4_1.gguf";

// Rows of a read-only query on the running app's database (WAL allows a concurrent reader).
QList<QStringList> query(const QString& dbPath, const char* sql) {
  QList<QStringList> rows;
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(dbPath.toUtf8().constData(), &db, SQLITE_OPEN_READONLY, nullptr) ==
      SQLITE_OK) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr) == SQLITE_OK) {
      while (sqlite3_step(stmt) == SQLITE_ROW) {
        QStringList row;
        for (int c = 0; c < sqlite3_column_count(stmt); ++c)
          row << QString::fromUtf8(reinterpret_cast<const char*>(sqlite3_column_text(stmt, c)));
        rows << row;
      }
    }
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db);
  return rows;
}

// A long, plain prompt (about 2,500 tokens, within the 3,584 the default context leaves for a
// prompt): numbered notes a person might paste.
QString longPrompt() {
  QString text = QStringLiteral("Here are my meeting notes. Summarise them in one sentence.\n");
  for (int i = 1; i <= 100; ++i)
    text += QStringLiteral("Note %1: the team reviewed item %1 of the plan and agreed to revisit "
                           "it next week.\n").arg(i);
  return text;
}

}  // namespace

class UiAsAPerson : public QObject {
  Q_OBJECT
  QString display_;
  QProcess xvfb_;
  QString outputDir_;
  QStringList lastRead_;  // the words findOnScreen read last

  QProcessEnvironment xEnv() const {
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("DISPLAY", display_);
    return env;
  }
  // Runs an X tool on our display; its exit code (-1 when it did not start) and output.
  int x(const QString& program, const QStringList& args, QByteArray* out = nullptr,
        int timeoutMs = 30000) {
    QProcess p;
    p.setProcessEnvironment(xEnv());
    p.start(program, args);
    if (!p.waitForStarted(5000)) return -1;
    if (!p.waitForFinished(timeoutMs)) {
      p.kill();
      p.waitForFinished();
      return -1;
    }
    if (out) *out = p.readAllStandardOutput();
    return p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
  }
  struct Word {
    QString text;
    QRect box;
  };
  // The words tesseract reads on a picture, with where they are (its TSV output). psm 11 looks
  // for sparse text; psm 3 lays the picture out as a page first.
  QList<Word> words(const QString& png, const char* psm = "11") {
    QByteArray tsv;
    x("tesseract", {png, "-", "--psm", psm, "tsv"}, &tsv, 60000);
    QList<Word> out;
    for (const QByteArray& line : tsv.split('\n')) {
      const QList<QByteArray> f = line.split('\t');
      if (f.size() < 12 || f[0] == "level" || f[11].trimmed().isEmpty()) continue;
      out << Word{QString::fromUtf8(f[11]).trimmed(),
                  QRect(f[6].toInt(), f[7].toInt(), f[8].toInt(), f[9].toInt())};
    }
    return out;
  }
  // Looks at the screen until `text` shows inside `region`; its centre, or (-1, -1). Only the
  // region is read, scaled up twice: small bold text on a highlighted row is read far more
  // reliably that way than inside a whole-screen picture, whose layout (a long streamed answer
  // beside it) changes from run to run. What was read last is kept in lastRead_ for the failure
  // message.
  QPoint findOnScreen(const QString& text, const QRect& region, int timeoutMs = 30000) {
    const QString geometry = QStringLiteral("%1x%2+%3+%4")
                                 .arg(region.width()).arg(region.height())
                                 .arg(region.x()).arg(region.y());
    const QString part = QDir(outputDir_).filePath(QStringLiteral("look-part.png"));
    QElapsedTimer clock;
    clock.start();
    while (clock.elapsed() < timeoutMs) {
      const QString shot = screenshot(QStringLiteral("look.png"));
      if (!shot.isEmpty() &&
          x("convert", {shot, "-crop", geometry, "+repage", "-resize", "200%", part}) == 0) {
        // Each layout mode misses a highlighted row now and then (psm 11 missed the sidebar's
        // selected chat in every picture of one run that psm 3 read), so both are tried.
        lastRead_.clear();
        for (const char* psm : {"11", "3"}) {
          for (const Word& w : words(part, psm)) {
            lastRead_ << w.text;
            if (w.text.startsWith(text)) return region.topLeft() + w.box.center() / 2;
          }
        }
      }
      QTest::qWait(300);
    }
    return {-1, -1};
  }
  QByteArray notFound(const char* what) const {
    return QByteArray(what) + "; OCR read there: " + lastRead_.join(' ').toUtf8();
  }
  int click(QPoint at, int button = 1) {
    return x("xdotool", {"mousemove", QString::number(at.x()), QString::number(at.y()), "click",
                         QString::number(button)});
  }
  QString screenshot(const QString& name) {
    const QString path = QDir(outputDir_).filePath(name);
    return x("import", {"-window", "root", path}) == 0 ? path : QString();
  }
 private slots:
  void initTestCase() {
    for (const char* tool : {"Xvfb", "xdotool", "xclip", "import", "convert", "tesseract"}) {
      if (QStandardPaths::findExecutable(QString::fromLatin1(tool)).isEmpty()) {
        const QByteArray why = QByteArray(tool) + " not found (scripts/common.sh installs it)";
        if (ember::test::underCi()) QFAIL(why.constData());
        QSKIP(why.constData());
      }
    }
    outputDir_ = QDir(QCoreApplication::applicationDirPath()).filePath("ui-person");
    QDir(outputDir_).removeRecursively();
    QDir().mkpath(outputDir_);
    // A display number nobody uses.
    for (int n = 140 + int(QCoreApplication::applicationPid() % 50); n < 240; ++n) {
      if (QFile::exists(QStringLiteral("/tmp/.X%1-lock").arg(n))) continue;
      display_ = QStringLiteral(":%1").arg(n);
      xvfb_.start("Xvfb", {display_, "-screen", "0", "1280x800x24", "-nolisten", "tcp"});
      QVERIFY(xvfb_.waitForStarted(5000));
      if (QTest::qWaitFor([&] { return QFile::exists(QStringLiteral("/tmp/.X11-unix/X%1").arg(n)); },
                          5000))
        break;
      xvfb_.kill();
      xvfb_.waitForFinished();
      display_.clear();
    }
    QVERIFY2(!display_.isEmpty(), "no free X display for Xvfb");
  }

  void cleanupTestCase() {
    if (xvfb_.state() != QProcess::NotRunning) {
      xvfb_.terminate();
      xvfb_.waitForFinished(5000);
    }
  }

  void typeAtOnceThenWatchALongPromptBeingRead() {
    EMBER_REQUIRE_MODEL(model, kModel);
    QTemporaryDir data;
    const QString db = data.filePath("ember/ember.sqlite");
    QProcessEnvironment env = xEnv();
    env.insert("XDG_DATA_HOME", data.path());
    env.insert("XDG_CONFIG_HOME", data.filePath("config"));
    env.insert("EMBER_MODELS_DIR", ember::test::modelsDir());
    env.insert("QT_QPA_PLATFORM", "xcb");
    QProcess app;
    app.setProcessEnvironment(env);
    app.setProcessChannelMode(QProcess::MergedChannels);
    app.start(ember::test::builtProgram("ember"), {"--model", model});
    QVERIFY2(app.waitForStarted(30000), qPrintable(app.errorString()));
    auto appLog = [&] { return QString::fromUtf8(app.readAll()); };

    // The window appears; it gets the focus and the person types at once (the model may still
    // be loading: the message then waits and goes out when it is ready).
    QByteArray window;
    QVERIFY2(x("xdotool", {"search", "--sync", "--onlyvisible", "--name", "^Ember"}, &window,
               60000) == 0, qPrintable(appLog()));
    const QString windowId = QString::fromLatin1(window).split('\n').first().trimmed();
    QCOMPARE(x("xdotool", {"windowfocus", "--sync", windowId}), 0);
    const QString question = QStringLiteral("Name one planet.");
    QCOMPARE(x("xdotool", {"type", "--delay", "20", question}), 0);
    QCOMPARE(x("xdotool", {"key", "Return"}), 0);
    const auto answerStatus = [&] {
      const auto rows = query(db, "SELECT status FROM messages WHERE role = 'assistant' "
                              "ORDER BY id DESC LIMIT 1");
      return rows.isEmpty() ? QString() : rows.first().first();
    };
    // The answer is sampled with the app's default random seed, so its length varies from run
    // to run: a few seconds in a plain build, but a long one under ASan on a busy 2-core machine
    // (about 12 tokens/s) outlasted two minutes. A person would stop it there: Esc, and the
    // answer is kept as stopped.
    const auto answerLength = [&] {
      const auto rows = query(db, "SELECT length(content) FROM messages WHERE "
                                  "role = 'assistant' ORDER BY id DESC LIMIT 1");
      return rows.isEmpty() ? 0 : rows.first().first().toInt();
    };
    const auto complete = [&] { return answerStatus() == QLatin1String("complete"); };
    const auto streaming = [&] {
      return answerStatus() == QLatin1String("streaming") && answerLength() > 0;
    };
    const auto answerState = [&] {
      return QStringLiteral("the answer's status: '%1', %2 characters; the app: %3")
          .arg(answerStatus())
          .arg(answerLength())
          .arg(appLog())
          .toUtf8();
    };
    // Under ASan the model's load and the prompt take up to a few minutes on a busy machine.
    QVERIFY2(QTest::qWaitFor([&] { return complete() || streaming(); }, 300000),
             answerState().constData());
    if (!QTest::qWaitFor(complete, 120000)) {
      QCOMPARE(x("xdotool", {"key", "Escape"}), 0);
      QVERIFY2(QTest::qWaitFor([&] { return complete() ||
                                            answerStatus() == QLatin1String("stopped"); }, 60000),
               answerState().constData());
    }
    QVERIFY(answerLength() > 0);
    const auto typed = query(db, "SELECT content FROM messages WHERE role = 'user'");
    QCOMPARE(typed.size(), 1);
    QCOMPARE(typed.first().first(), question);  // every key reached the composer
    QTest::qWait(300);                           // the last frame is drawn
    const QString answered = screenshot("1-typed-at-once-answered.png");
    QVERIFY(!answered.isEmpty());

    // A long prompt, pasted: the bubble shows the prompt being read.
    QTemporaryDir tmp;
    const QString promptFile = tmp.filePath("prompt.txt");
    {
      QFile f(promptFile);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write(longPrompt().toUtf8());
    }
    QCOMPARE(x("xclip", {"-selection", "clipboard", "-i", promptFile}), 0);
    QCOMPARE(x("xdotool", {"key", "ctrl+v"}), 0);
    QTest::qWait(300);
    QCOMPARE(x("xdotool", {"key", "Return"}), 0);
    // Pictures while it reads, until text starts to stream; OCR afterwards. Until the app has
    // written the second answer's row, the newest assistant row is still the first (ended)
    // answer, so the loop looks at the second row only.
    const auto secondAnswer = [&] {
      const auto rows = query(db, "SELECT status, length(content) FROM messages WHERE "
                                  "role = 'assistant' ORDER BY id LIMIT 1 OFFSET 1");
      return rows.isEmpty() ? QStringList() : rows.first();
    };
    const auto secondReadOrDone = [&] {
      const QStringList row = secondAnswer();
      return !row.isEmpty() && (row.at(0) == QLatin1String("complete") ||
                                (row.at(0) == QLatin1String("streaming") && row.at(1).toInt() > 0));
    };
    QStringList pictures;
    QElapsedTimer clock;
    clock.start();
    while (clock.elapsed() < 120000 && pictures.size() < 40) {
      if (secondReadOrDone()) break;
      const QString p = screenshot(QStringLiteral("reading-%1.png").arg(pictures.size()));
      if (!p.isEmpty()) pictures << p;
    }
    QVERIFY2(!pictures.isEmpty(), "the prompt was read before any picture could be taken");
    // The newest bubble sits right above the composer, under the long prompt's bubble. Only that
    // band of the chat pane is read, scaled up twice: beside the prompt's large text, tesseract
    // misreads the bubble's small grey status line (always so with Qt Quick's software renderer).
    const QString band = QDir(outputDir_).filePath(QStringLiteral("reading-band.png"));
    QString seen;
    QString readingPicture;
    for (const QString& p : pictures) {
      QByteArray text;
      if (x("convert", {p, "-crop", "920x300+260+350", "+repage", "-resize", "200%", band}) != 0)
        continue;
      x("tesseract", {band, "-", "--psm", "3"}, &text, 60000);
      seen = QString::fromUtf8(text);
      if (seen.contains(QStringLiteral("Reading prompt"))) {
        readingPicture = QDir(outputDir_).filePath("2-reading-prompt.png");
        QFile::remove(readingPicture);
        QFile::copy(p, readingPicture);
        break;
      }
    }
    QVERIFY2(!readingPicture.isEmpty(),
             qPrintable(QStringLiteral("no picture of %1 shows \"Reading prompt\"; last OCR: %2")
                            .arg(pictures.size()).arg(seen)));
    for (const QString& p : pictures) QFile::remove(p);
    QFile::remove(band);
    // Once text streams the person has seen enough and presses Esc: this small model often
    // rambles on such a prompt (counting to 500 in one run: 1,623 tokens, two minutes of a plain
    // build). The answer keeps what arrived and is marked stopped. Plain builds read the
    // 2,505-token prompt in seconds; under ASan on a busy 2-core machine it took over 200 s
    // (12 tokens/s), hence the generous limit.
    QVERIFY(QTest::qWaitFor(secondReadOrDone, 900000));
    if (secondAnswer().value(0) == QLatin1String("streaming"))
      QCOMPARE(x("xdotool", {"key", "Escape"}), 0);
    QVERIFY2(QTest::qWaitFor(
                 [&] {
                   const QString status = secondAnswer().value(0);
                   return status == QLatin1String("stopped") || status == QLatin1String("complete");
                 },
                 60000),
             qPrintable(secondAnswer().join(' ')));
    QVERIFY(secondAnswer().value(1).toInt() > 0);  // what arrived before the Esc is kept
    QTest::qWait(300);
    QVERIFY(!screenshot("3-long-prompt-answered.png").isEmpty());

    // Delete the chat from the sidebar (right-click on it, Delete), then Undo it.
    const QRect sidebar(0, 0, 280, 800);
    const QPoint title = findOnScreen(QStringLiteral("Name"), sidebar);
    QVERIFY2(title.x() >= 0, notFound("the chat's title is not on the screen").constData());
    QCOMPARE(click(title, 3), 0);
    const QPoint del = findOnScreen(QStringLiteral("Delete"), QRect(0, 0, 640, 800));
    QVERIFY2(del.x() >= 0, notFound("no Delete in the menu").constData());
    QCOMPARE(click(del), 0);
    const auto trashed = [&] {
      return query(db, "SELECT deleted_at IS NOT NULL FROM conversations").value(0).value(0);
    };
    QVERIFY(QTest::qWaitFor([&] { return trashed() == QLatin1String("1"); }, 10000));
    const QPoint undo = findOnScreen(QStringLiteral("Undo"), sidebar);
    QVERIFY2(undo.x() >= 0, notFound("no Undo in the sidebar after the delete").constData());
    QVERIFY(!screenshot("4-deleted-with-undo.png").isEmpty());
    QCOMPARE(click(undo), 0);
    QVERIFY(QTest::qWaitFor([&] { return trashed() == QLatin1String("0"); }, 10000));
    QCOMPARE(query(db, "SELECT count(*) FROM messages").value(0).value(0), QStringLiteral("4"));
    QVERIFY2(findOnScreen(QStringLiteral("Name"), sidebar).x() >= 0,  // back in the list
             notFound("the chat is not back in the sidebar").constData());
    QVERIFY(!screenshot("5-undone.png").isEmpty());
    QFile::remove(QDir(outputDir_).filePath("look.png"));
    QFile::remove(QDir(outputDir_).filePath("look-part.png"));
    qInfo("pictures in %s", qPrintable(outputDir_));

    app.terminate();
    QVERIFY(app.waitForFinished(20000));
  }
};

QTEST_GUILESS_MAIN(UiAsAPerson)
#include "test_ui_as_a_person.moc"
