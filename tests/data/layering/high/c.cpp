// Into the internals of low/.
#include "low/detail/d.hpp"
