// The built-in engines (internal to simulator/engine; users go through make_engine).
#pragma once

#include <memory>

#include "simulator/engine/engine.hpp"

namespace burst::sim {

[[nodiscard]] std::unique_ptr<Engine> make_analytic_engine();
[[nodiscard]] std::unique_ptr<Engine> make_event_engine();

}  // namespace burst::sim
