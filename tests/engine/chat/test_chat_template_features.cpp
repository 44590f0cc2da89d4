// One Jinja feature per case (data/feature_cases.json): printing, literals, operators,
// slicing, string and dict methods, filters, tests, whitespace control, scoping, loops,
// macros, the sandbox, and error cases. Each template is rendered by Ember and by Python's
// Jinja2 at test time (tests/tools/render_jinja2.py) and must give the same bytes, or fail
// the same way (the same message; for syntax errors, the same line).
#include <QtTest>

#include "jinja2_reference.h"

using ember::test::Json;

class ChatTemplateFeatures : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase();
  void featureLikeJinja2_data();
  void featureLikeJinja2();
  void hfGenerationBlockRendersItsBody();
  void invalidUtf8VariablesAreRefused();

 private:
  std::map<std::string, ember::test::ReferenceCase> cases_;
  std::map<std::string, ember::test::ReferenceResult> reference_;
};

void ChatTemplateFeatures::initTestCase() {
  const Json data = ember::test::readJsonFile(ember::test::chatDataDir() + "/feature_cases.json");
  QVERIFY2(data.contains("cases"), "tests/engine/chat/data/feature_cases.json is missing");
  std::vector<ember::test::ReferenceCase> cases;
  for (const auto& c : data["cases"]) {
    ember::test::ReferenceCase rc{c.at("name").get<std::string>(),
                                  c.at("template").get<std::string>(), c.at("variables")};
    cases_[rc.id] = rc;
    cases.push_back(std::move(rc));
  }
  QVERIFY(cases.size() >= 50);
  EMBER_REQUIRE_JINJA2(cases, &reference_);
}

void ChatTemplateFeatures::featureLikeJinja2_data() {
  QTest::addColumn<QString>("name");
  for (const auto& [name, c] : cases_) QTest::newRow(name.c_str()) << QString::fromStdString(name);
}

void ChatTemplateFeatures::featureLikeJinja2() {
  QFETCH(QString, name);
  const auto& c = cases_.at(name.toStdString());
  QVERIFY(reference_.count(c.id));
  ember::test::compareWithReference(reference_[c.id], c.templateSource, c.variables);
}

// HF transformers' `{% generation %}` extension (AssistantTracker) renders its body in place
// (it only records where the assistant's text is); the plain Jinja2 reference lacks the tag.
void ChatTemplateFeatures::hfGenerationBlockRendersItsBody() {
  const auto t = ember::chat::ChatTemplate::parse(
      "{% for m in messages %}{% if m.role == 'assistant' %}{% generation %}{% set x = 1 %}"
      "{{ m.content }}{% endgeneration %}{% else %}{{ m.content }}{% endif %}|{% endfor %}"
      "{{ x is defined }}");
  const Json variables{{"messages", Json::array({Json{{"role", "user"}, {"content", "q"}},
                                                  Json{{"role", "assistant"}, {"content", "a"}}})}};
  QCOMPARE(QString::fromStdString(t.render(variables)), QStringLiteral("q|a|False"));
}

// Python strings are always valid Unicode, so such input has no reference rendering; it is
// refused with a clear error instead of reaching string operations.
void ChatTemplateFeatures::invalidUtf8VariablesAreRefused() {
  const auto t = ember::chat::ChatTemplate::parse("{{ messages[0].content | upper }}");
  Json variables{{"messages", Json::array({Json{{"role", "user"}, {"content", "ok"}}})}};
  QCOMPARE(t.render(variables), std::string("OK"));
  variables["messages"][0]["content"] = std::string("bad \xC3\x28 bytes");
  QVERIFY_THROWS_EXCEPTION(ember::chat::TemplateError, t.render(variables));
  QVERIFY_THROWS_EXCEPTION(ember::chat::TemplateError,
                           ember::chat::ChatTemplate::parse("text \xFF {{ 1 }}"));
}

QTEST_GUILESS_MAIN(ChatTemplateFeatures)
#include "test_chat_template_features.moc"
