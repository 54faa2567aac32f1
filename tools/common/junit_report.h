// tools/common/junit_report.h — a JUnit XML test report, the format Jenkins (junit step) and
// GitLab (artifacts:reports:junit) read: <testsuites> of <testsuite> of <testcase>, a failed
// case holding <failure message="...">, a skipped one <skipped message="..."/>, one that could
// not run at all <error message="...">.
//
// Debian 12 ships XML libraries, but none is a dependency of nnhal (scripts/setup.sh) and the
// report is write-only, so it is written here; every text goes through xmlEscape.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace nnhal::tools {

/// `text` as XML 1.0 character data or attribute value (double- or single-quoted): & < > " '
/// become entity references; tab, line feed and carriage return become character references
/// (so attribute values keep them); characters XML 1.0 forbids even as references (the other
/// C0 controls, U+FFFE, U+FFFF, surrogates) and bytes that are not UTF-8 become U+FFFD.
std::string xmlEscape(std::string_view text);

struct JunitCase {
  enum class Outcome { kPassed, kFailed, kSkipped, kError };
  std::string classname;  ///< e.g. "V1_0.conv_float"; the dots group cases in Jenkins
  std::string name;       ///< e.g. "conv_float_all_inputs_as_internal"
  double seconds = 0.0;
  Outcome outcome = Outcome::kPassed;
  std::string message;  ///< failure/skip/error message (first line shown by CI)
  std::string details;  ///< body of <failure>/<error>: the whole story (may be empty)
};

struct JunitSuite {
  std::string name;  ///< e.g. "V1_0"
  std::vector<JunitCase> cases;
};

/// The XML document (with its <?xml?> declaration) of `suites`, under one <testsuites
/// name="..."> with the totals: tests, failures, errors, skipped, time (seconds).
std::string junitXml(std::string_view name, const std::vector<JunitSuite>& suites);

}  // namespace nnhal::tools
