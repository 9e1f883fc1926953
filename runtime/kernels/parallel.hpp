// Work items over a few std::threads, claimed one at a time from a shared counter.
//
// Attention work is uneven (a causal row of query tiles grows with its position, a sliding
// window's does not), so items are handed out dynamically rather than split up front: a thread
// that finishes early takes the next item. The calling thread is worker 0, so one thread means
// no thread at all. `body(worker, item)` must not throw; workers are numbered 0 .. workers - 1.
#pragma once

#include <cstdint>
#include <functional>

namespace burst::rt {

void parallel_for(int workers, std::int64_t items, const std::function<void(int, std::int64_t)>& body);

// The same, but worker w takes items w, w + workers, w + 2 workers, ... in that order: for work
// whose workers each sum into a private buffer, so the sums (and so the floating-point result)
// do not depend on thread timing. Interleaving keeps uneven items roughly balanced.
void parallel_for_strided(int workers, std::int64_t items, const std::function<void(int, std::int64_t)>& body);

// Workers for `items` items: `threads`, or one per hardware thread when it is 0, and never more
// than there are items (at least 1).
[[nodiscard]] int worker_count(int threads, std::int64_t items);

}  // namespace burst::rt
