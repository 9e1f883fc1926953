// Event-ordered copies between the GPU loopback's rank streams (see device_message_copy.hpp).
#include "runtime/cuda/device_message_copy.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <span>
#include <vector>
#include <utility>

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "common/error.hpp"
#include "runtime/cuda/cuda_check.hpp"
#include "runtime/cuda/element_kernels.hpp"
#include "runtime/kernels/device_traffic.hpp"

namespace burst::rt::gpu {
namespace {

// An event recorded on `stream` now (timing off: ordering only). Destroyed by the caller once
// waited on; CUDA releases it when the device has passed it.
cudaEvent_t record_on(cudaStream_t stream) {
  cudaEvent_t event = nullptr;
  check_cuda(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreateWithFlags(a loopback message)");
  check_cuda(cudaEventRecord(event, stream), "cudaEventRecord(a loopback message)");
  return event;
}

// `waiter` runs its later work after `event`; the event goes.
void wait_and_release(cudaStream_t waiter, cudaEvent_t event) {
  check_cuda(cudaStreamWaitEvent(waiter, event, 0), "cudaStreamWaitEvent(a loopback message)");
  (void)cudaEventDestroy(event);
}

struct DeviceKept final : KeptMessage {
  DeviceKept() = default;
  DeviceKept(const DeviceKept&) = delete;
  DeviceKept& operator=(const DeviceKept&) = delete;
  ~DeviceKept() override {  // a message never received (the job failed): no throwing here
    if (ready != nullptr) (void)cudaEventDestroy(ready);
    if (staging != nullptr) (void)cudaFree(staging);  // (its readers' events, shared with other inputs, are left)
  }
  void* staging = nullptr;     // the stream-ordered pool's, made on the sender's stream
  cudaEvent_t ready = nullptr;  // after the copy into it
  std::vector<cudaEvent_t> readers;  // a collective's: after each rank's reads of it (shared events)
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
    check_cuda(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault), fmt::format("cudaMemcpy(a loopback message, {} bytes)", bytes));
    check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize(after a loopback message)");
    count_device_synchronization();
    count_device_synchronization();
    if (to_device && !from_device) count_host_to_device(bytes);
    if (from_device && !to_device) count_device_to_host(bytes);
  }

  void deliver(void* dst, int to, const void* src, int from, std::size_t bytes) override {
    const cudaStream_t sender = stream_of(from), receiver = stream_of(to);
    if (sender == nullptr || receiver == nullptr || !is_device_memory(dst) || !is_device_memory(src)) {
      return copy(dst, src, bytes);
    }
    wait_and_release(receiver, record_on(sender));
    check_cuda(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, receiver),
               fmt::format("cudaMemcpyAsync(a loopback message, {} bytes)", bytes));
    wait_and_release(sender, record_on(receiver));
  }

  std::unique_ptr<KeptMessage> keep(const void* src, int from, std::size_t bytes) override {
    const cudaStream_t sender = stream_of(from);
    if (sender == nullptr || bytes == 0 || !is_device_memory(src)) return MessageCopy::keep(src, from, bytes);
    auto kept = std::make_unique<DeviceKept>();
    kept->bytes = bytes;
    check_cuda(cudaMallocAsync(&kept->staging, bytes, sender), fmt::format("cudaMallocAsync(a loopback message, {} bytes)", bytes));
    check_cuda(cudaMemcpyAsync(kept->staging, src, bytes, cudaMemcpyDeviceToDevice, sender),
               fmt::format("cudaMemcpyAsync(a loopback message into staging, {} bytes)", bytes));
    kept->ready = record_on(sender);
    return kept;
  }

  void deliver_kept(void* dst, int to, KeptMessage& message) override {
    auto* kept = dynamic_cast<DeviceKept*>(&message);
    if (kept == nullptr) return MessageCopy::deliver_kept(dst, to, message);
    const cudaStream_t receiver = stream_of(to);
    if (receiver == nullptr || !is_device_memory(dst)) {
      check_cuda(cudaEventSynchronize(kept->ready), "cudaEventSynchronize(a kept loopback message)");
      count_host_wait();
      return copy(dst, kept->staging, kept->bytes);
    }
    wait_and_release(receiver, std::exchange(kept->ready, nullptr));
    check_cuda(cudaMemcpyAsync(dst, kept->staging, kept->bytes, cudaMemcpyDeviceToDevice, receiver),
               fmt::format("cudaMemcpyAsync(a kept loopback message, {} bytes)", kept->bytes));
    check_cuda(cudaFreeAsync(std::exchange(kept->staging, nullptr), receiver), "cudaFreeAsync(a kept loopback message)");
  }

  // Under the hub's mutex, as every other call.
  void use_stream(int rank, void* stream) override { streams_[rank] = static_cast<cudaStream_t>(stream); }

  // fp32 sums (ZeRO's gradients) and copies (its parameter gathers, broadcasts) of device buffers
  // of a rank whose stream is known; the rest (host values, other reductions) on the host.
  [[nodiscard]] bool collective_on_device(const Envelope& e, int rank, const void* input, const void* output) const override {
    const bool sum = (e.operation == Operation::Allreduce || e.operation == Operation::ReduceScatter) &&
                     e.dtype == DType::F32 && e.op == ReduceOp::Sum;
    const bool copies = e.operation == Operation::Allgather || e.operation == Operation::Broadcast;
    return (sum || copies) && e.count > 0 && stream_of(rank) != nullptr &&
           (input == nullptr || is_device_memory(input)) && (output == nullptr || is_device_memory(output)) &&
           (input != nullptr || output != nullptr);
  }

  void collective_result(const Envelope& e, int rank, void* output, std::span<KeptMessage* const> inputs,
                         bool last) override {
    const cudaStream_t stream = stream_of(rank);
    std::vector<DeviceKept*> kept;
    for (KeptMessage* k : inputs) kept.push_back(dynamic_cast<DeviceKept*>(k));
    for (DeviceKept* k : kept) {
      if (k != nullptr) check_cuda(cudaStreamWaitEvent(stream, k->ready, 0), "cudaStreamWaitEvent(a loopback collective)");
    }
    const std::size_t bytes = e.bytes();
    auto* out = static_cast<std::byte*>(output);
    const auto input = [&](std::size_t r, std::size_t offset) {
      if (kept[r] == nullptr) throw Error(Problem{"loopback collective", fmt::format("rank {} gave no input", r), "", ""});
      return static_cast<const std::byte*>(kept[r]->staging) + offset;
    };
    const auto copy_in = [&](std::byte* to, const std::byte* from, std::size_t n) {
      check_cuda(cudaMemcpyAsync(to, from, n, cudaMemcpyDeviceToDevice, stream), "cudaMemcpyAsync(a loopback collective)");
    };
    switch (e.operation) {
      case Operation::Allreduce:
      case Operation::ReduceScatter: {  // rank order, as the host's reductions
        const std::size_t offset = e.operation == Operation::ReduceScatter ? static_cast<std::size_t>(rank) * bytes : 0;
        copy_in(out, input(0, offset), bytes);
        for (std::size_t r = 1; r < kept.size(); ++r) {
          accumulate_on_device(reinterpret_cast<float*>(out), input(r, offset), false, e.count, stream);  // NOLINT: fp32
        }
        break;
      }
      case Operation::Allgather:
        for (std::size_t r = 0; r < kept.size(); ++r) copy_in(out + r * bytes, input(r, 0), bytes);
        break;
      case Operation::Broadcast:
        if (rank != e.peer) copy_in(out, input(static_cast<std::size_t>(e.peer), 0), bytes);
        break;
      default: throw Error(Problem{"loopback collective", "not a device collective", "", ""});
    }
    const cudaEvent_t read = record_on(stream);
    for (DeviceKept* k : kept) {
      if (k != nullptr) k->readers.push_back(read);
    }
    if (!last) return;
    // Every rank has queued its reads: the inputs go once all of them are done, in this stream's order.
    std::vector<cudaEvent_t> events;
    for (DeviceKept* k : kept) {
      if (k == nullptr) continue;
      for (const cudaEvent_t r : k->readers) {
        check_cuda(cudaStreamWaitEvent(stream, r, 0), "cudaStreamWaitEvent(a loopback collective's readers)");
        if (std::find(events.begin(), events.end(), r) == events.end()) events.push_back(r);
      }
      k->readers.clear();
      check_cuda(cudaFreeAsync(std::exchange(k->staging, nullptr), stream), "cudaFreeAsync(a loopback collective's input)");
      (void)cudaEventDestroy(std::exchange(k->ready, nullptr));
    }
    for (const cudaEvent_t r : events) (void)cudaEventDestroy(r);
  }

 private:
  [[nodiscard]] cudaStream_t stream_of(int rank) const {
    const auto it = streams_.find(rank);
    return it == streams_.end() ? nullptr : it->second;
  }

  std::map<int, cudaStream_t> streams_;
};

}  // namespace

std::shared_ptr<MessageCopy> make_device_message_copy() { return std::make_shared<DeviceMessageCopy>(); }

}  // namespace burst::rt::gpu
