// A shared library opened on first use, with dlopen, instead of linked.
//
// A linked library is loaded, relocated and initialised in every process that contains the code
// calling it, whether or not that process ever calls it. Two of burst's are costly that way:
// cuBLASLt's initialisers took 0.4 s of every process's start-up, and OpenBLAS (Debian's
// threaded build) starts a worker thread when it loads, which spins on sched_yield for its first
// tenth of a second and took a core from every `burst plan`. So both are opened the first time
// their code runs, and their entry points are taken from them with their types from their own
// headers (decltype), so a signature cannot drift from the header's.
//
// open_shared_library() tries each file in the order given (a soname is found as the loader finds
// any library: the run path, LD_LIBRARY_PATH, the cache; a path is the file CMake found at
// configure time; cuBLASLt tries its soname first, OpenBLAS the file its headers belong to) and
// throws burst::Error naming every file tried and the loader's message for each.
// take_symbol() throws burst::Error naming the entry point missing from the library.
#pragma once

#include <initializer_list>
#include <string>

namespace burst {

struct SharedLibrary {
  std::string what;  // the name errors give it: "cuBLASLt", "OpenBLAS"
  std::string file;  // the file that opened
  void* handle = nullptr;
};

// `expected` says which library is wanted, `hint` what to install or set, where none of `files`
// opens. The handle stays open for the process.
[[nodiscard]] SharedLibrary open_shared_library(const std::string& what, std::initializer_list<const char*> files,
                                                const std::string& expected, const std::string& hint);

[[nodiscard]] void* symbol_address(const SharedLibrary& library, const char* name);

// The entry point `name` of `library`, as the function pointer type of `into`.
template <typename Function>
void take_symbol(const SharedLibrary& library, const char* name, Function& into) {
  into = reinterpret_cast<Function>(  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast): dlsym's contract
      symbol_address(library, name));
}

}  // namespace burst
