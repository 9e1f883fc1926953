// Event-ordered copies between the GPU loopback's rank streams (see device_message_copy.hpp).
#include "runtime/cuda/device_message_copy.hpp"

#include <cstring>
#include <map>
#include <utility>

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "runtime/cuda/cuda_check.hpp"
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
    if (staging != nullptr) (void)cudaFree(staging);
  }
  void* staging = nullptr;     // the stream-ordered pool's, made on the sender's stream
  cudaEvent_t ready = nullptr;  // after the copy into it
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
