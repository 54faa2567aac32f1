// modelToDot (tools/common/graph_dot.h) on hand-built models, and `nnhal dump-graph` on
// MobileNet; the .dot must render with Graphviz (`dot -Tsvg`), skipped where dot is missing.
#include "tools/common/graph_dot.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace nnhal::tools {
namespace {

namespace fs = std::filesystem;

Operand tensor(std::vector<uint32_t> dims, OperandLifeTime lifetime,
               OperandType type = OperandType::TENSOR_FLOAT32) {
  Operand operand;
  operand.type = type;
  operand.dimensions = std::move(dims);
  operand.lifetime = lifetime;
  return operand;
}

/// Appends a CONSTANT_COPY scalar holding `value` to `subgraph`; returns its index.
template <typename T>
uint32_t constant(Model& model, Subgraph& subgraph, OperandType type, T value) {
  Operand operand = tensor({}, OperandLifeTime::CONSTANT_COPY, type);
  operand.location = {0, static_cast<uint32_t>(model.operandValues.size()), sizeof(T)};
  model.operandValues.resize(model.operandValues.size() + sizeof(T));
  std::memcpy(model.operandValues.data() + operand.location.offset, &value, sizeof(T));
  subgraph.operands.push_back(operand);
  return static_cast<uint32_t>(subgraph.operands.size() - 1);
}

/// y = x; while (y < 10) y = y + 1: main calls WHILE with the condition referenced[0] and
/// the body referenced[1].
Model whileModel() {
  Model model;
  Subgraph& cond = model.referenced.emplace_back();
  cond.operands = {tensor({1}, OperandLifeTime::SUBGRAPH_INPUT),
                   tensor({1}, OperandLifeTime::SUBGRAPH_OUTPUT, OperandType::TENSOR_BOOL8)};
  Operand limit = tensor({1}, OperandLifeTime::CONSTANT_COPY);
  limit.location = {0, 0, 4};
  const float ten = 10.0f;
  model.operandValues.resize(4);
  std::memcpy(model.operandValues.data(), &ten, 4);
  cond.operands.push_back(limit);
  cond.operations = {{OperationType::LESS, {0, 2}, {1}}};
  cond.inputIndexes = {0};
  cond.outputIndexes = {1};

  Subgraph& body = model.referenced.emplace_back();
  body.operands = {tensor({1}, OperandLifeTime::SUBGRAPH_INPUT),
                   tensor({1}, OperandLifeTime::SUBGRAPH_OUTPUT)};
  Operand one = tensor({1}, OperandLifeTime::CONSTANT_COPY);
  one.location = {0, 4, 4};
  const float oneValue = 1.0f;
  model.operandValues.resize(8);
  std::memcpy(model.operandValues.data() + 4, &oneValue, 4);
  body.operands.push_back(one);
  const uint32_t act = constant(model, body, OperandType::INT32, int32_t{0});
  body.operations = {{OperationType::ADD, {0, 2, act}, {1}}};
  body.inputIndexes = {0};
  body.outputIndexes = {1};

  Subgraph& main = model.main;
  main.operands = {tensor({1}, OperandLifeTime::SUBGRAPH_INPUT),
                   tensor({1}, OperandLifeTime::SUBGRAPH_OUTPUT)};
  Operand condRef = tensor({}, OperandLifeTime::SUBGRAPH, OperandType::SUBGRAPH);
  condRef.location = {0, static_cast<uint32_t>(model.operandValues.size()), 4};
  const uint32_t zero = 0, bodyIndex = 1;
  model.operandValues.resize(model.operandValues.size() + 8);
  std::memcpy(model.operandValues.data() + condRef.location.offset, &zero, 4);
  Operand bodyRef = condRef;
  bodyRef.location.offset += 4;
  std::memcpy(model.operandValues.data() + bodyRef.location.offset, &bodyIndex, 4);
  main.operands.push_back(condRef);  // 2
  main.operands.push_back(bodyRef);  // 3
  main.operations = {{OperationType::WHILE, {2, 3, 0}, {1}}};
  main.inputIndexes = {0};
  main.outputIndexes = {1};
  return model;
}

bool haveDot() { return std::system("command -v dot >/dev/null 2>&1") == 0; }

struct Rendered {
  int exitCode = -1;
  std::string svg;
  std::string errors;
};

/// Runs `dot -Tsvg` on `dotText`.
Rendered render(const std::string& dotText) {
  const fs::path base = fs::temp_directory_path() / ("nnhal-dot-" + std::to_string(getpid()));
  const fs::path in = base.string() + ".dot", out = base.string() + ".svg",
                 err = base.string() + ".err";
  std::ofstream(in) << dotText;
  const std::string command =
      "dot -Tsvg " + in.string() + " -o " + out.string() + " 2>" + err.string();
  Rendered result;
  const int status = std::system(command.c_str());
  result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::stringstream svg, errors;
  svg << std::ifstream(out).rdbuf();
  errors << std::ifstream(err).rdbuf();
  result.svg = svg.str();
  result.errors = errors.str();
  fs::remove(in);
  fs::remove(out);
  fs::remove(err);
  return result;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(GraphDot, WhileModelHasAClusterPerSubgraphAndEdgesBetweenThem) {
  const std::string dot = modelToDot(whileModel(), {"while.tflite", {"x", "y"}});
  EXPECT_TRUE(dot.starts_with("digraph model {")) << dot;
  EXPECT_EQ(count(dot, "subgraph cluster_"), 3u) << dot;
  EXPECT_NE(dot.find("label=\"main (subgraph 0)\""), std::string::npos) << dot;
  EXPECT_NE(dot.find("label=\"referenced[1] (subgraph 2)\""), std::string::npos) << dot;
  EXPECT_NE(dot.find("s0_op0 [shape=box"), std::string::npos) << dot;
  EXPECT_NE(dot.find("label=\"0: WHILE\""), std::string::npos) << dot;
  // Operand -> operation -> operand, in each subgraph.
  EXPECT_NE(dot.find("s0_o2 -> s0_op0;"), std::string::npos) << dot;
  EXPECT_NE(dot.find("s0_o0 -> s0_op0;"), std::string::npos) << dot;
  EXPECT_NE(dot.find("s0_op0 -> s0_o1;"), std::string::npos) << dot;
  EXPECT_NE(dot.find("s2_o0 -> s2_op0;"), std::string::npos) << dot;
  EXPECT_NE(dot.find("s2_op0 -> s2_o1;"), std::string::npos) << dot;
  // The SUBGRAPH operands point at the clusters they name.
  EXPECT_NE(dot.find("s0_o2 -> s1_anchor [lhead=cluster_1"), std::string::npos) << dot;
  EXPECT_NE(dot.find("s0_o3 -> s2_anchor [lhead=cluster_2"), std::string::npos) << dot;
  // Names, types, shapes, lifetimes, constant values, highlighted inputs and outputs.
  EXPECT_NE(dot.find("#0 x\\nTENSOR_FLOAT32 [1]\\nSUBGRAPH_INPUT\\nsubgraph input"),
            std::string::npos)
      << dot;
  EXPECT_NE(dot.find("fillcolor=palegreen"), std::string::npos);
  EXPECT_NE(dot.find("fillcolor=orange"), std::string::npos);
  EXPECT_NE(dot.find("#3\\nINT32 scalar\\nCONSTANT_COPY = 0"), std::string::npos) << dot;
  EXPECT_NE(dot.find("fillcolor=gray90"), std::string::npos);
  EXPECT_NE(dot.find("shape=folder"), std::string::npos);
  EXPECT_NE(dot.find("label=\"while.tflite\""), std::string::npos);
}

TEST(GraphDot, IfOperandsPointAtBothBranches) {
  Model model = whileModel();
  model.main.operations[0].type = OperationType::IF;
  const std::string dot = modelToDot(model);
  EXPECT_NE(dot.find("label=\"0: IF\""), std::string::npos) << dot;
  EXPECT_EQ(count(dot, "[lhead=cluster_"), 2u) << dot;
}

TEST(GraphDot, LabelsAreEscaped) {
  EXPECT_EQ(dotEscape("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  EXPECT_EQ(dotEscape("tab\there \xc3\xa9"), "tab?here ??");
  Model model;
  model.main.operands = {tensor({2, 0}, OperandLifeTime::SUBGRAPH_INPUT),
                         tensor({2, 0}, OperandLifeTime::SUBGRAPH_OUTPUT)};
  model.main.operations = {{OperationType::RELU, {0}, {1}}};
  model.main.inputIndexes = {0};
  model.main.outputIndexes = {1};
  const std::string dot = modelToDot(model, {"a \"quoted\" title", {"in\"}; x [", "out\\"}});
  EXPECT_NE(dot.find("label=\"a \\\"quoted\\\" title\""), std::string::npos) << dot;
  EXPECT_NE(dot.find("#0 in\\\"}; x [\\nTENSOR_FLOAT32 [2,?]"), std::string::npos) << dot;
  EXPECT_NE(dot.find("#1 out\\\\\\n"), std::string::npos) << dot;
  if (!haveDot()) GTEST_SKIP() << "Graphviz dot is not installed (scripts/setup.sh)";
  const Rendered svg = render(dot);
  EXPECT_EQ(svg.exitCode, 0) << svg.errors;
  EXPECT_EQ(svg.errors, "");
  EXPECT_NE(svg.svg.find("in&quot;}; x ["), std::string::npos) << svg.svg;
}

TEST(GraphDot, MissingOperandsAreDrawnNotDereferenced) {
  Model model;
  model.main.operands = {tensor({1}, OperandLifeTime::SUBGRAPH_INPUT)};
  model.main.operations = {{OperationType::RELU, {0}, {7}}};
  Operand bad = tensor({}, OperandLifeTime::SUBGRAPH, OperandType::SUBGRAPH);
  bad.location = {0, 100, 4};  // outside operandValues
  model.main.operands.push_back(bad);
  const std::string dot = modelToDot(model);
  EXPECT_NE(dot.find("s0_missing7 [shape=none, fontcolor=red, label=\"operand 7 (missing)\"]"),
            std::string::npos)
      << dot;
  EXPECT_NE(dot.find("s0_op0 -> s0_missing7;"), std::string::npos) << dot;
  EXPECT_EQ(dot.find("lhead"), std::string::npos) << dot;
}

TEST(GraphDot, WhileModelRendersWithDot) {
  if (!haveDot()) GTEST_SKIP() << "Graphviz dot is not installed (scripts/setup.sh)";
  const Rendered svg = render(modelToDot(whileModel(), {"while", {}}));
  ASSERT_EQ(svg.exitCode, 0) << svg.errors;
  EXPECT_EQ(svg.errors, "");
  EXPECT_NE(svg.svg.find("<svg"), std::string::npos);
  EXPECT_NE(svg.svg.find("cluster_2"), std::string::npos);
  EXPECT_NE(svg.svg.find("0: WHILE"), std::string::npos);
}

TEST(GraphDot, NnhalDumpGraphOfMobileNetRendersWithDot) {
  const fs::path model = fs::path(NNHAL_SHARED_DIR) / "models/mobilenet_v1_0.25_128_quant.tflite";
  const fs::path out = fs::temp_directory_path() / ("nnhal-dump-" + std::to_string(getpid()));
  const std::string command =
      std::string(NNHAL_CLI_PATH) + " dump-graph " + model.string() + " --output " + out.string();
  ASSERT_EQ(std::system(command.c_str()), 0);
  std::stringstream text;
  text << std::ifstream(out).rdbuf();
  fs::remove(out);
  const std::string dot = text.str();
  EXPECT_EQ(count(dot, "[shape=box, style=\"rounded,filled\""), 31u);  // 31 operations
  EXPECT_EQ(count(dot, "DEPTHWISE_CONV_2D"), 13u);
  EXPECT_NE(dot.find("TENSOR_QUANT8_ASYMM [1,128,128,3]"), std::string::npos);
  EXPECT_EQ(count(dot, "subgraph cluster_"), 1u);

  // Without --output: the same text on stdout.
  FILE* pipe = popen((std::string(NNHAL_CLI_PATH) + " dump-graph " + model.string()).c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string stdoutText;
  std::array<char, 4096> buffer{};
  size_t n = 0;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
    stdoutText.append(buffer.data(), n);
  EXPECT_EQ(pclose(pipe), 0);
  EXPECT_EQ(stdoutText, dot);

  if (!haveDot()) GTEST_SKIP() << "Graphviz dot is not installed (scripts/setup.sh)";
  const Rendered svg = render(dot);
  ASSERT_EQ(svg.exitCode, 0) << svg.errors;
  EXPECT_EQ(svg.errors, "");
  EXPECT_NE(svg.svg.find("<svg"), std::string::npos);
  EXPECT_EQ(count(svg.svg, "class=\"node\""), 221u + 31u);  // operands and operations
}

// A model that needs the driver's vendor extension (MoveNet: FLOOR_DIV, GATHER_ND) imports as
// `nnhal run` imports it, and its extension operations are named.
TEST(GraphDot, NnhalDumpGraphImportsWithTheDevicesExtensions) {
  const fs::path model =
      fs::path(NNHAL_SHARED_DIR) / "models/movenet_single_pose_lightning_ptq.tflite";
  if (!fs::exists(model)) GTEST_SKIP() << model << " is not in ../shared/models";
  FILE* pipe = popen((std::string(NNHAL_CLI_PATH) + " dump-graph " + model.string()).c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string dot;
  std::array<char, 4096> buffer{};
  size_t n = 0;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) dot.append(buffer.data(), n);
  ASSERT_EQ(pclose(pipe), 0);
  EXPECT_NE(dot.find("org.nnhal.tflite_compat:FLOOR_DIV"), std::string::npos);
  EXPECT_NE(dot.find("org.nnhal.tflite_compat:GATHER_ND"), std::string::npos);
  EXPECT_EQ(dot.find("OperationType("), std::string::npos);
}

TEST(GraphDot, NnhalDumpGraphRefusesANonModel) {
  const fs::path bogus = fs::temp_directory_path() / ("nnhal-bogus-" + std::to_string(getpid()));
  std::ofstream(bogus) << "not a flatbuffer";
  const std::string command =
      std::string(NNHAL_CLI_PATH) + " dump-graph " + bogus.string() + " >/dev/null 2>&1";
  const int status = std::system(command.c_str());
  fs::remove(bogus);
  EXPECT_EQ(WEXITSTATUS(status), 1);
}

}  // namespace
}  // namespace nnhal::tools
