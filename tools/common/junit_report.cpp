#include "tools/common/junit_report.h"

#include <cstdint>
#include <cstdio>

namespace nnhal::tools {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD in UTF-8

/// Length of the valid UTF-8 sequence at text[i] and its code point; 0 when it is not one
/// (bad lead byte, truncated, bad continuation, overlong, above U+10FFFF).
size_t decodeUtf8(std::string_view text, size_t i, uint32_t& codePoint) {
  const auto byte = [&](size_t k) { return static_cast<uint8_t>(text[k]); };
  const uint8_t lead = byte(i);
  size_t length = 0;
  uint32_t min = 0;
  if (lead < 0x80) {
    codePoint = lead;
    return 1;
  } else if ((lead & 0xE0) == 0xC0) {
    length = 2, codePoint = lead & 0x1F, min = 0x80;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3, codePoint = lead & 0x0F, min = 0x800;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4, codePoint = lead & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  for (size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    codePoint = (codePoint << 6) | (byte(i + k) & 0x3F);
  }
  if (codePoint < min || codePoint > 0x10FFFF) return 0;
  return length;
}

/// XML 1.0 Char production: #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] |
/// [#x10000-#x10FFFF].
bool isXmlChar(uint32_t c) {
  return c == 0x9 || c == 0xA || c == 0xD || (c >= 0x20 && c <= 0xD7FF) ||
         (c >= 0xE000 && c <= 0xFFFD) || (c >= 0x10000 && c <= 0x10FFFF);
}

std::string formatSeconds(double seconds) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.3f", seconds);
  return buffer;
}

struct Totals {
  size_t tests = 0, failures = 0, errors = 0, skipped = 0;
  double seconds = 0.0;

  void add(const JunitCase& c) {
    ++tests;
    seconds += c.seconds;
    if (c.outcome == JunitCase::Outcome::kFailed) ++failures;
    if (c.outcome == JunitCase::Outcome::kError) ++errors;
    if (c.outcome == JunitCase::Outcome::kSkipped) ++skipped;
  }
  std::string attributes() const {
    return " tests=\"" + std::to_string(tests) + "\" failures=\"" + std::to_string(failures) +
           "\" errors=\"" + std::to_string(errors) + "\" skipped=\"" + std::to_string(skipped) +
           "\" time=\"" + formatSeconds(seconds) + "\"";
  }
};

void appendCase(std::string& xml, const JunitCase& c) {
  xml += "    <testcase classname=\"" + xmlEscape(c.classname) + "\" name=\"" + xmlEscape(c.name) +
         "\" time=\"" + formatSeconds(c.seconds) + "\"";
  const char* element = nullptr;
  switch (c.outcome) {
    case JunitCase::Outcome::kPassed:
      xml += "/>\n";
      return;
    case JunitCase::Outcome::kSkipped:
      xml += ">\n      <skipped message=\"" + xmlEscape(c.message) + "\"/>\n    </testcase>\n";
      return;
    case JunitCase::Outcome::kFailed:
      element = "failure";
      break;
    case JunitCase::Outcome::kError:
      element = "error";
      break;
  }
  xml += ">\n      <" + std::string(element) + " message=\"" + xmlEscape(c.message) + "\">" +
         xmlEscape(c.details) + "</" + element + ">\n    </testcase>\n";
}

}  // namespace

std::string xmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    uint32_t c = 0;
    const size_t length = decodeUtf8(text, i, c);
    if (length == 0) {  // not UTF-8: one byte replaced, decoding resumes after it
      out += kReplacement;
      ++i;
      continue;
    }
    if (!isXmlChar(c)) {
      out += kReplacement;
    } else if (c == '&') {
      out += "&amp;";
    } else if (c == '<') {
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else if (c == '"') {
      out += "&quot;";
    } else if (c == '\'') {
      out += "&apos;";
    } else if (c == '\t') {
      out += "&#9;";
    } else if (c == '\n') {
      out += "&#10;";
    } else if (c == '\r') {
      out += "&#13;";
    } else {
      out.append(text.substr(i, length));
    }
    i += length;
  }
  return out;
}

std::string junitXml(std::string_view name, const std::vector<JunitSuite>& suites) {
  Totals all;
  std::string body;
  for (const JunitSuite& suite : suites) {
    Totals totals;
    for (const JunitCase& c : suite.cases) totals.add(c), all.add(c);
    body += "  <testsuite name=\"" + xmlEscape(suite.name) + "\"" + totals.attributes() + ">\n";
    for (const JunitCase& c : suite.cases) appendCase(body, c);
    body += "  </testsuite>\n";
  }
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"" + xmlEscape(name) +
         "\"" + all.attributes() + ">\n" + body + "</testsuites>\n";
}

}  // namespace nnhal::tools
