// tools/common/junit_report.h: the XML escaper and the JUnit document's structure and totals.
#include "tools/common/junit_report.h"

#include <gtest/gtest.h>

#include <string>

namespace nnhal::tools {
namespace {

TEST(XmlEscapeTest, EscapesTheFiveSpecialCharacters) {
  EXPECT_EQ(xmlEscape("a<b>&\"c'd"), "a&lt;b&gt;&amp;&quot;c&apos;d");
  EXPECT_EQ(xmlEscape("&amp;"), "&amp;amp;");
  EXPECT_EQ(xmlEscape(""), "");
  EXPECT_EQ(xmlEscape("plain text 1.0"), "plain text 1.0");
}

TEST(XmlEscapeTest, KeepsTabNewlineAndCarriageReturnAsReferences) {
  EXPECT_EQ(xmlEscape("a\tb\nc\rd"), "a&#9;b&#10;c&#13;d");
}

TEST(XmlEscapeTest, ReplacesControlCharactersXml10Forbids) {
  const std::string replacement = "\xEF\xBF\xBD";
  EXPECT_EQ(xmlEscape(std::string("a\0b", 3)), "a" + replacement + "b");
  EXPECT_EQ(xmlEscape("\x01\x08\x0B\x0C\x0E\x1F"), [&] {
    std::string six;
    for (int i = 0; i < 6; ++i) six += replacement;
    return six;
  }());
  EXPECT_EQ(xmlEscape("\x7F"), "\x7F");               // DEL is allowed in XML 1.0
  EXPECT_EQ(xmlEscape("\xEF\xBF\xBE"), replacement);  // U+FFFE
  EXPECT_EQ(xmlEscape("\xEF\xBF\xBF"), replacement);  // U+FFFF
  EXPECT_EQ(xmlEscape("\xED\xA0\x80"), replacement);  // U+D800, a surrogate
}

TEST(XmlEscapeTest, KeepsUtf8AndReplacesBytesThatAreNot) {
  EXPECT_EQ(xmlEscape("\xC3\xA9t\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"),
            "\xC3\xA9t\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80");
  const std::string replacement = "\xEF\xBF\xBD";
  EXPECT_EQ(xmlEscape("a\xFF"), "a" + replacement);             // never a UTF-8 byte
  EXPECT_EQ(xmlEscape("\xC3"), replacement);                    // truncated
  EXPECT_EQ(xmlEscape("\xC3("), replacement + "(");             // bad continuation
  EXPECT_EQ(xmlEscape("\xC0\xAF"), replacement + replacement);  // overlong '/'
  EXPECT_EQ(xmlEscape("\xF4\x90\x80\x80"),                      // above U+10FFFF
            replacement + replacement + replacement + replacement);
}

TEST(JunitXmlTest, CountsEachOutcomeInItsSuiteAndInTheTotal) {
  JunitSuite first{
      "V1_0",
      {{"V1_0.add", "add", 0.5, JunitCase::Outcome::kPassed, "", ""},
       {"V1_0.add", "add_2", 0.25, JunitCase::Outcome::kFailed, "bad <value>", "sync: failed"}}};
  JunitSuite second{"V1_1",
                    {{"V1_1.div", "div", 0.0, JunitCase::Outcome::kSkipped, "unsupported", ""},
                     {"load", "x.json", 0.0, JunitCase::Outcome::kError, "no such file", ""}}};
  const std::string xml = junitXml("nnhal cts", {first, second});
  EXPECT_EQ(xml.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", 0), 0u) << xml;
  EXPECT_NE(xml.find("<testsuites name=\"nnhal cts\" tests=\"4\" failures=\"1\" errors=\"1\" "
                     "skipped=\"1\" time=\"0.750\">"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<testsuite name=\"V1_0\" tests=\"2\" failures=\"1\" errors=\"0\" "
                     "skipped=\"0\" time=\"0.750\">"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<testcase classname=\"V1_0.add\" name=\"add\" time=\"0.500\"/>"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<failure message=\"bad &lt;value&gt;\">sync: failed</failure>"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<skipped message=\"unsupported\"/>"), std::string::npos) << xml;
  EXPECT_NE(xml.find("<error message=\"no such file\"></error>"), std::string::npos) << xml;
  EXPECT_EQ(xml.substr(xml.size() - 14), "</testsuites>\n");
}

}  // namespace
}  // namespace nnhal::tools
