// The gateway's checks on their own. References: RFC 9110 (Authorization is a singleton field,
// 11.6.2 and 5.3; the Host header, 7.2), RFC 6761 / RFC 4291 for what is loopback (127.0.0.0/8,
// ::1, "localhost"), and hand-computed token-bucket levels (a bucket of N per minute refills
// N/60 per second up to N). The comparison's constant time is by construction (SHA-256 of the
// presented key, then CRYPTO_memcmp over every stored digest); what is tested is its answer for
// equal, unequal and different-length keys.
#include <QtTest>

#include "ember/error.h"
#include "server/gateway.h"

using namespace ember;
using namespace ember::openai;
using Clock = TokenBucket::Clock;

class OpenAiGatewayTest : public QObject {
  Q_OBJECT
 private slots:
  void keysAreIdentifiedExactly() {
    ApiKeys keys;
    keys.add("sk-first-0123456789");
    keys.add("sk-second");
    QCOMPARE(keys.identify("sk-first-0123456789").value_or(""), std::string("key-1"));
    QCOMPARE(keys.identify("sk-second").value_or(""), std::string("key-2"));
    // Same length, one byte different (first, middle, last).
    for (const char* near : {"tk-first-0123456789", "sk-first-0123556789", "sk-first-0123456788"})
      QVERIFY2(!keys.identify(near), near);
    // Different lengths: a prefix, the key plus a byte, a key with a NUL inside, and empty.
    QVERIFY(!keys.identify("sk-first-012345678"));
    QVERIFY(!keys.identify("sk-first-0123456789x"));
    QVERIFY(!keys.identify(std::string("sk-second\0", 10)));
    QVERIFY(!keys.identify("sk-firstsk-second"));
    QVERIFY(!keys.identify(""));
    QVERIFY_THROWS_EXCEPTION(Error, keys.add(""));
  }

  void oneCredentialPerRequest() {
    QCOMPARE(presentedKey("Bearer abc", ""), std::string("abc"));
    QCOMPARE(presentedKey("bearer abc", ""), std::string("abc"));  // the scheme is case-insensitive
    QCOMPARE(presentedKey("Basic abc", ""), std::string());
    QCOMPARE(presentedKey("Bearer ", ""), std::string());
    QCOMPARE(presentedKey("Bearer abc", "xyz"), std::string("xyz"));
    QVERIFY(!conflictingKeys({}, {}));
    QVERIFY(!conflictingKeys({"Bearer abc"}, {}));
    QVERIFY(!conflictingKeys({}, {"abc"}));
    QVERIFY(!conflictingKeys({"Bearer abc"}, {"abc"}));        // both, the same key
    QVERIFY(conflictingKeys({"Bearer abc"}, {"abd"}));          // both, different keys
    QVERIFY(conflictingKeys({"Bearer abc", "Bearer abc"}, {}));  // a repeated singleton field
    QVERIFY(conflictingKeys({"Bearer right", "Bearer wrong"}, {}));
    QVERIFY(conflictingKeys({}, {"right", "wrong"}));
  }

  void loopbackIsNumericOrLocalhost() {
    for (const char* yes : {"127.0.0.1", "127.1.2.3", "127.255.255.255", "::1", "localhost",
                            "LOCALHOST", "0:0:0:0:0:0:0:1"})
      QVERIFY2(isLoopbackHost(yes), yes);
    // Names that merely start like a loopback address resolve wherever their owner wants.
    for (const char* no : {"0.0.0.0", "::", "10.0.0.1", "128.0.0.1", "127.0.0.1.example.com",
                           "127.evil.example", "localhost.example.com", "", "::ffff:10.0.0.1"})
      QVERIFY2(!isLoopbackHost(no), no);
  }

  void hostHeaderMustNameTheServer() {
    QVERIFY(hostAllowed("127.0.0.1:8080", "127.0.0.1", {}));
    QVERIFY(hostAllowed("localhost:1", "127.0.0.1", {}));
    QVERIFY(hostAllowed("[::1]:8080", "127.0.0.1", {}));
    QVERIFY(!hostAllowed("127.0.0.1.rebind.example:8080", "127.0.0.1", {}));  // DNS rebinding
    QVERIFY(!hostAllowed("evil.example.com", "127.0.0.1", {}));
    QVERIFY(!hostAllowed("", "127.0.0.1", {}));  // HTTP/1.1 requires Host (RFC 9110 7.2)
    QVERIFY(hostAllowed("ember.lan:8080", "127.0.0.1", {"ember.lan"}));
    QVERIFY(hostAllowed("10.0.0.5:8080", "10.0.0.5", {}));
    QVERIFY(!hostAllowed("10.0.0.6:8080", "10.0.0.5", {}));
  }

  void tokenBucketRefillsEvenly() {
    const Clock::time_point t0{};
    TokenBucket bucket(60, t0);  // one a second, burst 60
    for (int i = 0; i < 60; ++i) QVERIFY(!bucket.take(1, t0));
    const auto wait = bucket.take(1, t0);
    QVERIFY(wait && qFuzzyCompare(*wait, 1.0));  // empty: one unit in 60 s / 60
    QVERIFY(!bucket.take(1, t0 + std::chrono::seconds(1)));
    QVERIFY(bucket.take(1, t0 + std::chrono::seconds(1)));
    // Overdrawn by a large charge: level -100 + 60 refilled over a minute... still short.
    TokenBucket tokens(60, t0);
    tokens.charge(160, t0);  // level 60 - 160 = -100
    const auto tokenWait = tokens.take(0, t0);
    QVERIFY(tokenWait && qFuzzyCompare(*tokenWait, 100.0));  // 100 units at 1 a second
    QVERIFY(tokens.take(0, t0 + std::chrono::seconds(99)));
    QVERIFY(!tokens.take(0, t0 + std::chrono::seconds(100)));
  }

  void rateLimitsArePerKey() {
    RateLimiter limiter(2, 0);
    QVERIFY(!limiter.admit("key-1"));
    QVERIFY(!limiter.admit("key-1"));
    const auto refusal = limiter.admit("key-1");
    QVERIFY(refusal);
    QCOMPARE(refusal->reason, std::string("rate_limit"));
    QVERIFY(refusal->retryAfterSeconds >= 29 && refusal->retryAfterSeconds <= 30);  // 60 s / 2
    QVERIFY(!limiter.admit("key-2"));  // another key has its own bucket

    RateLimiter tokens(0, 100);
    QVERIFY(!tokens.admit("key-1"));
    tokens.chargeTokens("key-1", 150);  // 100 - 150 = -50: 30 s to refill at 100/min
    const auto tokenRefusal = tokens.admit("key-1");
    QVERIFY(tokenRefusal);
    QCOMPARE(tokenRefusal->reason, std::string("tokens"));
    QVERIFY(tokenRefusal->retryAfterSeconds >= 29 && tokenRefusal->retryAfterSeconds <= 30);
    QVERIFY(!tokens.admit("key-2"));
  }
};

QTEST_GUILESS_MAIN(OpenAiGatewayTest)
#include "test_openai_gateway.moc"
