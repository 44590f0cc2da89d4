#pragma once
// The AppController opens its database on the store thread and returns at once (the window shows
// "Opening your chats…" meanwhile): a test that reads the chats, the app settings or the notice
// right after constructing one waits for the open to end first.
#include <QtTest>

#include "controller/app_controller.h"

namespace ember::test {

inline bool waitForStoreOpen(ember::app::AppController& controller, int timeoutMs = 60000) {
  return QTest::qWaitFor([&] { return !controller.storeOpening(); }, timeoutMs);
}

}  // namespace ember::test
