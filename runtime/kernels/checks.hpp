// Argument checks of the kernel entry points. Every problem is collected and thrown at once as
// burst::Error, each naming the call and argument ("attention_forward: k"), what is wrong,
// what would be valid and a hint, so a caller wiring shapes by hand sees all its mistakes.
#pragma once

#include <string_view>

#include "common/error.hpp"
#include "runtime/kernels/attention.hpp"

namespace burst::rt {

// Q, K, V, positions, mask and options of a block pair.
void check_pair(Problems& problems, std::string_view call, const BlockPair& in, const AttentionMask& mask,
                const KernelOptions& options);
// A tensor argument whose shape must equal another's (`like` names that one).
void check_shape(Problems& problems, std::string_view call, std::string_view name, const Shape& got, const Shape& want,
                 std::string_view like);
// A per-(token, head) span: tokens * heads floats.
void check_row_scalars(Problems& problems, std::string_view call, std::string_view name, std::size_t got,
                       const Shape& rows_of);

// The outputs of a pair's forward (O like Q, lse per query row) and the extra inputs and
// outputs of its backward (dO, dQ like Q; dK, dV like K; D and lse per query row): the same
// for every backend's kernels.
void check_forward_outputs(Problems& problems, std::string_view call, const BlockPair& in, const Shape& o,
                           std::size_t lse);
void check_backward_arguments(Problems& problems, std::string_view call, const BlockPair& in, const Shape& d_o,
                              std::size_t delta, std::size_t lse, const Shape& d_q, const Shape& d_k, const Shape& d_v);

}  // namespace burst::rt
