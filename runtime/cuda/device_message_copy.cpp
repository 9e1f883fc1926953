// Event-ordered copies between the GPU loopback's rank streams (see device_message_copy.hpp).
#include "runtime/cuda/device_message_copy.hpp"

#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <vector>
#include <utility>

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "common/error.hpp"
#include "runtime/cuda/cuda_check.hpp"
#include "runtime/cuda/detail/cuda_event.hpp"
#include "runtime/cuda/detail/device_kernel_memory.hpp"
#include "runtime/cuda/detail/element_kernels.hpp"
#include "runtime/kernels/device_traffic.hpp"

namespace burst::rt::gpu {
namespace {

// An event recorded on `stream` now (timing off: ordering only). Its owner drops it once the
// waits on it are queued; CUDA releases it when the device has passed it (cuda_event.hpp).
OwnedEvent record_on(cudaStream_t stream) {
  OwnedEvent event("a loopback message");
  check_cuda(cudaEventRecord(event.handle(), stream), "cudaEventRecord(a loopback message)");
  return event;
}

// `waiter` runs its later work after `event`; the event goes.
void wait_and_release(cudaStream_t waiter, OwnedEvent event) {
  check_cuda(cudaStreamWaitEvent(waiter, event.handle(), 0), "cudaStreamWaitEvent(a loopback message)");
}

// A message (or collective input) kept in staging memory of its sender's pool.
struct DeviceKept final : KeptMessage {
  MemoryBlock staging;                               // freed in its sender's stream order
  std::optional<OwnedEvent> ready;                   // after the copy into it; gone once waited on
  cudaStream_t owner = nullptr;                      // the sender's stream, which frees it
  std::vector<std::shared_ptr<OwnedEvent>> readers;  // a collective's: after each rank's reads of it (each
                                                     // rank's event shared by every input it read)
};

// Where a receive was posted: an event on the receiver's stream, after which its buffer exists.
struct PostedMark final : KeptMessage {
  explicit PostedMark(OwnedEvent posted) : event(std::move(posted)) {}
  OwnedEvent event;
};

// A rank's stream and the staging pool on it.
struct Rank {
  cudaStream_t stream = nullptr;
  std::unique_ptr<DeviceKernelMemory> staging;
};

class DeviceMessageCopy final : public MessageCopy {
 public:
  [[nodiscard]] bool reads_device_memory() const override { return true; }

  // Host values (a loss, a digest) need no ordering; device memory synchronises the device around the copy.
  void copy(void* dst, const void* src, std::size_t bytes) override {
    const bool to_device = is_device_memory(dst), from_device = is_device_memory(src);
    if (!to_device && !from_device) {
      std::memcpy(dst, src, bytes);
      return;
    }
    check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize(before a loopback message)");
    check_cuda(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault),
               fmt::format("cudaMemcpy(a loopback message, {} bytes)", bytes));
    check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize(after a loopback message)");
    count_device_synchronization();
    count_device_synchronization();
    if (to_device && !from_device) count_host_to_device(bytes);
    if (from_device && !to_device) count_device_to_host(bytes);
  }

  std::unique_ptr<KeptMessage> receive_posted(int to) override {
    const Rank* receiver = rank(to);
    if (receiver == nullptr) return nullptr;
    return std::make_unique<PostedMark>(record_on(receiver->stream));
  }

  // On the sender's stream, after the receive's buffer exists; the receiver's later work waits for it.
  void deliver(void* dst, int to, const void* src, int from, std::size_t bytes, KeptMessage* posted) override {
    const Rank* sender = rank(from);
    const Rank* receiver = rank(to);
    auto* mark = dynamic_cast<PostedMark*>(posted);
    if (sender == nullptr || receiver == nullptr || mark == nullptr || !is_device_memory(dst) ||
        !is_device_memory(src)) {
      return copy(dst, src, bytes);
    }
    check_cuda(cudaStreamWaitEvent(sender->stream, mark->event.handle(), 0), "cudaStreamWaitEvent(a loopback receive)");
    check_cuda(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, sender->stream),
               fmt::format("cudaMemcpyAsync(a loopback message, {} bytes)", bytes));
    wait_and_release(receiver->stream, record_on(sender->stream));
  }

  std::unique_ptr<KeptMessage> keep(const void* src, int from, std::size_t bytes) override {
    Rank* sender = rank(from);
    if (sender == nullptr || bytes == 0 || !is_device_memory(src)) return MessageCopy::keep(src, from, bytes);
    auto kept = std::make_unique<DeviceKept>();
    kept->bytes = bytes;
    kept->owner = sender->stream;
    kept->staging = sender->staging->allocate(bytes);
    check_cuda(cudaMemcpyAsync(kept->staging.data(), src, bytes, cudaMemcpyDeviceToDevice, sender->stream),
               fmt::format("cudaMemcpyAsync(a loopback message into staging, {} bytes)", bytes));
    kept->ready = record_on(sender->stream);
    return kept;
  }

  // On the receiver's stream (its thread is posting the receive); the staging goes in its sender's stream order after.
  void deliver_kept(void* dst, int to, KeptMessage& message) override {
    auto* kept = dynamic_cast<DeviceKept*>(&message);
    if (kept == nullptr) return MessageCopy::deliver_kept(dst, to, message);
    const Rank* receiver = rank(to);
    if (receiver == nullptr || !is_device_memory(dst)) {
      check_cuda(cudaEventSynchronize(kept->ready->handle()), "cudaEventSynchronize(a kept loopback message)");
      count_host_wait();
      return copy(dst, kept->staging.data(), kept->bytes);
    }
    wait_and_release(receiver->stream, *std::exchange(kept->ready, std::nullopt));
    check_cuda(cudaMemcpyAsync(dst, kept->staging.data(), kept->bytes, cudaMemcpyDeviceToDevice, receiver->stream),
               fmt::format("cudaMemcpyAsync(a kept loopback message, {} bytes)", kept->bytes));
    wait_and_release(kept->owner, record_on(receiver->stream));
    kept->staging = {};  // freed on its owner's stream, after the copy out of it
  }

  // Under the hub's mutex, as every other call; from the rank's own thread (its device is current).
  void use_stream(int r, void* stream) override {
    int device = 0;
    check_cuda(cudaGetDevice(&device), "cudaGetDevice");
    Rank& entry = ranks_[r];
    entry.stream = static_cast<cudaStream_t>(stream);
    entry.staging = std::make_unique<DeviceKernelMemory>(device, entry.stream);
  }

  // fp32 sums (ZeRO's gradients), bf16 sums (the tensor-parallel reduce-scatters of a GPU step)
  // and copies (parameter gathers, broadcasts, the sequence-parallel all-gathers) of device
  // buffers of a rank whose stream is known; the rest (host values, other reductions) on the host.
  [[nodiscard]] bool collective_on_device(const Envelope& e, int r, const void* input,
                                          const void* output) const override {
    const bool sum = (e.operation == Operation::Allreduce || e.operation == Operation::ReduceScatter) &&
                     (e.dtype == DType::F32 || e.dtype == DType::BF16) && e.op == ReduceOp::Sum;
    const bool copies = e.operation == Operation::Allgather || e.operation == Operation::Broadcast;
    return (sum || copies) && e.count > 0 && ranks_.contains(r) && (input == nullptr || is_device_memory(input)) &&
           (output == nullptr || is_device_memory(output)) && (input != nullptr || output != nullptr);
  }

  void collective_result(const Envelope& e, int r, void* output, std::span<KeptMessage* const> inputs,
                         bool last) override {
    const cudaStream_t stream = rank(r)->stream;
    std::vector<DeviceKept*> kept;
    for (KeptMessage* k : inputs) kept.push_back(dynamic_cast<DeviceKept*>(k));
    for (DeviceKept* k : kept) {
      if (k != nullptr)
        check_cuda(cudaStreamWaitEvent(stream, k->ready->handle(), 0), "cudaStreamWaitEvent(a loopback collective)");
    }
    const std::size_t bytes = e.bytes();
    auto* out = static_cast<std::byte*>(output);
    const auto input = [&](std::size_t i, std::size_t offset) {
      if (kept[i] == nullptr)
        throw Error(Problem{"loopback collective", fmt::format("rank {} gave no input", i), "", ""});
      return kept[i]->staging.data() + offset;
    };
    const auto copy_in = [&](std::byte* to, const std::byte* from, std::size_t n) {
      check_cuda(cudaMemcpyAsync(to, from, n, cudaMemcpyDeviceToDevice, stream),
                 "cudaMemcpyAsync(a loopback collective)");
    };
    switch (e.operation) {
      case Operation::Allreduce:
      case Operation::ReduceScatter: {  // rank order, as the host's reductions
        const std::size_t offset = e.operation == Operation::ReduceScatter ? static_cast<std::size_t>(r) * bytes : 0;
        if (e.dtype == DType::BF16) {  // widened into fp32, summed, rounded once (comm/detail/reduce_in_order.hpp)
          const MemoryBlock scratch = rank(r)->staging->allocate(e.count * sizeof(float));
          auto* sum = reinterpret_cast<float*>(scratch.data());  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
          fill_on_device(sum, -0.0F, e.count, stream);           // -0 + x = x for every x: the host's start, x_0
          for (std::size_t i = 0; i < kept.size(); ++i)
            accumulate_on_device(sum, input(i, offset), true, e.count, stream);
          to_bf16_on_device(sum, out, e.count, stream);
          break;  // the scratch is freed in this stream's order
        }
        copy_in(out, input(0, offset), bytes);
        for (std::size_t i = 1; i < kept.size(); ++i) {
          accumulate_on_device(reinterpret_cast<float*>(out), input(i, offset), false, e.count,
                               stream);  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast): fp32
        }
        break;
      }
      case Operation::Allgather:
        for (std::size_t i = 0; i < kept.size(); ++i) copy_in(out + i * bytes, input(i, 0), bytes);
        break;
      case Operation::Broadcast:
        if (r != e.peer) copy_in(out, input(static_cast<std::size_t>(e.peer), 0), bytes);
        break;
      default: throw Error(Problem{"loopback collective", "not a device collective", "", ""});
    }
    const auto read = std::make_shared<OwnedEvent>(record_on(stream));
    for (DeviceKept* k : kept) {
      if (k != nullptr) k->readers.push_back(read);
    }
    if (!last) return;
    // Every rank has queued its reads: each input goes on its owner's stream once all of them are
    // done. A reader's event goes with the last input that holds it, after every wait on it is queued.
    for (DeviceKept* k : kept) {
      if (k == nullptr) continue;
      for (const std::shared_ptr<OwnedEvent>& reader : k->readers) {
        check_cuda(cudaStreamWaitEvent(k->owner, reader->handle(), 0),
                   "cudaStreamWaitEvent(a loopback collective's readers)");
      }
      k->readers.clear();
      k->staging = {};
    }
  }

 private:
  [[nodiscard]] Rank* rank(int r) {
    const auto it = ranks_.find(r);
    return it == ranks_.end() ? nullptr : &it->second;
  }

  std::map<int, Rank> ranks_;
};

}  // namespace

std::shared_ptr<MessageCopy> make_device_message_copy() { return std::make_shared<DeviceMessageCopy>(); }

}  // namespace burst::rt::gpu
