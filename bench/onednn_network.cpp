#include "bench/onednn_network.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <utility>

namespace nnhal::bench::onednn {
namespace {

/// Buffers start on a cache line.
constexpr size_t kAlignment = 64;

}  // namespace

Result<Quantization> schemeOf(const Operand& operand) {
  if (operand.type == OperandType::TENSOR_FLOAT32) return Quantization{};
  if (operand.type != OperandType::TENSOR_QUANT8_ASYMM) {
    return invalidArgument(std::string("type ") + std::string(toString(operand.type)) +
                           " is unsupported; only TENSOR_QUANT8_ASYMM and TENSOR_FLOAT32 run");
  }
  if (!(operand.scale > 0.0f)) return invalidArgument("a uint8 tensor's scale must be positive");
  if (operand.zeroPoint == 0) return Quantization{memory::data_type::u8, operand.scale};
  const float low = operand.scale * static_cast<float>(0 - operand.zeroPoint);
  const float high = operand.scale * static_cast<float>(255 - operand.zeroPoint);
  return Quantization{memory::data_type::s8, std::max(std::abs(low), std::abs(high)) / 127.0f};
}

memory::desc plainDesc(const Operand& operand, memory::data_type type) {
  using tag = memory::format_tag;
  const auto& d = operand.dimensions;
  if (d.size() == 4) return memory::desc({d[0], d[3], d[1], d[2]}, type, tag::nhwc);
  memory::dims dims(d.begin(), d.end());
  static constexpr tag kTags[] = {tag::a, tag::a, tag::ab, tag::abc, tag::abcd, tag::abcde};
  return memory::desc(dims, type, kTags[std::min<size_t>(d.size(), 5)]);
}

void Network::FreeDeleter::operator()(uint8_t* bytes) const { std::free(bytes); }

Network::Network(const Model& model, dnnl::engine engine)
    : model_(model), engine_(std::move(engine)), stream_(engine_) {
  const size_t count = model_.main.operands.size();
  tensors_.resize(count);
  readers_.resize(count);
  lastUse_.assign(count, 0);
  for (size_t k = 0; k < model_.main.operations.size(); ++k) {
    for (const uint32_t input : model_.main.operations[k].inputs) {
      if (input < count && (readers_[input].empty() || readers_[input].back() != k)) {
        readers_[input].push_back(k);
        lastUse_[input] = k;
      }
    }
  }
  for (const uint32_t index : model_.main.inputIndexes) lastUse_[index] = kKeep;
  for (const uint32_t index : model_.main.outputIndexes) lastUse_[index] = kKeep;
}

bool Network::isModelInput(uint32_t operand) const {
  const auto& inputs = model_.main.inputIndexes;
  return std::find(inputs.begin(), inputs.end(), operand) != inputs.end();
}

bool Network::isModelOutput(uint32_t operand) const {
  const auto& outputs = model_.main.outputIndexes;
  return std::find(outputs.begin(), outputs.end(), operand) != outputs.end();
}

int32_t Network::takeBuffer(size_t bytes) {
  const size_t size =
      std::max<size_t>(kAlignment, (bytes + kAlignment - 1) / kAlignment * kAlignment);
  int32_t best = -1;
  for (size_t i = 0; i < buffers_.size(); ++i) {
    const Buffer& buffer = buffers_[i];
    if (!buffer.holders.empty() || buffer.scratch || buffer.size < size) continue;
    if (best < 0 || buffer.size < buffers_[static_cast<size_t>(best)].size) {
      best = static_cast<int32_t>(i);
    }
  }
  if (best >= 0) return best;
  Buffer buffer;
  buffer.bytes.reset(static_cast<uint8_t*>(std::aligned_alloc(kAlignment, size)));
  if (!buffer.bytes) throw dnnl::error(dnnl_out_of_memory, "out of memory for activations");
  buffer.size = size;
  buffers_.push_back(std::move(buffer));
  return static_cast<int32_t>(buffers_.size() - 1);
}

memory Network::place(uint32_t operand, const memory::desc& desc, Quantization quant) {
  const int32_t index = takeBuffer(desc.get_size());
  Buffer& buffer = buffers_[static_cast<size_t>(index)];
  buffer.holders.push_back(operand);
  tensors_[operand] = Tensor{memory(desc, engine_, buffer.bytes.get()), quant, index};
  return tensors_[operand].stored;
}

memory Network::placeOver(uint32_t operand, uint32_t existing, const memory::desc& desc,
                          Quantization quant) {
  const int32_t index = tensors_[existing].buffer;
  Buffer& buffer = buffers_[static_cast<size_t>(index)];
  buffer.holders.push_back(operand);
  tensors_[operand] =
      Tensor{memory(desc, engine_, tensors_[existing].stored.get_data_handle()), quant, index};
  return tensors_[operand].stored;
}

memory Network::placeExternal(uint32_t operand, const memory::desc& desc, void* bytes,
                              Quantization quant) {
  tensors_[operand] = Tensor{memory(desc, engine_, bytes), quant, -1};
  return tensors_[operand].stored;
}

memory Network::scratch(const memory::desc& desc) {
  const int32_t index = takeBuffer(desc.get_size());
  Buffer& buffer = buffers_[static_cast<size_t>(index)];
  buffer.scratch = true;
  return memory(desc, engine_, buffer.bytes.get());
}

Result<memory> Network::readAs(uint32_t operand, const memory::desc& wanted, float scale) {
  const memory& own = tensors_[operand].stored;
  if (!own) {
    return invalidArgument("operand " + std::to_string(operand) + " is read before it is written");
  }
  if (own.get_desc() == wanted && scale == 1.0f) return own;
  memory converted = scratch(wanted);
  dnnl::primitive_attr attr;
  if (scale != 1.0f) attr.set_output_scales(0, {scale});
  const dnnl::reorder::primitive_desc pd(own, converted, attr);
  add(dnnl::reorder(pd), {{DNNL_ARG_FROM, own}, {DNNL_ARG_TO, converted}}, describe(pd, "reorder"));
  return converted;
}

void Network::add(dnnl::primitive primitive, std::unordered_map<int, memory> args,
                  std::string what) {
  steps_.push_back(Step{std::move(primitive), std::move(args), {}, current_, std::move(what)});
}

void Network::addCustom(std::function<void()> run, std::string what) {
  steps_.push_back(Step{{}, {}, std::move(run), current_, std::move(what)});
}

void Network::finish() {
  for (Buffer& buffer : buffers_) {
    buffer.scratch = false;
    std::erase_if(buffer.holders, [&](uint32_t operand) {
      return lastUse_[operand] != kKeep && lastUse_[operand] <= current_;
    });
  }
}

std::string describe(const dnnl::primitive_desc_base& pd, const char* kind) {
  return std::string(kind) + " " + pd.impl_info_str();
}

Result<void> guarded(const std::function<Result<void>()>& body) {
  try {
    return body();
  } catch (const dnnl::error& error) {
    const ErrorStatus status =
        error.status == dnnl_unimplemented || error.status == dnnl_invalid_arguments
            ? ErrorStatus::INVALID_ARGUMENT
            : ErrorStatus::GENERAL_FAILURE;
    return fail(status, std::string("oneDNN: ") + error.what());
  }
}

}  // namespace nnhal::bench::onednn
