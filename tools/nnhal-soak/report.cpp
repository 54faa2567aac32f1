#include "nnhal-soak/report.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <numeric>
#include <set>
#include <sstream>

namespace nnhal::soak {
namespace {

const char* const kPaths[] = {"sync", "async", "fenced", "burst"};
const char* const kResources[] = {"RSS (MiB)", "open descriptors", "memory mappings", "threads"};

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string number(double v, int decimals = 1) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, v);
  return text;
}

double resourceValue(const ProcessResources& r, int which) {
  switch (which) {
    case 0:
      return r.rssMiB;
    case 1:
      return static_cast<double>(r.fds);
    case 2:
      return static_cast<double>(r.maps);
    default:
      return static_cast<double>(r.threads);
  }
}

/// Writes the data files and the gnuplot script into `dir`; returns the plot names.
std::vector<std::string> writePlotInputs(const RunSummary& run, const std::filesystem::path& dir) {
  std::vector<std::string> names;
  std::ofstream script(dir / "plots.gp");
  script
      << "set terminal svg size 960,320 dynamic noenhanced font 'sans,11' background rgb 'white'\n"
         "set datafile missing '?'\nset grid\nset key outside right\n"
         "set xlabel 'time (s)'\n";
  // Latency over time, one plot per model: p50 solid, p99 dashed, per path.
  for (size_t m = 0; m < run.models.size(); ++m) {
    const std::string file = "latency" + std::to_string(m) + ".dat";
    std::ofstream data(dir / file);
    for (const Sample& s : run.samples) {
      data << s.seconds;
      for (const char* path : kPaths) {
        auto it = s.latency.find(run.models[m] + " " + path);
        if (it == s.latency.end()) {
          data << " ? ?";
        } else {
          data << ' ' << it->second.p50 << ' ' << it->second.p99;
        }
      }
      data << '\n';
    }
    const std::string name = "latency" + std::to_string(m);
    names.push_back(name);
    script << "set output '" << name << ".svg'\nset title 'Latency of " << run.models[m]
           << " (ms): p50 solid, p99 dashed'\nset logscale y\nset ylabel 'ms'\nplot ";
    for (int p = 0; p < 4; ++p) {
      script << (p ? ", " : "") << "'" << file << "' using 1:" << 2 + 2 * p
             << " with lines lw 2 lc " << p + 1 << " title '" << kPaths[p] << " p50', '" << file
             << "' using 1:" << 3 + 2 * p << " with lines dt 2 lc " << p + 1 << " title '"
             << kPaths[p] << " p99'";
    }
    script << "\nunset logscale y\n";
  }
  // Whole-run histograms of execution latency, one line per model.
  {
    const std::vector<double>& edges = histogramEdges();
    std::string plot;
    for (size_t m = 0; m < run.models.size(); ++m) {
      std::vector<uint64_t> sum(edges.size() - 1, 0);
      for (const char* path : kPaths) {
        auto it = run.histograms.find(run.models[m] + " " + path);
        if (it == run.histograms.end()) continue;
        for (size_t b = 0; b < sum.size() && b < it->second.size(); ++b) sum[b] += it->second[b];
      }
      const std::string file = "histogram" + std::to_string(m) + ".dat";
      std::ofstream data(dir / file);
      for (size_t b = 0; b < sum.size(); ++b) data << edges[b] << ' ' << sum[b] << '\n';
      plot += std::string(plot.empty() ? "" : ", ") + "'" + file +
              "' using 1:2 with steps lw 2 title '" + run.models[m] + "'";
    }
    names.push_back("histogram");
    script << "set output 'histogram.svg'\nset title 'Execution latency over the whole run "
              "(every path)'\nset logscale x\nset xlabel 'latency (ms)'\nset ylabel "
              "'executions'\nplot "
           << plot << "\nunset logscale x\nset xlabel 'time (s)'\n";
  }
  // Throughput and errors.
  {
    std::ofstream data(dir / "throughput.dat");
    for (const Sample& s : run.samples) {
      data << s.seconds << ' ' << static_cast<double>(s.executions) / run.intervalSeconds << ' '
           << static_cast<double>(s.compilations) / run.intervalSeconds << ' ' << s.errors << '\n';
    }
    names.push_back("throughput");
    script << "set output 'throughput.svg'\nset title 'Throughput'\nset ylabel 'per second'\n"
              "set y2label 'errors per interval'\nset y2tics\nplot 'throughput.dat' using 1:2 "
              "with lines lw 2 title 'executions/s', '' using 1:3 with lines lw 2 title "
              "'preparations/s', '' using 1:4 axes x1y2 with impulses lw 2 lc rgb 'red' title "
              "'errors'\nunset y2tics\nunset y2label\n";
  }
  // Resources with their fitted trends.
  {
    std::ofstream data(dir / "resources.dat");
    for (const Sample& s : run.samples) {
      data << s.seconds;
      for (int r = 0; r < 4; ++r) data << ' ' << resourceValue(s.daemon, r);
      data << '\n';
    }
    names.push_back("resources");
    script << "set output 'resources.svg'\nset terminal svg size 960,560 dynamic noenhanced font "
              "'sans,11' "
              "background rgb 'white'\nunset title\nset key inside left top\n"
              "set multiplot layout 2,2 title 'The daemon over time (dashed: the trend the "
              "leak analysis fitted)'\n";
    for (int r = 0; r < 4; ++r) {
      const TrendVerdict* t =
          r < static_cast<int>(run.trends.size()) ? &run.trends[static_cast<size_t>(r)] : nullptr;
      script << "set title '" << kResources[r]
             << "'\nset ylabel ''\nplot 'resources.dat' using 1:" << r + 2
             << " with lines lw 2 title 'sampled'";
      if (t != nullptr && t->enoughData) {
        script << ", (x >= " << t->judgedFrom << " ? " << t->intercept << " + "
               << t->slopePerHour / 3600 << " * x : 1/0) with lines dt 2 lw 2 lc rgb '"
               << (t->leaking ? "red" : "gray40") << "' title 'trend'";
      }
      script << "\n";
    }
    script << "unset multiplot\n";
  }
  return names;
}

/// Runs `gnuplot plots.gp` in `dir` (no shell), its messages into dir/gnuplot.log.
bool runGnuplot(const std::filesystem::path& dir) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addchdir_np(&actions, dir.c_str());
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "gnuplot.log",
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  char program[] = "gnuplot";
  char script[] = "plots.gp";
  char* argv[] = {program, script, nullptr};
  pid_t pid = -1;
  const int spawned = posix_spawnp(&pid, "gnuplot", &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return false;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

std::string readSvg(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  std::string svg = text.str();
  const auto start = svg.find("<svg");
  return start == std::string::npos ? "" : svg.substr(start);
}

}  // namespace

double histogramQuantile(const std::vector<uint64_t>& histogram, double q) {
  const uint64_t total = std::accumulate(histogram.begin(), histogram.end(), uint64_t{0});
  if (total == 0) return 0;
  const auto rank = static_cast<uint64_t>(std::ceil(q * static_cast<double>(total)));
  uint64_t seen = 0;
  const std::vector<double>& edges = histogramEdges();
  for (size_t b = 0; b < histogram.size(); ++b) {
    seen += histogram[b];
    if (seen >= std::max<uint64_t>(rank, 1)) return edges[std::min(b + 1, edges.size() - 1)];
  }
  return edges.back();
}

std::string renderHtml(const RunSummary& run,
                       const std::vector<std::pair<std::string, std::string>>& plots) {
  const bool pass = run.verdict == "PASS";
  std::ostringstream h;
  h << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
       "<title>nnhal-soak: "
    << escape(run.verdict)
    << "</title><style>body{font-family:sans-serif;margin:24px;max-width:1000px}"
       "table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ccc;padding:3px "
       "8px;text-align:right}th{background:#f3f3f3}td.l,th.l{text-align:left}"
       ".verdict{font-size:28px;font-weight:bold;padding:12px;color:white}"
       ".pass{background:#2e7d32}.fail{background:#c62828}.leak{color:#c62828;font-weight:bold}"
       "</style></head><body>\n";
  h << "<div class=\"verdict " << (pass ? "pass" : "fail") << "\">" << escape(run.verdict)
    << "</div>\n<ul>";
  for (const std::string& reason : run.reasons) h << "<li>" << escape(reason) << "</li>";
  h << "</ul>\n<h2>Run</h2><table>";
  auto row = [&](const std::string& k, const std::string& v) {
    h << "<tr><th class=\"l\">" << escape(k) << "</th><td class=\"l\">" << escape(v)
      << "</td></tr>";
  };
  row("daemon", run.daemon);
  row("compilation caching", run.caching);
  row("started", run.started);
  row("duration", number(run.seconds, 0) + " s, sampled every " + number(run.intervalSeconds) +
                      " s (" + std::to_string(run.samples.size()) + " samples)");
  row("load", std::to_string(run.clients) + " clients joining and leaving, 1 compiler");
  std::string models;
  for (const std::string& m : run.models) models += (models.empty() ? "" : ", ") + m;
  row("models", models);
  row("executions", std::to_string(run.executions) + " (" +
                        number(static_cast<double>(run.executions) / std::max(run.seconds, 1.0)) +
                        "/s)");
  row("preparations", std::to_string(run.compilations));
  uint64_t errors = 0;
  std::string byKind;
  for (const auto& [kind, count] : run.errorsByKind) {
    errors += count;
    byKind += (byKind.empty() ? "" : ", ") + kind + " " + std::to_string(count);
  }
  row("errors", errors == 0 ? "none" : std::to_string(errors) + ": " + byKind);
  h << "</table>\n";
  if (!run.firstErrors.empty()) {
    h << "<h3>First errors</h3><ul>";
    for (const std::string& e : run.firstErrors) h << "<li>" << escape(e) << "</li>";
    h << "</ul>\n";
  }
  h << "<h2>Leak analysis</h2><p>A resource leaks when its fitted growth over the run, after "
       "the warm-up (20% of the samples, at least --warm-up), exceeds both 4&times; its noise "
       "and its floor, and its last fifth sits above its first "
       "(docs/TESTING.md).</p><table><tr><th class=\"l\">resource</th>"
       "<th>first</th><th>last</th><th>slope / h</th><th>growth</th><th>noise</th>"
       "<th>threshold</th><th class=\"l\">verdict</th></tr>";
  for (const TrendVerdict& t : run.trends) {
    h << "<tr><td class=\"l\">" << escape(t.resource) << "</td>";
    if (!t.enoughData) {
      h << "<td colspan=\"6\"></td><td class=\"l\">too few samples to judge</td></tr>";
      continue;
    }
    h << "<td>" << number(t.firstMedian) << "</td><td>" << number(t.lastMedian) << "</td><td>"
      << number(t.slopePerHour) << "</td><td>" << number(t.growth) << "</td><td>" << number(t.noise)
      << "</td><td>" << number(t.threshold) << "</td><td class=\"l"
      << (t.leaking ? " leak\">LEAK" : "\">stable") << "</td></tr>";
  }
  h << "</table>\n<h2>Latency over the whole run (ms)</h2><table><tr><th class=\"l\">model and "
       "call</th><th>count</th><th>p50</th><th>p90</th><th>p99</th></tr>";
  for (const auto& [series, histogram] : run.histograms) {
    const uint64_t count = std::accumulate(histogram.begin(), histogram.end(), uint64_t{0});
    h << "<tr><td class=\"l\">" << escape(series) << "</td><td>" << count << "</td><td>"
      << number(histogramQuantile(histogram, 0.5), 2) << "</td><td>"
      << number(histogramQuantile(histogram, 0.9), 2) << "</td><td>"
      << number(histogramQuantile(histogram, 0.99), 2) << "</td></tr>";
  }
  h << "</table><p>Quantiles from 120 logarithmic buckets (each value is its bucket's upper "
       "edge, within 12%).</p>\n<h2>Plots</h2>\n";
  if (plots.empty()) {
    h << "<p>No plots: gnuplot could not run (install gnuplot-nox; the data is in "
         "samples.json).</p>\n";
  }
  for (const auto& [name, svg] : plots)
    h << "<div class=\"plot\" id=\"" << name << "\">" << svg << "</div>\n";
  h << "</body></html>\n";
  return h.str();
}

Result<void> writeReport(const RunSummary& run, const std::filesystem::path& directory) {
  std::error_code ec;
  std::filesystem::create_directories(directory, ec);
  if (ec)
    return fail(ErrorStatus::GENERAL_FAILURE,
                "cannot create " + directory.string() + ": " + ec.message());
  nlohmann::json samples = nlohmann::json::array();
  for (const Sample& s : run.samples) samples.push_back(toJson(s));
  nlohmann::json trends = nlohmann::json::array();
  for (const TrendVerdict& t : run.trends) {
    trends.push_back({{"resource", t.resource},
                      {"enough_data", t.enoughData},
                      {"first", t.firstMedian},
                      {"last", t.lastMedian},
                      {"slope_per_hour", t.slopePerHour},
                      {"growth", t.growth},
                      {"noise", t.noise},
                      {"threshold", t.threshold},
                      {"leaking", t.leaking}});
  }
  {
    std::ofstream out(directory / "samples.json");
    out << nlohmann::json{{"verdict", run.verdict},
                          {"reasons", run.reasons},
                          {"daemon", run.daemon},
                          {"compilation_caching", run.caching},
                          {"started", run.started},
                          {"seconds", run.seconds},
                          {"interval_seconds", run.intervalSeconds},
                          {"executions", run.executions},
                          {"compilations", run.compilations},
                          {"errors_by_kind", run.errorsByKind},
                          {"first_errors", run.firstErrors},
                          {"trends", trends},
                          {"samples", samples}}
               .dump(1)
        << "\n";
    if (!out)
      return fail(ErrorStatus::GENERAL_FAILURE,
                  "cannot write " + (directory / "samples.json").string());
  }
  // The plots, drawn by gnuplot in a scratch folder of the report directory.
  std::vector<std::pair<std::string, std::string>> plots;
  const std::filesystem::path scratch = directory / ".plots";
  std::filesystem::create_directories(scratch, ec);
  if (!ec) {
    const std::vector<std::string> names = writePlotInputs(run, scratch);
    if (runGnuplot(scratch)) {
      for (const std::string& name : names) {
        std::string svg = readSvg(scratch / (name + ".svg"));
        if (!svg.empty()) plots.emplace_back(name, std::move(svg));
      }
    }
    std::filesystem::remove_all(scratch, ec);
  }
  std::ofstream html(directory / "report.html");
  html << renderHtml(run, plots);
  if (!html)
    return fail(ErrorStatus::GENERAL_FAILURE,
                "cannot write " + (directory / "report.html").string());
  return {};
}

}  // namespace nnhal::soak
