// ZeRO's NCCL collectives on device memory (runtime/cuda/nccl_collectives.hpp) on a job of one
// rank, the only job one GPU can hold (NCCL takes one device per rank): every collective's
// plumbing (the wait on the producer stream, the event after it, the poll) on buffers a kernel
// stream has just written, the posted forms, and the refusal of host memory. Sums over one rank
// are the inputs, so each result is known exactly; 2 ranks and more run under mpirun on a node
// of several GPUs (tools/gpu-check.sh covers the loopback).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "common/error.hpp"
#include "runtime/comm/loopback_communicator.hpp"
#include "runtime/cuda/cuda_step_kernels.hpp"
#include "runtime/cuda/nccl_collectives.hpp"

using namespace burst;

namespace {

struct Device {
  std::unique_ptr<rt::Communicator> job = rt::make_self_communicator({10});
  rt::CudaStepKernels kernels;
  std::unique_ptr<rt::Communicator> nccl = rt::gpu::make_nccl_collectives(*job, 0, kernels.stream());

  // n fp32 values in device memory, written by a copy queued on the kernels' stream (not yet run
  // when this returns): a collective that did not wait for the producer would read stale bytes.
  rt::MemoryBlock written(const std::vector<float>& values) {
    rt::MemoryBlock staged = kernels.memory().allocate(values.size() * sizeof(float));
    kernels.memory().store(values, rt::DType::F32, staged.data());
    rt::MemoryBlock out = kernels.memory().allocate(values.size() * sizeof(float));
    const auto n = values.size();
    kernels.copy({staged.data(), n, rt::DType::F32, rt::MemorySpace::Device},
                 {out.data(), n, rt::DType::F32, rt::MemorySpace::Device});
    return out;
  }
  std::vector<float> read(const rt::MemoryBlock& b, std::size_t n) {
    std::vector<float> v(n);
    kernels.memory().load(b.data(), rt::DType::F32, v);
    return v;
  }
};

rt::MutBuffer floats(const rt::MemoryBlock& b, std::size_t n) { return {b.data(), n, rt::DType::F32}; }

}  // namespace

TEST_CASE("NCCL collectives on one rank read what the producer stream wrote and give the identity") {
  Device d;
  REQUIRE(d.nccl->reads_device_memory());
  const std::vector<float> values{1.5f, -2.0f, 3.25f, 1e-3f, 7.0f};
  const std::size_t n = values.size();
  const rt::MemoryBlock a = d.written(values);
  d.nccl->allreduce(floats(a, n), rt::ReduceOp::Sum);
  CHECK(d.read(a, n) == values);
  const rt::MemoryBlock src = d.written(values), all = d.kernels.memory().allocate(n * sizeof(float));
  d.nccl->allgather(floats(src, n), floats(all, n));
  CHECK(d.read(all, n) == values);
  const rt::MemoryBlock mine = d.kernels.memory().allocate(n * sizeof(float));
  d.nccl->reduce_scatter(floats(all, n), floats(mine, n), rt::ReduceOp::Sum);
  CHECK(d.read(mine, n) == values);
  const rt::MemoryBlock root = d.kernels.memory().allocate(n * sizeof(float));
  d.nccl->gather_to_root(floats(src, n), floats(root, n));
  CHECK(d.read(root, n) == values);
  d.nccl->barrier();
}

TEST_CASE("posted NCCL collectives complete when waited, in any number in flight") {
  Device d;
  const std::vector<float> x{1, 2, 3, 4}, y{5, 6, 7, 8};
  const rt::MemoryBlock sx = d.written(x), sy = d.written(y);
  const rt::MemoryBlock gx = d.kernels.memory().allocate(16), gy = d.kernels.memory().allocate(16);
  std::vector<rt::Request> posted;
  posted.push_back(d.nccl->iallgather(floats(sx, 4), floats(gx, 4)));
  posted.push_back(d.nccl->ireduce_scatter(floats(sy, 4), floats(gy, 4), rt::ReduceOp::Sum));
  d.nccl->wait_all(posted);
  CHECK(d.read(gx, 4) == x);
  CHECK(d.read(gy, 4) == y);
}

TEST_CASE("NCCL collectives refuse host memory by name, before anything is issued") {
  Device d;
  std::vector<float> host(8, 1.0f);
  try {
    d.nccl->allreduce(std::span<float>(host), rt::ReduceOp::Sum);
    FAIL("host memory accepted");
  } catch (const Error& e) {
    CHECK_THAT(std::string(e.what()), Catch::Contains("host memory"));
  }
  const rt::MemoryBlock a = d.written(host);  // the communicator is still usable
  d.nccl->allreduce(floats(a, host.size()), rt::ReduceOp::Sum);
  CHECK(d.read(a, host.size()) == host);
}
