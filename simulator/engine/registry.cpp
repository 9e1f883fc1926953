// Engines by name.
#include <fmt/format.h>

#include "common/error.hpp"
#include "common/text.hpp"
#include "simulator/detail/engine/engines.hpp"

namespace burst::sim {

std::vector<std::string> engine_names() { return {"event", "analytic"}; }

std::unique_ptr<Engine> make_engine(std::string_view name) {
  if (name == "event") return make_event_engine();
  if (name == "analytic") return make_analytic_engine();
  const auto names = engine_names();
  throw Error(Problem{"--engine", fmt::format("unknown engine '{}'", name), text::join(names),
                      text::did_you_mean(name, names)});
}

}  // namespace burst::sim
