// The random-graph crash test: valid random float32 models of several operations (binary and
// unary element-wise operations with fused activations, CONCATENATION, RESHAPE,
// FULLY_CONNECTED, SOFTMAX) over random shapes and constants, prepared and executed with
// random inputs on random paths. An operation the driver refuses is fine; the daemon dying
// or hanging is the failure (the runner sees it), and so is a crash in this client.
#include <cstring>

#include "nnhal-stress/stress_tests.h"

namespace nnhal::stress {
namespace {

class GraphBuilder {
 public:
  explicit GraphBuilder(std::mt19937_64& random) : random_(random) {}

  Model build() {
    const unsigned inputs = 1 + random_() % 3;
    for (unsigned i = 0; i < inputs; ++i) {
      const uint32_t t = tensor(randomShape(), OperandLifeTime::SUBGRAPH_INPUT);
      model_.main.inputIndexes.push_back(t);
      available_.push_back(t);
    }
    const unsigned operations = 2 + random_() % 9;
    for (unsigned i = 0; i < operations; ++i) addOperation();
    for (uint32_t t : available_) {
      if (model_.main.operands[t].numberOfConsumers == 0 &&
          model_.main.operands[t].lifetime == OperandLifeTime::TEMPORARY_VARIABLE) {
        model_.main.operands[t].lifetime = OperandLifeTime::SUBGRAPH_OUTPUT;
        model_.main.outputIndexes.push_back(t);
      }
    }
    if (model_.main.outputIndexes.empty()) {  // every result feeds another: expose the last
      const uint32_t last = model_.main.operations.back().outputs[0];
      model_.main.operands[last].lifetime = OperandLifeTime::SUBGRAPH_OUTPUT;
      model_.main.outputIndexes.push_back(last);
    }
    return std::move(model_);
  }

 private:
  std::vector<uint32_t> randomShape() {
    std::vector<uint32_t> dims(1 + random_() % 4);
    for (uint32_t& d : dims) d = 1 + random_() % 6;
    return dims;
  }
  uint32_t tensor(std::vector<uint32_t> dims, OperandLifeTime lifetime,
                  OperandType type = OperandType::TENSOR_FLOAT32) {
    Operand op;
    op.type = type;
    op.dimensions = std::move(dims);
    op.lifetime = lifetime;
    model_.main.operands.push_back(op);
    return static_cast<uint32_t>(model_.main.operands.size() - 1);
  }
  uint32_t constantBytes(OperandType type, std::vector<uint32_t> dims, const void* data,
                         size_t bytes) {
    const uint32_t t = tensor(std::move(dims), OperandLifeTime::CONSTANT_COPY, type);
    const auto offset = static_cast<uint32_t>((model_.operandValues.size() + 3) / 4 * 4);
    model_.operandValues.resize(offset + bytes);
    std::memcpy(model_.operandValues.data() + offset, data, bytes);
    model_.main.operands[t].location = {0, offset, static_cast<uint32_t>(bytes)};
    return t;
  }
  uint32_t scalarInt(int32_t value) { return constantBytes(OperandType::INT32, {}, &value, 4); }
  uint32_t scalarFloat(float value) { return constantBytes(OperandType::FLOAT32, {}, &value, 4); }
  uint32_t constantTensor(const std::vector<uint32_t>& dims) {
    size_t n = 1;
    for (uint32_t d : dims) n *= d;
    std::vector<float> values(n);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    for (float& v : values) v = uniform(random_);
    return constantBytes(OperandType::TENSOR_FLOAT32, dims, values.data(), n * 4);
  }
  uint32_t pick() { return available_[random_() % available_.size()]; }
  const std::vector<uint32_t>& dims(uint32_t t) { return model_.main.operands[t].dimensions; }
  void operation(OperationType type, std::vector<uint32_t> in, std::vector<uint32_t> outDims) {
    const uint32_t out = tensor(std::move(outDims), OperandLifeTime::TEMPORARY_VARIABLE);
    for (uint32_t i : in) ++model_.main.operands[i].numberOfConsumers;
    model_.main.operations.push_back({type, std::move(in), {out}});
    available_.push_back(out);
  }

  void addOperation() {
    const uint32_t a = pick();
    const std::vector<uint32_t> shape = dims(a);
    switch (random_() % 6) {
      case 0: {  // binary element-wise with a fused activation
        static constexpr OperationType kBinary[] = {OperationType::ADD, OperationType::MUL,
                                                    OperationType::SUB, OperationType::MAXIMUM,
                                                    OperationType::MINIMUM};
        const OperationType type = kBinary[random_() % 5];
        uint32_t b = constantTensor(shape);
        for (uint32_t t : available_) {
          if (t != a && dims(t) == shape && random_() % 2 == 0) b = t;
        }
        std::vector<uint32_t> in = {a, b};
        if (type == OperationType::ADD || type == OperationType::MUL ||
            type == OperationType::SUB) {
          in.push_back(scalarInt(static_cast<int32_t>(random_() % 4)));
        }
        operation(type, std::move(in), shape);
        break;
      }
      case 1: {  // unary element-wise
        static constexpr OperationType kUnary[] = {OperationType::RELU, OperationType::RELU6,
                                                   OperationType::TANH, OperationType::LOGISTIC,
                                                   OperationType::ABS};
        operation(kUnary[random_() % 5], {a}, shape);
        break;
      }
      case 2: {  // CONCATENATION with a constant along a random axis
        const size_t axis = random_() % shape.size();
        std::vector<uint32_t> other = shape;
        other[axis] = 1 + random_() % 4;
        std::vector<uint32_t> out = shape;
        out[axis] += other[axis];
        operation(OperationType::CONCATENATION,
                  {a, constantTensor(other), scalarInt(static_cast<int32_t>(axis))}, out);
        break;
      }
      case 3: {  // RESHAPE to [1, n]
        uint32_t n = 1;
        for (uint32_t d : shape) n *= d;
        const int32_t target[2] = {1, static_cast<int32_t>(n)};
        operation(OperationType::RESHAPE,
                  {a, constantBytes(OperandType::TENSOR_INT32, {2}, target, sizeof(target))},
                  {1, n});
        break;
      }
      case 4: {  // FULLY_CONNECTED of a rank-2 tensor
        if (shape.size() != 2) return addOperation();
        const uint32_t units = 1 + random_() % 8;
        operation(OperationType::FULLY_CONNECTED,
                  {a, constantTensor({units, shape[1]}), constantTensor({units}),
                   scalarInt(static_cast<int32_t>(random_() % 4))},
                  {shape[0], units});
        break;
      }
      default: {  // SOFTMAX over the last axis
        operation(OperationType::SOFTMAX,
                  {a, scalarFloat(0.5f + static_cast<float>(random_() % 4))}, shape);
        break;
      }
    }
  }

  std::mt19937_64& random_;
  Model model_;
  std::vector<uint32_t> available_;
};

uint32_t bytesOf(const Operand& operand) {
  uint32_t n = 4;
  for (uint32_t d : operand.dimensions) n *= d;
  return n;
}

}  // namespace

Outcome randomGraphs(TestContext& context) {
  auto device = connectClient(context, "random graphs");
  if (!device) return {Verdict::kFailure, device.error().message, {}};
  auto random = context.random(0x6a);
  uint64_t graphs = 0;
  uint64_t prepared = 0;
  uint64_t executed = 0;
  uint64_t refused = 0;
  while (context.keepGoing()) {
    Model model = GraphBuilder(random).build();
    ++graphs;
    context.progressed();
    const Subgraph main = model.main;
    auto p = (*device)->prepareModel(std::move(model));
    if (!p) {
      ++refused;  // not every random graph is supported: not a failure
      continue;
    }
    ++prepared;
    uint32_t total = 0;
    for (uint32_t i : main.inputIndexes) total += bytesOf(main.operands[i]);
    for (uint32_t o : main.outputIndexes) total += bytesOf(main.operands[o]);
    Memory pool = *Memory::create(total);
    auto* values = reinterpret_cast<float*>(pool.data());
    std::uniform_real_distribution<float> uniform(-4.0f, 4.0f);
    for (uint32_t i = 0; i < total / 4; ++i) values[i] = uniform(random);
    Request request;
    request.pools = {pool};
    uint32_t at = 0;
    for (uint32_t i : main.inputIndexes) {
      request.inputs.push_back({false, {0, at, bytesOf(main.operands[i])}, {}});
      at += bytesOf(main.operands[i]);
    }
    for (uint32_t o : main.outputIndexes) {
      request.outputs.push_back({false, {0, at, bytesOf(main.operands[o])}, {}});
      at += bytesOf(main.operands[o]);
    }
    if (execute(**p, static_cast<Path>(random() % 4), request)) ++executed;
  }
  nlohmann::json metrics = {
      {"graphs", graphs}, {"prepared", prepared}, {"executed", executed}, {"refused", refused}};
  if (prepared == 0 && graphs > 10) {
    return {Verdict::kFailure,
            "no random graph could be prepared: the generator or the driver "
            "is broken",
            metrics};
  }
  return {Verdict::kSuccess,
          std::to_string(graphs) + " graphs, " + std::to_string(executed) + " executed", metrics};
}

}  // namespace nnhal::stress
