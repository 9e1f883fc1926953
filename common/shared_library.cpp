// Opening a shared library on first use (shared_library.hpp).
#include "common/shared_library.hpp"

#include <dlfcn.h>

#include <fmt/format.h>

#include "common/error.hpp"

namespace burst {

SharedLibrary open_shared_library(const std::string& what, std::initializer_list<const char*> files,
                                  const std::string& expected, const std::string& hint) {
  std::string tried;
  for (const char* file : files) {
    if (void* handle = ::dlopen(file, RTLD_NOW | RTLD_LOCAL)) return {what, file, handle};
    const char* why = ::dlerror();
    tried += fmt::format("{}{}: {}", tried.empty() ? "" : "; ", file, why != nullptr ? why : "not found");
  }
  throw Error(Problem{what, fmt::format("cannot load the library ({})", tried), expected, hint});
}

void* symbol_address(const SharedLibrary& library, const char* name) {
  (void)::dlerror();  // clear an earlier error, so the one below is dlsym's
  void* symbol = ::dlsym(library.handle, name);
  if (symbol == nullptr) {
    const char* why = ::dlerror();
    throw Error(Problem{library.what,
                        fmt::format("{} has no {} ({})", library.file, name, why != nullptr ? why : "null"),
                        fmt::format("the {} burst was built with", library.what), ""});
  }
  return symbol;
}

}  // namespace burst
