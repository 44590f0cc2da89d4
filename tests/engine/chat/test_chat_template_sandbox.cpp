// The renderer's safety properties (RELIABILITY.md, "Model files" 9): hostile templates get no
// access to anything (the CVE-2024-34359 payloads against llama-cpp-python, refused here as
// Python's sandboxed Jinja2 refuses them, which the test also checks); loops, macro recursion,
// nesting and output size are bounded (limits are errors, not crashes); and a template that
// uses something unsupported fails with its line and column.
#include <QDir>
#include <QFileInfo>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include "chat/chat_template.h"
#include "jinja2_reference.h"

using ember::chat::ChatTemplate;
using ember::chat::RenderOptions;
using ember::chat::TemplateError;
using ember::chat::TemplateErrorKind;
using ember::test::Json;

Q_DECLARE_METATYPE(ember::chat::TemplateErrorKind)

namespace {

// Renders and returns the error, or fails the test when the render succeeds.
std::optional<TemplateError> renderError(const std::string& source, const RenderOptions& options = {},
                                         const Json& variables = Json::object()) {
  try {
    ChatTemplate::parse(source).render(variables, options);
  } catch (const TemplateError& e) {
    return e;
  }
  return std::nullopt;
}

}  // namespace

class ChatTemplateSandbox : public QObject {
  Q_OBJECT

 private slots:
  void hostileTemplatesGetNoAccess_data();
  void hostileTemplatesGetNoAccess();
  void limitsStopRunawayTemplates_data();
  void limitsStopRunawayTemplates();
  void limitsAreConfigurable();
  void unboundedRecursionFailsInJinja2Too();
  void selfContainingNamespacePrintsLikeJinja2();
  void deepValuesAreLimitsNotCrashes();
  void errorsCarryLineAndColumn_data();
  void errorsCarryLineAndColumn();
};

void ChatTemplateSandbox::hostileTemplatesGetNoAccess_data() {
  QTest::addColumn<QString>("payload");
  // %1 is replaced by a marker file path that a successful escape would create.
  QTest::newRow("cve-2024-34359 self globals")
      << "{{ self.__init__.__globals__.__builtins__.__import__('os').popen('touch %1').read() }}";
  QTest::newRow("cycler globals") << "{{ cycler.__init__.__globals__.os.popen('touch %1').read() }}";
  QTest::newRow("joiner globals") << "{{ joiner.__init__.__globals__ }}";
  QTest::newRow("namespace globals") << "{{ namespace.__init__.__globals__['os'] }}";
  QTest::newRow("subclasses walk")
      << "{% for c in [].__class__.__base__.__subclasses__() %}{% if c.__name__ == "
         "'catch_warnings' %}{{ c()._module.__builtins__['__import__']('os').system('touch %1') "
         "}}{% endif %}{% endfor %}";
  QTest::newRow("mro") << "{{ messages.__class__.__mro__[1].__subclasses__() }}";
  QTest::newRow("item dunder") << "{{ messages['__class__']['__init__'] }}";
  QTest::newRow("environment names") << "{{ env }}{{ os }}{{ config }}{{ request }}{{ __builtins__ }}";
  QTest::newRow("mutation") << "{{ messages.append({'role': 'system'}) }}{{ messages[0].update({}) }}";
}

void ChatTemplateSandbox::hostileTemplatesGetNoAccess() {
  QFETCH(QString, payload);
  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  const QString marker = dir.filePath("escaped");
  const std::string source =
      (payload.contains("%1") ? payload.arg(marker) : payload).toStdString();
  const Json variables{{"messages", Json::array({Json{{"role", "user"}, {"content", "hi"}}})}};

  // The reference sandbox (Python's Jinja2 as HF sets it up) refuses it too.
  std::map<std::string, ember::test::ReferenceResult> reference;
  EMBER_REQUIRE_JINJA2(std::vector<ember::test::ReferenceCase>({{"payload", source, variables}}), &reference);
  QVERIFY(!reference["payload"].ok || reference["payload"].output.empty());

  std::string output;
  try {
    output = ChatTemplate::parse(source).render(variables);
  } catch (const TemplateError& e) {
    QVERIFY2(e.kind() == TemplateErrorKind::Security || e.kind() == TemplateErrorKind::Undefined,
             e.what());
  }
  QCOMPARE(QString::fromStdString(output), QString());
  QVERIFY2(!QFileInfo::exists(marker), "a template escaped the sandbox");
}

void ChatTemplateSandbox::limitsStopRunawayTemplates_data() {
  QTest::addColumn<QString>("source");
  QTest::addColumn<QString>("mentions");
  QTest::newRow("nested range loops (10^10 iterations)")
      << "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"
      << "loop iterations";
  QTest::newRow("unbounded macro recursion")
      << "{% macro r(n) %}{{ r(n + 1) }}{% endmacro %}{{ r(0) }}" << "macro calls nest";
  QTest::newRow("huge output") << "{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}"
                               << "rendered text exceeds";
  QTest::newRow("huge string in one step") << "{{ 'x' * 1000000000000 }}" << "exceeds the limit";
  QTest::newRow("doubling a string")
      << "{% set ns = namespace(s='xy') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}"
         "{% endfor %}{{ ns.s | length }}"
      << "exceeds the limit";
  QTest::newRow("doubling a list")
      << "{% set ns = namespace(l=[1]) %}{% for i in range(64) %}{% set ns.l = ns.l + ns.l %}"
         "{% endfor %}"
      << "exceeds the limit|built more than";
  QTest::newRow("deep nesting at parse time")
      << QString("{{ ") + QString("(").repeated(5000) + "1" + QString(")").repeated(5000) + " }}"
      << "nests deeper";
  QTest::newRow("deep blocks times deep recursion")
      << "{% macro r(d) %}" + QString("{% if true %}").repeated(200) +
             "{{ r(d + 1) }}" + QString("{% endif %}").repeated(200) + "{% endmacro %}{{ r(0) }}"
      << "nests deeper than \\d+ levels while rendering";
  QTest::newRow("deep block nesting")
      << QString("{% if true %}").repeated(3000) + QString("{% endif %}").repeated(3000)
      << "nests deeper";
}

void ChatTemplateSandbox::limitsStopRunawayTemplates() {
  QFETCH(QString, source);
  QFETCH(QString, mentions);
  const auto error = renderError(source.toStdString());
  QVERIFY2(error, "the template rendered instead of hitting a limit");
  QVERIFY2(error->kind() == TemplateErrorKind::Limit, error->what());
  QVERIFY2(QString::fromStdString(error->message()).contains(QRegularExpression(mentions)),
           error->what());
}

void ChatTemplateSandbox::limitsAreConfigurable() {
  RenderOptions options;
  options.limits.maxOutputBytes = 16;
  options.limits.maxLoopIterations = 10;
  options.limits.maxCallDepth = 3;
  const Json none = Json::object();
  QCOMPARE(ChatTemplate::parse("{{ 'a' * 16 }}").render(none, options), std::string(16, 'a'));
  QVERIFY(renderError("{{ 'a' * 17 }}", options));
  QCOMPARE(ChatTemplate::parse("{% for i in range(10) %}.{% endfor %}").render(none, options),
           std::string(10, '.'));
  QVERIFY(renderError("{% for i in range(11) %}.{% endfor %}", options));
  const std::string recursion =
      "{% macro r(n) %}{% if n > 0 %}{{ r(n - 1) }}{% endif %}.{% endmacro %}";
  QCOMPARE(ChatTemplate::parse(recursion + "{{ r(2) }}").render(none, options), std::string("..."));
  const auto tooDeep = renderError(recursion + "{{ r(3) }}", options);
  QVERIFY(tooDeep && tooDeep->kind() == TemplateErrorKind::Limit);
}

// Jinja2 itself has no bound but Python's recursion limit; the same template fails there too.
void ChatTemplateSandbox::unboundedRecursionFailsInJinja2Too() {
  const std::string source = "{% macro r(n) %}{{ r(n + 1) }}{% endmacro %}{{ r(0) }}";
  std::map<std::string, ember::test::ReferenceResult> reference;
  EMBER_REQUIRE_JINJA2(std::vector<ember::test::ReferenceCase>({{"r", source, Json::object()}}), &reference);
  QVERIFY(!reference["r"].ok);
  QVERIFY(renderError(source));
}

// A namespace is the one value a template can make hold itself. Python's repr marks a value
// already being printed with "{...}" / "[...]"; the fuzzer found the renderer recursing until
// the stack ran out instead. Reference: the same templates rendered by Python's Jinja2.
void ChatTemplateSandbox::selfContainingNamespacePrintsLikeJinja2() {
  const std::vector<ember::test::ReferenceCase> cases = {
      {"itself", "{% set ns = namespace(n=0) %}{% set ns.n = ns %}{{ ns }}", Json::object()},
      {"through containers",
       "{% set ns = namespace(n=0) %}{% set ns.n = [ns, {'a': ns}] %}{{ ns }}|{{ ns.n }}|{{ ns|string }}",
       Json::object()},
      {"attribute chain", "{% set ns = namespace(n=0) %}{% set ns.n = ns %}{{ ns.n.n.n }}",
       Json::object()},
      {"two namespaces",
       "{% set a = namespace() %}{% set b = namespace(a=a) %}{% set a.b = b %}{{ a }}|{{ [b, b] }}",
       Json::object()},
  };
  std::map<std::string, ember::test::ReferenceResult> reference;
  EMBER_REQUIRE_JINJA2(cases, &reference);
  for (const auto& c : cases) {
    const auto& expected = reference[c.id];
    QVERIFY2(expected.ok, expected.message.c_str());
    QCOMPARE(ChatTemplate::parse(c.templateSource).render(Json::object()), expected.output);
  }
}

// Values nested deeper than any walk over them can recurse: a list wrapped 20000 times is
// refused when built, a chain of namespaces (each holding the next) renders and is
// freed without recursing per link, and printing such a chain is refused. Each of these ran
// the thread out of stack before (SIGSEGV; a stack-overflow report under ASan).
void ChatTemplateSandbox::deepValuesAreLimitsNotCrashes() {
  const auto nested = renderError(
      "{% set ns = namespace(l=[]) %}{% for i in range(20000) %}{% set ns.l = [ns.l] %}"
      "{% endfor %}{{ ns.l }}");
  QVERIFY2(nested, "a list nested 20000 deep rendered");
  QVERIFY2(nested->kind() == TemplateErrorKind::Limit, nested->what());
  QVERIFY2(std::string(nested->what()).find("nests deeper than 1000 levels") != std::string::npos,
           nested->what());
  const auto nestedDict = renderError(
      "{% set ns = namespace(d={}) %}{% for i in range(5000) %}{% set ns.d = {'k': ns.d} %}"
      "{% endfor %}");
  QVERIFY2(nestedDict && nestedDict->kind() == TemplateErrorKind::Limit,
           nestedDict ? nestedDict->what() : "a dict nested 5000 deep rendered");

  // range() is capped at 100000 items, as in Jinja2's sandbox: two loops make the chain.
  const std::string chain =
      "{% set ns = namespace(n=none) %}{% for i in range(1000) %}{% for j in range(300) %}"
      "{% set ns.n = namespace(n=ns.n) %}{% endfor %}{% endfor %}";
  QCOMPARE(ChatTemplate::parse(chain + "{{ ns.n.n.n.n is none }}").render(Json::object()),
           std::string("False"));
  const auto printed = renderError(chain + "{{ ns }}");
  QVERIFY2(printed && printed->kind() == TemplateErrorKind::Limit,
           printed ? printed->what() : "a chain of 300000 namespaces printed");
  // 999 levels still print, as in Python (whose recursion limit is 1000 frames).
  QVERIFY(ChatTemplate::parse("{% set ns = namespace(l=[]) %}{% for i in range(998) %}"
                              "{% set ns.l = [ns.l] %}{% endfor %}{{ ns.l|length }}")
              .render(Json::object()) == "1");
}

void ChatTemplateSandbox::errorsCarryLineAndColumn_data() {
  QTest::addColumn<QString>("source");
  QTest::addColumn<TemplateErrorKind>("kind");
  QTest::addColumn<int>("line");
  QTest::addColumn<int>("column");
  // Lines and columns are 1-based; columns count characters (code points), not bytes.
  using K = TemplateErrorKind;
  QTest::newRow("unknown tag") << "line one\n{% frobnicate %}" << K::Syntax << 2 << 4;
  QTest::newRow("unknown filter") << "a\n{{ 'x' | no_such_filter }}" << K::Unsupported << 2 << 10;
  QTest::newRow("column counts characters")
      << "안녕 {{ x | no_such_filter }}" << K::Unsupported << 1 << 11;
  QTest::newRow("include") << "{% include 'other.jinja' %}" << K::Unsupported << 1 << 4;
  QTest::newRow("recursive loop") << "{% for x in items recursive %}{% endfor %}" << K::Unsupported
                                  << 1 << 19;
  QTest::newRow("unterminated string") << "ok\n{{ 'abc }}" << K::Syntax << 2 << 4;
  QTest::newRow("unbalanced parenthesis") << "{% if x %}\n  {{ y.z( }}\n{% endif %}" << K::Syntax
                                          << 2 << 11;
  QTest::newRow("unclosed block") << "{% for x in y %}\n{{ x }}" << K::Syntax << 2 << 8;
  QTest::newRow("unsupported string method at render")
      << "{{ 'abc'.zfill(5) }}" << K::Unsupported << 1 << 15;
  QTest::newRow("printf star width at render") << "{{ '%*d' % (3, 1) }}" << K::Unsupported << 1 << 10;
  QTest::newRow("undefined at render") << "line1\n  {{ missing.attr }}" << K::Undefined << 2 << 13;
  QTest::newRow("raise_exception")
      << "{% if true %}\n{{ raise_exception('no system role') }}{% endif %}" << K::Raised << 2 << 19;
}

void ChatTemplateSandbox::errorsCarryLineAndColumn() {
  QFETCH(QString, source);
  QFETCH(TemplateErrorKind, kind);
  QFETCH(int, line);
  QFETCH(int, column);
  const auto error = renderError(source.toStdString());
  QVERIFY2(error, "expected an error");
  QVERIFY2(error->kind() == kind, error->what());
  QCOMPARE(error->line(), line);
  QCOMPARE(error->column(), column);
  const QString where = QStringLiteral("line %1, column %2").arg(line).arg(column);
  QVERIFY2(QString::fromUtf8(error->what()).contains(where), error->what());
}

QTEST_GUILESS_MAIN(ChatTemplateSandbox)
#include "test_chat_template_sandbox.moc"
