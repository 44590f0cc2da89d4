// ember: the desktop chat app. `ember [--model FILE.gguf]`; without --model it loads the model
// used last, or the default model when it is in the models folder.
#include <QCommandLineParser>
#include <QDir>
#include <QFileInfo>
#include <QGuiApplication>
#include <QIcon>
#include <QPalette>
#include <QQmlApplicationEngine>
#include <QLocalServer>
#include <QLocalSocket>
#include <QLocale>
#include <QQuickStyle>
#include <QQuickWindow>
#include <QStandardPaths>
#include <QtQml/qqmlextensionplugin.h>

#include <cstdio>
#include <string_view>

#include "controller/app_controller.h"
#include "ember/version.h"
#include "controller/translations.h"
#include "controller/ui_test_hook.h"
#include "logging/app_log.h"
#include "server/local_api_server.h"

Q_IMPORT_QML_PLUGIN(EmberPlugin)

namespace {

constexpr auto kDefaultModel = "SmolLM2-135M-Instruct.Q4_1.gguf";

QString modelsCacheDir() {
  const QString fromEnv = qEnvironmentVariable("EMBER_MODELS_DIR");
  return fromEnv.isEmpty() ? QDir::home().filePath(QStringLiteral(".cache/ember/models"))
                           : fromEnv;
}

QString startupModel(const QString& requested, ember::app::AppController& controller) {
  if (!requested.isEmpty()) return QFileInfo(requested).absoluteFilePath();
  const QString last = controller.lastModelPath();  // once the store is open
  if (!last.isEmpty() && QFileInfo::exists(last)) return last;
  const QString fallback = QDir(modelsCacheDir()).filePath(QLatin1String(kDefaultModel));
  return QFileInfo::exists(fallback) ? fallback : QString();
}

// The system palette decides light or dark; EMBER_COLOR_SCHEME=dark forces a dark one (desktops
// without a platform theme, and the screenshots of the dark look).
void applyColorSchemeOverride() {
  if (qEnvironmentVariable("EMBER_COLOR_SCHEME") != QLatin1String("dark")) return;
  // Button and window colours first: QPalette derives the light/mid/dark shades from them.
  QPalette p(QColor(0x33, 0x33, 0x3a), QColor(0x23, 0x23, 0x28));
  p.setColor(QPalette::WindowText, QColor(0xe8, 0xe8, 0xec));
  p.setColor(QPalette::Base, QColor(0x1b, 0x1b, 0x20));
  p.setColor(QPalette::AlternateBase, QColor(0x2a, 0x2a, 0x30));
  p.setColor(QPalette::Text, QColor(0xe8, 0xe8, 0xec));
  p.setColor(QPalette::ButtonText, QColor(0xe8, 0xe8, 0xec));
  p.setColor(QPalette::Highlight, QColor(0x2f, 0x6f, 0xb5));
  p.setColor(QPalette::HighlightedText, Qt::white);
  p.setColor(QPalette::PlaceholderText, QColor(0x8a, 0x8a, 0x94));
  p.setColor(QPalette::ToolTipBase, QColor(0x33, 0x33, 0x3a));
  p.setColor(QPalette::ToolTipText, QColor(0xe8, 0xe8, 0xec));
  p.setColor(QPalette::Disabled, QPalette::Text, QColor(0x70, 0x70, 0x78));
  p.setColor(QPalette::Disabled, QPalette::ButtonText, QColor(0x70, 0x70, 0x78));
  p.setColor(QPalette::Disabled, QPalette::WindowText, QColor(0x70, 0x70, 0x78));
  QGuiApplication::setPalette(p);
}

// One Ember per user and data folder: a second launch asks the first to come forward and exits,
// so two processes never write one database. The name is per data folder (tests use their own).
QString instanceName(const QString& dataDir) {
  return QStringLiteral("ember-") +
         QString::number(qHash(dataDir), 16) + QLatin1Char('-') + qEnvironmentVariable("USER");
}

bool askRunningInstanceToShow(const QString& name) {
  QLocalSocket socket;
  socket.connectToServer(name);
  if (!socket.waitForConnected(1000)) return false;
  socket.write("show\n");
  socket.waitForBytesWritten(1000);
  return true;
}

// --version and --help need no display: answered before the GUI starts.
int answerWithoutDisplay(int argc, char* argv[]) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view a(argv[i]);
    if (a == "--version" || a == "-v") {
      std::puts(EMBER_VERSION_LINE("ember"));
      return 0;
    }
    if (a == "--help" || a == "-h") {
      std::puts("Usage: ember [--model FILE.gguf]\n"
                "Chat with local language models.\n\n"
                "Options:\n"
                "  --model FILE.gguf  The GGUF model to load (default: the model used last).\n"
                "  -h, --help         Displays this help.\n"
                "  -v, --version      Displays version information.");
      return 0;
    }
  }
  return -1;
}

}  // namespace

int main(int argc, char* argv[]) {
  if (const int rc = answerWithoutDisplay(argc, argv); rc >= 0) return rc;
  QGuiApplication app(argc, argv);
  app.setApplicationName(QStringLiteral("ember"));
  app.setApplicationDisplayName(QStringLiteral("Ember"));
  app.setApplicationVersion(QStringLiteral(EMBER_VERSION));
  app.setWindowIcon(QIcon(QStringLiteral(":/resources/ember.svg")));
  QQuickStyle::setStyle(QStringLiteral("Fusion"));  // follows the system palette (light/dark)
  applyColorSchemeOverride();

  QCommandLineParser parser;
  parser.setApplicationDescription(QStringLiteral("Chat with local language models."));
  parser.addHelpOption();
  parser.addVersionOption();
  const QCommandLineOption modelOption(QStringLiteral("model"),
                                       QStringLiteral("The GGUF model to load."),
                                       QStringLiteral("FILE.gguf"));
  parser.addOption(modelOption);
  parser.process(app);

  const QString dataDir = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
  QDir().mkpath(dataDir);
  const QString instance = instanceName(dataDir);
  if (askRunningInstanceToShow(instance)) {
    std::fputs("Ember is already running: its window was brought forward.\n", stdout);
    return 0;
  }
  QLocalServer::removeServer(instance);  // a stale socket left by a crash
  QLocalServer instanceServer;
  instanceServer.setSocketOptions(QLocalServer::UserAccessOption);
  if (!instanceServer.listen(instance))
    std::fprintf(stderr, "ember: cannot listen on %s: %s\n", qPrintable(instance),
                 qPrintable(instanceServer.errorString()));
  ember::app::log::init(QDir(dataDir).filePath(QStringLiteral("logs")));

  ember::app::AppController::Options options;
  options.databasePath = QDir(dataDir).filePath(QStringLiteral("ember.sqlite"));
  options.modelFolders = {modelsCacheDir(), QDir(dataDir).filePath(QStringLiteral("models"))};
  int rc = 0;
  {
    ember::app::AppController controller(options);
    ember::app::AppController::setInstance(&controller);
    // Off unless the user turned it on; serves the same engine as the chats.
    ember::app::LocalApiServer apiServer(&controller.engineHost());
    ember::app::LocalApiServer::setInstance(&apiServer);
    // The saved language is known once the chats are open (on a slow disk, after the window
    // shows): the desktop's until then, and the QML is translated again if it differs.
    QString language = ember::app::installTranslation(app, QStringLiteral("system"));

    QQmlApplicationEngine engine;
    QObject::connect(&engine, &QQmlApplicationEngine::objectCreationFailed, &app,
                     [] { QCoreApplication::exit(1); }, Qt::QueuedConnection);
    engine.load(QUrl(QStringLiteral("qrc:/qt/qml/Ember/Main.qml")));
    if (engine.rootObjects().isEmpty()) return 1;

    QObject::connect(&instanceServer, &QLocalServer::newConnection, &app, [&] {
      while (QLocalSocket* peer = instanceServer.nextPendingConnection()) {
        QObject::connect(peer, &QLocalSocket::disconnected, peer, &QObject::deleteLater);
        for (QObject* root : engine.rootObjects()) {
          if (auto* window = qobject_cast<QQuickWindow*>(root)) {
            window->showNormal();
            window->raise();
            window->requestActivate();
          }
        }
      }
    });
    ember::app::UiTestHook::installIfRequested(&controller, &engine);
    // A model asked for loads at once, beside the chats' opening; otherwise the one used last
    // (a remote one, or a file) once the chats, which keep that choice, are open.
    const bool modelAsked = parser.isSet(modelOption);
    if (modelAsked) controller.loadModel(startupModel(parser.value(modelOption), controller));
    controller.whenStoreOpen([&] {
      const QString saved = ember::app::chooseLanguage(controller.language(),
                                                       QLocale::system().name());
      if (saved != language) {
        language = ember::app::installTranslation(app, controller.language());
        engine.retranslate();
      }
      if (!modelAsked && !controller.restoreRemoteModel())
        controller.loadModel(startupModel({}, controller));
    });
    rc = app.exec();
  }
  ember::app::log::shutdown();
  return rc;
}
